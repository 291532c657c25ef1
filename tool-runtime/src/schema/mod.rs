//! The canonical schema of a tool (DESIGN decision 2): JSON Schema 2020-12, a root object of
//! the parameters, no `$schema`, no `title` noise, nested user types under `$defs`, optional
//! parameters left out of `required` rather than typed `[T, "null"]`.

pub mod describe;
pub(crate) mod simple;

use crate::catalog::registration::{ParamKind, ToolRegistration};
use crate::catalog::ParamInfo;
use schemars::generate::SchemaSettings;
use schemars::transform::{RecursiveTransform, Transform};
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

/// A generator with the canonical settings: 2020-12 without a `$schema` key.
pub(crate) fn generator_for_input() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|settings| settings.meta_schema = None)
        .for_deserialize()
        .into_generator()
}

fn generator_for_output() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|settings| settings.meta_schema = None)
        .for_serialize()
        .into_generator()
}

/// The input schema of a macro-registered tool, and what it says of each parameter.
pub(crate) fn input_schema(registration: &ToolRegistration) -> (Value, Vec<ParamInfo>) {
    let mut generator = generator_for_input();
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut params = Vec::with_capacity(registration.params.len());
    for spec in registration.params {
        let ParamKind::Argument {
            schema,
            optional,
            default,
        } = &spec.kind
        else {
            params.push(ParamInfo {
                name: spec.name.to_owned(),
                description: spec.description.map(str::to_owned),
                required: false,
                injected: true,
                default: None,
            });
            continue;
        };
        let mut property = schema(&mut generator);
        let type_is_optional = optional();
        let default_value = default.and_then(|default_json| default_json());
        let is_required = !type_is_optional && default.is_none();
        if type_is_optional {
            strip_null(&mut property);
        }
        if let Some(description) = spec.description {
            property.insert("description".to_owned(), description.into());
        }
        if let Some(value) = &default_value {
            property.insert("default".to_owned(), value.clone());
        }
        properties.insert(spec.name.to_owned(), property.to_value());
        if is_required {
            required.push(Value::from(spec.name));
        }
        params.push(ParamInfo {
            name: spec.name.to_owned(),
            description: spec.description.map(str::to_owned),
            required: is_required,
            injected: false,
            default: default_value,
        });
    }
    let definitions = generator.take_definitions(true);
    (object_schema(properties, required, definitions), params)
}

/// Builds the root object schema from its parts, in canonical form.
pub(crate) fn object_schema(
    properties: Map<String, Value>,
    required: Vec<Value>,
    definitions: Map<String, Value>,
) -> Value {
    let mut root = Map::new();
    root.insert("type".to_owned(), "object".into());
    root.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        root.insert("required".to_owned(), Value::Array(required));
    }
    root.insert("additionalProperties".to_owned(), false.into());
    if !definitions.is_empty() {
        root.insert("$defs".to_owned(), Value::Object(definitions));
    }
    let mut schema = Schema::from(root);
    RecursiveTransform(|schema: &mut Schema| {
        schema.remove("title");
        complete_integer_bounds(schema);
    })
    .transform(&mut schema);
    schema.to_value()
}

/// Adds the bounds schemars leaves out for wide integers (`i32`, `u32`, `i64`, ...), keyed
/// on the `format` its impl for each type writes. Without them the schema would accept a
/// number the type's `Deserialize` refuses. serde_json numbers hold at most 64 bits, so the
/// 128-bit types are bounded by what a call can carry.
fn complete_integer_bounds(schema: &mut Schema) {
    let is_integer = match schema.get("type") {
        Some(Value::String(kind)) => kind == "integer",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "integer"),
        _ => false,
    };
    if !is_integer {
        return;
    }
    let (minimum, maximum): (Value, Value) = match schema.get("format").and_then(Value::as_str) {
        Some("int32") => (i32::MIN.into(), i32::MAX.into()),
        Some("uint32") => (0.into(), u32::MAX.into()),
        Some("int64" | "int") => (i64::MIN.into(), i64::MAX.into()),
        Some("uint64" | "uint") => (0.into(), u64::MAX.into()),
        Some("int128") => (i64::MIN.into(), u64::MAX.into()),
        Some("uint128") => (0.into(), u64::MAX.into()),
        _ => return,
    };
    let object = schema.ensure_object();
    object.entry("minimum").or_insert(minimum);
    object.entry("maximum").or_insert(maximum);
}

/// The output schema of a tool, and whether its values are wrapped as `{"result": ...}`
/// (MCP structured content must be an object).
pub(crate) fn output_schema(registration: &ToolRegistration) -> Option<(Value, bool)> {
    let mut generator = generator_for_output();
    canonical_output((registration.output_schema)(&mut generator)?)
}

/// The output schema of a return type, for tools made at run time.
pub(crate) fn output_schema_of<T: schemars::JsonSchema>() -> Option<(Value, bool)> {
    canonical_output(generator_for_output().into_root_schema_for::<T>())
}

fn canonical_output(mut schema: Schema) -> Option<(Value, bool)> {
    remove_titles(&mut schema);
    let mut value = schema.to_value();
    if value.get("type").and_then(Value::as_str) == Some("null") {
        return None; // A tool returning nothing has no structured output.
    }
    if value.get("type").and_then(Value::as_str) == Some("object") {
        return Some((value, false));
    }
    // Wrap: the root's `$defs` move to the new root so references still resolve.
    let definitions = value
        .as_object_mut()
        .and_then(|object| object.remove("$defs"))
        .and_then(|defs| match defs {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default();
    let mut root = Map::new();
    root.insert("type".to_owned(), "object".into());
    let mut properties = Map::new();
    properties.insert("result".to_owned(), value);
    root.insert("properties".to_owned(), Value::Object(properties));
    root.insert("required".to_owned(), Value::Array(vec!["result".into()]));
    if !definitions.is_empty() {
        root.insert("$defs".to_owned(), Value::Object(definitions));
    }
    Some((Value::Object(root), true))
}

/// Makes the schema of an optional parameter its inner type's: `[T, "null"]` becomes `T`,
/// and `anyOf: [T, {"type": "null"}]` becomes `T`.
pub(crate) fn strip_null(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(kinds)) = object.get_mut("type") {
        kinds.retain(|kind| kind != "null");
        if kinds.len() == 1 {
            let only = kinds.remove(0);
            object.insert("type".to_owned(), only);
        }
        return;
    }
    for keyword in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = object.get_mut(keyword) else {
            continue;
        };
        branches.retain(|branch| branch.get("type").and_then(Value::as_str) != Some("null"));
        if branches.len() == 1 {
            let Some(Value::Object(inner)) = branches.pop() else {
                return;
            };
            object.remove(keyword);
            for (key, value) in inner {
                object.entry(key).or_insert(value);
            }
        }
        return;
    }
    if object.get("const").is_some_and(Value::is_null) {
        return;
    }
    if let Some(Value::Array(options)) = object.get_mut("enum") {
        options.retain(|option| !option.is_null());
    }
}

/// Removes `title` from every schema position (not from property names called `title`).
pub(crate) fn remove_titles(schema: &mut Schema) {
    RecursiveTransform(|schema: &mut Schema| {
        schema.remove("title");
    })
    .transform(schema);
}

/// Follows local `$ref`s (`#/...`) from `schema` within `root`, at most eight hops so a
/// cycle of references cannot loop; an unresolvable reference stops where it is.
pub(crate) fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..8 {
        match current.get("$ref").and_then(Value::as_str) {
            Some(reference) => match reference.strip_prefix('#').and_then(|p| root.pointer(p)) {
                Some(target) => current = target,
                None => break,
            },
            None => break,
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strip_null_handles_type_arrays_and_any_of() {
        let mut schema = Schema::try_from(json!({"type": ["string", "null"]})).unwrap();
        strip_null(&mut schema);
        assert_eq!(schema.to_value(), json!({"type": "string"}));

        let mut schema = Schema::try_from(
            json!({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}], "description": "d"}),
        )
        .unwrap();
        strip_null(&mut schema);
        assert_eq!(
            schema.to_value(),
            json!({"$ref": "#/$defs/A", "description": "d"})
        );
    }

    #[test]
    fn titles_go_but_properties_named_title_stay() {
        let mut schema = Schema::try_from(json!({
            "title": "Root",
            "type": "object",
            "properties": {"title": {"type": "string", "title": "Inner"}}
        }))
        .unwrap();
        remove_titles(&mut schema);
        assert_eq!(
            schema.to_value(),
            json!({"type": "object", "properties": {"title": {"type": "string"}}})
        );
    }
}
