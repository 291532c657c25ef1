//! What the catalog publishes is accepted by every MCP client and schema linter: no boolean
//! schemas (the official TypeScript client refuses a whole tool list for one), no nullable
//! type arrays, and no schema that constrains nothing (an "any value" is spelled out), at
//! any depth, in input and output schemas alike.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tool_runtime::catalog::Catalog;
use tool_runtime::tool;

/// A struct whose fields give, from schemars, the forms some clients refuse: an `Option`
/// field (`type: [T, "null"]`), a `Value` field and a map of values (boolean `true`).
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub struct Loose {
    /// Maybe a number.
    pub limit: Option<u32>,
    /// Anything.
    pub payload: Value,
    /// Anything, by name.
    pub extra: std::collections::HashMap<String, Value>,
}

/// Echo a loose record.
#[tool]
fn echo_loose(record: Loose, raw: Value) -> Loose {
    let _ = raw;
    record
}

/// Every schema inside `schema`, with the keyword path that leads to it.
fn every_subschema<'a>(schema: &'a Value, path: String, out: &mut Vec<(String, &'a Value)>) {
    out.push((path.clone(), schema));
    let Value::Object(map) = schema else {
        return;
    };
    for (keyword, value) in map {
        match (keyword.as_str(), value) {
            ("properties" | "$defs" | "patternProperties", Value::Object(children)) => {
                for (name, child) in children {
                    every_subschema(child, format!("{path}/{keyword}/{name}"), out);
                }
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(children)) => {
                for (index, child) in children.iter().enumerate() {
                    every_subschema(child, format!("{path}/{keyword}/{index}"), out);
                }
            }
            ("items" | "additionalProperties" | "not" | "contains", child) => {
                every_subschema(child, format!("{path}/{keyword}"), out)
            }
            _ => {}
        }
    }
}

#[test]
fn published_schemas_have_no_boolean_schemas_and_no_nullable_type_arrays() {
    let catalog = Catalog::global().unwrap();
    let loose = catalog.get("echo_loose").unwrap();
    // The forms are really there to be rewritten: the nested Option is a nullable anyOf.
    assert_eq!(
        loose.input_schema()["$defs"]["Loose"]["properties"]["limit"]["anyOf"][1],
        json!({"type": "null"})
    );
    assert_eq!(
        loose.input_schema()["$defs"]["Loose"]["properties"]["extra"]["additionalProperties"],
        json!(true)
    );
    let any_value = json!([
        {"type": "object"}, {"type": "array"}, {"type": "string"},
        {"type": "number"}, {"type": "boolean"}, {"type": "null"}
    ]);
    assert_eq!(
        loose.input_schema()["properties"]["raw"]["anyOf"],
        any_value
    );
    assert_eq!(
        loose.input_schema()["$defs"]["Loose"]["properties"]["payload"],
        json!({"description": "Anything.", "anyOf": any_value})
    );
    for tool in catalog.tools() {
        let mut schemas = Vec::new();
        every_subschema(tool.input_schema(), "input".into(), &mut schemas);
        if let Some(output) = tool.output_schema() {
            every_subschema(output, "output".into(), &mut schemas);
        }
        for (path, schema) in schemas {
            if let Value::Bool(_) = schema {
                // `additionalProperties: false` closes an object and `true` opens it; a
                // switch every client reads, not a schema standing for a value.
                assert!(
                    path.ends_with("/additionalProperties"),
                    "{}: a boolean schema at {path}",
                    tool.name()
                );
            }
            if let Value::Object(map) = schema {
                const CONSTRAINING: [&str; 12] = [
                    "type",
                    "enum",
                    "const",
                    "anyOf",
                    "oneOf",
                    "allOf",
                    "not",
                    "$ref",
                    "properties",
                    "items",
                    "additionalProperties",
                    "required",
                ];
                assert!(
                    path.ends_with("/not")
                        || map.keys().any(|key| CONSTRAINING.contains(&key.as_str())),
                    "{}: a schema that constrains nothing at {path}: {schema}",
                    tool.name()
                );
            }
            if let Some(Value::Array(kinds)) = schema.get("type") {
                assert!(
                    !kinds.iter().any(|kind| kind == "null"),
                    "{}: a nullable type array at {path}: {schema}",
                    tool.name()
                );
            }
        }
    }
}
