//! The MCP objects of the catalog: each tool as `tools/list` shows it, each prompt as
//! `prompts/list` does, each resource or template as `resources/list` or
//! `resources/templates/list` does.

use crate::catalog::{Prompt, Resource, Tool};
use serde_json::{Map, Value};

/// One tool as MCP's `tools/list` shows it (2026-07-28): `name`, `title`, `description`,
/// `inputSchema` (with the JSON argument examples as `examples`), `outputSchema` (the
/// schema of the output value; the handshake era, whose structured content must be an
/// object, lists `{"result": ...}` around an output that is not one) and `annotations`.
pub fn mcp_tool(tool: &Tool) -> Value {
    let mut object = Map::new();
    object.insert("name".to_owned(), tool.name().into());
    if let Some(title) = tool.title() {
        object.insert("title".to_owned(), title.into());
    }
    object.insert("description".to_owned(), tool.description().into());
    object.insert("inputSchema".to_owned(), schema_with_examples(tool));
    if let Some(output) = tool.published_output_schema() {
        object.insert("outputSchema".to_owned(), output.clone());
    }
    let annotations = tool.annotations();
    let mut hints = Map::new();
    for (key, value) in [
        ("readOnlyHint", annotations.read_only),
        ("destructiveHint", annotations.destructive),
        ("idempotentHint", annotations.idempotent),
        ("openWorldHint", annotations.open_world),
    ] {
        if let Some(value) = value {
            hints.insert(key.to_owned(), value.into());
        }
    }
    if !hints.is_empty() {
        object.insert("annotations".to_owned(), Value::Object(hints));
    }
    Value::Object(object)
}

/// The input schema with the tool's JSON argument examples under `examples`.
pub(crate) fn schema_with_examples(tool: &Tool) -> Value {
    let mut schema = tool.input_schema().clone();
    let examples: Vec<Value> = tool.argument_examples().cloned().collect();
    if let (false, Value::Object(map)) = (examples.is_empty(), &mut schema) {
        map.insert("examples".to_owned(), Value::Array(examples));
    }
    schema
}

/// Every tool as MCP Tool objects, in the order given.
pub fn mcp_tools(tools: &[&Tool]) -> Value {
    Value::Array(tools.iter().map(|tool| mcp_tool(tool)).collect())
}

/// The tools as the handshake era (up to 2025-11-25) lists them: an output that is not
/// always an object is described as `{"result": ...}`.
#[cfg(feature = "http")]
pub(crate) fn handshake_mcp_tools(tools: &[&Tool]) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|tool| {
                let mut listed = mcp_tool(tool);
                let wrapped = tool.published_wrapped_output_schema();
                if let (Some(object), Some(schema)) = (listed.as_object_mut(), wrapped) {
                    object.insert("outputSchema".to_owned(), schema.clone());
                }
                listed
            })
            .collect(),
    )
}

/// One prompt as `prompts/list` shows it.
pub fn mcp_prompt(prompt: &Prompt) -> Value {
    let mut entry = Map::new();
    entry.insert("name".to_owned(), prompt.name().into());
    if let Some(title) = prompt.title() {
        entry.insert("title".to_owned(), title.into());
    }
    entry.insert("description".to_owned(), prompt.description().into());
    let arguments: Vec<Value> = prompt
        .arguments()
        .map(|argument| {
            let mut entry = Map::new();
            entry.insert("name".to_owned(), argument.name().into());
            if let Some(description) = argument.description() {
                entry.insert("description".to_owned(), description.into());
            }
            entry.insert("required".to_owned(), argument.is_required().into());
            Value::Object(entry)
        })
        .collect();
    if !arguments.is_empty() {
        entry.insert("arguments".to_owned(), Value::Array(arguments));
    }
    Value::Object(entry)
}

/// One resource as `resources/list` shows it, or one template as
/// `resources/templates/list` does.
pub fn mcp_resource(resource: &Resource) -> Value {
    let mut entry = Map::new();
    let key = if resource.is_template() {
        "uriTemplate"
    } else {
        "uri"
    };
    entry.insert(key.to_owned(), resource.uri().into());
    entry.insert("name".to_owned(), resource.name().into());
    if let Some(title) = resource.title() {
        entry.insert("title".to_owned(), title.into());
    }
    if !resource.description().is_empty() {
        entry.insert("description".to_owned(), resource.description().into());
    }
    if let Some(mime_type) = resource.mime_type() {
        entry.insert("mimeType".to_owned(), mime_type.into());
    }
    if let (Some(size), false) = (resource.size(), resource.is_template()) {
        entry.insert("size".to_owned(), size.into());
    }
    Value::Object(entry)
}
