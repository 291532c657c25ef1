//! The `#[tool]` attribute macro. Use it through `tool_runtime::tool`; the runtime crate's
//! documentation describes what it accepts and what it generates.
//!
//! The macro works in stages, one module each: `args` reads `#[tool(...)]`, `doc` reads
//! the doc comments, `ast` builds a model of the function, `valid` checks it, and
//! `expand` writes the code, or `fallback` writes the errors and the function.

mod args;
mod ast;
mod doc;
mod expand;
mod fallback;
mod valid;

use proc_macro::TokenStream;

/// Turns a function into a tool of the static catalog. See `tool_runtime::tool`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool_impl(attr.into(), item.into()).into()
}

fn tool_impl(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let (tool_args, mut errors) = args::ToolArgs::from_tokens(attr);
    let item: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(_) => {
            let error = syn::Error::new_spanned(&item, "#[tool] goes on a free `fn` or `async fn`");
            errors.push(error);
            // Give back what the user wrote so the rest of their code still resolves.
            let errors = errors.into_iter().map(|e| e.to_compile_error());
            return quote::quote!(#(#errors)* #item);
        }
    };
    let tool = ast::ToolFn::from_syn(item, &mut errors);
    let checked = valid::check(&tool_args, &tool, &mut errors);
    if errors.is_empty() {
        expand::expand(&tool_args, &tool, &checked)
    } else {
        fallback::expand(Some(tool.item), errors)
    }
}
