//! The arguments of `#[tool(...)]`, `#[prompt(...)]` and `#[resource("uri", ...)]`: name,
//! title, description, and what each kind adds (the MCP hints of a tool, the URI and MIME
//! type of a resource).

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::{LitBool, LitInt, LitStr};
use tool_rules::{check_scopes, parse_duration, parse_rate};

/// Which attribute is being expanded.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub enum Kind {
    #[default]
    Tool,
    Prompt,
    Resource,
}

impl Kind {
    /// The attribute as users write it, for messages.
    pub fn attribute(self) -> &'static str {
        match self {
            Kind::Tool => "#[tool]",
            Kind::Prompt => "#[prompt]",
            Kind::Resource => "#[resource]",
        }
    }

    /// The noun for messages.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }

    /// Every key the attribute accepts, in the order the error message lists them.
    fn keys(self) -> &'static [&'static str] {
        match self {
            Kind::Tool => &[
                "name",
                "title",
                "description",
                "read_only",
                "destructive",
                "idempotent",
                "open_world",
                "timeout",
                "rate",
                "scopes",
                "large_output",
                "task",
                "exclusive",
                "approval",
                "layers",
                "cache",
                "same_for_everyone",
            ],
            Kind::Prompt => &["name", "title", "description", "timeout"],
            Kind::Resource => &[
                "name",
                "title",
                "description",
                "mime_type",
                "size",
                "timeout",
            ],
        }
    }

    /// The accepted keys, as the error message about an unknown one lists them.
    fn accepted_keys(self) -> String {
        let keys = self.keys().join(", ");
        match self {
            Kind::Resource => format!("a URI or URI template first, then {keys}"),
            _ => keys,
        }
    }
}

/// What the attribute said. Each field keeps the span of its key for later errors.
#[derive(Default)]
pub struct ToolArgs {
    pub kind: Kind,
    /// `#[resource("...")]`: the URI or URI template.
    pub uri: Option<LitStr>,
    /// `#[resource(mime_type = "...")]`.
    pub mime_type: Option<LitStr>,
    /// `#[resource(size = 1234)]`, in bytes.
    pub size: Option<u64>,
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub description: Option<LitStr>,
    pub read_only: Option<Hint>,
    pub destructive: Option<Hint>,
    pub idempotent: Option<Hint>,
    pub open_world: Option<Hint>,
    /// `timeout = "5s"`, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// `rate = "10/s"`: how many calls, per how many milliseconds.
    pub rate: Option<(u32, u64)>,
    /// `scopes = ["files:read"]`: the OAuth scopes a caller's token must grant.
    pub scopes: Option<Vec<LitStr>>,
    /// `large_output = "resource"` (true) or `"cut"` (false, the default).
    pub large_output_as_resource: Option<bool>,
    /// `task = "..."`: whether a call may, or must, run as a task.
    pub task: Option<Task>,
    /// `exclusive`: in an agent loop, a call runs alone.
    pub exclusive: Option<Hint>,
    /// `approval`: in an agent loop, a call waits for a user's approval.
    pub approval: Option<Hint>,
    /// `layers = ["audit"]`: the named layers a call of the tool goes through.
    pub layers: Option<Vec<LitStr>>,
    /// `cache = "30s"`: how long an answer is kept, in milliseconds, and the key's span.
    pub cache_ms: Option<(u64, proc_macro2::Span)>,
    /// `same_for_everyone`: a cached answer is shared by every caller.
    pub same_for_everyone: Option<Hint>,
}

/// What `task = "..."` says.
#[derive(Clone, Copy)]
pub enum Task {
    Forbidden,
    Optional,
    Required,
}

/// A boolean MCP hint: `read_only` or `read_only = false`.
#[derive(Clone, Copy)]
pub struct Hint {
    pub value: bool,
}

impl ToolArgs {
    /// Parses `#[tool]`'s tokens, collecting every error rather than stopping at the first.
    #[cfg(test)]
    pub fn from_tokens(tokens: TokenStream) -> (ToolArgs, Vec<syn::Error>) {
        Self::for_kind(Kind::Tool, tokens)
    }

    /// Parses the tokens of the attribute `kind`.
    pub fn for_kind(kind: Kind, tokens: TokenStream) -> (ToolArgs, Vec<syn::Error>) {
        let mut args = ToolArgs {
            kind,
            ..ToolArgs::default()
        };
        let mut errors = Vec::new();
        let tokens = if kind == Kind::Resource {
            match split_uri(tokens) {
                Ok((uri, rest)) => {
                    args.uri = Some(uri);
                    rest
                }
                Err(error) => {
                    errors.push(error);
                    return (args, errors);
                }
            }
        } else {
            tokens
        };
        if tokens.is_empty() {
            return (args, errors);
        }
        let parser = syn::meta::parser(|meta| {
            if let Err(error) = args.read_key(&meta) {
                errors.push(error);
            }
            Ok(())
        });
        if let Err(error) = syn::parse::Parser::parse2(parser, tokens) {
            errors.push(error);
        }
        (args, errors)
    }

    fn read_key(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        if !self.kind.keys().contains(&key.as_str()) {
            return Err(self.unknown_key(meta)?);
        }
        match key.as_str() {
            "mime_type" => set_once(&mut self.mime_type, meta, string_value(meta)?),
            "size" => {
                let size: LitInt = meta.value()?.parse()?;
                set_once(&mut self.size, meta, size.base10_parse::<u64>()?)
            }
            "name" => set_once(&mut self.name, meta, string_value(meta)?),
            "title" => set_once(&mut self.title, meta, string_value(meta)?),
            "description" => set_once(&mut self.description, meta, string_value(meta)?),
            "read_only" => set_once(&mut self.read_only, meta, hint_value(meta)?),
            "destructive" => set_once(&mut self.destructive, meta, hint_value(meta)?),
            "idempotent" => set_once(&mut self.idempotent, meta, hint_value(meta)?),
            "open_world" => set_once(&mut self.open_world, meta, hint_value(meta)?),
            "exclusive" => set_once(&mut self.exclusive, meta, hint_value(meta)?),
            "approval" => set_once(&mut self.approval, meta, hint_value(meta)?),
            "large_output" => {
                let as_resource = large_output_value(meta)?;
                set_once(&mut self.large_output_as_resource, meta, as_resource)
            }
            "task" => set_once(&mut self.task, meta, task_value(meta)?),
            "timeout" => {
                let text = string_value(meta)?;
                let millis = parse_duration(&text.value()).map_err(|reason| {
                    syn::Error::new(text.span(), format!("invalid timeout: {reason}"))
                })?;
                set_once(&mut self.timeout_ms, meta, millis)
            }
            "scopes" => set_once(&mut self.scopes, meta, scopes_value(meta)?),
            "layers" => set_once(&mut self.layers, meta, layers_value(meta)?),
            "same_for_everyone" => set_once(&mut self.same_for_everyone, meta, hint_value(meta)?),
            "cache" => {
                let text = string_value(meta)?;
                let millis = parse_duration(&text.value()).map_err(|reason| {
                    syn::Error::new(text.span(), format!("invalid cache duration: {reason}"))
                })?;
                set_once(&mut self.cache_ms, meta, (millis, text.span()))
            }
            "rate" => {
                let text = string_value(meta)?;
                let rate = parse_rate(&text.value()).map_err(|reason| {
                    syn::Error::new(text.span(), format!("invalid rate: {reason}"))
                })?;
                set_once(&mut self.rate, meta, rate)
            }
            // `keys` lets through only the keys above.
            _ => unreachable!("a key `keys` lets through has no arm"),
        }
    }

    /// The error for a key the attribute does not take, naming the ones it does; its value,
    /// if any, is consumed first, so parsing can go on to the next key.
    fn unknown_key(&self, meta: &ParseNestedMeta<'_>) -> syn::Result<syn::Error> {
        if meta.input.peek(syn::Token![=]) {
            let _: syn::Expr = meta.value()?.parse()?;
        } else if meta.input.peek(syn::token::Paren) {
            meta.parse_nested_meta(|_| Ok(()))?;
        }
        Ok(meta.error(format!(
            "unknown {} argument `{}`; accepted: {}",
            self.kind.attribute(),
            quote::ToTokens::to_token_stream(&meta.path)
                .to_string()
                .replace(' ', ""),
            self.kind.accepted_keys()
        )))
    }
}

/// `#[resource("uri", key = value, ...)]`: the URI literal, and the tokens after its comma.
fn split_uri(tokens: TokenStream) -> syn::Result<(LitStr, TokenStream)> {
    let parser = |input: syn::parse::ParseStream<'_>| {
        let uri: LitStr = input.parse().map_err(|error| {
            syn::Error::new(
                error.span(),
                "#[resource] starts with the resource's URI or URI template: \
                #[resource(\"files:///{path}\")]",
            )
        })?;
        if !input.is_empty() {
            input.parse::<syn::Token![,]>()?;
        }
        let rest: TokenStream = input.parse()?;
        Ok((uri, rest))
    };
    syn::parse::Parser::parse2(parser, tokens)
}

fn set_once<T>(slot: &mut Option<T>, meta: &ParseNestedMeta<'_>, value: T) -> syn::Result<()> {
    if slot.is_some() {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        return Err(meta.error(format!("`{key}` is given more than once")));
    }
    *slot = Some(value);
    Ok(())
}

fn string_value(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    let key = meta
        .path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    if !meta.input.peek(syn::Token![=]) {
        return Err(meta.error(format!("`{key}` needs a value: {key} = \"...\"")));
    }
    meta.value()?
        .parse::<LitStr>()
        .map_err(|e| syn::Error::new(e.span(), format!("`{key}` takes a string literal")))
}

/// `key = ["a", "b"]`: a list of string literals; `shape` says so when it is not one.
fn string_list(meta: &ParseNestedMeta<'_>, shape: &str) -> syn::Result<Vec<LitStr>> {
    if !meta.input.peek(syn::Token![=]) {
        return Err(meta.error(shape));
    }
    let value: syn::Expr = meta.value()?.parse()?;
    let syn::Expr::Array(array) = value else {
        return Err(syn::Error::new_spanned(value, shape));
    };
    array
        .elems
        .into_iter()
        .map(|element| match element {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => Ok(text),
            other => Err(syn::Error::new_spanned(other, shape)),
        })
        .collect()
}

/// `scopes = ["files:read", "files:write"]`: string literals, each a valid OAuth scope,
/// none twice.
fn scopes_value(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
    const SHAPE: &str = "`scopes` takes a list of string literals: scopes = [\"files:read\"]";
    let scopes = string_list(meta, SHAPE)?;
    let values: Vec<String> = scopes.iter().map(LitStr::value).collect();
    if let Err((index, reason)) = check_scopes(values.iter().map(String::as_str)) {
        return Err(syn::Error::new(
            scopes[index].span(),
            format!("invalid scope {:?}: {reason}", values[index]),
        ));
    }
    Ok(scopes)
}

/// `layers = ["audit", "retry"]`: string literals, each a layer's name (letters, digits,
/// `_`, `-`, `.`), none twice.
fn layers_value(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
    const SHAPE: &str = "`layers` takes a list of string literals: layers = [\"audit\"]";
    let layers = string_list(meta, SHAPE)?;
    for (index, layer) in layers.iter().enumerate() {
        let name = layer.value();
        if let Err(reason) = tool_rules::check_layer_name(&name) {
            return Err(syn::Error::new(
                layer.span(),
                format!("invalid layer name {name:?}: {reason}"),
            ));
        }
        if layers[..index].iter().any(|seen| seen.value() == name) {
            return Err(syn::Error::new(
                layer.span(),
                format!("the layer {name:?} is named twice"),
            ));
        }
    }
    Ok(layers)
}

fn hint_value(meta: &ParseNestedMeta<'_>) -> syn::Result<Hint> {
    if meta.input.peek(syn::Token![=]) {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        let value = meta.value()?.parse::<LitBool>().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("`{key}` is a flag: write `{key}` or `{key} = false`"),
            )
        })?;
        Ok(Hint { value: value.value })
    } else {
        Ok(Hint { value: true })
    }
}

/// `large_output = "resource"` (true) or `"cut"` (false).
fn large_output_value(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    let text = string_value(meta)?;
    match text.value().as_str() {
        "resource" => Ok(true),
        "cut" => Ok(false),
        other => Err(syn::Error::new(
            text.span(),
            format!(
                "large_output is \"resource\" (a large output is stored and answered as a \
                link to it, with a preview) or \"cut\" (the default: cut at the server's \
                limit), not {other:?}"
            ),
        )),
    }
}

/// `task = "optional"`, `"required"` or `"forbidden"`.
fn task_value(meta: &ParseNestedMeta<'_>) -> syn::Result<Task> {
    let text = string_value(meta)?;
    match text.value().as_str() {
        "optional" => Ok(Task::Optional),
        "required" => Ok(Task::Required),
        "forbidden" => Ok(Task::Forbidden),
        other => Err(syn::Error::new(
            text.span(),
            format!(
                "task is \"optional\" (a client that can follow tasks gets one, others wait \
                for the answer), \"required\" (only clients that can follow tasks may call it) \
                or \"forbidden\" (the default), not {other:?}"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn reads_keys_and_flags() {
        let (args, errors) = ToolArgs::from_tokens(quote!(
            name = "x",
            title = "X",
            read_only,
            destructive = false,
            open_world
        ));
        assert!(errors.is_empty());
        assert_eq!(args.name.unwrap().value(), "x");
        assert!(args.read_only.unwrap().value);
        assert!(!args.destructive.unwrap().value);
        assert!(args.idempotent.is_none());
    }

    #[test]
    fn timeouts_and_rates_read_with_the_shared_rules() {
        let (args, errors) = ToolArgs::from_tokens(quote!(rate = "5/hour"));
        assert!(errors.is_empty());
        assert_eq!(args.rate, Some((5, 3_600_000)));
        let (args, errors) = ToolArgs::from_tokens(quote!(timeout = "3s"));
        assert!(errors.is_empty());
        assert_eq!(args.timeout_ms, Some(3_000));
    }

    #[test]
    fn unknown_and_repeated_keys_are_all_reported() {
        let (_, errors) =
            ToolArgs::from_tokens(quote!(nme = "x", read_only, read_only, colour(red)));
        let messages: Vec<_> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages[0].starts_with("unknown #[tool] argument `nme`"));
        assert!(messages[0].contains(&Kind::Tool.accepted_keys()));
        assert_eq!(messages[1], "`read_only` is given more than once");
        assert!(messages[2].starts_with("unknown #[tool] argument `colour`"));
    }
}
