//! What to emit when a tool has errors: the errors, and the function itself.
//!
//! Emitting the function (minus the helper attributes the compiler would reject) keeps code
//! that calls it compiling, so the user sees only the real mistakes.

use crate::ast::strip_param_attributes;
use proc_macro2::TokenStream;
use quote::quote;

pub fn expand(item: Option<syn::ItemFn>, errors: Vec<syn::Error>) -> TokenStream {
    let errors = errors.into_iter().map(|e| e.to_compile_error());
    let item = item.map(strip_param_attributes);
    quote! {
        #(#errors)*
        #item
    }
}
