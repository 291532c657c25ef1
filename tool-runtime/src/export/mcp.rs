//! The MCP `tools/list` Tool object of each tool.

use crate::catalog::Tool;
use serde_json::{Map, Value};

/// One tool as MCP's `tools/list` shows it: `name`, `title`, `description`, `inputSchema`
/// (with the JSON argument examples as `examples`), `outputSchema` and `annotations`.
pub fn mcp_tool(tool: &Tool) -> Value {
    let mut object = Map::new();
    object.insert("name".to_owned(), tool.name().into());
    if let Some(title) = tool.title() {
        object.insert("title".to_owned(), title.into());
    }
    object.insert("description".to_owned(), tool.description().into());
    object.insert("inputSchema".to_owned(), schema_with_examples(tool));
    if let Some(output) = tool.output_schema() {
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
