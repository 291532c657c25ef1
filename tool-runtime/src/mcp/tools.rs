//! The `tools/call` result of a call: content blocks, structured content when the tool has
//! an output schema, `isError` for failures the model should see and correct, and a
//! preview with a link in place of a large output (for tools that allow it).

use super::outputs::{Link, OutputStore};
use crate::call::error::CallError;
use crate::call::result::ToolResult;
use serde_json::{json, Map, Value};

/// What a `tools/call` answers: a result body, or a protocol error.
pub(crate) enum CallAnswer {
    Result(Map<String, Value>),
    /// A protocol error, not a tool result: an unknown tool (-32602), or, where the
    /// protocol has the error, a tool that needs the user at pages first (-32042).
    Error {
        code: i64,
        message: String,
        data: Option<Value>,
    },
}

/// The answer to `result`; `pages_as_error` when the protocol answers a tool that needs
/// the user at pages first with its own error (the handshake era's -32042). With a store, a
/// large output of a tool marked `large_output = "resource"` is stored there and answered
/// as a preview and a link; any answer over `max_output_bytes` is then cut.
pub(crate) fn answer(
    result: ToolResult,
    max_output_bytes: usize,
    outputs: Option<&OutputStore>,
    pages_as_error: bool,
) -> CallAnswer {
    if pages_as_error {
        if let Some((code, message, data)) = super::asking::url_elicitation_required(&result) {
            let data = Some(data);
            return CallAnswer::Error {
                code,
                message,
                data,
            };
        }
    }
    let answer = full_answer(result, outputs);
    match answer {
        CallAnswer::Result(body) => CallAnswer::Result(limited(body, max_output_bytes)),
        other => other,
    }
}

/// Cuts an answer over `limit` bytes: its text, at a character boundary, with a marker
/// saying how much there was. Structured content cannot be cut and stay valid, so a cut
/// answer carries none and is flagged `isError` (clients then skip checking it against the
/// output schema).
fn limited(mut body: Map<String, Value>, limit: usize) -> Map<String, Value> {
    if crate::schema::json_len_at_most(&body) <= limit {
        return body;
    }
    let size = crate::schema::json_len(&body);
    if size <= limit {
        return body;
    }
    let mut text = String::new();
    for block in body
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match block.get("text").and_then(Value::as_str) {
            Some(part) => text.push_str(part),
            None => text.push_str(&block.to_string()),
        }
    }
    let mut cut = limit.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str(&format!(
        "\n[output truncated: the result was {size} bytes; the limit is {limit} bytes. Ask for less.]"
    ));
    body.clear();
    body.insert(
        "content".to_owned(),
        json!([{"type": "text", "text": text}]),
    );
    body.insert("isError".to_owned(), true.into());
    body
}

fn full_answer(result: ToolResult, outputs: Option<&OutputStore>) -> CallAnswer {
    let mut body = Map::new();
    // Content blocks come only with a success.
    if let Some(content) = result.content() {
        body.insert(
            "content".to_owned(),
            serde_json::to_value(content).unwrap_or_default(),
        );
        return CallAnswer::Result(body);
    }
    let tool = result.tool().cloned();
    // The text block shows the value itself: a string as it is, anything else as compact
    // JSON (without the `{"result": ...}` wrapper).
    let shown = result
        .shown_text()
        .map(|(text, mime_type)| (text.into_owned(), mime_type));
    match (result.into_outcome(), shown) {
        (Ok(output), shown) => {
            // Without a text of its own only content blocks, answered above.
            let (mut text, mime_type) =
                shown.unwrap_or_else(|| (output.to_string(), "application/json"));
            let has_schema = tool.as_ref().is_some_and(|t| t.output_schema().is_some());
            let linking = tool.as_ref().filter(|t| t.large_output_as_resource());
            let store = outputs.filter(|store| store.is_large(text.len()));
            if let (Some(tool), Some(store)) = (linking, store) {
                let size = text.len();
                match store.store(tool.name(), text, mime_type) {
                    Ok(link) => {
                        body.insert(
                            "content".to_owned(),
                            linked(tool.name(), link, size, mime_type),
                        );
                        return CallAnswer::Result(body);
                    }
                    // Too big to keep at all: answered whole, then cut to the limit.
                    Err(whole) => text = whole,
                }
            }
            body.insert(
                "content".to_owned(),
                json!([{"type": "text", "text": text}]),
            );
            if has_schema {
                body.insert("structuredContent".to_owned(), output);
            }
        }
        (Err(error @ CallError::UnknownTool { .. }), _) => {
            return CallAnswer::Error {
                code: super::jsonrpc::code::INVALID_PARAMS,
                message: error.to_string(),
                data: None,
            };
        }
        (Err(error), _) => {
            body.insert(
                "content".to_owned(),
                json!([{"type": "text", "text": error.to_string()}]),
            );
            body.insert("isError".to_owned(), true.into());
            // A refusal an agent's loop acts on (wait, or stop) says which in `_meta`, where
            // a program reads it without parsing the text.
            if matches!(
                error,
                CallError::RateLimited { .. }
                    | CallError::BudgetExceeded { .. }
                    | CallError::InsufficientScope { .. }
                    | CallError::UrlElicitationRequired { .. }
            ) {
                body.insert("_meta".to_owned(), json!({"status": error.status()}));
            }
        }
    }
    CallAnswer::Result(body)
}

/// The content that stands for a stored output: its preview, and a link to the whole.
fn linked(tool: &str, link: Link, size: usize, mime_type: &str) -> Value {
    json!([
        {"type": "text", "text": link.preview},
        {
            "type": "resource_link",
            "uri": link.uri,
            "name": format!("{tool} output"),
            "mimeType": mime_type,
            "size": size,
            "description": format!("The whole output of {tool}, {size} bytes."),
        },
    ])
}
