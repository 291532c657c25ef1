//! OpenAI function tools: the Chat Completions `tools` array and the Responses API shape,
//! plain or `strict`.
//!
//! Strict mode accepts a subset of JSON Schema: every object closed
//! (`additionalProperties: false`) with every property required, optional ones made
//! nullable instead; `$ref` alone in its object; a short list of keywords. A tool whose
//! schema cannot be made strict (a free-form map, "any value") is exported with
//! `strict: false` and its canonical schema, and the export says which tool and why.

use super::{ExportWarning, Exported};
use crate::catalog::Tool;
use crate::schema::{describe, walk};
use serde_json::{json, Map, Value};

/// Keywords strict mode accepts; everything else is removed.
const STRICT_KEYWORDS: [&str; 20] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "description",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// String formats strict mode accepts.
const STRICT_FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The Chat Completions `tools` array: `{"type": "function", "function": {...}}`.
pub fn openai_chat_tools(tools: &[&Tool], strict: bool) -> Exported {
    export(tools, strict, |name, description, parameters, strict| {
        let mut function = Map::new();
        function.insert("name".to_owned(), name.into());
        function.insert("description".to_owned(), description.into());
        function.insert("parameters".to_owned(), parameters);
        if let Some(strict) = strict {
            function.insert("strict".to_owned(), strict.into());
        }
        json!({"type": "function", "function": Value::Object(function)})
    })
}

/// The Responses API `tools` array: `{"type": "function", "name", ...}`. The Responses
/// API treats function tools as strict unless told otherwise, so `strict` is always given.
pub fn openai_responses_tools(tools: &[&Tool], strict: bool) -> Exported {
    export(tools, strict, |name, description, parameters, strict| {
        json!({
            "type": "function",
            "name": name,
            "description": description,
            "parameters": parameters,
            "strict": strict.unwrap_or(false),
        })
    })
}

fn export(
    tools: &[&Tool],
    strict: bool,
    shape: impl Fn(&str, &str, Value, Option<bool>) -> Value,
) -> Exported {
    let mut warnings = Vec::new();
    let mut items = Vec::with_capacity(tools.len());
    for tool in tools {
        let (parameters, strict_flag) = if strict {
            match strict_schema(tool.input_schema()) {
                Ok(schema) => (schema, Some(true)),
                Err(reason) => {
                    warnings.push(ExportWarning {
                        tool: tool.name().to_owned(),
                        message: format!("exported with strict: false: {reason}"),
                    });
                    (tool.input_schema().clone(), Some(false))
                }
            }
        } else {
            (tool.input_schema().clone(), None)
        };
        items.push(shape(
            tool.name(),
            tool.description(),
            parameters,
            strict_flag,
        ));
    }
    Exported {
        value: Value::Array(items),
        warnings,
    }
}

const ANY_VALUE: &str = "a value accepts any JSON, which strict mode cannot describe";

/// The strict-mode form of a canonical schema, or why there is none.
pub fn strict_schema(canonical: &Value) -> Result<Value, String> {
    let mut schema = canonical.clone();
    let mut failure: Option<String> = None;
    walk::transform(&mut schema, &mut |node| {
        // "Any value" is the reason given when there is one: its published form is an
        // anyOf whose object branch, visited first, would be reported as a map.
        if crate::schema::accepts_any(node) {
            failure = Some(ANY_VALUE.to_owned());
        } else if failure.is_none() {
            if let Err(reason) = strict_node(node) {
                failure = Some(reason);
            }
        }
    });
    match failure {
        Some(reason) => Err(reason),
        None => Ok(schema),
    }
}

/// Makes one schema node strict; its children are already strict.
fn strict_node(node: &mut Value) -> Result<(), String> {
    let Value::Object(map) = node else {
        return Ok(());
    };
    if map.contains_key("allOf") || map.contains_key("not") || map.contains_key("prefixItems") {
        return Err(
            "the schema uses allOf, not or tuples, which strict mode does not accept".to_owned(),
        );
    }
    if let Some(one_of) = map.remove("oneOf") {
        // serde's enums give branches that never overlap, so anyOf means the same here.
        map.insert("anyOf".to_owned(), one_of);
    }
    // What strict mode cannot carry but a model should know is said in words.
    if let Some(words) = unsupported_in_words(map) {
        let description = match map.get("description").and_then(Value::as_str) {
            Some(description) if !description.is_empty() => format!("{description} {words}"),
            _ => words,
        };
        map.insert("description".to_owned(), description.into());
    }
    if map.contains_key("$ref") {
        reference_alone(map);
        return Ok(());
    }
    map.retain(|keyword, _| STRICT_KEYWORDS.contains(&keyword.as_str()));
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| !STRICT_FORMATS.contains(&format))
    {
        map.remove("format");
    }
    strict_object(map)
}

/// A node with a `$ref`, which strict mode wants alone: a description moves to a
/// one-branch anyOf around it, and every other keyword goes.
fn reference_alone(map: &mut Map<String, Value>) {
    let reference = map.remove("$ref").unwrap_or_default();
    let description = map.remove("description");
    map.clear();
    match description {
        Some(description) => {
            map.insert("anyOf".to_owned(), json!([{"$ref": reference}]));
            map.insert("description".to_owned(), description);
        }
        None => {
            map.insert("$ref".to_owned(), reference);
        }
    }
}

/// An object node made strict: every key named and required (the optional ones nullable),
/// no other keys; an object of free-form keys is refused.
fn strict_object(map: &mut Map<String, Value>) -> Result<(), String> {
    let is_object = map.contains_key("properties")
        || map
            .get("type")
            .is_some_and(|kind| type_includes(kind, "object"));
    if !is_object {
        return Ok(());
    }
    let free_form = match map.get("additionalProperties") {
        Some(Value::Object(_) | Value::Bool(true)) => true,
        // An object with no named keys and no word on others takes any keys.
        None => !map.contains_key("properties"),
        Some(_) => false,
    };
    if free_form {
        return Err(
            "an object takes free-form keys (a map), but strict mode needs every key named"
                .to_owned(),
        );
    }
    let required: Vec<String> = crate::schema::required(map)
        .into_iter()
        .map(str::to_owned)
        .collect();
    let mut all = Vec::new();
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if !required.contains(name) {
                make_nullable(property);
            }
            all.push(Value::from(name.as_str()));
        }
    } else {
        map.insert("properties".to_owned(), Value::Object(Map::new()));
    }
    map.insert("required".to_owned(), Value::Array(all));
    map.insert("additionalProperties".to_owned(), false.into());
    Ok(())
}

/// The default and the string length of a node, which strict mode does not accept, as a
/// sentence for its description (a model then still knows what the parameter takes).
fn unsupported_in_words(map: &Map<String, Value>) -> Option<String> {
    let mut words = Vec::new();
    let length = |keyword: &str| map.get(keyword).and_then(Value::as_u64);
    if let Some(length) = describe::length_words(length("minLength"), length("maxLength")) {
        // A sentence ("At least 1 character."); the words start with an ASCII letter or digit.
        words.push(format!("{}{}.", length[..1].to_uppercase(), &length[1..]));
    }
    if let Some(default) = map.get("default") {
        words.push(format!("Default: {default}."));
    }
    (!words.is_empty()).then(|| words.join(" "))
}

fn type_includes(kind: &Value, name: &str) -> bool {
    match kind {
        Value::String(kind) => kind == name,
        Value::Array(kinds) => kinds.iter().any(|k| k == name),
        _ => false,
    }
}

/// Lets a strict property be `null`, standing for "left out".
fn make_nullable(property: &mut Value) {
    let Value::Object(map) = property else {
        return;
    };
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        if !branches
            .iter()
            .any(|b| b.get("type") == Some(&Value::from("null")))
        {
            branches.push(json!({"type": "null"}));
        }
        return;
    }
    match map.get_mut("type") {
        Some(Value::String(kind)) => {
            let kind = std::mem::take(kind);
            if kind != "null" {
                map.insert("type".to_owned(), json!([kind, "null"]));
            }
        }
        Some(Value::Array(kinds)) => {
            if !kinds.iter().any(|k| k == "null") {
                kinds.push("null".into());
            }
        }
        _ => {
            // `$ref`, `const` or `enum` alone: wrap.
            let inner = std::mem::take(map);
            let description = inner.get("description").cloned();
            let mut inner = inner;
            inner.remove("description");
            map.insert(
                "anyOf".to_owned(),
                json!([Value::Object(inner), {"type": "null"}]),
            );
            if let Some(description) = description {
                map.insert("description".to_owned(), description);
            }
            return;
        }
    }
    if let Some(Value::Array(options)) = map.get_mut("enum") {
        if !options.contains(&Value::Null) {
            options.push(Value::Null);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_properties_become_required_and_nullable() {
        let canonical = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1},
                "units": {"$ref": "#/$defs/Units", "description": "Units.", "default": "metric"},
                "days": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}
            },
            "required": ["city"],
            "additionalProperties": false,
            "$defs": {"Units": {"type": "string", "enum": ["metric", "imperial"]}}
        });
        assert_eq!(
            strict_schema(&canonical).unwrap(),
            json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "At least 1 character."},
                    "units": {"anyOf": [{"$ref": "#/$defs/Units"}, {"type": "null"}],
                        "description": "Units. Default: \"metric\"."},
                    "days": {"type": ["integer", "null"], "minimum": 0, "maximum": 255}
                },
                "required": ["city", "days", "units"],
                "additionalProperties": false,
                "$defs": {"Units": {"type": "string", "enum": ["metric", "imperial"]}}
            })
        );
    }

    /// Keywords strict mode rejects go at every depth: in `$defs`, `items` and `anyOf`.
    #[test]
    fn rejected_keywords_go_at_every_depth() {
        let canonical = json!({
            "type": "object",
            "title": "Args",
            "properties": {
                "list": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/Item"}},
                "either": {"anyOf": [
                    {"type": "string", "minLength": 2, "pattern": "^a"},
                    {"type": "integer", "multipleOf": 2}
                ]}
            },
            "required": ["list", "either"],
            "additionalProperties": false,
            "$defs": {"Item": {
                "type": "object",
                "title": "Item",
                "properties": {"name": {"type": "string", "maxLength": 9, "examples": ["x"]}},
                "required": ["name"],
                "additionalProperties": false
            }}
        });
        assert_eq!(
            strict_schema(&canonical).unwrap(),
            json!({
                "type": "object",
                "properties": {
                    "list": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/Item"}},
                    "either": {"anyOf": [
                        {"type": "string", "pattern": "^a",
                            "description": "At least 2 characters."},
                        {"type": "integer", "multipleOf": 2}
                    ]}
                },
                "required": ["either", "list"],
                "additionalProperties": false,
                "$defs": {"Item": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "At most 9 characters."}
                    },
                    "required": ["name"],
                    "additionalProperties": false
                }}
            })
        );
    }

    #[test]
    fn maps_and_any_values_cannot_be_strict() {
        let map = json!({
            "type": "object",
            "properties": {"tags": {"type": "object", "additionalProperties": {"type": "string"}}},
            "required": ["tags"]
        });
        assert!(strict_schema(&map).unwrap_err().contains("map"));
        let any = json!({"type": "object", "properties": {"value": true}, "required": ["value"]});
        assert!(strict_schema(&any).unwrap_err().contains("any JSON"));
        // "Any value" as the catalog publishes it: said as such, not as a map.
        let mut published = any.clone();
        crate::schema::publishable(&mut published);
        assert!(strict_schema(&published).unwrap_err().contains("any JSON"));
        // An object with no named keys takes any keys: strict mode would close it.
        let open = json!({
            "type": "object",
            "properties": {"bag": {"type": "object"}},
            "required": ["bag"]
        });
        assert!(strict_schema(&open).unwrap_err().contains("map"));
    }
}
