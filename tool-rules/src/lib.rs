//! The rules a catalog is held to both at compile time, by `#[tool]`, and at run time, by
//! `tool-runtime` (tools made at run time, the command line): tool names, OAuth scopes,
//! durations and rates, which known name a mistyped one was meant to be, and JSON Schema
//! `pattern`s. A proc-macro crate cannot share code with the runtime it expands to, so the
//! rules live here, once, and both depend on this crate: what one accepts the other accepts
//! too, with the same message when it does not.
//!
//! ```
//! assert_eq!(tool_rules::parse_rate("100/min"), Ok((100, 60_000)));
//! assert_eq!(tool_rules::parse_duration("1.5s"), Ok(1_500));
//! assert!(tool_rules::check_name("get_weather").is_ok());
//! assert!(tool_rules::check_scope("files read").is_err());
//! ```

mod pattern;
pub use pattern::Pattern;

/// Why `name` cannot name the HTTP header `Mcp-Param-<name>` that mirrors a tool argument
/// (`x-mcp-header`): it must be an RFC 9110 token, letters, digits and `!#$%&'*+-.^_`|~`,
/// and not empty. `Ok` when it can.
///
/// ```
/// assert!(tool_rules::check_header_name("Region").is_ok());
/// assert!(tool_rules::check_header_name("my region").is_err());
/// assert!(tool_rules::check_header_name("").is_err());
/// ```
pub fn check_header_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".to_owned());
    }
    match name.chars().find(|c| !is_token_char(*c)) {
        None => Ok(()),
        Some(bad) => Err(format!(
            "it holds {bad:?}; a header name holds letters, digits and `!#$%&'*+-.^_`|~`"
        )),
    }
}

/// A character of an HTTP token (RFC 9110 `tchar`).
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Why `name` breaks the tool name rule every provider accepts,
/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` (the intersection of the MCP, OpenAI, Anthropic and
/// Gemini rules); `Ok` when it follows it.
pub fn check_name(name: &str) -> Result<(), String> {
    let allowed = |c: char, first: bool| c.is_ascii() && is_name_byte(c as u8, first);
    let mut chars = name.chars();
    match chars.next() {
        None => return Err("it is empty".to_owned()),
        Some(first) if !allowed(first, true) => {
            return Err(format!(
                "it starts with `{first}`; a name starts with a letter or `_`"
            ))
        }
        _ => {}
    }
    if let Some(bad) = chars.find(|c| !allowed(*c, false)) {
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

/// Whether `byte` may stand in a tool name, first (an ASCII letter or `_`) or after the
/// first (also digits and `-`). A `const fn`, so a name prefix can be checked at compile
/// time.
pub const fn is_name_byte(byte: u8, first: bool) -> bool {
    byte.is_ascii_alphabetic()
        || byte == b'_'
        || (!first && (byte.is_ascii_digit() || byte == b'-'))
}

/// Why `scopes`, the OAuth scopes one tool requires, cannot be: the place of the first
/// one at fault and why (not a scope, see [`check_scope`], or listed twice); `Ok` when
/// they can.
pub fn check_scopes<'a>(scopes: impl IntoIterator<Item = &'a str>) -> Result<(), (usize, String)> {
    let mut seen: Vec<&str> = Vec::new();
    for (index, scope) in scopes.into_iter().enumerate() {
        check_scope(scope).map_err(|reason| (index, reason))?;
        if seen.contains(&scope) {
            return Err((index, "it is listed twice".to_owned()));
        }
        seen.push(scope);
    }
    Ok(())
}

/// Why `name` cannot name a layer, or `Ok` when it can: one to 64 ASCII letters, digits,
/// `_`, `-` and `.`, as a tool names the layers it goes through (`#[tool(layers = [...])]`)
/// and a registry names what it gives them.
pub fn check_layer_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".to_owned());
    }
    if name.len() > 64 {
        return Err(format!(
            "it is {} characters long; the limit is 64",
            name.chars().count()
        ));
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        Some(c) => Err(format!(
            "it contains `{c}`; use only ASCII letters, digits, `_`, `-` and `.`"
        )),
        None => Ok(()),
    }
}

/// The candidate `wanted` most likely meant, when one is at least `at_least` alike
/// (Jaro-Winkler similarity, from 0 to 1): the "did you mean" of an unknown name.
pub fn closest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    at_least: f64,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (strsim::jaro_winkler(wanted, candidate), candidate))
        .filter(|(score, _)| *score >= at_least)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

/// Why `scope` cannot be an OAuth scope, or `Ok` when it can: a scope is one or more
/// printable ASCII characters other than space, `"` and `\` (RFC 6749, section 3.3), as a
/// token's space-separated `scope` claim carries them.
pub fn check_scope(scope: &str) -> Result<(), String> {
    if scope.is_empty() {
        return Err("it is empty".to_owned());
    }
    match scope
        .chars()
        .find(|c| !matches!(c, '\x21' | '\x23'..='\x5B' | '\x5D'..='\x7E'))
    {
        Some(' ') => Err(
            "it contains a space; a token's scopes are separated by spaces, so each scope is its \
            own string"
                .to_owned(),
        ),
        Some(bad) => Err(format!(
            "it contains {bad:?}; a scope holds printable ASCII characters other than space, `\"` \
            and `\\`"
        )),
        None => Ok(()),
    }
}

/// A duration as people write it (`"500ms"`, `"5s"`, `"1.5s"`, `"2m"`, `"1h"`, `"1d"`), in
/// milliseconds; at least one.
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
        "s" | "sec" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" | "hour" => 3_600_000.0,
        "d" | "day" => 86_400_000.0,
        other => return Err(format!("unknown unit `{other}`; use ms, s, m, h or d")),
    };
    let millis = (value * scale).round();
    if millis < 1.0 {
        return Err(format!("`{text}` is shorter than a millisecond"));
    }
    if millis > u64::MAX as f64 {
        return Err(format!("`{text}` is too long"));
    }
    Ok(millis as u64)
}

/// A rate (`"10/s"`, `"100/min"`, `"5/h"`, `"3/10s"`): a count, a slash and a period (a
/// unit alone is one of it), as how many per how many milliseconds.
pub fn parse_rate(text: &str) -> Result<(u32, u64), String> {
    let shape = || {
        format!(
            "`{text}` is not a count, a slash and a period, like \"10/s\", \"100/min\" or \"3/10s\""
        )
    };
    let (count, period) = text.trim().split_once('/').ok_or_else(shape)?;
    let count: u32 = count.trim().parse().map_err(|_| shape())?;
    if count == 0 {
        return Err(format!(
            "`{text}` allows no call at all; a rate counts at least one"
        ));
    }
    let period = period.trim();
    if period.is_empty() {
        return Err(shape());
    }
    // A unit alone is one of it; anything else ("10s", ".5s") is a duration of its own.
    let period = if period.starts_with(|c: char| c.is_ascii_alphabetic()) {
        parse_duration(&format!("1{period}"))?
    } else {
        parse_duration(period)?
    };
    Ok((count, period))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal, as the parsers and checks give one.
    fn refused<T>(why: &str) -> Result<T, String> {
        Err(why.to_owned())
    }

    #[test]
    fn names_follow_the_shared_provider_rule() {
        assert!(check_name("get_weather").is_ok());
        assert!(check_name("_x-1").is_ok());
        assert!(check_name(&"a".repeat(64)).is_ok());
        assert_eq!(
            check_name(&"a".repeat(65)),
            refused("it is 65 characters long; the limit is 64")
        );
        assert_eq!(
            check_name("1abc"),
            refused("it starts with `1`; a name starts with a letter or `_`")
        );
        let dot = "it contains `.`; use only ASCII letters, digits, `_` and `-`";
        assert_eq!(check_name("get.weather"), refused(dot));
        assert_eq!(check_name(""), refused("it is empty"));
        let accent = "it contains `é`; use only ASCII letters, digits, `_` and `-`";
        assert_eq!(check_name("café"), refused(accent));
    }

    #[test]
    fn layer_names_are_short_ascii_words() {
        assert!(check_layer_name("audit").is_ok());
        assert!(check_layer_name("db.pool-2_x").is_ok());
        assert_eq!(check_layer_name(""), refused("it is empty"));
        assert_eq!(
            check_layer_name(&"a".repeat(65)),
            refused("it is 65 characters long; the limit is 64")
        );
        assert_eq!(
            check_layer_name("an audit"),
            refused("it contains ` `; use only ASCII letters, digits, `_`, `-` and `.`")
        );
    }

    #[test]
    fn scopes_are_printable_ascii_without_space_quote_or_backslash() {
        assert!(check_scope("files:read").is_ok());
        assert!(check_scope("https://api.example.com/files.read").is_ok());
        let unprintable = |c: &str| {
            refused(&format!(
                "it contains {c}; a scope holds printable ASCII characters other than space, `\"` \
                and `\\`"
            ))
        };
        assert_eq!(check_scope(""), refused("it is empty"));
        assert_eq!(
            check_scope("files read"),
            refused(
                "it contains a space; a token's scopes are separated by spaces, so each scope is \
                its own string"
            )
        );
        assert_eq!(check_scope("files\"read"), unprintable("'\"'"));
        assert_eq!(check_scope("files\\read"), unprintable("'\\\\'"));
        assert_eq!(check_scope("fichiers:lire-é"), unprintable("'é'"));
    }

    #[test]
    fn scopes_are_refused_at_the_first_fault() {
        assert_eq!(check_scopes(["a:read", "a:write"]), Ok(()));
        assert_eq!(
            check_scopes(["a:read", "a read"]).map_err(|(index, _)| index),
            Err(1)
        );
        assert_eq!(
            check_scopes(["a:read", "b", "a:read"]),
            Err((2, "it is listed twice".to_owned()))
        );
    }

    #[test]
    fn the_closest_name_is_offered_only_when_alike() {
        let names = ["get_weather", "get_time", "plan_trip"];
        assert_eq!(closest("get_wether", names, 0.7), Some("get_weather"));
        assert_eq!(closest("zzz", names, 0.7), None);
    }

    #[test]
    fn durations_read_as_milliseconds() {
        assert_eq!(parse_duration("5s"), Ok(5_000));
        assert_eq!(parse_duration("250ms"), Ok(250));
        assert_eq!(parse_duration("1.5s"), Ok(1_500));
        assert_eq!(parse_duration("2m"), Ok(120_000));
        assert_eq!(parse_duration("1d"), Ok(86_400_000));
        assert_eq!(
            parse_duration("5"),
            refused("`5` has no unit; write it like \"500ms\", \"5s\" or \"2m\"")
        );
        assert_eq!(
            parse_duration("5 fortnights"),
            refused("unknown unit `fortnights`; use ms, s, m, h or d")
        );
        assert_eq!(
            parse_duration("0s"),
            refused("`0s` is shorter than a millisecond")
        );
    }

    #[test]
    fn rates_read_as_a_count_per_milliseconds() {
        assert_eq!(parse_rate("10/s"), Ok((10, 1_000)));
        assert_eq!(parse_rate("100/min"), Ok((100, 60_000)));
        assert_eq!(parse_rate("5/hour"), Ok((5, 3_600_000)));
        assert_eq!(parse_rate("3/10s"), Ok((3, 10_000)));
        assert_eq!(parse_rate("3/1.5s"), Ok((3, 1_500)));
        // A period without a leading digit is still a number of units.
        assert_eq!(parse_rate("3/.5s"), Ok((3, 500)));
        let shape = |text: &str| {
            refused(&format!(
                "`{text}` is not a count, a slash and a period, like \"10/s\", \"100/min\" or \
                \"3/10s\""
            ))
        };
        assert_eq!(parse_rate("10"), shape("10"));
        assert_eq!(parse_rate("ten/s"), shape("ten/s"));
        assert_eq!(parse_rate("3/ "), shape("3/ "));
        assert_eq!(
            parse_rate("0/s"),
            refused("`0/s` allows no call at all; a rate counts at least one")
        );
        assert_eq!(
            parse_rate("5/fortnight"),
            refused("unknown unit `fortnight`; use ms, s, m, h or d")
        );
    }
}
