//! The client's side of JSON-RPC: the messages it writes (requests with the `_meta` each
//! 2026-07-28 request carries, notifications, responses to the server's requests) and the
//! messages it reads, told apart once. The framing, ids, error codes and protocol
//! versions are the server's own (`mcp::jsonrpc`, `mcp`): one definition for both roles.

use super::params::ParamsOf;
use super::reply::{self, Reply};
use crate::mcp::era::{Era, META_VERSION};
use crate::mcp::jsonrpc::{self, RequestId};
use crate::mcp::params::META_CAPABILITIES;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Where a 2026-07-28 request names its client.
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// Where a 2026-07-28 request names the level of log messages it wants.
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// One message from the server, as the client keeps it while it goes where it belongs:
/// read by the server's own reader ([`jsonrpc::parse_written`]), by the same rules (an
/// answer known by its start, before its request reads it: see [`Reply`]).
#[derive(Debug, Clone)]
pub(crate) enum Message {
    /// The answer to a request of ours (`id` is `None` when the server wrote `null`). Its
    /// result is kept as the JSON text it came as, alone or in its unread message: the
    /// request's caller reads what it needs of it (a mount only a call's content, not the
    /// server's `_meta`), rather than every answer being made a tree of values first.
    Response {
        id: Option<RequestId>,
        outcome: Result<Reply, ErrorObject>,
    },
    /// A request of the server's (a question for the client, or `ping`).
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    /// A notification.
    Notification { method: String, params: Value },
    /// A message that is not valid JSON-RPC but names an id: answered with the error that
    /// says why, as JSON-RPC asks, so that a server waiting on it is not left waiting.
    Refused {
        id: RequestId,
        code: i64,
        message: String,
    },
}

impl Message {
    /// Whether this is the answer to our request `id`.
    pub(crate) fn answers(&self, id: u64) -> bool {
        matches!(self, Message::Response { id: Some(answered), .. } if request_number(answered) == Some(id))
    }
}

/// The number of our request an answer names: the client numbers its requests, so an id
/// that is not a whole number answers none of them.
pub(crate) fn request_number(id: &RequestId) -> Option<u64> {
    id.as_json().parse().ok()
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct ErrorObject {
    pub(crate) code: i64,
    #[serde(default)]
    pub(crate) message: String,
    #[serde(default)]
    pub(crate) data: Option<Value>,
}

/// Reads one message from the server; why not, in words. An answer that starts as this
/// crate's server writes one is read no further than its id: its request reads it (see
/// [`Reply`]).
pub(crate) fn read(bytes: &[u8]) -> Result<Message, String> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        if let Some((id, result_at)) = reply::answered(text) {
            return Ok(Message::Response {
                // Its digits, as the id's text is kept.
                id: Some(RequestId(id.into())),
                outcome: Ok(Reply::Unread {
                    message: text.into(),
                    result_at,
                }),
            });
        }
    }
    let written = match jsonrpc::parse_written(bytes) {
        Ok(written) => written,
        Err(jsonrpc::Rejected {
            id: Some(id),
            code,
            message,
        }) => return Ok(Message::Refused { id, code, message }),
        Err(refused) => {
            return Err(format!(
                "a message that is not JSON-RPC 2.0 ({})",
                refused.message
            ))
        }
    };
    let value = |params: Option<&RawValue>, method: &str| match params {
        None => Ok(Value::Null),
        Some(params) => serde_json::from_str(params.get())
            .map_err(|error| format!("the params of {method} do not read ({error})")),
    };
    Ok(match written {
        // Its params not JSON this client can hold (a lone surrogate, say): answered so.
        jsonrpc::Written::Request { id, method, params } => match value(params, &method) {
            Ok(params) => Message::Request {
                id,
                method: method.into_owned(),
                params,
            },
            Err(message) => Message::Refused {
                id,
                code: jsonrpc::code::PARSE_ERROR,
                message,
            },
        },
        jsonrpc::Written::Notification { method, params } => Message::Notification {
            params: value(params, &method)?,
            method: method.into_owned(),
        },
        jsonrpc::Written::Response { id, outcome } => Message::Response {
            id,
            outcome: match outcome {
                Ok(result) => Ok(Reply::Result(result.to_owned())),
                Err(error) => Err(serde_json::from_str(error.get())
                    .map_err(|why| format!("an error object that does not read ({why})"))?),
            },
        },
    })
}

/// What a result is, by its `resultType` (2026-07-28): complete (also whatever has none, as
/// every result before 2026-07-28, or a name this client does not know), a task the server
/// runs the request as, or questions the request needs answered first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum ResultKind {
    #[default]
    Complete,
    Task,
    InputRequired,
}

impl ResultKind {
    fn named(name: &str) -> ResultKind {
        match name {
            "task" => ResultKind::Task,
            "input_required" => ResultKind::InputRequired,
            _ => ResultKind::Complete,
        }
    }
}

/// Read from the name, as it is being parsed (no string is kept); a value that is not a
/// name (`null`, a number) names no kind this client knows, so the result is complete.
impl<'de> Deserialize<'de> for ResultKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
        struct Name;
        impl<'de> Visitor<'de> for Name {
            type Value = ResultKind;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the name of a result type")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<ResultKind, E> {
                Ok(ResultKind::named(name))
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<ResultKind, E> {
                Ok(ResultKind::Complete)
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<ResultKind, E> {
                Ok(ResultKind::Complete)
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<ResultKind, E> {
                Ok(ResultKind::Complete)
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<ResultKind, E> {
                Ok(ResultKind::Complete)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<ResultKind, E> {
                Ok(ResultKind::Complete)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ResultKind, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ResultKind::Complete)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ResultKind, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ResultKind::Complete)
            }
        }
        deserializer.deserialize_any(Name)
    }
}

/// A result as the caller of a request that may take rounds (`tools/call`, `prompts/get`,
/// `resources/read`) reads it: in one pass, what kind it is with whatever else it needs.
pub(crate) trait RoundResult: serde::de::DeserializeOwned {
    /// What kind of result it is.
    fn kind(&self) -> ResultKind;

    /// Reads it from the JSON text the server sent (the result, whitespace around it
    /// allowed); why not, in words.
    fn read(result: &str) -> Result<Self, String> {
        serde_json::from_str(result).map_err(|error| error.to_string())
    }
}

/// The whole result, for a caller that reads most of it.
impl RoundResult for Value {
    fn kind(&self) -> ResultKind {
        self["resultType"]
            .as_str()
            .map_or(ResultKind::Complete, ResultKind::named)
    }
}

/// The fields of a result that say what it is, read without keeping the rest.
#[derive(Deserialize)]
struct Outline {
    #[serde(rename = "resultType", default)]
    kind: ResultKind,
    #[cfg(feature = "otel")]
    #[serde(rename = "isError", default)]
    is_error: Option<Value>,
}

fn outline(result: &RawValue) -> Option<Outline> {
    if !crate::schema::is_json_object(result.get()) {
        return None;
    }
    serde_json::from_str(result.get()).ok()
}

/// What `result` is; a result that is not an object is taken as complete.
pub(crate) fn result_kind(result: &RawValue) -> ResultKind {
    outline(result).map_or(ResultKind::Complete, |outline| outline.kind)
}

/// Whether `result` is a tool call's answer that says the tool failed (`isError`).
#[cfg(feature = "otel")]
pub(crate) fn says_tool_failed(result: &RawValue) -> bool {
    outline(result).is_some_and(|outline| outline.is_error == Some(Value::Bool(true)))
}

/// The result of `method`, `result`, read as `T`; why not, as the protocol error it is.
pub(crate) fn read_result<T: RoundResult>(
    method: &str,
    result: &RawValue,
) -> Result<T, super::ClientError> {
    T::read(result.get()).map_err(|why| unreadable(method, &why))
}

/// The result of `method`, as it came, read as `T`; why not, as the protocol error it is.
pub(crate) fn read_reply<T: RoundResult>(
    method: &str,
    reply: &Reply,
) -> Result<T, super::ClientError> {
    reply.read().map_err(|why| unreadable(method, &why))
}

/// The error of a result of `method` that could not be read, for `why`.
pub(crate) fn unreadable(method: &str, why: &str) -> super::ClientError {
    super::ClientError::protocol(format!("its {method} result could not be read: {why}"))
}

/// Who the client is, what it can do, and the era it speaks in: what each request carries.
#[derive(Debug, Clone)]
pub(crate) struct Speaker {
    era: Era,
    /// The protocol version agreed (or, before, asked for).
    version: String,
    /// Its name and version, written once.
    client_info: Box<RawValue>,
    /// What the client can do, as `initialize` declares it.
    capabilities: Value,
    /// The same at 2026-07-28, with the extensions the client speaks (tasks), written once.
    capabilities_2026: Box<RawValue>,
    /// The level of log messages wanted at 2026-07-28 (none unless set).
    log_level: Option<String>,
    /// The `_meta` entries every 2026-07-28 message carries, as JSON text (`"key":value`
    /// pairs, no braces): written when the speaker changes, not with each message.
    meta_written: String,
    /// Their names, recorded as they are written.
    meta_names: Vec<&'static str>,
}

impl Speaker {
    pub(crate) fn new(
        era: Era,
        version: String,
        client_info: &Value,
        capabilities: Value,
        capabilities_2026: &Value,
        log_level: Option<String>,
    ) -> Speaker {
        let mut speaker = Speaker {
            era,
            version,
            client_info: written(client_info),
            capabilities,
            capabilities_2026: written(capabilities_2026),
            log_level,
            meta_written: String::new(),
            meta_names: Vec::new(),
        };
        speaker.write_meta();
        speaker
    }

    pub(crate) fn era(&self) -> Era {
        self.era
    }

    pub(crate) fn version(&self) -> &str {
        &self.version
    }

    pub(crate) fn log_level(&self) -> Option<&str> {
        self.log_level.as_deref()
    }

    /// What `initialize` says of the client: its version, capabilities and name.
    pub(crate) fn initialize_params(&self) -> Value {
        serde_json::json!({
            "protocolVersion": self.version,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        })
    }

    /// Speaks `version` from now on, in `era`.
    pub(crate) fn speak(&mut self, era: Era, version: String) {
        self.era = era;
        self.version = version;
        self.write_meta();
    }

    /// What each message's `_meta` carries at 2026-07-28 (the version, the client's
    /// capabilities and name, the log level wanted); nothing in the handshake era.
    pub(crate) fn meta(&self) -> Option<&Speaker> {
        (self.era == Era::PerRequest).then_some(self)
    }

    /// The names of [`Speaker::meta`]'s entries.
    fn meta_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.meta_names.iter().copied()
    }

    fn write_meta(&mut self) {
        let text = |text: &str| Value::from(text).to_string();
        let mut entries = vec![
            (META_VERSION, text(&self.version)),
            (META_CAPABILITIES, self.capabilities_2026.get().to_owned()),
            (META_CLIENT_INFO, self.client_info.get().to_owned()),
        ];
        if let Some(level) = &self.log_level {
            entries.push((META_LOG_LEVEL, text(level)));
        }
        let mut written = String::new();
        for (name, value) in &entries {
            if !written.is_empty() {
                written.push(',');
            }
            written.push_str(&text(name));
            written.push(':');
            written.push_str(value);
        }
        self.meta_written = written;
        self.meta_names = entries.into_iter().map(|(name, _)| name).collect();
    }
}

/// `value` as JSON text, for the speaker's entries every message carries: written once,
/// not each time.
fn written(value: &Value) -> Box<RawValue> {
    // A `Value` always serializes; an empty object stands in should it ever not.
    serde_json::value::to_raw_value(value)
        .unwrap_or_else(|_| RawValue::from_string("{}".to_owned()).expect("{} is JSON"))
}

/// What one request adds to its params' `_meta` as it is written: its progress token and
/// the trace context of the span it is sent in. Written beside the params, never copied
/// into them, so a request's params are sent (and sent again, round after round) as the
/// caller holds them.
#[derive(Debug, Default)]
pub(crate) struct Added {
    /// The progress token: the request's id, when its progress is followed.
    pub(crate) progress_token: Option<u64>,
    /// Trace context entries (`traceparent`, `tracestate`, `baggage`).
    pub(crate) trace: Map<String, Value>,
}

impl Added {
    fn names(&self, key: &str) -> bool {
        (key == "progressToken" && self.progress_token.is_some()) || self.trace.contains_key(key)
    }

    fn is_empty(&self) -> bool {
        self.progress_token.is_none() && self.trace.is_empty()
    }
}

/// A message's params, written as an object (anything else stands for no params) with its
/// `_meta` made of the speaker's entries, the request's additions and the params' own
/// others: what the client adds wins over an entry of the same name, and a `_meta` that is
/// not an object (`null`, say) is replaced, so nothing the client adds is ever dropped.
struct Params<'a> {
    params: ParamsOf<'a>,
    speaker: Option<&'a Speaker>,
    added: &'a Added,
}

impl Params<'_> {
    /// Writes the params into `out`: the speaker's entries as the JSON text they were
    /// written as once, the rest as it is.
    fn write(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        fn entry(out: &mut Vec<u8>, first: &mut bool, key: &str) -> serde_json::Result<()> {
            if !std::mem::take(first) {
                out.push(b',');
            }
            serde_json::to_writer(&mut *out, key)?;
            out.push(b':');
            Ok(())
        }
        let empty = Map::new();
        out.push(b'{');
        let mut first = true;
        let members = match self.params {
            ParamsOf::Value(params) => params.as_object().unwrap_or(&empty),
            ParamsOf::Call {
                name,
                arguments,
                added,
            } => {
                entry(out, &mut first, "name")?;
                serde_json::to_writer(&mut *out, name)?;
                entry(out, &mut first, "arguments")?;
                out.extend_from_slice(arguments.as_bytes());
                added
            }
        };
        for (key, value) in members.iter().filter(|(key, _)| *key != "_meta") {
            entry(out, &mut first, key)?;
            serde_json::to_writer(&mut *out, value)?;
        }
        let own = members.get("_meta");
        if own.is_some() || self.speaker.is_some() || !self.added.is_empty() {
            entry(out, &mut first, "_meta")?;
            out.push(b'{');
            let mut first = true;
            if let Some(speaker) = self.speaker {
                out.extend_from_slice(speaker.meta_written.as_bytes());
                first = speaker.meta_written.is_empty();
            }
            if let Some(token) = self.added.progress_token {
                entry(out, &mut first, "progressToken")?;
                serde_json::to_writer(&mut *out, &token)?;
            }
            for (key, value) in &self.added.trace {
                entry(out, &mut first, key)?;
                serde_json::to_writer(&mut *out, value)?;
            }
            let speakers = |key: &str| {
                self.speaker
                    .is_some_and(|s| s.meta_names().any(|n| n == key))
            };
            let own = own.and_then(Value::as_object).into_iter().flatten();
            for (key, value) in own.filter(|(key, _)| !speakers(key) && !self.added.names(key)) {
                entry(out, &mut first, key)?;
                serde_json::to_writer(&mut *out, value)?;
            }
            out.push(b'}');
        }
        out.push(b'}');
        Ok(())
    }
}

/// The bytes of request `id` of `method` with `params`, its `_meta` carrying `speaker`'s
/// entries when there is one, and what the request adds.
pub(crate) fn request(
    id: u64,
    method: &str,
    params: ParamsOf<'_>,
    speaker: Option<&Speaker>,
    added: &Added,
) -> Vec<u8> {
    let params = Params {
        params,
        speaker,
        added,
    };
    jsonrpc::message_written(
        Some(&Value::from(id)),
        method,
        Some(|out: &mut Vec<u8>| params.write(out)),
    )
}

/// The bytes of a notification, its `_meta` carrying `speaker`'s entries when there is
/// one.
pub(crate) fn notification(
    method: &str,
    params: Option<&Value>,
    speaker: Option<&Speaker>,
) -> Vec<u8> {
    let added = Added::default();
    let params = params.map(|params| Params {
        params: ParamsOf::Value(params),
        speaker,
        added: &added,
    });
    let write = params.map(|params| move |out: &mut Vec<u8>| params.write(out));
    jsonrpc::message_written(None, method, write)
}

/// The bytes of our answer to the server's request `id`.
pub(crate) fn response(id: &RequestId, outcome: Result<Value, (i64, String)>) -> Vec<u8> {
    match outcome {
        Ok(result) => jsonrpc::response(id, &result),
        Err((code, message)) => jsonrpc::error_response(Some(id), code, &message, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_are_told_apart_by_their_fields() {
        let read = |text: &str| read(text.as_bytes());
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","id":1,"result":{"tools": []}}"#),
            Ok(Message::Response { id: Some(id), outcome: Ok(reply @ Reply::Unread { .. }) })
                if id.as_json() == "1" && reply.result().unwrap().get() == r#"{"tools": []}"#
        ));
        // An answer written otherwise is read whole.
        assert!(matches!(
            read(r#"{"result":{"tools": []},"id":1,"jsonrpc":"2.0"}"#),
            Ok(Message::Response { id: Some(id), outcome: Ok(Reply::Result(result)) })
                if id.as_json() == "1" && result.get() == r#"{"tools": []}"#
        ));
        // A server answers what it could not read with a `null` id.
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#),
            Ok(Message::Response {
                id: None,
                outcome: Err(ErrorObject { code: -32700, .. })
            })
        ));
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"nope"}}"#),
            Ok(Message::Response {
                outcome: Err(ErrorObject { code: -32601, .. }),
                ..
            })
        ));
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","id":7,"method":"roots/list"}"#),
            Ok(Message::Request { method, .. }) if method == "roots/list"
        ));
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#),
            Ok(Message::Notification { method, .. }) if method == "notifications/progress"
        ));
        assert!(
            read(r#"{"id":1,"result":{}}"#).is_err(),
            "no jsonrpc version: refused, and not answered (it is no request)"
        );
        assert!(
            read(r#"{"jsonrpc":"2.0","id":1}"#).is_err(),
            "neither result nor error"
        );
        assert!(read("not json").is_err());
        // The server's own rules: a request's id is no `null`, a batch is none.
        for refused in [
            r#"{"jsonrpc":"2.0","id":null,"method":"roots/list"}"#,
            r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
        ] {
            let why = read(refused).expect_err(refused);
            assert!(
                why.starts_with("a message that is not JSON-RPC 2.0 ("),
                "{why}"
            );
        }
        // One that names an id is answered with why: params are an object.
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","id":7,"method":"roots/list","params":[1]}"#),
            Ok(Message::Refused { id, code: -32600, message })
                if id.as_json() == "7" && message.contains("\"params\" must be an object")
        ));
        // `"params": null` is no params; a result may be `null`.
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","id":7,"method":"ping","params":null}"#),
            Ok(Message::Request {
                params: Value::Null,
                ..
            })
        ));
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","id":7,"result":null}"#),
            Ok(Message::Response { outcome: Ok(reply), .. })
                if reply.result().unwrap().get() == "null"
        ));
    }

    #[test]
    fn a_result_says_what_it_is_by_its_result_type_without_being_read_whole() {
        let kind = |text: &str| result_kind(&RawValue::from_string(text.to_owned()).unwrap());
        assert_eq!(
            kind(r#"{"resultType": "task", "taskId": "t"}"#),
            ResultKind::Task
        );
        // An escaped name is the same name.
        assert_eq!(kind(r#"{"resultType": "t\u0061sk"}"#), ResultKind::Task);
        assert_eq!(
            kind(r#"{"inputRequests": {}, "resultType": "input_required"}"#),
            ResultKind::InputRequired
        );
        for complete in [
            r#"{"resultType": "complete"}"#,
            r#"{"content": []}"#,
            r#"{"resultType": "later"}"#,
            r#"{"resultType": 3}"#,
            "[]",
            "null",
        ] {
            assert_eq!(kind(complete), ResultKind::Complete, "{complete}");
        }
    }

    /// A 2026-07-28 client `c` 1 with these 2026-07-28 capabilities and log level.
    fn client_c(capabilities_2026: Value, log_level: Option<&str>) -> Speaker {
        Speaker::new(
            Era::PerRequest,
            "2026-07-28".to_owned(),
            &json!({"name": "c", "version": "1"}),
            json!({"elicitation": {}}),
            &capabilities_2026,
            log_level.map(str::to_owned),
        )
    }

    #[test]
    fn params_are_written_to_the_byte_with_every_kind_of_meta_entry() {
        let speaker = client_c(json!({}), None);
        let trace = || Added {
            progress_token: None,
            trace: Map::from_iter([("traceparent".to_owned(), json!("00-ab-cd-01"))]),
        };
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
        // The speaker's entries, then a trace entry with no progress token, then the own.
        let params = json!({"uri": "a://b", "_meta": {"mine": true}});
        assert_eq!(
            text(request(
                5,
                "resources/read",
                (&params).into(),
                speaker.meta(),
                &trace()
            )),
            concat!(
                r#"{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"a://b","#,
                r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
                r#""io.modelcontextprotocol/clientCapabilities":{},"#,
                r#""io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"#,
                r#""traceparent":"00-ab-cd-01","mine":true}}}"#
            )
        );
        // No speaker (the handshake era): the trace entry alone.
        assert_eq!(
            text(request(6, "ping", (&json!({})).into(), None, &trace())),
            r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":{"_meta":{"traceparent":"00-ab-cd-01"}}}"#
        );
        // A 2026-07-28 notification carries the speaker's entries beside its params.
        let told = text(notification(
            "notifications/cancelled",
            Some(&json!({"requestId": 3})),
            speaker.meta(),
        ));
        let told: Value = serde_json::from_str(&told).unwrap();
        assert_eq!(told["params"]["requestId"], 3);
        assert_eq!(
            told["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        // Nothing to add and no params of its own: none written.
        assert_eq!(
            text(notification("notifications/initialized", None, None)),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
    }

    #[test]
    fn messages_written_are_json_rpc_with_exactly_their_fields() {
        let parsed = |bytes: Vec<u8>| serde_json::from_slice::<Value>(&bytes).unwrap();
        assert_eq!(
            parsed(request(
                7,
                "tools/call",
                (&json!({"name": "add"})).into(),
                None,
                &Added::default()
            )),
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "add"}})
        );
        assert_eq!(
            parsed(notification("notifications/initialized", None, None)),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        );
        assert_eq!(
            parsed(notification(
                "notifications/cancelled",
                Some(&json!({"requestId": 7})),
                None
            )),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
        );
        assert_eq!(
            parsed(response(
                &RequestId::from_value(&json!("s-1")),
                Ok(json!({"roots": []}))
            )),
            json!({"jsonrpc": "2.0", "id": "s-1", "result": {"roots": []}})
        );
        assert_eq!(
            parsed(response(
                &RequestId::from_value(&json!(3)),
                Err((-32601, "no such method".to_owned()))
            )),
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "no such method"}})
        );
    }

    #[test]
    fn a_2026_request_carries_the_version_capabilities_and_client_in_meta() {
        let speaker = client_c(json!({"elicitation": {}, "extensions": {"x": {}}}), None);
        let params = json!({"name": "add", "_meta": {"mine": 1, "io.modelcontextprotocol/clientInfo": "old", "progressToken": "theirs", "traceparent": "theirs"}});
        let added = Added {
            progress_token: Some(7),
            trace: Map::from_iter([("traceparent".to_owned(), json!("00-ab-cd-01"))]),
        };
        let written = request(1, "tools/call", (&params).into(), speaker.meta(), &added);
        assert_eq!(
            serde_json::from_slice::<Value>(&written).unwrap()["params"],
            json!({"name": "add", "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {"x": {}}},
                "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                "progressToken": 7,
                "traceparent": "00-ab-cd-01",
                "mine": 1
            }})
        );
        // Written from the params as they are: nothing was added to them.
        assert_eq!(params["_meta"]["progressToken"], "theirs");
        let progress = Added {
            progress_token: Some(2),
            ..Added::default()
        };
        let not_an_object = json!({"_meta": null});
        let written = request(
            2,
            "tools/call",
            (&not_an_object).into(),
            speaker.meta(),
            &progress,
        );
        let meta = &serde_json::from_slice::<Value>(&written).unwrap()["params"]["_meta"];
        assert_eq!(meta["progressToken"], json!(2));
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            json!("2026-07-28")
        );
        // The log level wanted goes with the rest, over an entry of the params' own; a
        // version spoken later replaces the one written first.
        let mut leveled = client_c(json!({}), Some("debug"));
        leveled.speak(Era::PerRequest, "2026-12-01".to_owned());
        let own_level = json!({"_meta": {"io.modelcontextprotocol/logLevel": "error"}});
        let written = request(
            4,
            "ping",
            (&own_level).into(),
            leveled.meta(),
            &Added::default(),
        );
        assert_eq!(
            serde_json::from_slice::<Value>(&written).unwrap()["params"],
            json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-12-01",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                "io.modelcontextprotocol/logLevel": "debug",
            }})
        );
        let mut handshake = speaker.clone();
        handshake.speak(Era::Handshake, "2025-11-25".to_owned());
        assert!(handshake.meta().is_none());
        let written = notification("notifications/x", Some(&json!({})), handshake.meta());
        assert_eq!(
            serde_json::from_slice::<Value>(&written).unwrap()["params"],
            json!({})
        );
        // In the handshake era a request carries its own additions alone, and params that
        // are not an object are sent as an object.
        let written = request(
            3,
            "tools/call",
            (&json!(null)).into(),
            handshake.meta(),
            &progress,
        );
        assert_eq!(
            serde_json::from_slice::<Value>(&written).unwrap()["params"],
            json!({"_meta": {"progressToken": 2}})
        );
    }

    #[test]
    fn a_call_with_written_arguments_is_sent_as_the_same_call_held_as_a_value() {
        use super::super::params::{Arguments, RoundParams};
        let speaker = client_c(json!({}), Some("info"));
        let arguments = json!({"text": "a \"quoted\" }", "n": [1, 2.5, null], "_meta": {"x": 1}});
        let added = Added {
            progress_token: Some(9),
            ..Added::default()
        };
        let mut held = RoundParams::named("say \"hi\"", Arguments::Value(arguments.clone()));
        let mut text = RoundParams::named(
            "say \"hi\"",
            Arguments::Written(serde_json::to_string(&arguments).unwrap()),
        );
        for params in [&mut held, &mut text] {
            params.set("inputResponses", json!({"q": {"action": "decline"}}));
            params.set("requestState", json!("state"));
        }
        let sent = |params: &RoundParams<'_>| {
            let bytes = request(5, "tools/call", params.as_written(), speaker.meta(), &added);
            serde_json::from_slice::<Value>(&bytes).expect("the request is JSON")
        };
        assert!(matches!(text, RoundParams::Call { .. }));
        assert_eq!(sent(&text), sent(&held));
        assert_eq!(sent(&text)["params"]["arguments"], arguments);
        assert_eq!(sent(&text)["params"]["_meta"]["progressToken"], json!(9));
        assert_eq!(sent(&text)["params"]["requestState"], json!("state"));
    }
}
