//! JSON Schema's `pattern`: an ECMA-262 regular expression, read into one that
//! [`regex_lite`] runs with the same meaning.
//!
//! `regex-lite` rather than `regex` or `fancy-regex`: a tool server checks a handful of short
//! patterns, and the full engines add about a megabyte of code and Unicode tables to every
//! binary for speed that such checks never need. What the two dialects spell differently is
//! rewritten here (`\s` and `.` are wider in ECMA-262, `\uXXXX` escapes, `[^]`); what
//! `regex-lite` cannot run (look-around, back-references, Unicode property classes) is
//! refused with the reason, never matched with another meaning.

use std::fmt::Write;

/// A compiled `pattern`.
///
/// ```
/// let pattern = tool_rules::Pattern::new(r"^\d{4}-\d{2}$").unwrap();
/// assert!(pattern.is_match("2026-11"));
/// assert!(!pattern.is_match("26-11"));
/// assert!(tool_rules::Pattern::new("a(?=b)").is_err());
/// ```
#[derive(Debug, Clone)]
pub struct Pattern {
    regex: regex_lite::Regex,
}

impl Pattern {
    /// Compiles `ecma`, an ECMA-262 pattern; `Err` says in words why it cannot be checked.
    pub fn new(ecma: &str) -> Result<Pattern, String> {
        let translated = translate(ecma)?;
        regex_lite::Regex::new(&translated)
            .map(|regex| Pattern { regex })
            .map_err(|error| format!("it is not a regular expression: {error}"))
    }

    /// Whether `text` has a match anywhere (JSON Schema's `pattern` is not anchored).
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }
}

/// The characters ECMA-262's `\s` matches, as inclusive ranges in order.
const SPACES: [(u32, u32); 10] = [
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
];
const DIGITS: [(u32, u32); 1] = [(0x30, 0x39)];
const WORD: [(u32, u32); 4] = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];
/// What `.` matches in ECMA-262: anything but a line terminator.
const NOT_LINE_END: &str = r"[^\n\r\x{2028}\x{2029}]";

/// `ecma` in `regex-lite`'s syntax, with the same matches; `Err` names what it uses that
/// cannot be run.
fn translate(ecma: &str) -> Result<String, String> {
    let chars: Vec<char> = ecma.chars().collect();
    let mut out = String::with_capacity(ecma.len() + 8);
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        at += 1;
        match c {
            '\\' => at = escape_outside(&chars, at, &mut out)?,
            '.' => out.push_str(NOT_LINE_END),
            '[' => at = class(&chars, at, &mut out)?,
            '(' => at = group(&chars, at, &mut out)?,
            '{' => {
                // A quantifier when it reads as one; a literal brace otherwise, as
                // ECMA-262 allows and `regex-lite` does not.
                match quantifier_end(&chars, at) {
                    Some(end) => {
                        out.extend(&chars[at - 1..end]);
                        at = end;
                    }
                    None => out.push_str(r"\{"),
                }
            }
            '}' => out.push_str(r"\}"),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Where a `{n}`, `{n,}` or `{n,m}` quantifier opened just before `at` ends.
fn quantifier_end(chars: &[char], at: usize) -> Option<usize> {
    let close = at + chars[at..].iter().position(|&c| c == '}')?;
    let body: String = chars[at..close].iter().collect();
    let (low, high) = body.split_once(',').unwrap_or((&body, "0"));
    let number = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    (number(low) && (high.is_empty() || number(high))).then_some(close + 1)
}

fn group(chars: &[char], at: usize, out: &mut String) -> Result<usize, String> {
    if chars.get(at) != Some(&'?') {
        out.push('(');
        return Ok(at);
    }
    let next = chars.get(at + 1).copied();
    let after = chars.get(at + 2).copied();
    match (next, after) {
        (Some(':'), _) => {
            out.push_str("(?:");
            Ok(at + 2)
        }
        (Some('=' | '!'), _) | (Some('<'), Some('=' | '!')) => Err(
            "it uses look-around (`(?=`, `(?!`, `(?<=`, `(?<!`), which the validator does not run"
                .to_owned(),
        ),
        (Some('<'), _) => {
            out.push_str("(?<");
            Ok(at + 2)
        }
        _ => Err("it has a `(?` group ECMA-262 does not define".to_owned()),
    }
}

/// An escape outside a class, after its `\`; returns where the pattern goes on.
fn escape_outside(chars: &[char], at: usize, out: &mut String) -> Result<usize, String> {
    let Some(&c) = chars.get(at) else {
        return Err("it ends with a lone `\\`".to_owned());
    };
    match c {
        'd' | 'D' | 'w' | 'W' | 'b' | 'B' => {
            // ASCII in both dialects.
            out.push('\\');
            out.push(c);
            Ok(at + 1)
        }
        's' => {
            push_class(out, &SPACES, false);
            Ok(at + 1)
        }
        'S' => {
            push_class(out, &SPACES, true);
            Ok(at + 1)
        }
        _ => {
            let (code, next) = escaped_char(chars, at)?;
            push_char(out, code);
            Ok(next)
        }
    }
}

/// The character an escape stands for (not a class escape), after its `\`, and where the
/// pattern goes on.
fn escaped_char(chars: &[char], at: usize) -> Result<(u32, usize), String> {
    let c = chars[at];
    let hex = |from: usize, len: usize| -> Option<u32> {
        let digits = chars.get(from..from + len)?;
        if digits.is_empty() || !digits.iter().all(char::is_ascii_hexdigit) {
            return None;
        }
        u32::from_str_radix(&digits.iter().collect::<String>(), 16).ok()
    };
    Ok(match c {
        't' => (0x09, at + 1),
        'n' => (0x0A, at + 1),
        'v' => (0x0B, at + 1),
        'f' => (0x0C, at + 1),
        'r' => (0x0D, at + 1),
        '0' if !chars.get(at + 1).is_some_and(char::is_ascii_digit) => (0, at + 1),
        'x' => match hex(at + 1, 2) {
            Some(code) => (code, at + 3),
            None => return Err("it has a `\\x` escape without two hex digits".to_owned()),
        },
        'u' if chars.get(at + 1) == Some(&'{') => {
            let close = chars[at..]
                .iter()
                .position(|&c| c == '}')
                .map(|offset| at + offset)
                .ok_or("it has a `\\u{` escape without its `}`")?;
            match hex(at + 2, close - at - 2).filter(|&code| char::from_u32(code).is_some()) {
                Some(code) => (code, close + 1),
                None => return Err("it has a `\\u{...}` escape that is no character".to_owned()),
            }
        }
        'u' => match hex(at + 1, 4) {
            Some(code) if char::from_u32(code).is_some() => (code, at + 5),
            Some(_) => {
                return Err(
                    "it has a `\\u` escape of a lone surrogate, which no string holds".to_owned(),
                )
            }
            None => return Err("it has a `\\u` escape without four hex digits".to_owned()),
        },
        'c' => match chars.get(at + 1) {
            Some(letter) if letter.is_ascii_alphabetic() => (*letter as u32 % 32, at + 2),
            _ => return Err("it has a `\\c` escape without a letter".to_owned()),
        },
        '1'..='9' | 'k' => {
            return Err("it uses a back-reference, which the validator does not run".to_owned())
        }
        'p' | 'P' => {
            return Err(
                "it uses a Unicode property class (`\\p{..}`), which the validator does not run"
                    .to_owned(),
            )
        }
        c if c.is_ascii_alphanumeric() => {
            return Err(format!(
                "it has the escape `\\{c}`, which ECMA-262 does not define"
            ))
        }
        c => (c as u32, at + 1),
    })
}

/// A class, after its `[`; returns where the pattern goes on.
fn class(chars: &[char], mut at: usize, out: &mut String) -> Result<usize, String> {
    let negated = chars.get(at) == Some(&'^');
    if negated {
        at += 1;
    }
    // `[]` matches nothing and `[^]` anything in ECMA-262; `regex-lite` has no empty class.
    if chars.get(at) == Some(&']') {
        out.push_str(if negated {
            r"[\x{0}-\x{10FFFF}]"
        } else {
            r"[^\x{0}-\x{10FFFF}]"
        });
        return Ok(at + 1);
    }
    out.push('[');
    if negated {
        out.push('^');
    }
    let mut previous_dash = false;
    loop {
        let Some(&c) = chars.get(at) else {
            return Err("it has a `[` without its `]`".to_owned());
        };
        at += 1;
        let dash = c == '-';
        match c {
            ']' => {
                out.push(']');
                return Ok(at);
            }
            '\\' => {
                let Some(&e) = chars.get(at) else {
                    return Err("it ends with a lone `\\`".to_owned());
                };
                let ranges: Option<(&[(u32, u32)], bool)> = match e {
                    'd' => Some((&DIGITS, false)),
                    'D' => Some((&DIGITS, true)),
                    'w' => Some((&WORD, false)),
                    'W' => Some((&WORD, true)),
                    's' => Some((&SPACES, false)),
                    'S' => Some((&SPACES, true)),
                    _ => None,
                };
                match ranges {
                    Some((ranges, complement)) => {
                        push_ranges(out, ranges, complement);
                        at += 1;
                    }
                    // Inside a class `\b` is a backspace.
                    None if e == 'b' => {
                        push_char(out, 0x08);
                        at += 1;
                    }
                    None if e == '-' => {
                        push_char(out, '-' as u32);
                        at += 1;
                    }
                    None => {
                        let (code, next) = escaped_char(chars, at)?;
                        push_char(out, code);
                        at = next;
                    }
                }
            }
            // Set operations and nested classes in `regex-lite`'s syntax; plain characters
            // in ECMA-262's.
            '[' | '&' | '~' => push_char(out, c as u32),
            '-' if previous_dash => push_char(out, c as u32),
            c => out.push(c),
        }
        previous_dash = dash;
    }
}

/// `ranges` as a class of their own (`[...]`), or of the characters outside them.
fn push_class(out: &mut String, ranges: &[(u32, u32)], complement: bool) {
    out.push('[');
    push_ranges(out, ranges, complement);
    out.push(']');
}

/// `ranges` (sorted, apart) as the inside of a class, or the ranges between them.
fn push_ranges(out: &mut String, ranges: &[(u32, u32)], complement: bool) {
    let mut push = |low: u32, high: u32| {
        let _ = if low == high {
            write!(out, r"\x{{{low:X}}}")
        } else {
            write!(out, r"\x{{{low:X}}}-\x{{{high:X}}}")
        };
    };
    if !complement {
        ranges.iter().for_each(|&(low, high)| push(low, high));
        return;
    }
    let mut next = 0;
    for &(low, high) in ranges {
        if low > next {
            push(next, low - 1);
        }
        next = high + 1;
    }
    push(next, 0x10FFFF);
}

fn push_char(out: &mut String, code: u32) {
    let _ = write!(out, r"\x{{{code:X}}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        Pattern::new(pattern)
            .unwrap_or_else(|e| panic!("{pattern}: {e}"))
            .is_match(text)
    }

    #[test]
    fn ecma_classes_keep_their_meaning() {
        assert!(matches(r"^\s$", "\u{a0}"), "\\s is Unicode white space");
        assert!(matches(r"^\s$", "\u{feff}"));
        assert!(!matches(r"^\S$", "\u{2003}"));
        assert!(matches(r"^[\s]$", "\u{3000}"));
        assert!(matches(r"^[^\S]$", "\t"));
        assert!(!matches(r"^\d$", "٣"), "\\d is ASCII");
        assert!(matches(r"^[\D]$", "٣"));
        assert!(!matches(r"^\w$", "é"), "\\w is ASCII");
        assert!(matches(r"^[\W]+$", "é-"));
        assert!(!matches(r"^.$", "\r"), ". stops at every line terminator");
        assert!(!matches(r"^.$", "\u{2028}"));
        assert!(matches(r"^.$", "é"));
        assert!(matches(r"^a\bb|a b$", "a b"));
        assert!(
            matches(r"^[\b]$", "\u{8}"),
            "inside a class \\b is a backspace"
        );
    }

    #[test]
    fn ecma_escapes_and_literals() {
        assert!(matches(r"^\u0041\u{42}\x43$", "ABC"));
        assert!(matches(r"^\cJ$", "\n"));
        assert!(
            matches(r"^a{$", "a{"),
            "a brace that is no quantifier is literal"
        );
        assert!(matches(r"^a{2}}$", "aa}"));
        assert!(matches(r"^x{1,}$", "xxx"));
        assert!(matches(r"^[a-c&~[]+$", "b&~["));
        assert!(matches(r"^\/\.\-$", "/.-"));
        assert!(matches(r"^[\-a]+$", "-a"));
        assert!(!matches(r"^[]$", ""), "[] matches nothing");
        assert!(!matches(r"[]", "x"));
        assert!(matches(r"^[^]$", "\n"), "[^] matches anything");
        assert!(matches(r"^(?<year>\d{4})(?:-\d\d)?$", "2026-11"));
        assert!(matches("colou?r", "the colour"), "not anchored");
    }

    #[test]
    fn what_cannot_be_checked_is_refused_with_the_reason() {
        for (pattern, reason) in [
            ("a(?=b)", "look-around"),
            ("(?<!a)b", "look-around"),
            (r"(a)\1", "back-reference"),
            (r"\p{L}", "Unicode property"),
            (r"\q", "`\\q`"),
            ("(?i)a", "`(?`"),
            ("[a", "without its `]`"),
            ("a\\", "lone"),
            ("(a", "not a regular expression"),
            (r"\uD800", "surrogate"),
        ] {
            let error = Pattern::new(pattern).unwrap_err();
            assert!(error.contains(reason), "{pattern}: {error}");
        }
    }
}
