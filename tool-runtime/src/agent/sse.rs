//! A streamed Chat Completions response: server-sent events cut into their `data`, and
//! the chunks' deltas put together as one response.
//!
//! The event framing is a few lines (blank-line-separated events, `data:` fields joined by
//! newlines), so it is written here rather than taken from a crate: the SSE crates either
//! pin an older HTTP client or bring a parser-combinator library for it.

use serde_json::{json, Map, Value};

/// Bytes in, the `data` of each complete event out.
#[derive(Debug, Default)]
pub(crate) struct Events {
    pending: Vec<u8>,
}

impl Events {
    /// Takes `bytes` and gives the data of every event they complete.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some((end, gap)) = event_end(&self.pending) {
            let event: Vec<u8> = self.pending.drain(..end + gap).take(end).collect();
            let text = String::from_utf8_lossy(&event);
            let data: Vec<&str> = text
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect();
            if !data.is_empty() {
                out.push(data.join("\n"));
            }
        }
        out
    }
}

/// Where the first event in `bytes` ends, and the length of the blank line after it.
fn event_end(bytes: &[u8]) -> Option<(usize, usize)> {
    (0..bytes.len()).find_map(|at| {
        let rest = &bytes[at..];
        if rest.starts_with(b"\r\n\r\n") {
            Some((at, 4))
        } else if rest.starts_with(b"\n\n") {
            Some((at, 2))
        } else {
            None
        }
    })
}

/// The chunks of one streamed response, put together.
#[derive(Debug, Default)]
pub(crate) struct Merged {
    head: Map<String, Value>,
    content: Option<String>,
    refusal: Option<String>,
    /// The tool calls by their `index`: id, type, name and the argument fragments joined.
    calls: Vec<(u64, Map<String, Value>, String, String)>,
    finish_reason: Option<Value>,
    usage: Option<Value>,
}

impl Merged {
    /// Adds one chunk.
    pub(crate) fn add(&mut self, chunk: &Value) {
        for key in ["id", "model", "created", "system_fingerprint"] {
            if let Some(value) = chunk.get(key) {
                self.head
                    .entry(key.to_owned())
                    .or_insert_with(|| value.clone());
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| !usage.is_null()) {
            self.usage = Some(usage.clone());
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| choices.first())
        else {
            return;
        };
        if let Some(reason) = choice.get("finish_reason").filter(|r| !r.is_null()) {
            self.finish_reason = Some(reason.clone());
        }
        let Some(delta) = choice.get("delta") else {
            return;
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            self.content.get_or_insert_with(String::new).push_str(text);
        }
        if let Some(text) = delta.get("refusal").and_then(Value::as_str) {
            self.refusal.get_or_insert_with(String::new).push_str(text);
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            let at = match self.calls.iter().position(|(i, ..)| *i == index) {
                Some(at) => at,
                None => {
                    self.calls
                        .push((index, Map::new(), String::new(), String::new()));
                    self.calls.len() - 1
                }
            };
            let (_, fields, name, arguments) = &mut self.calls[at];
            for key in ["id", "type"] {
                if let Some(value) = call.get(key).filter(|v| !v.is_null()) {
                    fields.insert(key.to_owned(), value.clone());
                }
            }
            if let Some(function) = call.get("function") {
                if let Some(part) = function.get("name").and_then(Value::as_str) {
                    name.push_str(part);
                }
                if let Some(part) = function.get("arguments").and_then(Value::as_str) {
                    arguments.push_str(part);
                }
            }
        }
    }

    /// Whether a chunk said why the response ended.
    pub(crate) fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// The chunks as one `chat.completion` response.
    pub(crate) fn into_response(mut self) -> Value {
        self.calls.sort_by_key(|(index, ..)| *index);
        let calls: Vec<Value> = self
            .calls
            .into_iter()
            .map(|(_, mut fields, name, arguments)| {
                fields.entry("type").or_insert_with(|| "function".into());
                fields.insert(
                    "function".to_owned(),
                    json!({"name": name, "arguments": arguments}),
                );
                Value::Object(fields)
            })
            .collect();
        let mut message = Map::new();
        message.insert("role".to_owned(), "assistant".into());
        message.insert(
            "content".to_owned(),
            self.content.map_or(Value::Null, Value::String),
        );
        if let Some(refusal) = self.refusal {
            message.insert("refusal".to_owned(), Value::String(refusal));
        }
        if !calls.is_empty() {
            message.insert("tool_calls".to_owned(), Value::Array(calls));
        }
        let mut response = self.head;
        response.insert("object".to_owned(), "chat.completion".into());
        response.insert(
            "choices".to_owned(),
            json!([{
                "index": 0,
                "message": message,
                "finish_reason": self.finish_reason.unwrap_or(Value::Null),
            }]),
        );
        if let Some(usage) = self.usage {
            response.insert("usage".to_owned(), usage);
        }
        Value::Object(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_cut_at_blank_lines_whatever_the_chunks() {
        let stream =
            b"data: {\"a\":1}\n\n: comment\n\ndata: one\ndata: two\r\n\r\ndata: [DONE]\n\n";
        for size in [1, 3, 7, stream.len()] {
            let mut events = Events::default();
            let mut out = Vec::new();
            for chunk in stream.chunks(size) {
                out.extend(events.push(chunk));
            }
            assert_eq!(out, ["{\"a\":1}", "one\ntwo", "[DONE]"], "chunks of {size}");
        }
    }

    #[test]
    fn tool_call_fragments_come_together_by_index() {
        let mut merged = Merged::default();
        for chunk in [
            json!({"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant",
                "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "add", "arguments": ""}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 1, "id": "call_2", "type": "function",
                    "function": {"name": "sub", "arguments": "{}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": "{\"a\":"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": "1}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [],
                "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}),
        ] {
            merged.add(&chunk);
        }
        assert!(merged.finished());
        let response = merged.into_response();
        let calls = &response["choices"][0]["message"]["tool_calls"];
        assert_eq!(
            calls[0]["function"],
            json!({"name": "add", "arguments": "{\"a\":1}"})
        );
        assert_eq!(calls[1]["id"], "call_2");
        assert_eq!(response["usage"]["total_tokens"], 7);
        assert_eq!(response["choices"][0]["finish_reason"], "tool_calls");
    }
}
