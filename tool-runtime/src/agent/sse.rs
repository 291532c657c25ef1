//! A streamed Chat Completions response: server-sent events cut into their `data` (by
//! `sse-stream`, which follows the HTML standard's parsing: every line ending, fields,
//! comments), each event bounded in size, and the chunks' deltas put together as one
//! response.

use super::looping::ModelError;
use futures_util::{Stream, StreamExt};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The most bytes read for one event: a server that never ends an event is refused here
/// rather than growing this process's memory.
pub(crate) const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// The `data` of each event of `bytes` (a body's chunks, cut anywhere), in order; an
/// event with no `data` field (a comment, a keep-alive) gives nothing. Ends at the first
/// error: the body's, or an event over `max_event_bytes`.
pub(crate) fn data_of<E>(
    bytes: impl Stream<Item = Result<bytes::Bytes, E>> + Unpin,
    max_event_bytes: usize,
) -> impl Stream<Item = Result<String, ModelError>> + Unpin
where
    E: std::error::Error + Send + Sync + 'static,
{
    // Bytes handed to the parser since it last gave an event: the parser pulls a chunk
    // only when it has no whole event, so this is what one event holds (give or take the
    // chunk that ends it).
    let held = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&held);
    let bounded = bytes.map(move |chunk| {
        let chunk = chunk.map_err(|error| Bound::Body(Box::new(error)))?;
        if counted.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len() > max_event_bytes {
            return Err(Bound::Over(max_event_bytes));
        }
        Ok(chunk)
    });
    sse_stream::SseStream::from_bytes_stream(bounded).filter_map(move |event| {
        held.store(0, Ordering::Relaxed);
        std::future::ready(match event {
            Ok(event) => event.data.map(Ok),
            Err(error) => Some(Err(ModelError::new(describe(&error)))),
        })
    })
}

/// Why the bytes of a stream stopped: the body failed, or an event grew past the bound.
#[derive(Debug)]
enum Bound {
    Body(Box<dyn std::error::Error + Send + Sync>),
    Over(usize),
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Body(error) => write!(f, "the stream was cut off: {error}"),
            Bound::Over(most) => write!(
                f,
                "an event of the stream is over {most} bytes, more than a response needs"
            ),
        }
    }
}

impl std::error::Error for Bound {}

fn describe(error: &sse_stream::Error) -> String {
    match error {
        sse_stream::Error::Body(inner) => match inner.downcast_ref::<Bound>() {
            Some(bound) => bound.to_string(),
            None => format!("the stream was cut off: {inner}"),
        },
        other => format!("the stream could not be read: {other}"),
    }
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

    /// The data of every event of `chunks`, or the first error.
    fn read(chunks: Vec<Vec<u8>>, most: usize) -> Result<Vec<String>, String> {
        let stream = futures_util::stream::iter(
            chunks
                .into_iter()
                .map(|chunk| Ok::<_, std::io::Error>(bytes::Bytes::from(chunk))),
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut events = data_of(stream, most);
            let mut out = Vec::new();
            while let Some(event) = events.next().await {
                out.push(event.map_err(|error| error.to_string())?);
            }
            Ok(out)
        })
    }

    /// `stream` cut in two at every byte, and in chunks of one byte: the same events.
    fn same_at_every_cut(stream: &[u8], expected: &[&str]) {
        for at in 0..=stream.len() {
            let chunks = vec![stream[..at].to_vec(), stream[at..].to_vec()];
            assert_eq!(
                read(chunks, MAX_EVENT_BYTES).unwrap(),
                expected,
                "cut at {at}"
            );
        }
        let bytes = stream.iter().map(|byte| vec![*byte]).collect();
        assert_eq!(
            read(bytes, MAX_EVENT_BYTES).unwrap(),
            expected,
            "one byte at a time"
        );
    }

    #[test]
    fn an_openai_stream_reads_the_same_however_it_is_cut() {
        // The shape OpenAI's Chat Completions API streams (`data: ` lines, LF LF, a
        // final `[DONE]`), with the keep-alive comments some gateways add.
        let stream = concat!(
            "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n",
            ": OPENROUTER PROCESSING\n\n",
            "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hé\"}}]}\n\n",
            "data: [DONE]\n\n"
        );
        same_at_every_cut(
            stream.as_bytes(),
            &[
                r#"{"id":"c","choices":[{"index":0,"delta":{"role":"assistant"}}]}"#,
                r#"{"id":"c","choices":[{"index":0,"delta":{"content":"Hé"}}]}"#,
                "[DONE]",
            ],
        );
    }

    #[test]
    fn every_line_ending_and_field_form_of_the_standard_is_read() {
        // CR LF (as some proxies send), CR alone, and a mix; several `data` lines joined by
        // a newline; a `data` field with no colon (an empty line of data); no space after
        // the colon; other fields and comments ignored.
        same_at_every_cut(
            b"data: one\r\ndata: two\r\n\r\ndata:three\r\rdata\ndata: four\n\r\nevent: x\nid: 7\n: c\ndata: five\n\n",
            &["one\ntwo", "three", "\nfour", "five"],
        );
    }

    #[test]
    fn an_event_past_the_bound_ends_the_stream_with_a_clear_error() {
        let mut stream = b"data: small\n\ndata: ".to_vec();
        stream.extend(std::iter::repeat_n(b'x', 5_000));
        let chunks: Vec<Vec<u8>> = stream.chunks(100).map(<[u8]>::to_vec).collect();
        let error = read(chunks, 1_000).unwrap_err();
        assert_eq!(
            error,
            "an event of the stream is over 1000 bytes, more than a response needs"
        );
        // Many small events in small chunks are never held against the bound.
        let many = "data: {}\n\n".repeat(1_000).into_bytes();
        let chunks: Vec<Vec<u8>> = many.chunks(64).map(<[u8]>::to_vec).collect();
        assert_eq!(read(chunks, 1_000).unwrap().len(), 1_000);
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
