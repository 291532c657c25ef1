//! Writes the code for a checked tool: the function unchanged, a call shim, the parameter
//! table and the registration. Generated code is thin: every decision that can be made at
//! run time is made by `tool_runtime::__private` helpers, which are ordinary tested code.

use crate::args::{Hint, Kind, ToolArgs};
use crate::ast::{Bound, Param, ParamDefault, ToolFn};
use crate::valid::{Checked, CheckedExample, DeferredCheck, DeferredKind};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

/// The path generated code reaches the runtime through.
fn runtime() -> TokenStream {
    quote!(::tool_runtime::__private)
}

pub fn expand(args: &ToolArgs, tool: &ToolFn, checked: &Checked) -> TokenStream {
    let item = tool.stripped_item();
    let rt = runtime();
    let invoke = invoke_fn(args.kind, tool);
    let output_schema = output_schema_fn(args.kind, tool);
    let defaults = tool
        .params
        .iter()
        .enumerate()
        .filter_map(|(index, param)| default_fn(param, index));
    let deferred = checked
        .deferred
        .iter()
        .map(|check| deferred_check(&tool.params[check.param], check));
    let resource_checks = resource_checks(args, tool);
    let completer_fns = tool
        .params
        .iter()
        .enumerate()
        .filter_map(|(index, param)| completer_fn(param, index));
    let params = tool
        .params
        .iter()
        .zip(&checked.param_docs)
        .enumerate()
        .map(|(index, (param, doc))| param_spec(param, doc.as_deref(), index));
    let param_count = tool.params.len();
    let about = description(args, tool, checked);
    let surface = surface(args);
    let requirements = tool.params.iter().map(|param| {
        let ty = &param.ty;
        quote_spanned!(ty.span()=> <#ty as #rt::ToolParam>::requirement)
    });
    let completers = completers(tool);

    quote! {
        #item

        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all, non_snake_case)]
        const _: () = {
            #invoke

            #output_schema

            #(#defaults)*

            #(#deferred)*

            #(#resource_checks)*

            #(#completer_fns)*

            static __TOOL_PARAMS: [#rt::ParamSpec; #param_count] = [#(#params),*];

            #rt::register_tool! {
                #rt::ToolRegistration {
                    about: #about,
                    registered: #surface,
                    invoke: __tool_invoke,
                    requirements: &[#(#requirements),*],
                    completers: &[#(#completers),*],
                }
            }
        };
    }
}

/// `__tool_invoke`: reads each parameter (compile-time checks first), and gives the work
/// that calls the function and converts its output as its kind says.
fn invoke_fn(kind: Kind, tool: &ToolFn) -> TokenStream {
    let rt = runtime();
    let ident = &tool.ident;
    let values: Vec<_> = (0..tool.params.len())
        .map(|i| format_ident!("__tool_p{}", i))
        .collect();
    let extractions = tool
        .params
        .iter()
        .enumerate()
        .map(|(index, param)| extraction(param, index));
    let checks = tool.params.iter().filter_map(|param| {
        let ty = &param.ty;
        if param.injected {
            Some(quote_spanned!(ty.span()=> #rt::assert_injected::<#ty>();))
        } else if param.spelled_option {
            Some(quote_spanned!(ty.span()=> #rt::assert_option::<#ty>();))
        } else {
            None
        }
    });
    let convert = output_conversion(kind, tool);
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
    quote! {
        fn __tool_invoke(
            __tool_args: &mut #rt::ArgumentReader<'_>,
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
    }
}

/// The type the function returns (`()` when it returns nothing), and where to report it.
fn output_type(tool: &ToolFn) -> (TokenStream, proc_macro2::Span) {
    match &tool.output {
        Some(ty) => (quote!(#ty), ty.span()),
        None => (quote!(()), tool.ident.span()),
    }
}

/// The conversion of `__tool_output` into what a call of this kind answers, spanned on the
/// output type so a trait error lands there.
fn output_conversion(kind: Kind, tool: &ToolFn) -> TokenStream {
    let rt = runtime();
    let (output_ty, output_span) = output_type(tool);
    match kind {
        Kind::Tool => quote_spanned! {output_span=>
            #[allow(unused_imports)]
            use #rt::{ViaContentResult as _, ViaContent as _, ViaResult as _, ViaSerialize as _};
            (&&&&#rt::OutputProbe::<#output_ty>::new()).tool_output_kind().convert(__tool_output)
        },
        Kind::Prompt => quote_spanned! {output_span=>
            #rt::prompt_output::<#output_ty>(__tool_output)
        },
        Kind::Resource => quote_spanned! {output_span=>
            #rt::resource_output::<#output_ty>(__tool_output)
        },
    }
}

/// `__tool_output_schema`: a tool's output schema when its type has one; prompts and
/// resources have none.
fn output_schema_fn(kind: Kind, tool: &ToolFn) -> TokenStream {
    let rt = runtime();
    let (output_ty, _) = output_type(tool);
    let body = match kind {
        Kind::Tool => quote! {
            #[allow(unused_imports)]
            use #rt::{
                OutputSchemaViaResult as _, OutputSchemaNoneForResult as _,
                OutputSchemaViaType as _, OutputSchemaNone as _,
            };
            (&&&&#rt::OutputProbe::<#output_ty>::new()).output_schema(__tool_generator)
        },
        Kind::Prompt | Kind::Resource => quote! {
            let _ = __tool_generator;
            ::core::option::Option::None
        },
    };
    quote! {
        fn __tool_output_schema(
            __tool_generator: &mut #rt::SchemaGenerator,
        ) -> ::core::option::Option<#rt::Schema> {
            #body
        }
    }
}

/// What the registration is: a tool, a prompt, or a resource with its URI.
fn surface(args: &ToolArgs) -> TokenStream {
    let rt = runtime();
    match args.kind {
        Kind::Tool => quote!(#rt::Registered::Tool),
        Kind::Prompt => quote!(#rt::Registered::Prompt),
        Kind::Resource => {
            let uri = args.uri.as_ref().map(|uri| uri.value()).unwrap_or_default();
            let mime_type = option_str(args.mime_type.as_ref().map(|m| m.value()).as_deref());
            let size = match args.size {
                Some(size) => quote!(::core::option::Option::Some(#size)),
                None => quote!(::core::option::Option::None),
            };
            quote!(#rt::Registered::Resource(#rt::ResourceSpec {
                uri: #uri,
                mime_type: #mime_type,
                size: #size,
            }))
        }
    }
}

/// The completion function of each parameter, or none.
fn completers(tool: &ToolFn) -> Vec<TokenStream> {
    let rt = runtime();
    let completer = |(index, param): (usize, &Param)| match param.complete.is_some() {
        true => {
            let name = format_ident!("__tool_complete_{}", index);
            quote!(::core::option::Option::Some(#name as #rt::CompleteFn))
        }
        false => quote!(::core::option::Option::None),
    };
    tool.params.iter().enumerate().map(completer).collect()
}

/// A resource's checks that every parameter not in its URI template is filled in by the
/// runtime (what only the compiler can tell, through aliases).
fn resource_checks(args: &ToolArgs, tool: &ToolFn) -> Vec<TokenStream> {
    if args.kind != Kind::Resource {
        return Vec::new();
    }
    let rt = runtime();
    let variables = args
        .uri
        .as_ref()
        .and_then(|uri| crate::valid::template_variables(&uri.value()).ok())
        .unwrap_or_default();
    tool.params
        .iter()
        .filter(|param| {
            !param.injected && !param.surely_an_argument() && !variables.contains(&param.wire_name)
        })
        .map(|param| {
            let ty = &param.ty;
            let message = format!(
                "parameter `{}` is not a variable of the URI template; add `{{{{{}}}}}` to it \
                 (a resource's arguments all come from its URI)",
                param.wire_name, param.wire_name
            );
            quote_spanned! {ty.span()=>
                const _: () = ::core::assert!(<#ty as #rt::ToolParam>::INJECTED, #message);
            }
        })
        .collect()
}

/// The `ToolDescription`: names, docs, examples, hints and limits.
fn description(args: &ToolArgs, tool: &ToolFn, checked: &Checked) -> TokenStream {
    let rt = runtime();
    let name = &checked.name;
    let title = option_str(checked.title.as_deref());
    let summary = &checked.summary;
    let description = &checked.description;
    let examples = checked.examples.iter().map(|example| match example {
        CheckedExample::Arguments(json) => quote!(#rt::Example::Arguments(#json)),
        CheckedExample::Text(text) => quote!(#rt::Example::Text(#text)),
    });
    let (read_only, destructive) = (hint(args.read_only), hint(args.destructive));
    let (idempotent, open_world) = (hint(args.idempotent), hint(args.open_world));
    let timeout = match args.timeout_ms {
        Some(millis) => {
            quote!(::core::option::Option::Some(::core::time::Duration::from_millis(#millis)))
        }
        None => quote!(::core::option::Option::None),
    };
    let rate = match args.rate {
        Some((count, per_ms)) => {
            quote!(::core::option::Option::Some(#rt::Rate::__checked(#count, #per_ms)))
        }
        None => quote!(::core::option::Option::None),
    };
    let scopes = args.scopes.iter().flatten();
    let layers = args.layers.iter().flatten();
    let cache = match args.cache_ms {
        Some((millis, _)) => {
            let everyone = args.same_for_everyone.is_some_and(|hint| hint.value);
            quote!(::core::option::Option::Some(#rt::CachePolicy::__from_macro(#millis, #everyone)))
        }
        None => quote!(::core::option::Option::None),
    };
    let large_output_as_resource = args.large_output_as_resource.unwrap_or(false);
    let exclusive = args.exclusive.is_some_and(|hint| hint.value);
    let approval = args.approval.is_some_and(|hint| hint.value);
    let forms = forms(tool);
    let task = match args.task {
        Some(crate::args::Task::Optional) => quote!(#rt::TaskSupport::Optional),
        Some(crate::args::Task::Required) => quote!(#rt::TaskSupport::Required),
        Some(crate::args::Task::Forbidden) | None => quote!(#rt::TaskSupport::Forbidden),
    };
    let location = quote_spanned! {tool.ident.span()=>
        #rt::SourceLocation {
            file: ::core::file!(),
            line: ::core::line!(),
            module_path: ::core::module_path!(),
            package: ::core::env!("CARGO_PKG_NAME"),
            version: ::core::env!("CARGO_PKG_VERSION"),
        }
    };
    quote! {
        #rt::ToolDescription {
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
            rate: #rate,
            scopes: &[#(#scopes),*],
            large_output_as_resource: #large_output_as_resource,
            task: #task,
            exclusive: #exclusive,
            approval: #approval,
            layers: &[#(#layers),*],
            cache: #cache,
            forms: &[#(#forms),*],
            output_schema: __tool_output_schema,
            location: #location,
        }
    }
}

/// The forms the function's body elicits, each with the schema its type gives.
fn forms(tool: &ToolFn) -> Vec<TokenStream> {
    let rt = runtime();
    crate::forms::forms_in(&tool.item)
        .into_iter()
        .map(|ty| {
            let shown = quote::ToTokens::to_token_stream(&ty)
                .to_string()
                .replace(' ', "");
            quote_spanned! {ty.span()=>
                #rt::FormSpec {
                    name: #shown,
                    schema: <#ty as #rt::ElicitForm>::requested_schema,
                }
            }
        })
        .collect()
}

/// The expression that produces one parameter's value, spanned on its type so a trait error
/// lands there.
fn extraction(param: &Param, index: usize) -> TokenStream {
    let rt = quote!(::tool_runtime::__private);
    let ty = &param.ty;
    match &param.default {
        ParamDefault::None => {
            quote_spanned!(ty.span()=> <#ty as #rt::ToolParam>::read(__tool_args, #index))
        }
        ParamDefault::Trait(span) => quote_spanned! {*span=>
            <#ty as #rt::ToolParam>::read_or_else(
                __tool_args, #index, <#ty as ::core::default::Default>::default,
            )
        },
        ParamDefault::Expr(expr) => quote_spanned! {expr.span()=>
            <#ty as #rt::ToolParam>::read_or_else(__tool_args, #index, || -> #ty { #expr })
        },
    }
}

fn param_spec(param: &Param, doc: Option<&str>, index: usize) -> TokenStream {
    let rt = quote!(::tool_runtime::__private);
    let ty = &param.ty;
    let name = &param.wire_name;
    let description = option_str(doc);
    let default = match param.default {
        ParamDefault::None => quote!(::core::option::Option::None),
        _ => {
            let default_fn = format_ident!("__tool_default_{}", index);
            quote!(::core::option::Option::Some(#default_fn))
        }
    };
    let kind = quote_spanned!(ty.span()=> <#ty as #rt::ToolParam>::KIND);
    let header = match &param.header {
        Some(header) => quote!(::core::option::Option::Some(#header)),
        None => quote!(::core::option::Option::None),
    };
    let limits = limits(param);
    quote! {
        #rt::ParamSpec {
            name: #name,
            description: #description,
            kind: #kind,
            default: #default,
            header: #header,
            limits: &[#(#limits),*],
        }
    }
}

/// The schema keywords of a parameter's `range`, `length` and `pattern`: each keyword
/// comes from the trait that says which types the limit fits, named at the limit, so a
/// misfit is reported there (and a length is `minLength` or `minItems` as the type says).
fn limits(param: &Param) -> Vec<TokenStream> {
    let rt = quote!(::tool_runtime::__private);
    let ty = &param.ty;
    let value = |bound: Bound| match bound {
        Bound::Integer(value) => quote!(#rt::LimitValue::Integer(#value)),
        Bound::Number(value) => quote!(#rt::LimitValue::Number(#value)),
    };
    let mut limits = Vec::new();
    for (bounds, limit) in [
        (&param.range, quote!(RangeLimit)),
        (&param.length, quote!(LengthLimit)),
    ] {
        let Some(bounds) = bounds else { continue };
        let span = bounds.span;
        if let Some(min) = bounds.min.map(value) {
            limits.push(quote_spanned!(span=> (<#ty as #rt::#limit>::MIN, #min)));
        }
        if let Some(max) = bounds.max.map(value) {
            limits.push(quote_spanned!(span=> (<#ty as #rt::#limit>::MAX, #max)));
        }
    }
    if let Some(pattern) = &param.pattern {
        let literal = &pattern.literal;
        limits.push(quote_spanned!(literal.span()=>
            (<#ty as #rt::PatternLimit>::KEYWORD, #rt::LimitValue::Text(#literal))
        ));
    }
    limits
}

/// A compile-time assertion that finishes an example check the macro could not: whether a
/// parameter's type is an `Option` or runtime-provided, seen through any alias.
fn deferred_check(param: &Param, check: &DeferredCheck) -> TokenStream {
    let rt = quote!(::tool_runtime::__private);
    let ty = &param.ty;
    let name = &param.wire_name;
    // The message is an `assert!` format string with no arguments: braces are escaped.
    let escape = |message: String| message.replace('{', "{{").replace('}', "}}");
    let assertion = match check.kind {
        DeferredKind::Omitted => {
            let message = format!(
                "this example leaves out `{name}`, which is required; give it a value, or make \
                 the parameter optional with `Option<...>` or #[arg(default)]"
            );
            let message = escape(message);
            quote_spanned! {check.span=>
                ::core::assert!(
                    #rt::OptionProbe::<#ty>::IS_OPTION || <#ty as #rt::ToolParam>::INJECTED,
                    #message
                )
            }
        }
        DeferredKind::Given => {
            let message = format!(
                "this example gives `{name}`, which the runtime fills in and callers never \
                 give; remove it from the example"
            );
            let message = escape(message);
            quote_spanned! {check.span=>
                ::core::assert!(!<#ty as #rt::ToolParam>::INJECTED, #message)
            }
        }
    };
    quote_spanned! {check.span=>
        const _: () = {
            #[allow(unused_imports)]
            use #rt::NotOption as _;
            #assertion
        };
    }
}

/// The completion function of a parameter with `#[arg(complete = path)]`, as a plain `fn`
/// the registration can hold; the path is spanned so a wrong signature is reported on it.
fn completer_fn(param: &Param, index: usize) -> Option<TokenStream> {
    let rt = quote!(::tool_runtime::__private);
    let path = param.complete.as_ref()?;
    let name = format_ident!("__tool_complete_{}", index);
    let call = quote_spanned! {path.span()=>
        #rt::complete_with(#path, __tool_typed, __tool_context)
    };
    Some(quote! {
        fn #name(
            __tool_typed: &str,
            __tool_context: &#rt::CompletionContext,
        ) -> ::std::vec::Vec<::std::string::String> {
            #call
        }
    })
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
