//! Says in words what a schema expects, for argument errors a model can act on:
//! `one of "metric", "imperial"`, `an integer between 0 and 255`, `an array of strings`.

use super::resolve;
use serde_json::Value;

/// How deep to follow nested schemas before saying "a value of the right shape".
const MAX_DEPTH: usize = 3;

/// Describes `schema`, resolving `$ref`s against `root` (the schema holding `$defs`).
pub fn describe(schema: &Value, root: &Value) -> String {
    describe_at(schema, root, 0)
}

/// Follows an argument path (property names and array indices) through a schema, to the
/// schema of the value at that path.
pub fn subschema_at<'a>(root: &'a Value, path: &[PathSegment]) -> Option<&'a Value> {
    let mut current = resolve(root, root);
    for segment in path {
        current = step(current, root, segment)?;
    }
    Some(current)
}

/// One step of an argument path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// An object property.
    Key(String),
    /// An array position.
    Index(usize),
}

/// Formats a path the way a caller writes it: `filter.limit`, `tags[2]`.
pub fn format_path(path: &[PathSegment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            PathSegment::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            PathSegment::Index(index) => {
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
            }
        }
    }
    out
}

fn step<'a>(schema: &'a Value, root: &'a Value, segment: &PathSegment) -> Option<&'a Value> {
    let schema = resolve(schema, root);
    let direct = match segment {
        PathSegment::Key(key) => schema
            .get("properties")
            .and_then(|p| p.get(key))
            .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object())),
        PathSegment::Index(index) => schema
            .get("prefixItems")
            .and_then(|p| p.get(*index))
            .or_else(|| schema.get("items").filter(|i| i.is_object())),
    };
    if let Some(found) = direct {
        return Some(resolve(found, root));
    }
    ["anyOf", "oneOf", "allOf"]
        .iter()
        .filter_map(|keyword| schema.get(*keyword).and_then(Value::as_array))
        .flatten()
        .find_map(|branch| step(branch, root, segment))
}

fn describe_at(schema: &Value, root: &Value, depth: usize) -> String {
    let schema = resolve(schema, root);
    let object = match schema {
        Value::Bool(true) => return "any value".to_owned(),
        Value::Bool(false) => return "nothing (no value is accepted)".to_owned(),
        Value::Object(object) => object,
        _ => return "a value".to_owned(),
    };
    if object.is_empty() {
        return "any value".to_owned();
    }
    if let Some(options) = object.get("enum").and_then(Value::as_array) {
        return one_of(options);
    }
    if let Some(constant) = object.get("const") {
        return format!("exactly {}", compact(constant));
    }
    if let Some(tagged) = super::tagged::Tagged::of(schema, root) {
        return tagged.description();
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(branches) = object.get(keyword).and_then(Value::as_array) {
            return branches_description(branches, root, depth);
        }
    }
    match object.get("type") {
        Some(Value::String(kind)) => describe_type(kind, object, root, depth),
        Some(Value::Array(kinds)) => {
            let parts: Vec<String> = kinds
                .iter()
                .filter_map(Value::as_str)
                .map(|kind| describe_type(kind, object, root, depth))
                .collect();
            parts.join(" or ")
        }
        _ => "a value of the documented shape".to_owned(),
    }
}

fn branches_description(branches: &[Value], root: &Value, depth: usize) -> String {
    // A union of string constants reads best as one list of allowed values.
    let constants: Option<Vec<&Value>> = branches
        .iter()
        .map(|b| {
            let b = resolve(b, root);
            b.get("const").map(|c| vec![c]).or_else(|| {
                b.get("enum")
                    .and_then(Value::as_array)
                    .map(|e| e.iter().collect())
            })
        })
        .collect::<Option<Vec<_>>>()
        .map(|groups| groups.into_iter().flatten().collect());
    if let Some(constants) = constants {
        let owned: Vec<Value> = constants.into_iter().cloned().collect();
        return one_of(&owned);
    }
    if depth >= MAX_DEPTH {
        return "one of several shapes".to_owned();
    }
    let parts: Vec<String> = branches
        .iter()
        .map(|b| describe_at(b, root, depth + 1))
        .collect();
    // `T or null` (how a nullable value is published) reads as one phrase.
    if let [one, null] = parts.as_slice() {
        if null == "null" {
            return format!("{one} or null");
        }
    }
    format!("one of: {}", parts.join("; or "))
}

/// A string's length limits in words: "3 to 80 characters", "at least 1 character"; `None`
/// without limits.
pub(crate) fn length_words(min: Option<u64>, max: Option<u64>) -> Option<String> {
    let characters = |n: u64| if n == 1 { "character" } else { "characters" };
    match (min, max) {
        (Some(min), Some(max)) => Some(format!("{min} to {max} {}", characters(max))),
        (Some(min), None) => Some(format!("at least {min} {}", characters(min))),
        (None, Some(max)) => Some(format!("at most {max} {}", characters(max))),
        (None, None) => None,
    }
}

fn describe_type(
    kind: &str,
    object: &serde_json::Map<String, Value>,
    root: &Value,
    depth: usize,
) -> String {
    match kind {
        "string" => describe_string(object),
        "integer" => format!("an integer{}", bounds(object)),
        "number" => format!("a number{}", bounds(object)),
        "boolean" => "a boolean (true or false)".to_owned(),
        "null" => "null".to_owned(),
        "array" => describe_array(object, root, depth),
        "object" => describe_object(object, root, depth),
        other => format!("a value of type {other}"),
    }
}

/// A string type in words: its length and pattern, if any.
fn describe_string(object: &serde_json::Map<String, Value>) -> String {
    let min = object.get("minLength").and_then(Value::as_u64);
    let max = object.get("maxLength").and_then(Value::as_u64);
    let shape = match (min, max, length_words(min, max)) {
        (Some(1), Some(1), _) => "a single character".to_owned(),
        (_, _, Some(length)) => format!("a string of {length}"),
        (_, _, None) => "a string".to_owned(),
    };
    match object.get("pattern").and_then(Value::as_str) {
        Some(pattern) => format!("{shape} matching the pattern {pattern}"),
        None => shape,
    }
}

/// An array type in words: its size, whether its items are unique, and what they are.
fn describe_array(object: &serde_json::Map<String, Value>, root: &Value, depth: usize) -> String {
    let unique = object.get("uniqueItems").and_then(Value::as_bool) == Some(true);
    let size = match (
        object.get("minItems").and_then(Value::as_u64),
        object.get("maxItems").and_then(Value::as_u64),
    ) {
        (Some(min), Some(max)) if min == max => format!(" of exactly {min} items"),
        (Some(min), Some(max)) => format!(" of {min} to {max} items"),
        (Some(min), None) if min > 0 => format!(" of at least {min} items"),
        (None, Some(max)) => format!(" of at most {max} items"),
        _ => String::new(),
    };
    let unique = if unique { " (no duplicates)" } else { "" };
    match object.get("items") {
        Some(items) if depth < MAX_DEPTH => {
            let item = describe_at(items, root, depth + 1);
            match plural(&item) {
                Some(plural) => format!("an array of {plural}{size}{unique}"),
                None => format!("an array{size}{unique} whose items are each {item}"),
            }
        }
        _ => format!("an array{size}{unique}"),
    }
}

/// An object type in words: its fields and which are required, or what its values are.
fn describe_object(object: &serde_json::Map<String, Value>, root: &Value, depth: usize) -> String {
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        if properties.is_empty() {
            return "an object".to_owned();
        }
        let names: Vec<&str> = properties.keys().map(String::as_str).collect();
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if required.is_empty() {
            format!("an object with fields {}", names.join(", "))
        } else {
            format!(
                "an object with fields {} (required: {})",
                names.join(", "),
                required.join(", ")
            )
        }
    } else if let Some(values) = object.get("additionalProperties").filter(|v| v.is_object()) {
        if depth >= MAX_DEPTH {
            return "an object".to_owned();
        }
        format!(
            "an object whose values are each {}",
            describe_at(values, root, depth + 1)
        )
    } else {
        "an object".to_owned()
    }
}

fn bounds(object: &serde_json::Map<String, Value>) -> String {
    // The edges of 64-bit integers are what the type can hold, not a limit anyone set:
    // said in full they are noise.
    let set = |bound: &&Value| {
        !(bound.as_i64() == Some(i64::MIN)
            || bound.as_i64() == Some(i64::MAX)
            || bound.as_u64() == Some(u64::MAX))
    };
    let min = object.get("minimum").filter(set).map(compact);
    let max = object.get("maximum").filter(set).map(compact);
    let mut words = match (min, max) {
        (Some(min), Some(max)) => format!(" between {min} and {max}"),
        (Some(min), None) => format!(" of at least {min}"),
        (None, Some(max)) => format!(" of at most {max}"),
        (None, None) => String::new(),
    };
    let mut rules = Vec::new();
    if let Some(above) = object.get("exclusiveMinimum").filter(|v| v.is_number()) {
        rules.push(format!("above {}", compact(above)));
    }
    if let Some(below) = object.get("exclusiveMaximum").filter(|v| v.is_number()) {
        rules.push(format!("below {}", compact(below)));
    }
    if let Some(step) = object.get("multipleOf").filter(|v| v.is_number()) {
        rules.push(format!("a multiple of {}", compact(step)));
    }
    if !rules.is_empty() {
        let joiner = if words.is_empty() {
            " that is "
        } else {
            " and "
        };
        words.push_str(joiner);
        words.push_str(&rules.join(" and "));
    }
    words
}

fn plural(single: &str) -> Option<String> {
    let plural = match single {
        "a string" => "strings",
        "an integer" => "integers",
        "a number" => "numbers",
        "a boolean (true or false)" => "booleans",
        "an object" => "objects",
        "a single character" => "single characters",
        "any value" => "any values",
        _ => {
            if let Some(rest) = single.strip_prefix("an integer ") {
                return Some(format!("integers {rest}"));
            }
            return None;
        }
    };
    Some(plural.to_owned())
}

fn one_of(options: &[Value]) -> String {
    let listed: Vec<String> = options.iter().map(compact).collect();
    match listed.as_slice() {
        [only] => format!("exactly {only}"),
        _ => format!("one of {}", listed.join(", ")),
    }
}

/// Compact JSON for messages, cut short when long so a huge value cannot flood a reply.
pub fn compact(value: &Value) -> String {
    const LIMIT: usize = 80;
    let text = value.to_string();
    if text.chars().count() <= LIMIT {
        return text;
    }
    let cut: String = text.chars().take(LIMIT).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn describes_the_common_shapes() {
        let root = json!({
            "$defs": {"Units": {"type": "string", "enum": ["metric", "imperial"]}}
        });
        let cases = [
            (
                json!({"$ref": "#/$defs/Units"}),
                r#"one of "metric", "imperial""#,
            ),
            (
                json!({"type": "integer", "minimum": 0, "maximum": 255}),
                "an integer between 0 and 255",
            ),
            (
                json!({"type": "string", "minLength": 1, "maxLength": 1}),
                "a single character",
            ),
            (
                json!({"type": "array", "items": {"type": "string"}}),
                "an array of strings",
            ),
            (
                json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
                "an array of strings (no duplicates)",
            ),
            (
                json!({"type": "object", "additionalProperties": {"type": "number"}}),
                "an object whose values are each a number",
            ),
            (json!({"type": ["string", "null"]}), "a string or null"),
            (
                json!({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
                "an integer or null",
            ),
            (json!(true), "any value"),
            (
                json!({"oneOf": [{"const": "a"}, {"enum": ["b", "c"]}]}),
                r#"one of "a", "b", "c""#,
            ),
        ];
        for (schema, expected) in cases {
            assert_eq!(describe(&schema, &root), expected, "{schema}");
        }
    }

    #[test]
    fn follows_paths_through_refs_and_arrays() {
        let root = json!({
            "type": "object",
            "properties": {
                "filter": {"$ref": "#/$defs/Filter"},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "$defs": {
                "Filter": {
                    "type": "object",
                    "properties": {"limit": {"type": "integer", "minimum": 0}}
                }
            }
        });
        let path = [
            PathSegment::Key("filter".into()),
            PathSegment::Key("limit".into()),
        ];
        assert_eq!(format_path(&path), "filter.limit");
        assert_eq!(
            describe(subschema_at(&root, &path).unwrap(), &root),
            "an integer of at least 0"
        );
        let path = [PathSegment::Key("tags".into()), PathSegment::Index(2)];
        assert_eq!(format_path(&path), "tags[2]");
        assert_eq!(
            describe(subschema_at(&root, &path).unwrap(), &root),
            "a string"
        );
    }

    #[test]
    fn long_values_are_cut() {
        let long = Value::String("x".repeat(500));
        assert!(compact(&long).chars().count() <= 81);
    }
}
