//! Arguments that fit a tool's input schema, for a client that calls tools it knows
//! nothing else about: each required property gets its default, its first example or
//! enum value, or a plain value of its type.

use serde_json::{json, Map, Value};

/// An object of arguments for `schema` (an object schema): its required properties filled.
pub(crate) fn example(schema: &Value) -> Value {
    let mut arguments = Map::new();
    let required = schema["required"].as_array().into_iter().flatten();
    for name in required.filter_map(Value::as_str) {
        let property = &schema["properties"][name];
        arguments.insert(name.to_owned(), value_for(property));
    }
    Value::Object(arguments)
}

/// A value `property` accepts.
fn value_for(property: &Value) -> Value {
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    if let Some(first) = property["examples"].get(0).or(property["enum"].get(0)) {
        return first.clone();
    }
    if let Some(constant) = property.get("const") {
        return constant.clone();
    }
    let kind = match &property["type"] {
        Value::Array(kinds) => kinds.iter().find(|kind| *kind != "null").cloned(),
        kind => Some(kind.clone()),
    };
    match kind.as_ref().and_then(Value::as_str) {
        Some("string") => json!("example"),
        Some("integer") => json!(1),
        Some("number") => json!(1.5),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => example(property),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_properties_get_a_value_of_their_type_or_their_default() {
        let schema = json!({"type": "object", "required": ["a", "b", "c", "d"], "properties": {
            "a": {"type": "number"}, "b": {"type": "string", "default": "x"},
            "c": {"enum": ["red", "blue"]}, "d": {"type": ["null", "boolean"]},
            "e": {"type": "string"}}});
        assert_eq!(
            example(&schema),
            json!({"a": 1.5, "b": "x", "c": "red", "d": true})
        );
    }
}
