//! Visiting every schema inside a JSON Schema (and only schemas: a property named `type`
//! is a name, not a keyword).

use serde_json::{Map, Value};

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

/// Whether any keyword of `map` holds schemas (most schemas hold none: a type and its
/// bounds). One pass over the keywords a schema has, where looking each keyword of
/// [`ONE`], [`MAPS`] and [`LISTS`] up in turn would cost 19 searches of the map.
pub(crate) fn holds_schemas(map: &Map<String, Value>) -> bool {
    map.keys().any(|keyword| {
        let keyword = keyword.as_str();
        ONE.contains(&keyword) || MAPS.contains(&keyword) || LISTS.contains(&keyword)
    })
}

/// Calls `f` on every schema inside `schema`, children before their parent (the children
/// of the keywords of [`ONE`], then [`MAPS`], then [`LISTS`], each in its list's order).
pub(crate) fn transform(schema: &mut Value, f: &mut dyn FnMut(&mut Value)) {
    if let Some(map) = schema.as_object_mut().filter(|map| holds_schemas(map)) {
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
