//! The `tools/call` result of a call: content blocks, structured content when the tool has
//! an output schema, `isError` for failures the model should see and correct, and a
//! preview with a link in place of a large output (for tools that allow it).

use super::outputs::{Link, OutputStore};
use super::ServerInfo;
use crate::call::content::{AnswerBlocks, Content};
use crate::call::error::{CallError, FailedAnswer};
use crate::call::output_value::OutputJson;
use crate::call::result::ToolResult;
use crate::call::runnable::ToolRef;
use serde_json::{json, Map, Value};

/// What a `tools/call` answers: a result body, or a protocol error.
pub(crate) enum CallAnswer {
    Result(CallBody),
    /// A protocol error, not a tool result: an unknown tool (-32602), or, where the
    /// protocol has the error, a tool that needs the user at pages first (-32042).
    Error {
        code: i64,
        message: String,
        data: Option<Value>,
    },
}

/// A `tools/call` result body. It is written straight into the response (see
/// [`CallBody::framed`]) rather than built as a JSON tree first: a call's answer is the
/// one message every call sends, and the tree costs a dozen allocations and a second pass.
#[derive(Debug)]
pub(crate) struct CallBody {
    content: Blocks,
    /// The output, for a tool with an output schema.
    structured: Option<Structured>,
    is_error: bool,
    /// `_meta.status`: what a refusal an agent's loop acts on (wait, or stop) is, where a
    /// program reads it without parsing the text.
    status: Option<&'static str>,
    /// `_meta.cached`: the output was kept from an earlier call and given again.
    cached: bool,
}

/// Structured content: the output as it is, or written as `{"result": ...}` where
/// structured content must be an object and the tool's output is not always one (written
/// so, not built as a map first: it is most calls' answer in that era).
#[derive(Debug)]
struct Structured {
    /// A value, or another server's structured content as the text it sent.
    value: OutputJson,
    wrapped: bool,
}

impl Structured {
    /// Whether it is written as an object.
    fn is_object(&self) -> bool {
        self.wrapped
            || match &self.value {
                OutputJson::Value(value) => value.is_object(),
                OutputJson::Text(text) => crate::schema::is_json_object(text.get()),
            }
    }

    /// A bound on its length as JSON.
    fn len_at_most(&self) -> usize {
        // `{"result":` and `}` around it when wrapped.
        let wrapping = 11;
        wrapping
            + match &self.value {
                OutputJson::Value(value) => crate::schema::json_len_at_most(value),
                OutputJson::Text(text) => text.get().len(),
            }
    }
}

#[derive(Debug)]
enum Blocks {
    /// One text block.
    Text(String),
    /// The tool's own blocks, another server's as it sent them, or a stored output's
    /// preview and link.
    Answer(AnswerBlocks),
}

impl CallBody {
    fn text(text: String) -> Self {
        CallBody {
            content: Blocks::Text(text),
            structured: None,
            is_error: false,
            status: None,
            cached: false,
        }
    }

    /// Whether the body reports a failure (`isError`).
    pub(crate) fn is_error(&self) -> bool {
        self.is_error
    }

    /// The body as the `result` of a response; at 2026-07-28 (`info` given) with the
    /// fields every result carries there: `resultType` and the server's identity.
    pub(crate) fn framed<'a>(&'a self, info: Option<&'a ServerInfo>) -> Framed<'a> {
        Framed { body: self, info }
    }

    /// The body as a JSON object, for a task's stored outcome.
    pub(crate) fn into_map(self) -> Map<String, Value> {
        match serde_json::from_slice(&self.framed(None).to_vec()) {
            Ok(Value::Object(map)) => map,
            // A body is a map of strings, content blocks and the tool's own JSON.
            _ => Map::new(),
        }
    }

    /// A bound on the length of the body as JSON, worked out without writing it, so that
    /// a small answer is known to fit a limit without being written twice. Generous by a
    /// few bytes for the fields' names.
    fn len_at_most(&self) -> usize {
        const FIELDS: usize = 96;
        let content = match &self.content {
            Blocks::Text(text) => crate::schema::json_str_len_at_most(text),
            Blocks::Answer(blocks) => blocks.json_len(),
        };
        let structured = self.structured.as_ref().map_or(0, Structured::len_at_most);
        FIELDS.saturating_add(content).saturating_add(structured)
    }

    /// The text a model reads in the body's content, for a cut answer.
    fn into_text(self) -> String {
        fn shown(text: Option<&str>, block: impl FnOnce() -> String, into: &mut String) {
            match text {
                Some(text) => into.push_str(text),
                None => into.push_str(&block()),
            }
        }
        let mut text = String::new();
        match self.content {
            Blocks::Text(only) => text = only,
            Blocks::Answer(AnswerBlocks::Own(blocks)) => {
                for block in &blocks {
                    let own = match block {
                        Content::Text { text } => Some(text.as_str()),
                        _ => None,
                    };
                    shown(own, || json!(block).to_string(), &mut text);
                }
            }
            Blocks::Answer(AnswerBlocks::Sent(sent)) => {
                for block in sent.values() {
                    let own = block.get("text").and_then(Value::as_str);
                    shown(own, || block.to_string(), &mut text);
                }
            }
        }
        text
    }
}

/// A body with the fields of its era, written field by field in the order serde_json's own
/// maps keep: the names are known not to need escaping, so only the values go through
/// serde_json (writing the names through a serializer cost a third of the answer's time).
pub(crate) struct Framed<'a> {
    body: &'a CallBody,
    info: Option<&'a ServerInfo>,
}

impl Framed<'_> {
    /// Appends the body to `out` as a JSON object.
    pub(crate) fn write(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let body = self.body;
        out.push(b'{');
        if body.status.is_some() || self.info.is_some() || body.cached {
            out.extend_from_slice(b"\"_meta\":{");
            if body.cached {
                out.extend_from_slice(b"\"cached\":true");
                if body.status.is_some() || self.info.is_some() {
                    out.push(b',');
                }
            }
            if let Some(info) = self.info {
                out.push(b'"');
                out.extend_from_slice(super::pages::SERVER_INFO_META.as_bytes());
                out.extend_from_slice(b"\":{\"name\":");
                serde_json::to_writer(&mut *out, info.name())?;
                out.extend_from_slice(b",\"version\":");
                serde_json::to_writer(&mut *out, info.version())?;
                out.push(b'}');
            }
            if let Some(status) = body.status {
                if self.info.is_some() {
                    out.push(b',');
                }
                out.extend_from_slice(b"\"status\":");
                serde_json::to_writer(&mut *out, status)?;
            }
            out.extend_from_slice(b"},");
        }
        out.extend_from_slice(b"\"content\":");
        match &body.content {
            Blocks::Text(text) => {
                out.extend_from_slice(b"[{\"text\":");
                serde_json::to_writer(&mut *out, text)?;
                out.extend_from_slice(b",\"type\":\"text\"}]");
            }
            Blocks::Answer(blocks) => serde_json::to_writer(&mut *out, blocks)?,
        }
        if body.is_error {
            out.extend_from_slice(b",\"isError\":true");
        }
        if self.info.is_some() {
            out.extend_from_slice(b",\"resultType\":\"complete\"");
        }
        if let Some(structured) = &body.structured {
            out.extend_from_slice(b",\"structuredContent\":");
            if structured.wrapped {
                out.extend_from_slice(b"{\"result\":");
            }
            match &structured.value {
                OutputJson::Value(value) => serde_json::to_writer(&mut *out, value)?,
                OutputJson::Text(text) => out.extend_from_slice(text.get().as_bytes()),
            }
            if structured.wrapped {
                out.push(b'}');
            }
        }
        out.push(b'}');
        Ok(())
    }

    /// The body as JSON text.
    fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        if let Err(error) = self.write(&mut out) {
            // Strings, content blocks and the tool's own JSON all serialize.
            tracing::error!(%error, "a call's answer could not be written");
            out.clear();
        }
        out
    }
}

/// The answer to `result`; `pages_as_error` when the protocol answers a tool that needs
/// the user at pages first with its own error (the handshake era's -32042); `objects_only`
/// when structured content must be an object (the handshake era), so that an output that
/// is not one goes as `{"result": ...}`. With a store, a large output of a tool marked
/// `large_output = "resource"` is stored there and answered as a preview and a link; any
/// answer over `max_output_bytes` is then cut.
pub(crate) fn answer(
    result: ToolResult,
    max_output_bytes: usize,
    outputs: Option<&OutputStore>,
    pages_as_error: bool,
    objects_only: bool,
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
    let cached = result.is_cached();
    match full_answer(result, outputs, objects_only) {
        CallAnswer::Result(body) => {
            let mut body = limited(body, max_output_bytes);
            body.cached = cached;
            CallAnswer::Result(body)
        }
        other => other,
    }
}

/// Cuts an answer over `limit` bytes: its text, at a character boundary, with a marker
/// saying how much there was. Structured content cannot be cut and stay valid, so a cut
/// answer carries none and is flagged `isError` (clients then skip checking it against the
/// output schema).
fn limited(body: CallBody, limit: usize) -> CallBody {
    if body.len_at_most() <= limit {
        return body;
    }
    let size = body.framed(None).to_vec().len();
    if size <= limit {
        return body;
    }
    let mut text = body.into_text();
    let mut cut = limit.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str(&format!(
        "\n[output truncated: the result was {size} bytes; the limit is {limit} bytes. Ask for \
        less.]"
    ));
    CallBody {
        is_error: true,
        ..CallBody::text(text)
    }
}

fn full_answer(
    result: ToolResult,
    outputs: Option<&OutputStore>,
    objects_only: bool,
) -> CallAnswer {
    // Content blocks come only with a success.
    let shown = result
        .shown_text()
        .map(|(text, mime_type)| (text.into_owned(), mime_type));
    let (outcome, content, tool) = result.into_parts();
    if let Some(content) = content {
        // Blocks of a tool with an output schema (another server's, passed on) come with
        // its structured content.
        let has_schema = tool.as_ref().is_some_and(|t| t.output_schema().is_some());
        let structured = outcome.ok().filter(|_| has_schema).map(|output| {
            as_structured(
                output.into_json(Some(&content)),
                tool.as_ref(),
                objects_only,
            )
        });
        return CallAnswer::Result(CallBody {
            content: Blocks::Answer(content),
            structured,
            ..CallBody::text(String::new())
        });
    }
    // The text block shows the value itself: a string as it is, anything else as compact
    // JSON: the value itself, whatever the era.
    match outcome.map(|output| output.into_value(None)) {
        Ok(output) => {
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
                        return CallAnswer::Result(CallBody {
                            content: Blocks::Answer(AnswerBlocks::sent(linked(
                                tool.name(),
                                link,
                                size,
                                mime_type,
                            ))),
                            ..CallBody::text(String::new())
                        });
                    }
                    // Too big to keep at all: answered whole, then cut to the limit.
                    Err(whole) => text = whole,
                }
            }
            CallAnswer::Result(CallBody {
                structured: has_schema
                    .then(|| as_structured(OutputJson::Value(output), tool.as_ref(), objects_only)),
                ..CallBody::text(text)
            })
        }
        Err(error @ CallError::UnknownTool { .. }) => CallAnswer::Error {
            code: super::jsonrpc::code::INVALID_PARAMS,
            message: error.to_string(),
            data: None,
        },
        // The caller must be authorized anew before any call of the tool can pass: a
        // refusal of the request, which HTTP answers 403 with the scopes to ask for.
        Err(error @ CallError::InsufficientScope { .. }) => CallAnswer::Error {
            code: super::jsonrpc::code::INVALID_REQUEST,
            message: error.to_string(),
            data: None,
        },
        // Another server's error answer, passed on as it sent it.
        Err(CallError::Failed {
            message,
            answer: Some(answer),
            ..
        }) => CallAnswer::Result(failed_answer(*answer, message, tool.as_ref(), objects_only)),
        Err(error) => {
            // A refusal an agent's loop acts on (wait, or stop) says which in `_meta`.
            let status = matches!(
                error,
                CallError::RateLimited { .. }
                    | CallError::BudgetExceeded { .. }
                    | CallError::LimitsUnreachable { .. }
                    | CallError::UrlElicitationRequired { .. }
                    | CallError::Refused { .. }
            )
            .then(|| error.status());
            CallAnswer::Result(CallBody {
                is_error: true,
                status,
                ..CallBody::text(error.to_string())
            })
        }
    }
}

/// Another server's error answer, as it sent it, with its structured content only where
/// every client takes it: where it fits the tool's output schema (some clients check an
/// error's structured content against it too), and, where structured content must be an
/// object, is one (or is wrapped as the tool's output is). Structured content left out
/// reaches the model still: when the blocks have no text, a text block with the error's
/// message (the structured content as JSON) comes first.
fn failed_answer(
    answer: FailedAnswer,
    message: String,
    tool: Option<&ToolRef>,
    objects_only: bool,
) -> CallBody {
    let FailedAnswer { blocks, structured } = answer;
    let schema = tool.and_then(|tool| tool.output_schema());
    let given = structured.is_some();
    let structured = structured
        .filter(|value| fits_output_schema(schema, value))
        .map(|value| as_structured(OutputJson::Value(value), tool, objects_only))
        .filter(|structured| !objects_only || structured.is_object());
    let has_text = blocks
        .read()
        .iter()
        .any(|block| matches!(block, Content::Text { text } if !text.trim().is_empty()));
    let blocks = if given && structured.is_none() && !has_text {
        blocks.after_text(&message)
    } else {
        blocks
    };
    CallBody {
        content: Blocks::Answer(blocks),
        structured,
        is_error: true,
        ..CallBody::text(String::new())
    }
}

/// Whether `value` fits `schema`, a tool's output schema. No schema, or one this crate
/// cannot check (one that refers to other documents, say), cannot say no: the value
/// passes, as a successful answer's does.
fn fits_output_schema(schema: Option<&Value>, value: &Value) -> bool {
    let check = schema.and_then(|schema| crate::schema::full::Compiled::new(schema).ok());
    check.is_none_or(|check| check.is_valid(value))
}

/// An output as structured content: as it is, or `{"result": ...}` where structured
/// content must be an object and the tool's output is not always one.
fn as_structured(output: OutputJson, tool: Option<&ToolRef>, objects_only: bool) -> Structured {
    Structured {
        value: output,
        wrapped: objects_only && tool.is_some_and(|tool| tool.wraps_output()),
    }
}

/// The content that stands for a stored output: its preview, and a link to the whole.
fn linked(tool: &str, link: Link, size: usize, mime_type: &str) -> Vec<Value> {
    vec![
        json!({"type": "text", "text": link.preview}),
        json!(
        {
            "type": "resource_link",
            "uri": link.uri,
            "name": format!("{tool} output"),
            "mimeType": mime_type,
            "size": size,
            "description": format!("The whole output of {tool}, {size} bytes."),
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DynamicTool, Registry, ToolError};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Word {
        word: String,
    }

    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct LetterCount {
        word: String,
        letters: usize,
    }

    fn registry() -> Registry {
        let count = DynamicTool::new("count", "Count letters.", |args: Word| async move {
            Ok::<_, String>(LetterCount {
                letters: args.word.chars().count(),
                word: args.word,
            })
        })
        .unwrap();
        let shout = DynamicTool::new("shout", "Shout.", |args: Word| async move {
            if args.word.is_empty() {
                return Err("there is nothing to shout".to_owned());
            }
            Ok(args.word.to_uppercase())
        })
        .unwrap();
        Registry::builder().tool(count).tool(shout).build().unwrap()
    }

    fn body_of(name: &str, word: &str, limit: usize) -> CallBody {
        body_in(name, word, limit, true)
    }

    /// The answer where structured content must be an object (`objects_only`), or not.
    fn body_in(name: &str, word: &str, limit: usize, objects_only: bool) -> CallBody {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let result = runtime.block_on(registry().call(name, json!({"word": word})));
        match answer(result, limit, None, true, objects_only) {
            CallAnswer::Result(body) => body,
            CallAnswer::Error { message, .. } => panic!("a protocol error: {message}"),
        }
    }

    fn written(body: &CallBody, info: Option<&ServerInfo>) -> Value {
        serde_json::from_slice(&body.framed(info).to_vec()).unwrap()
    }

    /// A tool's own content blocks and another server's passed on (without structured
    /// content) are sent as blocks, through a registry that records every call, and their
    /// value as JSON is never made: nothing on the way reads it.
    #[cfg(feature = "client")]
    #[test]
    fn an_answer_of_blocks_is_sent_without_being_read_as_json() {
        use crate::call::content::Content;
        use crate::call::dynamic::raw_handler;
        use crate::call::output::{Produced, RelayedJson};
        use crate::call::output_value::tests::made;

        let own = raw_handler(|_, _| {
            Box::pin(async { Ok(Produced::Content(vec![Content::text("a dot")])) })
        });
        let relayed = raw_handler(|_, _| {
            Box::pin(async {
                let sent = r#"[{"type":"text","text":"a dot","_meta":{"n":1.50}}]"#;
                let raw = serde_json::value::RawValue::from_string(sent.to_owned()).unwrap();
                Ok(Produced::Relayed {
                    content: RelayedJson(raw),
                    structured: None,
                })
            })
        });
        let tool = |name: &str, handler| {
            let schema = json!({"type": "object"});
            DynamicTool::from_schemas(name.into(), "Blocks.".into(), schema, None, handler).unwrap()
        };
        let registry = Registry::builder()
            .metrics(true)
            .tool(tool("own", own))
            .tool(tool("relayed", relayed))
            .build()
            .unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for (name, sent) in [
            ("own", r#"[{"type":"text","text":"a dot"}]"#),
            (
                "relayed",
                r#"[{"type":"text","text":"a dot","_meta":{"n":1.50}}]"#,
            ),
        ] {
            let before = made();
            let result = runtime.block_on(registry.call(name, json!({})));
            let CallAnswer::Result(body) = answer(result, 10_000, None, true, true) else {
                panic!("a protocol error");
            };
            let bytes = body.framed(None).to_vec();
            let written = String::from_utf8(bytes).unwrap();
            assert!(written.contains(sent), "{name}: {written}");
            assert_eq!(made(), before, "{name}: its blocks were read as JSON");
        }
    }

    /// Another server's structured content is sent as the text it came as (`1.50` stays
    /// `1.50`, which a value would write `1.5`), and read as a value for whoever asks.
    #[cfg(feature = "client")]
    #[test]
    fn another_servers_structured_content_is_sent_as_it_came_and_read_when_asked() {
        use crate::call::dynamic::raw_handler;
        use crate::call::output::{Produced, RelayedJson};
        use serde_json::value::RawValue;

        let structured = r#"{"n":1.50,"word":"caf\u00e9"}"#;
        let relayed = raw_handler(move |_, _| {
            Box::pin(async move {
                let blocks = r#"[{"type":"text","text":"1.50"}]"#;
                Ok(Produced::Relayed {
                    content: RelayedJson(RawValue::from_string(blocks.to_owned()).unwrap()),
                    structured: Some(RelayedJson(
                        RawValue::from_string(structured.to_owned()).unwrap(),
                    )),
                })
            })
        });
        let schema = json!({"type": "object"});
        let tool = DynamicTool::from_schemas(
            "measure".into(),
            "Measures.".into(),
            schema.clone(),
            Some(schema),
            relayed,
        )
        .unwrap();
        let registry = Registry::builder().tool(tool).build().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for objects_only in [false, true] {
            let result = runtime.block_on(registry.call("measure", json!({})));
            let CallAnswer::Result(body) = answer(result, 10_000, None, true, objects_only) else {
                panic!("a protocol error");
            };
            let written = String::from_utf8(body.framed(None).to_vec()).unwrap();
            assert!(
                written.ends_with(&format!(r#","structuredContent":{structured}}}"#)),
                "{written}"
            );
        }
        let result = runtime.block_on(registry.call("measure", json!({})));
        assert_eq!(
            result.into_outcome().unwrap(),
            json!({"n": 1.5, "word": "café"})
        );
    }

    #[test]
    fn an_object_output_is_shown_as_json_text_and_given_as_structured_content() {
        let body = body_of("count", "naïve \"quoted\"", 10_000);
        assert_eq!(
            written(&body, None),
            json!({
                "content": [{
                    "type": "text",
                    "text": r#"{"letters":14,"word":"naïve \"quoted\""}"#
                }],
                "structuredContent": {"word": "naïve \"quoted\"", "letters": 14},
            })
        );
        assert!(!body.is_error());
    }

    #[test]
    fn a_string_output_is_structured_content_as_it_is_where_any_value_may_be() {
        let body = body_in("shout", "hey\n", 10_000, false);
        assert_eq!(
            written(&body, None),
            json!({
                "content": [{"type": "text", "text": "HEY\n"}],
                "structuredContent": "HEY\n",
            })
        );
        // An object stays an object either way.
        let body = body_in("count", "ab", 10_000, false);
        assert_eq!(
            written(&body, None)["structuredContent"],
            json!({"word": "ab", "letters": 2})
        );
    }

    #[test]
    fn a_wrapped_string_output_is_shown_as_it_is() {
        let body = body_of("shout", "hey\n", 10_000);
        assert_eq!(
            written(&body, None),
            json!({
                "content": [{"type": "text", "text": "HEY\n"}],
                "structuredContent": {"result": "HEY\n"},
            })
        );
    }

    #[test]
    fn a_failure_is_a_text_flagged_as_an_error_without_structured_content() {
        let body = body_of("shout", "", 10_000);
        let written = written(&body, None);
        assert_eq!(written["isError"], true);
        assert!(written.get("structuredContent").is_none(), "{written}");
        let text = written["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("there is nothing to shout"), "{text}");
        assert!(body.is_error());
    }

    #[test]
    fn at_2026_07_28_a_status_shares_meta_with_the_server_identity() {
        let body = CallBody {
            is_error: true,
            status: Some("rate_limited"),
            ..CallBody::text("wait a second".to_owned())
        };
        let info = ServerInfo::new("counter", "1.0.0");
        assert_eq!(
            written(&body, Some(&info)),
            json!({
                "_meta": {
                    "io.modelcontextprotocol/serverInfo": {"name": "counter", "version": "1.0.0"},
                    "status": "rate_limited",
                },
                "content": [{"type": "text", "text": "wait a second"}],
                "isError": true,
                "resultType": "complete",
            })
        );
        // In a task's stored outcome the era's fields are added later.
        assert_eq!(
            Value::Object(body.into_map()),
            json!({
                "_meta": {"status": "rate_limited"},
                "content": [{"type": "text", "text": "wait a second"}],
                "isError": true,
            })
        );
    }

    #[test]
    fn the_limit_counts_the_body_and_a_cut_keeps_only_text() {
        let word = "é".repeat(40);
        let whole = body_of("shout", &word, 10_000);
        let size = whole.framed(None).to_vec().len();
        // Exactly at the limit: whole.
        let fits = body_of("shout", &word, size);
        assert_eq!(written(&fits, None), written(&whole, None));
        // One byte under: cut, the whole text kept (it is under the limit), with the sizes.
        let cut = written(&body_of("shout", &word, size - 1), None);
        assert_eq!(
            cut["content"][0]["text"],
            format!(
                "{}\n[output truncated: the result was {size} bytes; the limit is {} bytes. \
                 Ask for less.]",
                "É".repeat(40),
                size - 1
            )
        );
        assert_eq!(cut["isError"], true);
        assert!(cut.get("structuredContent").is_none(), "{cut}");
        // A limit inside a character cuts the text before it.
        let cut = written(&body_of("shout", &word, 41), None);
        let text = cut["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with(&format!("{}\n[", "É".repeat(20))),
            "{text}"
        );
    }

    #[test]
    fn a_cut_of_content_blocks_keeps_their_texts_and_shows_the_others_as_json() {
        let body = CallBody {
            content: Blocks::Answer(AnswerBlocks::Own(vec![
                Content::text("a pixel: "),
                Content::image([0u8, 1, 2], "image/png"),
            ])),
            ..CallBody::text(String::new())
        };
        let cut = written(&limited(body, 1_000_000), None);
        assert_eq!(cut["content"][1]["mimeType"], "image/png", "{cut}");
        let body = CallBody {
            content: Blocks::Answer(AnswerBlocks::Own(vec![
                Content::text("a pixel: "),
                Content::image([0u8, 1, 2], "image/png"),
            ])),
            ..CallBody::text(String::new())
        };
        let cut = written(&limited(body, 80), None);
        assert_eq!(
            cut["content"][0]["text"],
            "a pixel: {\"data\":\"AAEC\",\"mimeType\":\"image/png\",\"type\":\"image\"}\n\
             [output truncated: the result was 102 bytes; the limit is 80 bytes. Ask for less.]"
        );
    }

    #[test]
    fn another_servers_blocks_are_written_as_sent_and_cut_like_any() {
        let sent = vec![
            json!({"type": "text", "text": "a pixel: ", "annotations": {"priority": 1.0}}),
            json!({"type": "image", "data": "AAEC", "mimeType": "image/png"}),
        ];
        let relayed = || CallBody {
            content: Blocks::Answer(AnswerBlocks::sent(sent.clone())),
            ..CallBody::text(String::new())
        };
        // Under the limit: the blocks as they came, annotations and all.
        let whole = written(&limited(relayed(), 1_000_000), None);
        assert_eq!(whole["content"], json!(sent));
        let size = relayed().framed(None).to_vec().len();
        assert!(relayed().len_at_most() >= size, "the bound holds");
        // Over it: their texts, the other blocks as JSON, and the sizes.
        let cut = written(&limited(relayed(), 80), None);
        assert_eq!(
            cut["content"][0]["text"],
            format!(
                "a pixel: {}\n[output truncated: the result was {size} bytes; the limit is 80 \
                 bytes. Ask for less.]",
                sent[1]
            )
        );
        assert_eq!(cut["isError"], true);
    }

    /// The MCP answer of a mounted tool whose server answered `blocks` and `structured`
    /// with `isError`; `tool` is the registry's tool it stands for, if any.
    fn failed_as(
        tool: Option<&str>,
        blocks: &[Value],
        structured: Option<Value>,
        objects_only: bool,
    ) -> Value {
        let name = tool.unwrap_or("up_order");
        let error = ToolError::relayed(AnswerBlocks::sent(blocks.to_vec()), structured);
        let (message, sent) = error.into_parts();
        let failed = CallError::Failed {
            tool: name.to_owned(),
            message,
            answer: sent,
        };
        let tool = tool.and_then(|name| registry().get(name));
        let result = ToolResult::new(name.to_owned(), json!({}), tool, Err(failed));
        match answer(result, 1_000_000, None, true, objects_only) {
            CallAnswer::Result(body) => {
                assert!(body.is_error());
                written(&body, None)
            }
            CallAnswer::Error { message, .. } => panic!("a protocol error: {message}"),
        }
    }

    #[test]
    fn only_a_schema_that_can_be_checked_can_refuse_an_output() {
        let counted = json!({"type": "object", "required": ["n"]});
        assert!(fits_output_schema(Some(&counted), &json!({"n": 1})));
        assert!(!fits_output_schema(Some(&counted), &json!({"m": 1})));
        assert!(fits_output_schema(None, &json!("anything")));
        let elsewhere = json!({"$ref": "https://example.com/schemas/order.json"});
        assert!(crate::schema::full::Compiled::new(&elsewhere).is_err());
        assert!(fits_output_schema(Some(&elsewhere), &json!({"m": 1})));
    }

    #[test]
    fn an_error_answers_structured_content_is_kept_only_where_every_client_takes_it() {
        let image = json!({"type": "image", "data": "AAEC", "mimeType": "image/png"});
        // `count`'s output schema is an object with `word` and `letters`.
        let fitting = json!({"word": "A-1", "letters": 3});
        let kept = failed_as(
            Some("count"),
            std::slice::from_ref(&image),
            Some(fitting.clone()),
            true,
        );
        assert_eq!(kept["structuredContent"], fitting);
        assert_eq!(kept["content"], json!([image]));
        // Content that does not fit is left out; with no text among the blocks, the
        // model reads it in a text block put first.
        let by_count = |block: &Value, structured| {
            failed_as(
                Some("count"),
                std::slice::from_ref(block),
                Some(structured),
                false,
            )
        };
        let dropped = by_count(&image, json!({"sku": "A-1"}));
        assert_eq!(dropped.get("structuredContent"), None, "{dropped}");
        assert_eq!(
            dropped["content"],
            json!([{"type": "text", "text": r#"{"sku":"A-1"}"#}, image])
        );
        // With text of its own, the blocks stay as they came.
        let said = json!({"type": "text", "text": "no such item"});
        let dropped = by_count(&said, json!(7));
        assert_eq!(dropped.get("structuredContent"), None, "{dropped}");
        assert_eq!(dropped["content"], json!([said]));
        // A text block with no text says nothing: the message comes first.
        let blank = json!({"type": "text", "text": ""});
        let dropped = by_count(&blank, json!(7));
        assert_eq!(
            dropped["content"],
            json!([{"type": "text", "text": "7"}, blank])
        );
        // `shout` returns a string: where structured content must be an object, its output
        // is wrapped, and so is an error's that fits it.
        let wrapped = failed_as(
            Some("shout"),
            std::slice::from_ref(&said),
            Some(json!("LOUD")),
            true,
        );
        assert_eq!(wrapped["structuredContent"], json!({"result": "LOUD"}));
        let plain = failed_as(Some("shout"), &[said], Some(json!("LOUD")), false);
        assert_eq!(plain["structuredContent"], json!("LOUD"));
    }

    #[test]
    fn another_servers_error_answer_is_written_as_sent_with_its_structured_content() {
        let sent = [
            json!({"type": "text", "text": "out of stock", "annotations": {"audience": ["user"]}}),
            json!({"type": "image", "data": "AAEC", "mimeType": "image/png", "_meta": {"k": 1}}),
        ];
        let structured = json!({"sku": "A-1", "available": 0});
        assert_eq!(
            failed_as(None, &sent, Some(structured.clone()), true),
            json!({"content": sent, "structuredContent": structured, "isError": true})
        );
        // Structured content that is not an object is left to the text where it must be
        // one, and passed on where it need not be.
        let listed = json!(["A-1", "B-2"]);
        let in_objects_era = failed_as(None, &sent, Some(listed.clone()), true);
        assert_eq!(in_objects_era.get("structuredContent"), None);
        assert_eq!(in_objects_era["content"], json!(sent));
        let elsewhere = failed_as(None, &sent, Some(listed.clone()), false);
        assert_eq!(elsewhere["structuredContent"], listed);
    }

    #[test]
    fn another_servers_error_reads_as_its_text_then_its_structured_content() {
        let message = |blocks: &[Value], structured: Option<Value>| {
            ToolError::relayed(AnswerBlocks::sent(blocks.to_vec()), structured)
                .message()
                .to_owned()
        };
        let texts = [
            json!({"type": "text", "text": "out of stock"}),
            json!({"type": "image", "data": "AAEC", "mimeType": "image/png"}),
            json!({"type": "text", "text": "try B-2"}),
        ];
        assert_eq!(message(&texts, None), "out of stock\ntry B-2");
        let image = [texts[1].clone()];
        assert_eq!(
            message(&image, Some(json!({"available": 0}))),
            r#"{"available":0}"#
        );
        assert_eq!(
            message(&image, None),
            "the tool reported an error and gave no text"
        );
    }
}
