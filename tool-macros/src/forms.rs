//! The elicitation forms a function asks with, as far as its body shows them:
//! `.elicit::<T>(...)` calls and `Elicited<T>` types. The expansion names each in the
//! registration, so the compiler checks that the type can be a form at all, and `check`
//! reports one whose fields a form cannot show.

use std::collections::HashSet;
use syn::visit::Visit;

/// The form types `item`'s body names, each once, in order of appearance; types declared
/// or imported inside the body are left out (the registration, outside the function,
/// cannot name them), and so are nested items' bodies.
pub fn forms_in(item: &syn::ItemFn) -> Vec<syn::Type> {
    let mut finder = Finder::default();
    finder.visit_block(&item.block);
    let mut seen = HashSet::new();
    finder
        .found
        .into_iter()
        .filter(|ty| !declared_inside(ty, &finder.local))
        .filter(|ty| seen.insert(quote::ToTokens::to_token_stream(ty).to_string()))
        .collect()
}

#[derive(Default)]
struct Finder {
    found: Vec<syn::Type>,
    /// Names of the items (structs, enums, aliases) declared in the body.
    local: HashSet<String>,
}

impl Finder {
    fn add(&mut self, ty: &syn::Type) {
        match ty {
            // `Elicited<()>` is a URL elicitation, and `_` says nothing.
            syn::Type::Tuple(tuple) if tuple.elems.is_empty() => {}
            syn::Type::Infer(_) => {}
            other => self.found.push(other.clone()),
        }
    }
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        if call.method == "elicit" {
            if let Some(syn::GenericArgument::Type(ty)) =
                call.turbofish.as_ref().and_then(|t| t.args.first())
            {
                self.add(ty);
            }
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_type_path(&mut self, path: &'ast syn::TypePath) {
        if let Some(last) = path.path.segments.last() {
            if last.ident == "Elicited" {
                if let syn::PathArguments::AngleBracketed(arguments) = &last.arguments {
                    if let Some(syn::GenericArgument::Type(ty)) = arguments.args.first() {
                        self.add(ty);
                    }
                }
            }
        }
        syn::visit::visit_type_path(self, path);
    }

    /// An item declared in the body is not visible where the registration is written, and
    /// its own body (a nested `fn`, an `impl`) is not this function's: its name is noted
    /// as local, and nothing inside it is read.
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let mut note = |ident: &syn::Ident| {
            self.local.insert(ident.to_string());
        };
        match item {
            syn::Item::Struct(item) => note(&item.ident),
            syn::Item::Enum(item) => note(&item.ident),
            syn::Item::Type(item) => note(&item.ident),
            syn::Item::Union(item) => note(&item.ident),
            syn::Item::Use(item) => local_names_of_use(&item.tree, &mut self.local),
            _ => {}
        }
    }
}

/// The names a `use` in the body brings in (the last segment, or its `as` name).
fn local_names_of_use(tree: &syn::UseTree, local: &mut HashSet<String>) {
    match tree {
        syn::UseTree::Path(path) => local_names_of_use(&path.tree, local),
        syn::UseTree::Name(name) => {
            local.insert(name.ident.to_string());
        }
        syn::UseTree::Rename(rename) => {
            local.insert(rename.rename.to_string());
        }
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                local_names_of_use(tree, local);
            }
        }
        syn::UseTree::Glob(_) => {}
    }
}

/// Whether any name in `ty` is one declared in the body.
fn declared_inside(ty: &syn::Type, local: &HashSet<String>) -> bool {
    struct Names<'a> {
        local: &'a HashSet<String>,
        hit: bool,
    }
    impl<'ast> Visit<'ast> for Names<'_> {
        fn visit_path_segment(&mut self, segment: &'ast syn::PathSegment) {
            self.hit |= self.local.contains(&segment.ident.to_string());
            syn::visit::visit_path_segment(self, segment);
        }
    }
    let mut names = Names { local, hit: false };
    names.visit_type(ty);
    names.hit
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(source: &str) -> Vec<String> {
        let item: syn::ItemFn = syn::parse_str(source).unwrap();
        forms_in(&item)
            .iter()
            .map(|ty| quote::ToTokens::to_token_stream(ty).to_string())
            .collect()
    }

    #[test]
    fn forms_are_found_by_turbofish_and_by_type() {
        let found = names(
            "async fn f(ctx: CallContext) {
                let a = ctx.elicit::<Confirm>(\"?\").await;
                let b: Result<Elicited<forms::Choice>, AskError> = ctx.elicit(\"?\").await;
                let c = ctx.elicit::<Confirm>(\"again\").await;
                let d: Elicited<()> = ctx.elicit_url(page).await.unwrap();
                struct Local { x: u8 }
                let e = ctx.elicit::<Local>(\"?\").await;
                use forms::Other as Renamed;
                let f = ctx.elicit::<Renamed>(\"?\").await;
                fn helper<T>(ctx: &CallContext) -> Ask<Elicited<T>> { ctx.elicit::<T>(\"?\") }
            }",
        );
        assert_eq!(found, ["Confirm", "forms :: Choice"]);
    }
}
