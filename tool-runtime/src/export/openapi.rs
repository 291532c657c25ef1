//! The REST endpoints as an OpenAPI 3.1 document: one operation per tool
//! (`POST /api/tools/{name}/call`, its arguments as the body), with the tool's input schema
//! as the request body and its output schema in the result. OpenAPI 3.1 takes JSON Schema
//! 2020-12 as it is; only the `$defs` of each schema move to `components/schemas`, where the
//! document's references can reach them.

use crate::catalog::Tool;
use serde_json::{json, Map, Value};

/// The path a tool is called at, by its name alone: the arguments are the body.
pub fn call_path(tool: &str) -> String {
    format!("/api/tools/{tool}/call")
}

/// The OpenAPI 3.1 document of the tools' REST endpoints, titled `title` at `version`.
///
/// ```
/// use tool_runtime::{tool, Registry};
///
/// /// Add two integers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let registry = Registry::new().unwrap();
/// let tools = registry.tools();
/// let tools: Vec<&tool_runtime::catalog::Tool> = tools.iter().map(|tool| &**tool).collect();
/// let document = tool_runtime::export::openapi(&tools, "adder", "1.0.0");
/// assert_eq!(document["openapi"], "3.1.0");
/// let add = &document["paths"]["/api/tools/add/call"]["post"];
/// assert_eq!(add["operationId"], "add");
/// assert_eq!(
///     add["requestBody"]["content"]["application/json"]["schema"]["required"],
///     serde_json::json!(["a", "b"])
/// );
/// ```
pub fn openapi(tools: &[&Tool], title: &str, version: &str) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for tool in tools {
        let name = tool.name();
        let input = moved_definitions(tool.input_schema(), &format!("{name}.input."), &mut schemas);
        let output = tool
            .output_schema()
            .map(|schema| moved_definitions(schema, &format!("{name}.output."), &mut schemas));
        let mut operation = Map::new();
        operation.insert("operationId".to_owned(), name.into());
        operation.insert("summary".to_owned(), tool.summary().into());
        operation.insert("description".to_owned(), tool.description().into());
        operation.insert("responses".to_owned(), responses(&input, output));
        operation.insert(
            "requestBody".to_owned(),
            json!({
                "required": true,
                "description": "The tool's arguments.",
                "content": {"application/json": {"schema": input}},
            }),
        );
        let mut item = Map::new();
        item.insert("post".to_owned(), Value::Object(operation));
        paths.insert(call_path(name), Value::Object(item));
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": title,
            "version": version,
            "description": "Each tool is one operation: POST its arguments as a JSON object, \
                get its result.",
        },
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

/// What a call answers: its result (`output` or, for a tool's own failure, `error`), or a
/// refusal that says why it did not run.
fn responses(input: &Value, output: Option<Value>) -> Value {
    let output = output.unwrap_or_else(|| json!({"description": "What the tool returned."}));
    let error = json!({
        "description": "The call did not run; `error` says why and what to change.",
        "content": {"application/json": {"schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool called."},
                "input": input,
                "error": {"type": "string", "description": "What is wrong, naming the parameter."},
            },
            "required": ["error"],
        }}},
    });
    json!({
        "200": {
            "description": "The tool ran: its output, or the error it returned.",
            "content": {"application/json": {"schema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The tool called."},
                    "input": input,
                    "output": output,
                    "error": {"type": "string", "description": "The tool's error, when it failed."},
                },
                "required": ["name", "input"],
            }}},
        },
        "400": error.clone(),
        "403": error.clone(),
        "404": error.clone(),
        "429": error.clone(),
        "503": error,
    })
}

/// `schema` with its `$defs` moved to `schemas` under `prefix` (a component's name allows
/// letters, digits, `.`, `-` and `_`), and every reference to them rewritten.
fn moved_definitions(schema: &Value, prefix: &str, schemas: &mut Map<String, Value>) -> Value {
    let mut schema = schema.clone();
    let definitions = schema
        .as_object_mut()
        .and_then(|object| object.remove("$defs"));
    rewrite_references(&mut schema, prefix);
    if let Some(Value::Object(definitions)) = definitions {
        for (name, mut definition) in definitions {
            rewrite_references(&mut definition, prefix);
            schemas.insert(component_name(prefix, &name), definition);
        }
    }
    schema
}

fn component_name(prefix: &str, name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_' => c,
            _ => '_',
        })
        .collect();
    format!("{prefix}{name}")
}

/// Every `"$ref": "#/$defs/Name..."` in `value` pointed at the moved definition.
fn rewrite_references(value: &mut Value, prefix: &str) {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get_mut("$ref") {
                if let Some(rest) = reference.strip_prefix("#/$defs/") {
                    let (name, tail) = rest.split_once('/').unwrap_or((rest, ""));
                    let mut moved =
                        format!("#/components/schemas/{}", component_name(prefix, name));
                    if !tail.is_empty() {
                        moved.push('/');
                        moved.push_str(tail);
                    }
                    *reference = moved;
                }
            }
            object
                .values_mut()
                .for_each(|child| rewrite_references(child, prefix));
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|child| rewrite_references(child, prefix)),
        _ => {}
    }
}
