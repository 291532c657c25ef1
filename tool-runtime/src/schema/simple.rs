//! A validator for the schemas of simple parameters: numbers with bounds, strings with
//! lengths, booleans, enums of values, and arrays, sets and maps of those.
//!
//! Most tools take only such parameters. For them, building a `jsonschema` validator would
//! cost far more than checking: the crate validates every schema against the draft's
//! meta-schema when it compiles one (a few MiB of memory, once, and time on first use).
//! Schemas with anything else (`$ref`, unions, nested objects) still go to `jsonschema`,
//! so what is accepted is exactly what the published schema says either way: the keywords
//! here follow JSON Schema 2020-12 (an integer is any number with no fraction; `format` is
//! an annotation, not checked).

use super::describe::{self, PathSegment};
use super::validate::Problem;
use serde_json::{Map, Value};

/// Keywords that carry no constraint.
const ANNOTATIONS: [&str; 6] = [
    "description",
    "default",
    "examples",
    "title",
    "format",
    "deprecated",
];
/// Keywords this validator checks.
const CHECKED: [&str; 13] = [
    "type",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "enum",
    "const",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
];

/// Whether every property schema of `root` is one this validator checks exactly.
pub(crate) fn is_simple(root: &Value) -> bool {
    // Rules of the whole object (`allOf`, `if`, `$defs`...), which a hand-written schema
    // may have, are the full validator's.
    let whole_object_rules = root.as_object().is_some_and(|root| {
        root.iter().any(|(keyword, value)| match keyword.as_str() {
            "type" | "properties" | "required" => false,
            "additionalProperties" => value != &Value::Bool(false),
            keyword => !ANNOTATIONS.contains(&keyword),
        })
    });
    if whole_object_rules {
        return false;
    }
    root.get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| properties.values().all(simple))
}

fn simple(schema: &Value) -> bool {
    match schema {
        Value::Bool(_) => true,
        Value::Object(map) => map.iter().all(|(keyword, value)| match keyword.as_str() {
            "items" => simple(value),
            "additionalProperties" => {
                // A map: `{"type": "object", "additionalProperties": <schema>}`.
                map.get("type") == Some(&Value::from("object")) && simple(value)
            }
            keyword => ANNOTATIONS.contains(&keyword) || CHECKED.contains(&keyword),
        }),
        _ => false,
    }
}

/// Adds a problem for each way `value` at `path` breaks `schema`.
pub(crate) fn check(
    schema: &Value,
    value: &Value,
    path: &mut Vec<PathSegment>,
    root: &Value,
    problems: &mut Vec<Problem>,
) {
    let Value::Object(map) = schema else {
        if schema == &Value::Bool(false) {
            fail(schema, value, path, root, problems);
        }
        return;
    };
    if !fits(map, value) {
        fail(schema, value, path, root, problems);
        return;
    }
    match value {
        Value::Array(items) => {
            if let Some(item_schema) = map.get("items") {
                for (index, item) in items.iter().enumerate() {
                    path.push(PathSegment::Index(index));
                    check(item_schema, item, path, root, problems);
                    path.pop();
                }
            }
        }
        Value::Object(entries) => {
            if let Some(value_schema) = map.get("additionalProperties") {
                for (key, entry) in entries {
                    path.push(PathSegment::Key(key.clone()));
                    check(value_schema, entry, path, root, problems);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

fn fail(
    schema: &Value,
    value: &Value,
    path: &[PathSegment],
    root: &Value,
    problems: &mut Vec<Problem>,
) {
    let shown = describe::format_path(path);
    problems.push(Problem::new(
        shown.clone(),
        format!(
            "'{shown}' must be {}; got {}",
            describe::describe(schema, root),
            describe::compact(value)
        ),
    ));
}

/// The constraints of one schema on one value (not its items or entries).
fn fits(schema: &Map<String, Value>, value: &Value) -> bool {
    if let Some(kind) = schema.get("type") {
        let matches = |kind: &Value| kind.as_str().is_some_and(|kind| is_type(value, kind));
        let ok = match kind {
            Value::Array(kinds) => kinds.iter().any(matches),
            kind => matches(kind),
        };
        if !ok {
            return false;
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.iter().any(|option| equal(option, value)) {
            return false;
        }
    }
    if let Some(constant) = schema.get("const") {
        if !equal(constant, value) {
            return false;
        }
    }
    if let Value::Number(number) = value {
        let bound = |keyword: &str| schema.get(keyword).and_then(Value::as_number);
        if bound("minimum").is_some_and(|min| compare(number, min).is_lt())
            || bound("maximum").is_some_and(|max| compare(number, max).is_gt())
            || bound("exclusiveMinimum").is_some_and(|min| compare(number, min).is_le())
            || bound("exclusiveMaximum").is_some_and(|max| compare(number, max).is_ge())
        {
            return false;
        }
    }
    if let Value::String(text) = value {
        let length = text.chars().count() as u64;
        if schema
            .get("minLength")
            .and_then(Value::as_u64)
            .is_some_and(|min| length < min)
            || schema
                .get("maxLength")
                .and_then(Value::as_u64)
                .is_some_and(|max| length > max)
        {
            return false;
        }
    }
    if let Value::Array(items) = value {
        let count = items.len() as u64;
        if schema
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|min| count < min)
            || schema
                .get("maxItems")
                .and_then(Value::as_u64)
                .is_some_and(|max| count > max)
        {
            return false;
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            for (index, item) in items.iter().enumerate() {
                if items[..index].iter().any(|earlier| equal(earlier, item)) {
                    return false;
                }
            }
        }
    }
    true
}

fn is_type(value: &Value, kind: &str) -> bool {
    match kind {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        "integer" => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => false,
    }
}

/// JSON equality, where `1` and `1.0` are the same number.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y).is_eq(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, value)| y.get(key).is_some_and(|other| equal(value, other)))
        }
        _ => a == b,
    }
}

/// Compares two JSON numbers exactly when both are integers, as floats otherwise.
fn compare(a: &serde_json::Number, b: &serde_json::Number) -> std::cmp::Ordering {
    let exact = |n: &serde_json::Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (exact(a), exact(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => a
            .as_f64()
            .unwrap_or(f64::NAN)
            .partial_cmp(&b.as_f64().unwrap_or(f64::NAN))
            .unwrap_or(std::cmp::Ordering::Equal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(schema: Value, value: Value) -> Vec<String> {
        let mut found = Vec::new();
        check(
            &schema,
            &value,
            &mut vec![PathSegment::Key("x".into())],
            &json!({}),
            &mut found,
        );
        found.into_iter().map(|p| p.message).collect()
    }

    #[test]
    fn simple_schemas_are_recognised() {
        assert!(is_simple(
            &json!({"properties": {"a": {"type": "integer", "format": "int64", "minimum": 0}}})
        ));
        assert!(is_simple(
            &json!({"properties": {"t": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}})
        ));
        assert!(is_simple(
            &json!({"properties": {"m": {"type": "object", "additionalProperties": {"type": "number"}}, "v": true}})
        ));
        assert!(!is_simple(
            &json!({"properties": {"r": {"$ref": "#/$defs/X"}}, "$defs": {}})
        ));
        assert!(!is_simple(
            &json!({"properties": {"u": {"anyOf": [{"type": "string"}]}}})
        ));
        assert!(!is_simple(
            &json!({"properties": {"o": {"type": "object", "properties": {}}}})
        ));
    }

    #[test]
    fn checks_follow_json_schema() {
        let byte = json!({"type": "integer", "minimum": 0, "maximum": 255});
        assert!(problems(byte.clone(), json!(255)).is_empty());
        assert!(
            problems(byte.clone(), json!(255.0)).is_empty(),
            "an integer is a number without fraction"
        );
        assert_eq!(
            problems(byte.clone(), json!(256)),
            ["'x' must be an integer between 0 and 255; got 256"]
        );
        assert_eq!(problems(byte, json!(1.5)).len(), 1);
        let wide = json!({"type": "integer", "minimum": 0, "maximum": u64::MAX});
        assert!(problems(wide.clone(), json!(u64::MAX)).is_empty());
        assert_eq!(problems(wide, json!(-1)).len(), 1);
        let letter = json!({"type": "string", "minLength": 1, "maxLength": 1});
        assert!(problems(letter.clone(), json!("é")).is_empty());
        assert_eq!(problems(letter, json!("ab")).len(), 1);
        let set = json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true});
        assert_eq!(problems(set.clone(), json!(["a", "a"])).len(), 1);
        assert_eq!(
            problems(set, json!(["a", 1])),
            ["'x[1]' must be a string; got 1"]
        );
        let map = json!({"type": "object", "additionalProperties": {"type": "boolean"}});
        assert_eq!(
            problems(map, json!({"k": "no"})),
            ["'x.k' must be a boolean (true or false); got \"no\""]
        );
        let units = json!({"type": "string", "enum": ["metric", "imperial"]});
        assert_eq!(
            problems(units, json!("kelvin")),
            [r#"'x' must be one of "metric", "imperial"; got "kelvin""#]
        );
        assert!(problems(json!({"type": ["string", "null"]}), json!(null)).is_empty());
        assert!(problems(json!(true), json!({"any": "thing"})).is_empty());
    }
}
