//! The `#[tool]`, `#[prompt]` and `#[resource]` attribute macros. Use them through
//! `tool_runtime`; the runtime crate's documentation describes what they accept and what
//! they generate.
//!
//! The macro works in stages, one module each: `args` reads `#[tool(...)]`, `doc` reads
//! the doc comments, `ast` builds a model of the function, `valid` checks it, `forms`
//! finds the elicitation forms its body asks with, and `expand` writes the code, or `fallback`
//! writes the errors and the function.

mod args;
mod ast;
mod doc;
mod example_types;
mod expand;
mod fallback;
mod forms;
mod valid;

use proc_macro::TokenStream;

/// Generated code names `tool_runtime`: use the attribute through that crate.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_kind(args::Kind::Tool, attr.into(), item.into()).into()
}

/// Generated code names `tool_runtime`: use the attribute through that crate.
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_kind(args::Kind::Prompt, attr.into(), item.into()).into()
}

/// Generated code names `tool_runtime`: use the attribute through that crate.
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_kind(args::Kind::Resource, attr.into(), item.into()).into()
}

fn expand_kind(
    kind: args::Kind,
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let (tool_args, mut errors) = args::ToolArgs::for_kind(kind, attr);
    let item: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(_) => {
            let error = syn::Error::new_spanned(
                &item,
                format!("{} goes on a free `fn` or `async fn`", kind.attribute()),
            );
            errors.push(error);
            // Give back what the user wrote so the rest of their code still resolves.
            let errors = errors.into_iter().map(|e| e.to_compile_error());
            return quote::quote!(#(#errors)* #item);
        }
    };
    let tool = ast::ToolFn::from_syn(item, kind, &mut errors);
    let checked = valid::check(&tool_args, &tool, &mut errors);
    if errors.is_empty() {
        expand::expand(&tool_args, &tool, &checked)
    } else {
        fallback::expand(Some(tool.item), errors)
    }
}
