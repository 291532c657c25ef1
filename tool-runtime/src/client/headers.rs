//! What a 2026-07-28 `tools/call` carries in HTTP headers besides its body and its
//! `Mcp-Name`: `Mcp-Param-<Name>` for each argument the tool's schema marks with
//! `x-mcp-header`, so a gateway routes on them without reading the body. A tool whose marks
//! break the rules is left out of the tools the client lists, with a warning saying why.

use crate::mcp::header_values;
use serde_json::{Map, Value};

/// Where one argument is mirrored: its path through the arguments' objects, and the
/// header's name (after `Mcp-Param-`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mirrored {
    path: Vec<String>,
    header: String,
}

/// The arguments `schema` (a tool's input schema) marks for headers; why the tool is left
/// out of the tools listed when a mark breaks the rules: a name that is empty, not an HTTP
/// token, or given twice (ignoring case); a mark on anything but a string, integer or
/// boolean, or on a property not reached through `properties` alone.
pub(crate) fn marked(schema: &Value) -> Result<Vec<Mirrored>, String> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for mirrored in &found {
        let lower = mirrored.header.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!(
                "the header `{}` marks two arguments (names compare ignoring case)",
                mirrored.header
            ));
        }
        seen.push(lower);
    }
    Ok(found)
}

fn walk(
    schema: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut Vec<Mirrored>,
) -> Result<(), String> {
    let Value::Object(object) = schema else {
        return Ok(());
    };
    if let Some(mark) = object.get("x-mcp-header") {
        let shown = path.join(".");
        let header = mark
            .as_str()
            .ok_or_else(|| format!("`x-mcp-header` of `{shown}` is not a string"))?;
        tool_rules::check_header_name(header).map_err(|why| {
            format!("`x-mcp-header` {header:?} of `{shown}` cannot name a header: {why}")
        })?;
        if !reachable || path.is_empty() {
            return Err(format!(
                "`x-mcp-header` {header:?} marks `{shown}`, which is not a property reached \
                 through `properties` alone"
            ));
        }
        match object.get("type").and_then(Value::as_str) {
            Some("string" | "integer" | "boolean") => {}
            other => {
                return Err(format!(
                    "`x-mcp-header` {header:?} marks `{shown}`, of type {}; only a string, an \
                     integer or a boolean can travel in a header",
                    other.unwrap_or("not given")
                ))
            }
        }
        found.push(Mirrored {
            path: path.clone(),
            header: header.to_owned(),
        });
    }
    for (keyword, value) in object {
        match (keyword.as_str(), value) {
            ("properties", Value::Object(properties)) => {
                for (name, property) in properties {
                    path.push(name.clone());
                    walk(property, path, reachable, found)?;
                    path.pop();
                }
            }
            ("x-mcp-header" | "default" | "examples" | "const" | "enum", _) => {}
            (_, Value::Object(_)) => walk(value, path, false, found)?,
            (_, Value::Array(items)) => {
                for item in items {
                    walk(item, path, false, found)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The headers of a call with `arguments` of a tool whose marked arguments are `mirrored`:
/// a `Mcp-Param-*` for each marked argument present and not null (`Mcp-Name`, which every
/// request naming something carries, is added as the request is sent).
pub(crate) fn for_call(arguments: &Value, mirrored: &[Mirrored]) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    let empty = Map::new();
    for mark in mirrored {
        let mut value = Some(arguments);
        for step in &mark.path {
            value = value.and_then(|v| v.as_object().unwrap_or(&empty).get(step));
        }
        if let Some(text) = value.and_then(header_values::argument) {
            headers.push((format!("mcp-param-{}", mark.header), text));
        }
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn marked_arguments_become_headers_and_null_ones_do_not() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "query": {"type": "string"}
        }});
        let mirrored = marked(&schema).expect("valid marks");
        let mut headers = for_call(
            &json!({"region": "Hello, 世界", "priority": 42, "verbose": null, "query": "x"}),
            &mirrored,
        );
        headers.sort();
        assert_eq!(
            headers,
            vec![
                ("mcp-param-Priority".to_owned(), "42".to_owned()),
                (
                    "mcp-param-Region".to_owned(),
                    "=?base64?SGVsbG8sIOS4lueVjA==?=".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn marks_that_break_the_rules_are_refused() {
        let refused = |property: Value| {
            marked(&json!({"type": "object", "properties": {"a": property}})).is_err()
        };
        assert!(refused(json!({"type": "string", "x-mcp-header": ""})));
        assert!(refused(
            json!({"type": "string", "x-mcp-header": "My Field"})
        ));
        assert!(refused(json!({"type": "string", "x-mcp-header": "Région"})));
        assert!(refused(json!({"type": "object", "x-mcp-header": "A"})));
        assert!(refused(json!({"type": "number", "x-mcp-header": "A"})));
        assert!(refused(
            json!({"type": "array", "items": {"type": "string", "x-mcp-header": "A"}})
        ));
        assert!(marked(&json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "region"}
        }}))
        .is_err());
        assert!(!refused(
            json!({"type": "string", "x-mcp-header": "Region"})
        ));
    }
}
