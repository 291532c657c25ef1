//! The `#[tool(...)]` arguments: name, title, description and the MCP hints.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::{LitBool, LitStr};

/// Every key `#[tool(...)]` accepts, in the order the error message lists them.
pub const ACCEPTED_KEYS: &str =
    "name, title, description, read_only, destructive, idempotent, open_world, timeout";

/// What `#[tool(...)]` said. Each field keeps the span of its key for later errors.
#[derive(Default)]
pub struct ToolArgs {
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub description: Option<LitStr>,
    pub read_only: Option<Hint>,
    pub destructive: Option<Hint>,
    pub idempotent: Option<Hint>,
    pub open_world: Option<Hint>,
    /// `timeout = "5s"`, in milliseconds.
    pub timeout_ms: Option<u64>,
}

/// A boolean MCP hint: `read_only` or `read_only = false`.
#[derive(Clone, Copy)]
pub struct Hint {
    pub value: bool,
}

impl ToolArgs {
    /// Parses the attribute's tokens, collecting every error rather than stopping at the first.
    pub fn from_tokens(tokens: TokenStream) -> (ToolArgs, Vec<syn::Error>) {
        let mut args = ToolArgs::default();
        let mut errors = Vec::new();
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
        let path = &meta.path;
        let key = path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        match key.as_str() {
            "name" => set_once(&mut self.name, meta, string_value(meta)?),
            "title" => set_once(&mut self.title, meta, string_value(meta)?),
            "description" => set_once(&mut self.description, meta, string_value(meta)?),
            "read_only" => set_once(&mut self.read_only, meta, hint_value(meta)?),
            "destructive" => set_once(&mut self.destructive, meta, hint_value(meta)?),
            "idempotent" => set_once(&mut self.idempotent, meta, hint_value(meta)?),
            "open_world" => set_once(&mut self.open_world, meta, hint_value(meta)?),
            "timeout" => {
                let text = string_value(meta)?;
                let millis = parse_duration(&text.value()).map_err(|reason| {
                    syn::Error::new(text.span(), format!("invalid timeout: {reason}"))
                })?;
                set_once(&mut self.timeout_ms, meta, millis)
            }
            _ => {
                // Consume a value, if any, so parsing can go on to the next key.
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                } else if meta.input.peek(syn::token::Paren) {
                    meta.parse_nested_meta(|_| Ok(()))?;
                }
                Err(meta.error(format!(
                    "unknown #[tool] argument `{}`; accepted: {ACCEPTED_KEYS}",
                    quote::ToTokens::to_token_stream(path)
                        .to_string()
                        .replace(' ', "")
                )))
            }
        }
    }
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

/// Reads a duration such as `500ms`, `5s`, `1.5s` or `2m` as milliseconds.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| {
            format!("`{text}` has no unit; write it like \"500ms\", \"5s\" or \"2m\"")
        })?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` does not start with a number"))?;
    let scale = match unit.trim() {
        "ms" => 1.0,
        "s" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        other => return Err(format!("unknown unit `{other}`; use ms, s, m or h")),
    };
    let millis = (value * scale).round();
    if millis < 1.0 {
        return Err(format!("`{text}` is shorter than a millisecond"));
    }
    Ok(millis as u64)
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
    fn timeouts_read_as_milliseconds() {
        assert_eq!(parse_duration("5s"), Ok(5_000));
        assert_eq!(parse_duration("250ms"), Ok(250));
        assert_eq!(parse_duration("1.5s"), Ok(1_500));
        assert_eq!(parse_duration("2m"), Ok(120_000));
        assert!(parse_duration("5").unwrap_err().contains("no unit"));
        assert!(parse_duration("5 fortnights")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_duration("0s").is_err());
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
        assert!(messages[0].contains(ACCEPTED_KEYS));
        assert_eq!(messages[1], "`read_only` is given more than once");
        assert!(messages[2].starts_with("unknown #[tool] argument `colour`"));
    }
}
