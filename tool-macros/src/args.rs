//! The `#[tool(...)]` arguments: name, title, description and the MCP hints.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::{LitBool, LitStr};

/// Every key `#[tool(...)]` accepts, in the order the error message lists them.
pub const ACCEPTED_KEYS: &str =
    "name, title, description, read_only, destructive, idempotent, open_world";

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
