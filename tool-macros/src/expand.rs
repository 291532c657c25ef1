//! Writes the code for a checked tool: the function unchanged, a call shim, the parameter
//! table and the registration. Generated code is thin: every decision that can be made at
//! run time is made by `tool_runtime::__private` helpers, which are ordinary tested code.

use crate::args::{Hint, ToolArgs};
use crate::ast::{Param, ParamDefault, ToolFn};
use crate::valid::{Checked, CheckedExample};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

pub fn expand(args: &ToolArgs, tool: &ToolFn, checked: &Checked) -> TokenStream {
    let item = tool.stripped_item();
    let rt = quote!(::tool_runtime::__private);
    let ident = &tool.ident;

    let values: Vec<_> = (0..tool.params.len())
        .map(|i| format_ident!("__tool_p{}", i))
        .collect();
    let extractions = tool
        .params
        .iter()
        .enumerate()
        .map(|(index, param)| extraction(param, index));
    let checks = tool
        .params
        .iter()
        .filter(|p| p.spelled_option)
        .map(|param| {
            let ty = &param.ty;
            quote_spanned!(ty.span()=> #rt::assert_option::<#ty>();)
        });

    let output_ty = match &tool.output {
        Some(ty) => quote!(#ty),
        None => quote!(()),
    };
    let output_span = tool.output.as_ref().map_or(ident.span(), |ty| ty.span());
    let convert = quote_spanned! {output_span=>
        #[allow(unused_imports)]
        use #rt::{ViaContentResult as _, ViaContent as _, ViaResult as _, ViaSerialize as _};
        (&&&&#rt::OutputProbe::<#output_ty>::new()).tool_output_kind().convert(__tool_output)
    };
    let invocation = if tool.is_async {
        quote! {
            #rt::Invocation::Async(::std::boxed::Box::pin(async move {
                let __tool_output = #ident(#(#values),*).await;
                #convert
            }))
        }
    } else {
        quote! {
            #rt::Invocation::Blocking(::std::boxed::Box::new(move || {
                let __tool_output = #ident(#(#values),*);
                #convert
            }))
        }
    };

    let params = tool
        .params
        .iter()
        .zip(&checked.param_docs)
        .enumerate()
        .map(|(index, (param, doc))| param_spec(param, doc.as_deref(), index));
    let defaults = tool
        .params
        .iter()
        .enumerate()
        .filter_map(|(index, param)| default_fn(param, index));
    let param_count = tool.params.len();

    let name = &checked.name;
    let title = option_str(checked.title.as_deref());
    let summary = &checked.summary;
    let description = &checked.description;
    let examples = checked.examples.iter().map(|example| match example {
        CheckedExample::Arguments(json) => quote!(#rt::Example::Arguments(#json)),
        CheckedExample::Text(text) => quote!(#rt::Example::Text(#text)),
    });
    let read_only = hint(args.read_only);
    let destructive = hint(args.destructive);
    let idempotent = hint(args.idempotent);
    let open_world = hint(args.open_world);
    let timeout = match args.timeout_ms {
        Some(millis) => {
            quote!(::core::option::Option::Some(::core::time::Duration::from_millis(#millis)))
        }
        None => quote!(::core::option::Option::None),
    };
    let location = quote_spanned! {tool.ident.span()=>
        #rt::SourceLocation {
            file: ::core::file!(),
            line: ::core::line!(),
            module_path: ::core::module_path!(),
        }
    };

    quote! {
        #item

        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all, non_snake_case)]
        const _: () = {
            fn __tool_invoke(
                __tool_args: &mut #rt::Arguments<'_>,
            ) -> ::core::option::Option<#rt::Invocation> {
                #(#checks)*
                #(let #values = #extractions;)*
                let (#(#values,)*) = match (#(#values,)*) {
                    (#(::core::option::Option::Some(#values),)*) => (#(#values,)*),
                    #[allow(unreachable_patterns)]
                    _ => return ::core::option::Option::None,
                };
                ::core::option::Option::Some(#invocation)
            }

            fn __tool_output_schema(
                __tool_generator: &mut #rt::SchemaGenerator,
            ) -> ::core::option::Option<#rt::Schema> {
                #[allow(unused_imports)]
                use #rt::{
                    OutputSchemaViaResult as _, OutputSchemaNoneForResult as _,
                    OutputSchemaViaType as _, OutputSchemaNone as _,
                };
                (&&&&#rt::OutputProbe::<#output_ty>::new()).output_schema(__tool_generator)
            }

            #(#defaults)*

            static __TOOL_PARAMS: [#rt::ParamSpec; #param_count] = [#(#params),*];

            #rt::register_tool! {
                #rt::ToolRegistration {
                    name: #name,
                    title: #title,
                    summary: #summary,
                    description: #description,
                    examples: &[#(#examples),*],
                    params: &__TOOL_PARAMS,
                    annotations: #rt::Annotations {
                        read_only: #read_only,
                        destructive: #destructive,
                        idempotent: #idempotent,
                        open_world: #open_world,
                    },
                    timeout: #timeout,
                    output_schema: __tool_output_schema,
                    invoke: __tool_invoke,
                    location: #location,
                }
            }
        };
    }
}

/// The expression that produces one parameter's value, spanned on its type so a trait error
/// lands there.
fn extraction(param: &Param, index: usize) -> TokenStream {
    let ty = &param.ty;
    if param.injected {
        return quote_spanned!(ty.span()=> __tool_args.injected::<#ty>(#index));
    }
    match &param.default {
        ParamDefault::None => quote_spanned!(ty.span()=> __tool_args.argument::<#ty>(#index)),
        ParamDefault::Trait(span) => quote_spanned! {*span=>
            __tool_args.argument_or_else::<#ty>(#index, <#ty as ::core::default::Default>::default)
        },
        ParamDefault::Expr(expr) => quote_spanned! {expr.span()=>
            __tool_args.argument_or_else::<#ty>(#index, || -> #ty { #expr })
        },
    }
}

fn param_spec(param: &Param, doc: Option<&str>, index: usize) -> TokenStream {
    let rt = quote!(::tool_runtime::__private);
    let ty = &param.ty;
    let name = &param.wire_name;
    let description = option_str(doc);
    let kind = if param.injected {
        quote_spanned! {ty.span()=>
            #rt::ParamKind::Injected { requirement: #rt::requirement_of::<#ty> }
        }
    } else {
        let default = match param.default {
            ParamDefault::None => quote!(::core::option::Option::None),
            _ => {
                let default_fn = format_ident!("__tool_default_{}", index);
                quote!(::core::option::Option::Some(#default_fn))
            }
        };
        quote_spanned! {ty.span()=>
            #rt::ParamKind::Argument {
                schema: #rt::schema_of::<#ty>,
                optional: #rt::is_optional::<#ty>,
                default: #default,
            }
        }
    };
    quote! {
        #rt::ParamSpec { name: #name, description: #description, kind: #kind }
    }
}

/// A function giving a defaulted parameter's default as JSON, when its type can say it.
fn default_fn(param: &Param, index: usize) -> Option<TokenStream> {
    let rt = quote!(::tool_runtime::__private);
    let ty = &param.ty;
    let value = match &param.default {
        ParamDefault::None => return None,
        ParamDefault::Trait(span) => {
            quote_spanned!(*span=> <#ty as ::core::default::Default>::default())
        }
        ParamDefault::Expr(expr) => quote!(#expr),
    };
    let name = format_ident!("__tool_default_{}", index);
    Some(quote! {
        fn #name() -> ::core::option::Option<#rt::Value> {
            #[allow(unused_imports)]
            use #rt::{DefaultViaSerialize as _, DefaultNotShown as _};
            let __tool_value: #ty = #value;
            (&&#rt::DefaultProbe(&__tool_value)).default_json()
        }
    })
}

fn option_str(value: Option<&str>) -> TokenStream {
    match value {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}

fn hint(value: Option<Hint>) -> TokenStream {
    match value {
        Some(hint) => {
            let value = hint.value;
            quote!(::core::option::Option::Some(#value))
        }
        None => quote!(::core::option::Option::None),
    }
}
