//! Cross-cutting checks of a tool: its name, its descriptions, its parameter docs and its
//! examples. Produces the checked facts the expansion writes out.

use crate::args::{Kind, ToolArgs};
use crate::ast::ToolFn;
use crate::doc::{self, ExampleKind};
use proc_macro2::Span;
use tool_rules::check_name;

/// The facts about a tool that passed every check.
pub struct Checked {
    pub name: String,
    pub title: Option<String>,
    pub summary: String,
    pub description: String,
    /// Per parameter, in declaration order.
    pub param_docs: Vec<Option<String>>,
    pub examples: Vec<CheckedExample>,
    /// Example checks only the compiler can finish, because they depend on what a
    /// parameter's type really is (an alias of `Option` or of `State<T>` looks like any
    /// other type to the macro).
    pub deferred: Vec<DeferredCheck>,
}

/// A check of an example against a parameter whose type the macro cannot see through.
pub struct DeferredCheck {
    pub span: Span,
    pub param: usize,
    pub kind: DeferredKind,
}

pub enum DeferredKind {
    /// The example leaves the parameter out: it must be an `Option` (or runtime-provided).
    Omitted,
    /// The example gives the parameter: it must not be runtime-provided.
    Given,
}

pub enum CheckedExample {
    /// Canonical JSON text of an argument object.
    Arguments(String),
    Text(String),
}

pub fn check(args: &ToolArgs, tool: &ToolFn, errors: &mut Vec<syn::Error>) -> Checked {
    let (name, name_span) = match &args.name {
        Some(lit) => (lit.value(), lit.span()),
        None => (
            tool.ident.to_string().trim_start_matches("r#").to_owned(),
            tool.ident.span(),
        ),
    };
    check_name_of(args.kind, &name, name_span, errors);
    match args.kind {
        Kind::Tool => {
            check_no_completions(tool, errors);
            check_cache(args, name_span, errors);
        }
        Kind::Resource => check_template(args, tool, errors),
        Kind::Prompt => {}
    }
    check_headers(args.kind, tool, errors);

    let doc = doc::parse(&tool.doc_lines);
    let span_of = |origin: usize| tool.doc_spans.get(origin).copied().unwrap_or(name_span);
    for error in &doc.errors {
        errors.push(syn::Error::new(span_of(error.origin), &error.message));
    }
    let (summary, description) = descriptions(args, tool, &name, &doc, errors);
    let param_docs = param_docs(tool, &doc, &span_of, errors);
    let mut examples = Vec::new();
    let mut deferred = Vec::new();
    for example in &doc.examples {
        match &example.kind {
            ExampleKind::Text(text) => examples.push(CheckedExample::Text(text.clone())),
            ExampleKind::Arguments(object, order) => {
                let span = span_of(example.origin);
                let before = errors.len();
                check_example_keys(tool, order, span, errors, &mut deferred);
                check_example_limits(tool, object, span, errors);
                if errors.len() == before {
                    let json = serde_json::to_string(object).unwrap_or_default();
                    examples.push(CheckedExample::Arguments(json));
                }
            }
        }
    }

    Checked {
        name,
        title: args.title.as_ref().map(|t| t.value()),
        summary,
        description,
        param_docs,
        examples,
        deferred,
    }
}

/// `cache` only on a tool that says it changes nothing (`read_only`): an answer kept and
/// given again in place of a call is right only for a call that has no effect.
/// `same_for_everyone` only with `cache`.
fn check_cache(args: &ToolArgs, name_span: Span, errors: &mut Vec<syn::Error>) {
    let read_only = args.read_only.is_some_and(|hint| hint.value);
    if let Some((_, span)) = args.cache_ms {
        if !read_only {
            errors.push(syn::Error::new(
                span,
                "`cache` needs `read_only`: an answer is given again from the cache only for a \
                 tool that changes nothing; add `read_only` if calling it has no effect",
            ));
        }
    } else if args.same_for_everyone.is_some() {
        errors.push(syn::Error::new(
            name_span,
            "`same_for_everyone` says who shares a cached answer; it needs `cache = \"...\"`",
        ));
    }
}

/// A tool's or prompt's name follows the naming rule; a resource's is not empty.
fn check_name_of(kind: Kind, name: &str, span: Span, errors: &mut Vec<syn::Error>) {
    if kind == Kind::Resource {
        if name.trim().is_empty() {
            errors.push(syn::Error::new(span, "a resource's name cannot be empty"));
        }
    } else if let Err(reason) = check_name(name) {
        errors.push(syn::Error::new(
            span,
            format!("`{name}` is not a valid {} name: {reason}", kind.noun()),
        ));
    }
}

/// A tool's arguments are not completed: clients complete prompt arguments and template
/// variables only.
fn check_no_completions(tool: &ToolFn, errors: &mut Vec<syn::Error>) {
    for param in &tool.params {
        if let Some(path) = &param.complete {
            errors.push(syn::Error::new_spanned(
                path,
                "`complete` is for the arguments of a #[prompt] and the variables of a \
                 #[resource] template: clients ask to complete those, not tool arguments",
            ));
        }
    }
}

/// The summary and the description: the attribute's, else the doc comment's; one of them
/// must say something.
fn descriptions(
    args: &ToolArgs,
    tool: &ToolFn,
    name: &str,
    doc: &doc::ToolDoc,
    errors: &mut Vec<syn::Error>,
) -> (String, String) {
    if let Some(lit) = &args.description {
        let text = lit.value().trim().to_owned();
        if text.is_empty() {
            errors.push(syn::Error::new(lit.span(), "the description is empty"));
        }
        return (doc::first_paragraph(&text), text);
    }
    if doc.description.trim().is_empty() {
        let kind = args.kind;
        let message = match kind {
            Kind::Tool => format!(
                "tool `{name}` has no description: add a doc comment (`/// What it does.`) or \
                 #[tool(description = \"...\")]; the model reads it to decide when to call \
                 the tool"
            ),
            _ => format!(
                "{} `{name}` has no description: add a doc comment (`/// What it is.`) or \
                 {}(description = \"...\")]; clients show it to the user",
                kind.noun(),
                kind.attribute().trim_end_matches(']')
            ),
        };
        errors.push(syn::Error::new(tool.ident.span(), message));
    }
    (doc.summary.clone(), doc.description.clone())
}

/// Each parameter's doc: from `///` on the parameter, or from the doc comment's arguments
/// section (never both, and never for a parameter the runtime fills in).
fn param_docs(
    tool: &ToolFn,
    doc: &doc::ToolDoc,
    span_of: &dyn Fn(usize) -> Span,
    errors: &mut Vec<syn::Error>,
) -> Vec<Option<String>> {
    let mut param_docs: Vec<Option<String>> = tool.params.iter().map(|p| p.doc.clone()).collect();
    for section_doc in &doc.params {
        let found = tool
            .params
            .iter()
            .position(|p| p.wire_name == section_doc.name || p.ident == section_doc.name);
        let span = span_of(section_doc.origin);
        let name = &section_doc.name;
        match found {
            Some(index) if tool.params[index].injected => errors.push(syn::Error::new(
                span,
                format!(
                    "`{name}` is filled in by the runtime and is not shown to callers; remove \
                     its documentation from the arguments section"
                ),
            )),
            Some(index) if param_docs[index].is_some() => errors.push(syn::Error::new(
                span,
                format!(
                    "parameter `{name}` is documented twice: on the parameter and in the \
                     arguments section"
                ),
            )),
            Some(index) => param_docs[index] = Some(section_doc.text.clone()),
            None => errors.push(syn::Error::new(
                span,
                format!(
                    "this documents `{name}`, which is not a parameter of `{}`; parameters: {}",
                    tool.ident,
                    argument_list(tool)
                ),
            )),
        }
    }
    param_docs
}

/// A resource's URI template and the function agree: every variable is a parameter, and
/// every parameter the caller gives is a variable. (Parameters the runtime fills in are
/// not variables; the expansion asks the compiler to confirm those it cannot see.)
fn check_template(args: &ToolArgs, tool: &ToolFn, errors: &mut Vec<syn::Error>) {
    let Some(uri) = &args.uri else {
        return;
    };
    if !has_scheme(&uri.value()) {
        errors.push(syn::Error::new(
            uri.span(),
            "a resource URI starts with a scheme, such as `files://` or `notes:`; clients \
             read resources by URI",
        ));
    }
    let variables = match template_variables(&uri.value()) {
        Ok(variables) => variables,
        Err(reason) => {
            errors.push(syn::Error::new(
                uri.span(),
                format!("invalid URI template: {reason}"),
            ));
            return;
        }
    };
    for variable in &variables {
        if !tool
            .params
            .iter()
            .any(|param| param.wire_name == *variable && !param.injected)
        {
            errors.push(syn::Error::new(
                uri.span(),
                format!(
                    "the URI template has the variable `{variable}`, but `{}` has no parameter \
                    `{variable}`; add `{variable}: String` (or any type read from text)",
                    tool.ident
                ),
            ));
        }
    }
    for param in &tool.params {
        if param.injected || variables.contains(&param.wire_name) {
            continue;
        }
        if param.surely_an_argument() {
            errors.push(syn::Error::new(
                uri.span(),
                format!(
                    "parameter `{}` is not a variable of the URI template; add `{{{}}}` to it (a \
                    resource's arguments all come from its URI)",
                    param.wire_name, param.wire_name
                ),
            ));
        }
    }
}

/// `#[arg(header = "Name")]`: only on a tool's arguments, a valid HTTP header name, and
/// unique (ignoring case) among the tool's parameters.
fn check_headers(kind: Kind, tool: &ToolFn, errors: &mut Vec<syn::Error>) {
    let mut seen: Vec<String> = Vec::new();
    for param in &tool.params {
        let Some(header) = &param.header else {
            continue;
        };
        let name = header.value();
        if kind != Kind::Tool {
            errors.push(syn::Error::new(
                header.span(),
                "`header` is for tool arguments: only `tools/call` mirrors arguments in HTTP \
                headers",
            ));
        } else if param.injected {
            errors.push(syn::Error::new(
                header.span(),
                "a parameter filled in by the runtime is not sent by clients, so no header can \
                mirror it",
            ));
        } else if tool_rules::check_header_name(&name).is_err() {
            errors.push(syn::Error::new(
                header.span(),
                format!(
                    "`{name}` is not an HTTP header name: use letters, digits and `-` (it becomes \
                    `Mcp-Param-{name}`)"
                ),
            ));
        } else if seen.contains(&name.to_ascii_lowercase()) {
            errors.push(syn::Error::new(
                header.span(),
                format!(
                    "the header `{name}` is given to two parameters (names compare ignoring case)"
                ),
            ));
        }
        seen.push(name.to_ascii_lowercase());
    }
}

/// Whether `uri` starts with an RFC 3986 scheme: a letter, then letters, digits, `+`, `-`
/// or `.`, then `:`. (The runtime's `UriTemplate::has_scheme` is the same rule for
/// resources made at run time; this crate cannot depend on the runtime.)
fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The variable names of an RFC 6570 URI template, in order. (The runtime parses templates
/// fully to match URIs; the macro needs only the names, and cannot depend on the runtime.)
pub fn template_variables(template: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find(['{', '}']) {
        if rest.as_bytes()[open] == b'}' {
            return Err("a `}` without its `{`".to_owned());
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| "a `{` is never closed".to_owned())?;
        let body = &after[..close];
        let list = body
            .strip_prefix(['+', '#', '.', '/', ';', '?', '&'])
            .unwrap_or(body);
        for spec in list.split(',') {
            let name = spec
                .strip_suffix('*')
                .unwrap_or_else(|| spec.split(':').next().unwrap_or(spec));
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '%');
            if !valid {
                return Err(format!(
                    "`{{{body}}}` is not a valid expression: variable names are letters, digits \
                     and `_`"
                ));
            }
            names.push(name.to_owned());
        }
        rest = &after[close + 1..];
    }
    Ok(names)
}

fn check_example_keys(
    tool: &ToolFn,
    keys: &[String],
    span: Span,
    errors: &mut Vec<syn::Error>,
    deferred: &mut Vec<DeferredCheck>,
) {
    let arguments: Vec<(usize, &crate::ast::Param)> = tool
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.injected)
        .collect();
    for key in keys {
        let given = arguments.iter().find(|(_, p)| &p.wire_name == key);
        if let Some((index, param)) = given {
            if !param.surely_an_argument() {
                deferred.push(DeferredCheck {
                    span,
                    param: *index,
                    kind: DeferredKind::Given,
                });
            }
        } else {
            let names = arguments.iter().map(|(_, p)| p.wire_name.as_str());
            let suggestion = tool_rules::closest(key, names, 0.7)
                .map(|name| format!("did you mean `{name}`? "))
                .unwrap_or_default();
            errors.push(syn::Error::new(
                span,
                format!(
                    "this example names `{key}`, which is not a parameter of `{}`; \
                     {suggestion}parameters: {}",
                    tool.ident,
                    argument_list(tool)
                ),
            ));
        }
    }
    for (index, param) in arguments {
        if param.optional() || keys.contains(&param.wire_name) {
            continue;
        }
        if !param.surely_an_argument() {
            deferred.push(DeferredCheck {
                span,
                param: index,
                kind: DeferredKind::Omitted,
            });
        } else {
            errors.push(syn::Error::new(
                span,
                format!(
                    "this example leaves out `{}`, which is required; give it a value, or make \
                     the parameter optional with `Option<...>` or #[arg(default)]",
                    param.wire_name
                ),
            ));
        }
    }
}

/// The values an example gives fit the parameters' types, where the macro can see them
/// (strings, numbers and their ranges, booleans, options and lists of these), and their
/// `range`, `length` and `pattern`. A type it cannot see through is left to the schema
/// check.
fn check_example_limits(
    tool: &ToolFn,
    object: &serde_json::Map<String, serde_json::Value>,
    span: Span,
    errors: &mut Vec<syn::Error>,
) {
    for param in tool.params.iter().filter(|p| !p.injected) {
        let Some(value) = object.get(&param.wire_name) else {
            continue;
        };
        let name = &param.wire_name;
        if let Some(expected) = crate::example_types::mismatch(&param.ty, value) {
            errors.push(syn::Error::new(
                span,
                format!("this example gives `{name}` = {value}, but `{name}` takes {expected}"),
            ));
            continue;
        }
        let mut fail = |message: String| {
            errors.push(syn::Error::new(
                span,
                format!("this example gives `{name}` = {value}, {message}"),
            ));
        };
        if let (Some(bounds), Some(number)) = (&param.range, value.as_f64()) {
            if let Some(min) = bounds.min.filter(|min| number < min.as_f64()) {
                fail(format!("below its minimum {min} (#[arg(range(...))])"));
            }
            if let Some(max) = bounds.max.filter(|max| number > max.as_f64()) {
                fail(format!("above its maximum {max} (#[arg(range(...))])"));
            }
        }
        let length = match value {
            serde_json::Value::String(text) => Some((text.chars().count(), "characters")),
            serde_json::Value::Array(items) => Some((items.len(), "items")),
            _ => None,
        };
        if let (Some(bounds), Some((length, unit))) = (&param.length, length) {
            #[allow(clippy::cast_precision_loss)]
            let length_number = length as f64;
            if let Some(min) = bounds.min.filter(|min| length_number < min.as_f64()) {
                fail(format!(
                    "{length} {unit}, fewer than its least length {min} (#[arg(length(...))])"
                ));
            }
            if let Some(max) = bounds.max.filter(|max| length_number > max.as_f64()) {
                fail(format!(
                    "{length} {unit}, more than its greatest length {max} (#[arg(length(...))])"
                ));
            }
        }
        if let (Some(pattern), Some(text)) = (&param.pattern, value.as_str()) {
            if !pattern.matches(text) {
                fail(format!(
                    "which does not match its pattern `{}`",
                    pattern.literal.value()
                ));
            }
        }
    }
}

fn argument_list(tool: &ToolFn) -> String {
    let names: Vec<&str> = tool
        .params
        .iter()
        .filter(|p| !p.injected)
        .map(|p| p.wire_name.as_str())
        .collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}
