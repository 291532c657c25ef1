//! The tool name rule every provider accepts: `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`
//! (the intersection of the MCP, OpenAI, Anthropic and Gemini rules), and the rule of the
//! OAuth scopes a tool may require.

/// Why `name` breaks the rule, or `Ok` when it follows it.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    match chars.next() {
        None => return Err("it is empty".to_owned()),
        Some(first) if !(first.is_ascii_alphabetic() || first == '_') => {
            return Err(format!(
                "it starts with `{first}`; a name starts with a letter or `_`"
            ))
        }
        _ => {}
    }
    if let Some(bad) = chars.find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        return Err(format!(
            "it contains `{bad}`; use only ASCII letters, digits, `_` and `-`"
        ));
    }
    if name.len() > 64 {
        return Err(format!(
            "it is {} characters long; the limit is 64",
            name.len()
        ));
    }
    Ok(())
}

/// Why `scope` cannot be an OAuth scope, or `Ok` when it can: a scope is one or more
/// printable ASCII characters other than space, `"` and `\` (RFC 6749, section 3.3), as a
/// token's space-separated `scope` claim carries them.
pub(crate) fn check_scope(scope: &str) -> Result<(), String> {
    if scope.is_empty() {
        return Err("it is empty".to_owned());
    }
    match scope
        .chars()
        .find(|c| !matches!(c, '\x21' | '\x23'..='\x5B' | '\x5D'..='\x7E'))
    {
        Some(' ') => Err("it contains a space; a token's scopes are separated by spaces, so one scope cannot hold one".to_owned()),
        Some(bad) => Err(format!(
            "it contains {bad:?}; a scope holds printable ASCII characters other than space, `\"` and `\\`"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::{check_name, check_scope};

    #[test]
    fn the_scope_rule() {
        assert!(check_scope("files:read").is_ok());
        assert!(check_scope("https://api.example.com/files.read").is_ok());
        assert!(check_scope("").unwrap_err().contains("empty"));
        assert!(check_scope("files read").unwrap_err().contains("space"));
        assert!(check_scope("files\"read").unwrap_err().contains("'\"'"));
        assert!(check_scope("fichiers:lire-é").is_err());
    }

    #[test]
    fn the_rule() {
        assert!(check_name("github_create-issue").is_ok());
        assert!(check_name(&"x".repeat(65)).is_err());
        assert!(check_name("9lives").is_err());
        assert!(check_name("a b").is_err());
    }
}
