//! The tool name rule every provider accepts: `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`
//! (the intersection of the MCP, OpenAI, Anthropic and Gemini rules).

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

#[cfg(test)]
mod tests {
    use super::check_name;

    #[test]
    fn the_rule() {
        assert!(check_name("github_create-issue").is_ok());
        assert!(check_name(&"x".repeat(65)).is_err());
        assert!(check_name("9lives").is_err());
        assert!(check_name("a b").is_err());
    }
}
