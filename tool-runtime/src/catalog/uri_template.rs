//! RFC 6570 URI templates, read the other way round: which variables a concrete URI gives
//! a template (`files:///{+path}` and `files:///src/main.rs` give `path = src/main.rs`).
//!
//! Supported: literal text, and expressions with the operators of levels 1 to 3 (none,
//! `+`, `#`, `.`, `/`, `;`, `?`, `&`), several variables per expression, and the `*`
//! (explode) and `:n` (prefix) modifiers, which matching accepts and ignores. Crates that
//! implement RFC 6570 expand templates; none of the well-kept ones matches a URI against one,
//! which is what serving `resources/read` needs, hence this module.

use std::fmt;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression {
        operator: Operator,
        names: Vec<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParameter,
    Query,
    QueryContinuation,
}

impl Operator {
    fn of(c: char) -> Option<Operator> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::PathParameter,
            '?' => Operator::Query,
            '&' => Operator::QueryContinuation,
            _ => return None,
        })
    }

    /// What comes before the first value, and between values.
    fn prefix_and_separator(self) -> (&'static str, char) {
        match self {
            Operator::Simple | Operator::Reserved => ("", ','),
            Operator::Fragment => ("#", ','),
            Operator::Label => (".", '.'),
            Operator::Path => ("/", '/'),
            Operator::PathParameter => (";", ';'),
            Operator::Query => ("?", '&'),
            Operator::QueryContinuation => ("&", '&'),
        }
    }

    /// Whether a value may hold reserved characters such as `/` (so it may span segments).
    fn allows_reserved(self) -> bool {
        matches!(self, Operator::Reserved | Operator::Fragment)
    }
}

/// Why a template could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TemplateError {}

impl UriTemplate {
    /// Parses `text`; a URI without any `{...}` is a template with no variables.
    pub fn parse(text: &str) -> Result<UriTemplate, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find(['{', '}']) {
            if rest.as_bytes()[open] == b'}' {
                return Err(TemplateError(format!(
                    "a `}}` without its `{{` at byte {}",
                    text.len() - rest.len() + open
                )));
            }
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            let close = after
                .find('}')
                .ok_or_else(|| TemplateError("a `{` is never closed".to_owned()))?;
            parts.push(parse_expression(&after[..close])?);
            rest = &after[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(UriTemplate {
            text: text.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The variables, in the order they appear.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().flat_map(|part| {
            match part {
                Part::Literal(_) => [].iter(),
                Part::Expression { names, .. } => names.iter(),
            }
            .map(String::as_str)
        })
    }

    /// Whether the URI starts with an RFC 3986 scheme (a letter, then letters, digits,
    /// `+`, `-` or `.`, then `:`), as a resource's URI must. (`#[resource]` checks the same
    /// at compile time; the macro crate cannot use this one.)
    pub fn has_scheme(&self) -> bool {
        let Some((scheme, _)) = self.as_str().split_once(':') else {
            return false;
        };
        let mut chars = scheme.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    }

    /// Whether the template has variables (else it names one resource).
    pub fn is_template(&self) -> bool {
        self.parts
            .iter()
            .any(|part| matches!(part, Part::Expression { .. }))
    }

    /// The variables `uri` gives this template, percent-decoded, when it matches; a
    /// variable the URI leaves out (an optional query parameter) is absent.
    pub fn match_uri(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut found = Vec::new();
        if match_parts(&self.parts, uri, &mut found) {
            Some(found)
        } else {
            None
        }
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn parse_expression(body: &str) -> Result<Part, TemplateError> {
    let mut chars = body.chars();
    let (operator, list) = match chars.next().and_then(Operator::of) {
        Some(operator) => (operator, chars.as_str()),
        None => (Operator::Simple, body),
    };
    let mut names = Vec::new();
    for spec in list.split(',') {
        let name = spec
            .strip_suffix('*')
            .unwrap_or_else(|| spec.split(':').next().unwrap_or(spec));
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '%');
        if !valid {
            return Err(TemplateError(format!(
                "`{{{body}}}` is not a valid expression: variable names are letters, digits and `_`"
            )));
        }
        names.push(name.to_owned());
    }
    Ok(Part::Expression { operator, names })
}

/// Matches `parts` against all of `uri`, trying each way an expression can end (so a
/// reserved expansion can hold `/` and still leave the literal after it).
fn match_parts(parts: &[Part], uri: &str, found: &mut Vec<(String, String)>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(literal) => uri
            .strip_prefix(literal.as_str())
            .is_some_and(|after| match_parts(rest, after, found)),
        Part::Expression { operator, names } => {
            let (prefix, _) = operator.prefix_and_separator();
            if matches!(operator, Operator::Query | Operator::QueryContinuation) {
                return match_query(*operator, names, uri, rest, found);
            }
            let Some(body) = uri.strip_prefix(prefix) else {
                // An expression whose variables are all undefined expands to nothing.
                return match_parts(rest, uri, found);
            };
            // Candidate ends, longest first: a value stops at characters its operator
            // would have encoded.
            let limit = if operator.allows_reserved() {
                body.len()
            } else {
                body.find(['/', '?', '#']).unwrap_or(body.len())
            };
            let limit = if *operator == Operator::Path && names.len() == 1 {
                // `{/path*}` spans segments.
                body.find(['?', '#']).unwrap_or(body.len())
            } else {
                limit
            };
            for end in (1..=limit).rev().filter(|end| body.is_char_boundary(*end)) {
                let mark = found.len();
                if assign(*operator, names, &body[..end], found)
                    && match_parts(rest, &body[end..], found)
                {
                    return true;
                }
                found.truncate(mark);
            }
            false
        }
    }
}

/// Splits one expression's text among its variables.
fn assign(
    operator: Operator,
    names: &[String],
    text: &str,
    found: &mut Vec<(String, String)>,
) -> bool {
    let (_, separator) = operator.prefix_and_separator();
    if names.len() == 1 {
        let value = if operator == Operator::PathParameter {
            match text.split_once('=') {
                Some((name, value)) if name == names[0] => value,
                _ => return false,
            }
        } else {
            text
        };
        found.push((names[0].clone(), decode(value)));
        return true;
    }
    let values: Vec<&str> = text.split(separator).collect();
    if values.len() != names.len() {
        return false;
    }
    for (name, value) in names.iter().zip(values) {
        found.push((name.clone(), decode(value)));
    }
    true
}

/// `{?a,b}` and `{&a,b}`: the query's pairs in any order, each variable optional.
fn match_query(
    operator: Operator,
    names: &[String],
    uri: &str,
    rest: &[Part],
    found: &mut Vec<(String, String)>,
) -> bool {
    let (prefix, _) = operator.prefix_and_separator();
    let Some(body) = uri.strip_prefix(prefix) else {
        return match_parts(rest, uri, found);
    };
    let end = body.find('#').unwrap_or(body.len());
    let mark = found.len();
    for pair in body[..end].split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if names.iter().any(|known| known == name) {
            found.push((name.to_owned(), decode(value)));
        }
    }
    if match_parts(rest, &body[end..], found) {
        return true;
    }
    found.truncate(mark);
    false
}

/// Percent-decodes `text`; a malformed escape is kept as written.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' && index + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[index + 1..index + 3]).ok();
            if let Some(byte) = hex.and_then(|hex| u8::from_str_radix(hex, 16).ok()) {
                out.push(byte);
                index += 3;
                continue;
            }
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(template).unwrap().match_uri(uri)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn simple_variables_stop_at_slashes_and_are_decoded() {
        assert_eq!(
            vars("test://template/{id}/data", "test://template/42/data"),
            Some(pairs(&[("id", "42")]))
        );
        assert_eq!(
            vars("users://{name}", "users://ada%20lovelace"),
            Some(pairs(&[("name", "ada lovelace")]))
        );
        assert_eq!(
            vars("test://template/{id}/data", "test://template/4/2/data"),
            None
        );
        assert_eq!(
            vars("test://template/{id}/data", "test://template//data"),
            None
        );
        assert_eq!(vars("test://static", "test://static"), Some(vec![]));
        assert_eq!(vars("test://static", "test://static2"), None);
    }

    #[test]
    fn reserved_and_path_expansions_span_segments() {
        assert_eq!(
            vars("files:///{+path}", "files:///src/lib.rs"),
            Some(pairs(&[("path", "src/lib.rs")]))
        );
        assert_eq!(
            vars("repo://{owner}/{repo}{/path*}", "repo://a/b/src/x.rs"),
            Some(pairs(&[
                ("owner", "a"),
                ("repo", "b"),
                ("path", "src/x.rs")
            ]))
        );
        assert_eq!(
            vars("files:///{+path}/meta", "files:///a/b/meta"),
            Some(pairs(&[("path", "a/b")]))
        );
    }

    #[test]
    fn queries_are_optional_and_unordered() {
        assert_eq!(
            vars("search://{index}{?q,limit}", "search://docs?limit=5&q=rust"),
            Some(pairs(&[("index", "docs"), ("limit", "5"), ("q", "rust")]))
        );
        assert_eq!(
            vars("search://{index}{?q,limit}", "search://docs"),
            Some(pairs(&[("index", "docs")]))
        );
        assert_eq!(
            vars("points://{x,y}", "points://3,4"),
            Some(pairs(&[("x", "3"), ("y", "4")]))
        );
    }

    #[test]
    fn variables_are_listed_and_bad_templates_refused() {
        let template = UriTemplate::parse("a://{x}/{+y}{?z,w}").unwrap();
        assert_eq!(
            template.variables().collect::<Vec<_>>(),
            ["x", "y", "z", "w"]
        );
        assert!(template.is_template());
        assert!(!UriTemplate::parse("a://b").unwrap().is_template());
        assert!(UriTemplate::parse("a://{x").is_err());
        assert!(UriTemplate::parse("a://x}").is_err());
        assert!(UriTemplate::parse("a://{}").is_err());
        assert!(UriTemplate::parse("a://{x y}").is_err());
    }
}
