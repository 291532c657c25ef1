//! Arguments that are almost JSON, as models send them: the object inside a code fence,
//! text before or after it, or an object cut off before its end. When strict parsing
//! fails, the repair keeps the first JSON value in the text and closes what was left open;
//! the value is then checked against the tool's schema like any arguments, and the call's
//! result says that a repair happened and which.
//!
//! Written here rather than taken from a crate: of the repair crates tried, the ones that
//! handle all three cases also rewrite much more (single quotes, Python literals, comments)
//! without saying so, and one allocated gigabytes on a 24-token input. This one does the
//! three repairs it reports and nothing else, in one pass over the text, and is fuzzed
//! (`fuzz/fuzz_targets/repair.rs`).

use serde_json::Value;

/// The most bytes of arguments a repair is tried on; longer text is refused as it is.
pub const MAX_REPAIR_BYTES: usize = 1 << 20;

/// What a repair changed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Repair {
    /// A code fence (```` ``` ````) around the value was taken off.
    pub fence: bool,
    /// Text before or after the value was dropped.
    pub surrounding_text: bool,
    /// The value was cut off: this many strings, arrays and objects were closed.
    pub closed: usize,
    /// The cut went through a value, not only past its end: a string left open, a number or
    /// a literal at the very end (`10` may be the start of `10000`), a key without its
    /// value. This names the parameter it belongs to (the top-level key, or `""` when the
    /// cut is not inside one). Closing such a value would invent it, so a call with it is
    /// refused unless the tool is read-only.
    pub cut_value: Option<String>,
}

impl Repair {
    /// What was repaired, in words for a model or a log.
    pub fn describe(&self) -> String {
        let mut done = Vec::new();
        if self.fence {
            done.push("took the arguments out of a code fence".to_owned());
        }
        if self.surrounding_text {
            done.push("dropped text around the JSON".to_owned());
        }
        if self.closed > 0 {
            done.push(format!(
                "closed {} bracket(s) or string(s) left open at the end",
                self.closed
            ));
        }
        match self.cut_value.as_deref() {
            Some("") => done.push("the last value was cut off and may be incomplete".to_owned()),
            Some(parameter) => done.push(format!(
                "the value of '{parameter}' was cut off and may be incomplete"
            )),
            None => {}
        }
        done.join("; ")
    }
}

/// `text` as JSON: parsed strictly when it is JSON, else repaired; `Err` says why neither
/// worked.
pub fn parse(text: &str) -> Result<(Value, Option<Repair>), String> {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => Ok((value, None)),
        Err(strict) => match repair(text) {
            Some((value, repair)) => Ok((value, Some(repair))),
            None => Err(format!("the arguments are not JSON ({strict})")),
        },
    }
}

/// The first JSON object or array in `text`, repaired; `None` when there is none to find,
/// or it cannot be made valid by the three repairs.
pub fn repair(text: &str) -> Option<(Value, Repair)> {
    if text.len() > MAX_REPAIR_BYTES {
        return None;
    }
    let mut repair = Repair::default();
    let inner = match unfence(text) {
        Some(inner) => {
            repair.fence = true;
            inner
        }
        None => text,
    };
    let start = inner.find(['{', '['])?;
    let (end, closing) = scan(&inner[start..]);
    let end = start + end;
    // Only JSON's own whitespace is no text: anything else around the value (a form feed,
    // say) was dropped, and the repair says so.
    let json_space = |text: &str| text.trim_matches([' ', '\t', '\n', '\r']).is_empty();
    repair.surrounding_text = !json_space(&inner[..start]) || !json_space(&inner[end..]);
    repair.closed = closing.len();
    let mut body = inner[start..end].to_owned();
    repair.cut_value = cut_value(&body, &closing);
    if closing.is_empty() {
        let value = serde_json::from_str::<Value>(&body).ok()?;
        return Some((value, repair));
    }
    if !ends_inside_string(&body) {
        trim_dangling(&mut body);
    }
    if let Some(value) = closed(&body) {
        return Some((value, repair));
    }
    // A key cut off before its colon: it goes, with the comma before it.
    if ends_inside_string(&body) {
        body.push('"');
    }
    drop_trailing_key(&mut body);
    trim_dangling(&mut body);
    let value = closed(&body)?;
    Some((value, repair))
}

/// `body` (the start of a JSON value, cut off) with what it still needs closed, parsed.
fn closed(body: &str) -> Option<Value> {
    let (_, open) = scan(body);
    let mut text = String::with_capacity(body.len() + open.len());
    text.push_str(body);
    for close in open.iter().rev() {
        text.push(*close);
    }
    serde_json::from_str::<Value>(&text).ok()
}

/// The text inside the first code fence of `text`, when it has one (the fence may be left
/// open by a cut-off answer).
fn unfence(text: &str) -> Option<&str> {
    let open = text.find("```")?;
    let after = &text[open + 3..];
    // The language tag, if any, ends the fence's first line.
    let body = match after.find('\n') {
        Some(newline) if after[..newline].chars().all(|c| c.is_ascii_alphanumeric()) => {
            &after[newline + 1..]
        }
        _ => after,
    };
    Some(match body.find("```") {
        Some(close) => &body[..close],
        None => body,
    })
}

/// Scans the JSON value at the start of `text`: where it ends (when it closes), and the
/// closing characters it still needs, innermost last (when it was cut off).
fn scan(text: &str) -> (usize, Vec<char>) {
    let mut open: Vec<char> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    in_string = false;
                    open.pop();
                }
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                open.push('"');
            }
            '{' => open.push('}'),
            '[' => open.push(']'),
            '}' | ']' if open.last() == Some(&c) => {
                open.pop();
                if open.is_empty() {
                    return (at + 1, Vec::new());
                }
            }
            _ => {}
        }
    }
    if escaped {
        // A cut right after a backslash: the escape goes with what was cut.
        return (text.len() - 1, open);
    }
    (text.len(), open)
}

/// When `body`, cut off with `closing` still open, was cut through a value rather than
/// after one: the top-level key that value belongs to (`""` outside any).
fn cut_value(body: &str, closing: &[char]) -> Option<String> {
    if closing.is_empty() {
        return None;
    }
    /// Where the scan is in an object: before a key, or after its colon.
    #[derive(Clone, Copy, PartialEq)]
    enum Frame {
        ObjectKey,
        ObjectValue,
        Array,
    }
    let mut frames: Vec<Frame> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut string = String::new();
    // The top-level key being read or last read, and whether the last token ended a value.
    let mut parameter = String::new();
    let mut last = ' ';
    let mut ended_with_key = false;
    for c in body.chars() {
        if in_string {
            match c {
                _ if escaped => {
                    escaped = false;
                    string.push(c);
                }
                '\\' => escaped = true,
                '"' => {
                    in_string = false;
                    last = '"';
                    let is_key = frames.last() == Some(&Frame::ObjectKey);
                    ended_with_key = is_key;
                    if is_key && frames.len() == 1 {
                        parameter = std::mem::take(&mut string);
                    }
                }
                _ => string.push(c),
            }
            if in_string && frames.len() == 1 && frames[0] == Frame::ObjectKey {
                parameter.clone_from(&string);
            }
            continue;
        }
        if c.is_ascii_whitespace() {
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                string.clear();
            }
            '{' => frames.push(Frame::ObjectKey),
            '[' => frames.push(Frame::Array),
            '}' | ']' => {
                frames.pop();
            }
            ':' => {
                if let Some(frame) = frames.last_mut() {
                    *frame = Frame::ObjectValue;
                }
            }
            ',' => {
                if let Some(frame @ Frame::ObjectValue) = frames.last_mut() {
                    *frame = Frame::ObjectKey;
                }
            }
            _ => {}
        }
        if c != '"' {
            ended_with_key = false;
        }
        last = c;
    }
    let cut = if in_string {
        true
    } else {
        match last {
            ',' | '{' | '[' | '}' | ']' => false,
            // A complete string: a value, or a key whose value never came.
            '"' => ended_with_key,
            ':' => true,
            // A number or a literal at the very end: `true`, `false` and `null` are whole,
            // anything else may be the start of more.
            _ => {
                let tail = body
                    .trim_end()
                    .rsplit(|c: char| !(c.is_ascii_alphanumeric() || "-.+".contains(c)))
                    .next()
                    .unwrap_or_default();
                !matches!(tail, "true" | "false" | "null")
            }
        }
    };
    cut.then_some(
        if frames.first() == Some(&Frame::ObjectKey) || frames.first() == Some(&Frame::ObjectValue)
        {
            parameter
        } else {
            String::new()
        },
    )
}

/// Whether `body` was cut off inside a string.
fn ends_inside_string(body: &str) -> bool {
    scan(body).1.last() == Some(&'"')
}

/// Drops what cannot end a value before closers are added: a trailing comma, a colon, a
/// key without its value, a partial literal (`tru`).
fn trim_dangling(text: &mut String) {
    loop {
        let trimmed = text.trim_end().len();
        text.truncate(trimmed);
        let Some(last) = text.chars().last() else {
            return;
        };
        match last {
            ',' | ':' => {
                text.pop();
                // A key whose value was cut off goes with its colon.
                if last == ':' {
                    drop_trailing_key(text);
                }
            }
            c if c.is_ascii_alphabetic() || c == '-' || c == '.' || c == '+' => {
                let cut = text
                    .trim_end_matches(|c: char| c.is_ascii_alphanumeric() || "-.+".contains(c))
                    .len();
                let word = text[cut..].to_owned();
                if ["true", "false", "null"].contains(&word.as_str()) || word.parse::<f64>().is_ok()
                {
                    return;
                }
                text.truncate(cut);
            }
            _ => return,
        }
    }
}

/// Drops the last `"key"` of an object (its value was cut off).
fn drop_trailing_key(text: &mut String) {
    let trimmed = text.trim_end().len();
    text.truncate(trimmed);
    if !text.ends_with('"') {
        return;
    }
    let body = &text[..text.len() - 1];
    let mut at = body.len();
    while let Some(quote) = body[..at].rfind('"') {
        let backslashes = body[..quote]
            .chars()
            .rev()
            .take_while(|c| *c == '\\')
            .count();
        if backslashes % 2 == 0 {
            text.truncate(quote);
            return;
        }
        at = quote;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn repaired(text: &str) -> (Value, Repair) {
        match parse(text) {
            Ok((value, Some(repair))) => (value, repair),
            other => panic!("{text:?} should need a repair: {other:?}"),
        }
    }

    #[test]
    fn json_is_taken_as_it_is() {
        assert_eq!(parse(r#"{"a": 1}"#).unwrap(), (json!({"a": 1}), None));
    }

    #[test]
    fn fences_and_surrounding_text_go() {
        let (value, repair) = repaired("```json\n{\"city\": \"Paris\"}\n```");
        assert_eq!(value, json!({"city": "Paris"}));
        assert!(repair.fence && !repair.surrounding_text && repair.closed == 0);
        let (value, repair) =
            repaired("Sure! Here are the arguments: {\"city\": \"Paris\"} Hope it helps.");
        assert_eq!(value, json!({"city": "Paris"}));
        assert!(repair.surrounding_text && !repair.fence);
        let (value, _) = repaired("{\"a\": \"}{\"}, and then {\"b\": 2}");
        assert_eq!(
            value,
            json!({"a": "}{"}),
            "the first value, braces in strings ignored"
        );
    }

    #[test]
    fn what_was_cut_off_is_closed() {
        let (value, repair) = repaired(r#"{"city": "Par"#);
        assert_eq!(value, json!({"city": "Par"}));
        assert_eq!(repair.closed, 2);
        let (value, _) = repaired(r#"{"cities": ["Paris", "Lyon"#);
        assert_eq!(value, json!({"cities": ["Paris", "Lyon"]}));
        let (value, _) = repaired(r#"{"a": 1, "days": "#);
        assert_eq!(value, json!({"a": 1}), "a key whose value was cut off goes");
        let (value, _) = repaired(r#"{"a": 1, "fla"#);
        assert_eq!(value, json!({"a": 1}), "a key cut off goes");
        let (value, _) = repaired(r#"{"ok": tr"#);
        assert_eq!(
            value,
            json!({}),
            "a partial literal goes, and with it its key"
        );
        let (value, _) = repaired("```json\nNote: {\"n\": [1, 2,");
        assert_eq!(value, json!({"n": [1, 2]}));
    }

    #[test]
    fn a_cut_through_a_value_is_told_apart_from_one_after_it() {
        let cut = |text: &str| repaired(text).1.cut_value;
        // Only closers missing: every value is whole.
        assert_eq!(cut(r#"{"city": "Paris""#), None);
        assert_eq!(cut(r#"{"city": "Paris", "#), None);
        assert_eq!(cut(r#"{"tags": ["a", "b"]"#), None);
        assert_eq!(cut(r#"{"ok": true"#), None);
        assert_eq!(cut(r#"{"n": {"deep": null"#), None);
        assert_eq!(cut("```json\n{\"a\": 1}\n```"), None);
        // Through a value: named by its parameter.
        assert_eq!(cut(r#"{"city": "Par"#).as_deref(), Some("city"));
        assert_eq!(cut(r#"{"a": 1, "amount": 10"#).as_deref(), Some("amount"));
        assert_eq!(cut(r#"{"a": 1, "days": "#).as_deref(), Some("days"));
        assert_eq!(cut(r#"{"a": 1, "da"#).as_deref(), Some("da"));
        assert_eq!(cut(r#"{"a": 1, "days""#).as_deref(), Some("days"));
        assert_eq!(cut(r#"{"ok": tr"#).as_deref(), Some("ok"));
        assert_eq!(cut(r#"{"n": {"deep": "x", "v": 1.5"#).as_deref(), Some("n"));
        assert_eq!(cut(r#"{"tags": ["a", "b"#).as_deref(), Some("tags"));
        assert_eq!(cut(r#"{"q": "say \"hi"#).as_deref(), Some("q"));
        assert_eq!(cut(r#"[1, 2"#).as_deref(), Some(""));
        let (_, repair) = repaired(r#"{"city": "Par"#);
        assert_eq!(
            repair.describe(),
            "closed 2 bracket(s) or string(s) left open at the end; the value of 'city' was \
             cut off and may be incomplete"
        );
    }

    #[test]
    fn nothing_to_repair_is_an_error() {
        for text in ["", "I cannot do that.", "```\n```", "{\"a\" 1}"] {
            assert!(parse(text).is_err(), "{text:?}");
        }
        let (value, done) = repaired("\u{c}\u{c}[]");
        assert_eq!(value, json!([]));
        assert!(done.surrounding_text, "a form feed is not JSON whitespace");
        let huge = format!("x{}", "[".repeat(MAX_REPAIR_BYTES));
        assert!(repair(&huge).is_none(), "too long to try");
    }

    #[test]
    fn the_repair_says_what_it_did() {
        let (_, repair) = repaired("```\n{\"a\": [1, ");
        assert_eq!(
            repair.describe(),
            "took the arguments out of a code fence; closed 2 bracket(s) or string(s) left open at \
            the end"
        );
    }
}
