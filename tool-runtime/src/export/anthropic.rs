//! Anthropic Messages API `tools`: `name`, `description`, `input_schema`, and
//! `input_examples` from the JSON examples.

use crate::catalog::Tool;
use serde_json::{Map, Value};

/// Every tool in the shape of the Messages API's `tools` array.
pub fn anthropic_tools(tools: &[&Tool]) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|tool| {
                let mut object = Map::new();
                object.insert("name".to_owned(), tool.name().into());
                object.insert("description".to_owned(), tool.description().into());
                object.insert("input_schema".to_owned(), tool.input_schema().clone());
                let examples: Vec<Value> = tool.argument_examples().cloned().collect();
                if !examples.is_empty() {
                    object.insert("input_examples".to_owned(), Value::Array(examples));
                }
                Value::Object(object)
            })
            .collect(),
    )
}
