//! Visiting every schema inside a JSON Schema (and only schemas: a property named `type`
//! is a name, not a keyword).

use serde_json::Value;

/// Keywords whose value is one schema.
pub(crate) const ONE: [&str; 10] = [
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords whose value maps names to schemas.
pub(crate) const MAPS: [&str; 5] = [
    "properties",
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];
/// Keywords whose value is a list of schemas.
pub(crate) const LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];

/// Calls `f` on every schema inside `schema`, children before their parent.
pub(crate) fn transform(schema: &mut Value, f: &mut dyn FnMut(&mut Value)) {
    if let Value::Object(map) = schema {
        // `additionalProperties: false` and friends are switches here, not values to
        // describe; boolean schemas are visited only where they stand for a property.
        for keyword in ONE {
            if let Some(child @ Value::Object(_)) = map.get_mut(keyword) {
                transform(child, f);
            }
        }
        for keyword in MAPS {
            if let Some(Value::Object(children)) = map.get_mut(keyword) {
                for child in children.values_mut() {
                    transform(child, f);
                }
            }
        }
        for keyword in LISTS {
            if let Some(Value::Array(children)) = map.get_mut(keyword) {
                for child in children {
                    transform(child, f);
                }
            }
        }
    }
    f(schema);
}
