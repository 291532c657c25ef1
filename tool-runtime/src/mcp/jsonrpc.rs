//! JSON-RPC 2.0 framing, strictly: reading one incoming message, writing responses, errors,
//! requests and notifications as bytes (for the server and the client alike).

use super::params::{Method, MethodParams};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Standard JSON-RPC error codes, and the MCP ones we send.
pub mod code {
    /// Invalid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid parameters (and unknown tools, in MCP).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Something failed on our side; never with details.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// A resource that does not exist, as versions before 2026-07-28 recommend (that one
    /// answers -32602).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// MCP 2026-07-28: an HTTP header does not match the body.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub const HEADER_MISMATCH: i64 = -32020;
    /// MCP 2026-07-28: the protocol version asked for is not served.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// MCP 2025-11-25: the request cannot go on until the user has been to the URLs listed
    /// in the error's data (`elicitations`); later versions never send it.
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
    /// MCP 2026-07-28: the request needs a capability the client did not declare.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub const MISSING_CAPABILITY: i64 = -32021;
    /// The server is busy: too many requests in flight. The request did not run; it may be
    /// sent again after `data.retryAfterMs`. (JSON-RPC leaves -32000 to -32099 to servers.)
    pub const SERVER_BUSY: i64 = -32000;
}

/// A request id: a string or a number, kept as the client wrote it. Shared, not copied:
/// a request's id is kept by its registration, its watchdog and its answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestId(pub(crate) std::sync::Arc<str>);

impl RequestId {
    /// An id from its JSON value (a string or a number).
    pub fn from_value(value: &Value) -> Self {
        // Most ids are short: written on the stack, they are allocated once, in the `Arc`.
        let mut short = std::io::Cursor::new([0u8; 64]);
        if serde_json::to_writer(&mut short, value).is_ok() {
            let written = short.position() as usize;
            if let Ok(text) = std::str::from_utf8(&short.get_ref()[..written]) {
                return RequestId(text.into());
            }
        }
        RequestId(value.to_string().into())
    }

    /// The id of a message's `id` field as written, when that text is the one
    /// [`from_value`](Self::from_value) would give: a whole number of at most 18 digits
    /// (other than `-0`), or a string without escapes. Such ids, nearly all, skip a parse
    /// and a write.
    fn as_written(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
        let whole = !digits.is_empty()
            && digits.len() <= 18
            && digits.iter().all(u8::is_ascii_digit)
            && text != "-0";
        // The text is valid JSON: a string has no raw control character, and without a
        // backslash none is escaped, which serde_json writes back the same.
        let plain = bytes.len() >= 2 && bytes[0] == b'"' && memchr::memchr(b'\\', bytes).is_none();
        (whole || plain).then(|| RequestId(text.into()))
    }
}

impl RequestId {
    /// The id as JSON text.
    pub fn as_json(&self) -> &str {
        &self.0
    }

    pub(crate) fn to_value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }
}

/// One message from the client. Its method is borrowed from the message's bytes when it
/// has no escapes (as every method name does).
#[derive(Debug)]
pub enum Incoming<'a> {
    /// A request: it gets exactly one response.
    Request {
        id: RequestId,
        method: Cow<'a, str>,
        /// Its params, read into what its method asks.
        asked: MethodParams,
    },
    /// A notification: never answered.
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A response to a request of ours (a question to the client): its id (`None` when it
    /// was `null`), and its result or its error's code and message.
    Response {
        id: Option<RequestId>,
        outcome: Result<Value, (i64, String)>,
    },
}

/// Why an incoming message is not a valid one, and the error to answer with.
#[derive(Debug)]
pub struct Rejected {
    /// The id to answer with, when one could be read (else `null`).
    pub id: Option<RequestId>,
    pub code: i64,
    pub message: String,
}

/// The shape of a message, read without copying large parameter values.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    /// Present as `null` is `Some` (and refused), absent is `None`.
    #[serde(borrow, default, deserialize_with = "present_raw")]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    /// Kept as written: each method reads its params into its own type, once. Present as
    /// `null` is `Some` (and refused: params are structured).
    #[serde(borrow, default, deserialize_with = "present_raw")]
    params: Option<&'a RawValue>,
    /// Present as `null` is `Some`, as the one-pass read has it: a result may be `null`.
    #[serde(borrow, default, deserialize_with = "present_raw")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present_raw")]
    error: Option<&'a RawValue>,
}

/// Reads one message. Nearly every message is read in one pass, a request's params read
/// into what its method asks as they are met; a message that pass cannot read (one that is
/// not valid, or whose params do not fit) is read again with its params kept as written,
/// for the precise refusal.
pub fn parse(bytes: &[u8]) -> Result<Incoming<'_>, Rejected> {
    let trimmed = trim(bytes);
    if trimmed.first() == Some(&b'[') {
        return Err(batch(trimmed));
    }
    if let Ok(pass) = from_bytes::<OnePass<'_>>(trimmed) {
        // The pass skips what it does not read; where that may hold what serde_json cannot
        // (see `may_not_hold`), the whole message is read once more to be sure.
        if may_not_hold(trimmed) {
            if let Some(error) = unholdable(trimmed) {
                let message = format!("Parse error: {}", short(&error));
                return Err(rejected(None, code::PARSE_ERROR, &message));
            }
        }
        return message_of(pass);
    }
    let envelope = envelope_of(trimmed)?;
    // What it keeps raw may hold what serde_json cannot (a lone surrogate escape, a number
    // out of range): then the message is not JSON it can read at all, and its parse error
    // has no id, whatever the message looks like.
    if let Some(error) = unholdable(trimmed) {
        let message = format!("Parse error: {}", short(&error));
        return Err(rejected(None, code::PARSE_ERROR, &message));
    }
    message_of(OnePass {
        jsonrpc: envelope.jsonrpc,
        id: envelope.id,
        method: envelope.method,
        params: envelope.params.map(ParamsRead::Raw),
        result: envelope.result,
        error: envelope.error,
    })
}

/// `bytes` read as `T`: as text when they are UTF-8, as nearly every message is, so that
/// serde_json need not check each string it reads (one check of the whole message costs
/// less than one per string and per field kept as written); else as bytes, for serde_json's own error naming where the bad byte is.
fn from_bytes<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> serde_json::Result<T> {
    match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(bytes),
    }
}

/// A message read as written (`trimmed`, an object as far as it goes): each field kept as
/// it is, or why it is no message.
fn envelope_of(trimmed: &[u8]) -> Result<Envelope<'_>, Rejected> {
    match from_bytes(trimmed) {
        Ok(envelope) => Ok(envelope),
        Err(error) if error.is_data() => {
            let message = if trimmed.first() == Some(&b'{') {
                format!("Invalid Request: {}", short(&error))
            } else {
                "Invalid Request: a message must be a JSON object".to_owned()
            };
            Err(rejected(None, code::INVALID_REQUEST, &message))
        }
        Err(error) => {
            let message = format!("Parse error: {}", short(&error));
            Err(rejected(None, code::PARSE_ERROR, &message))
        }
    }
}

/// One message with what it carries kept as written: what a client reads from a server,
/// whose requests and notifications are the client's to read (not a server's methods).
#[derive(Debug)]
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) enum Written<'a> {
    /// A request: it gets exactly one response.
    Request {
        id: RequestId,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A notification: never answered.
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A response: its id (`None` when it was `null`, as a server answers what it could
    /// not read), and its result or its error object.
    Response {
        id: Option<RequestId>,
        outcome: Result<&'a RawValue, &'a RawValue>,
    },
}

/// Reads one message by the same rules as [`parse`], keeping what it carries as written:
/// its reader reads that into what it needs, and refuses there what does not fit (so a
/// message whose skipped parts hold JSON serde_json cannot is not looked for here). A
/// response's id may be `null`, and `"params": null` is no params. A refusal names an id
/// only for a request, which is to be answered with it.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) fn parse_written(bytes: &[u8]) -> Result<Written<'_>, Rejected> {
    let trimmed = trim(bytes);
    if trimmed.first() == Some(&b'[') {
        return Err(batch(trimmed));
    }
    let envelope = envelope_of(trimmed)?;
    let answers = envelope.result.is_some() || envelope.error.is_some();
    let null_id = answers && envelope.id.is_some_and(|id| id.get() == "null");
    // Only a request is answered, also when it is refused: a refusal of anything else
    // names no id to answer.
    let request = envelope.method.is_some() && !answers;
    let pass = OnePass {
        jsonrpc: envelope.jsonrpc,
        id: envelope.id.filter(|_| !null_id),
        method: envelope.method,
        // A server's `"params": null` says it has none (a client may not say so).
        params: envelope
            .params
            .filter(|params| params.get() != "null")
            .map(ParamsRead::Raw),
        result: envelope.result,
        error: envelope.error,
    };
    let checked = checked(pass).map_err(|refused| Rejected {
        id: refused.id.filter(|_| request),
        ..refused
    })?;
    Ok(match checked {
        Checked::Response { id, result, error } => Written::Response {
            id,
            // As a server reads it: a result, when there is one, is the outcome.
            outcome: result.ok_or_else(|| error.expect("a response has one or the other")),
        },
        Checked::Message { id, method, params } => {
            let params = match params {
                Some(ParamsRead::Raw(raw)) => Some(raw),
                // Kept as written above: never read into a method's params.
                Some(ParamsRead::MethodParams(_)) | None => None,
            };
            match id {
                Some(id) => Written::Request { id, method, params },
                None => Written::Notification { method, params },
            }
        }
    })
}

/// Whether a message may hold, in a part a pass skips, JSON that serde_json refuses: a
/// `\u` escape (a lone surrogate) or an exponent (a number out of range). Found with
/// `memchr`, so a message with neither costs one scan; one with them is read again. (A
/// backslash is looked for, not `memmem`'s `\u`: its finder is built anew on each search,
/// which costs more than the scan; an escaped backslash before a `u` is read again, no
/// harm.)
fn may_not_hold(bytes: &[u8]) -> bool {
    memchr::memchr_iter(b'\\', bytes).any(|at| bytes.get(at + 1) == Some(&b'u'))
        || memchr::memchr2_iter(b'e', b'E', bytes)
            .any(|at| at > 0 && bytes[at - 1].is_ascii_digit())
}

/// Why serde_json cannot hold `bytes`, a message whose envelope reads: a lone surrogate
/// escape or a number out of range somewhere in it. Nesting deeper than serde_json goes
/// is not counted: such a message is answered by its method, which names the parameter.
fn unholdable(bytes: &[u8]) -> Option<serde_json::Error> {
    serde_json::from_slice::<Value>(bytes)
        .err()
        .filter(|error| !error.to_string().starts_with("recursion limit exceeded"))
}

/// A message whose envelope holds as JSON-RPC has it: a response (its result or error as
/// written), or a request or notification (by its id) with its params as read.
enum Checked<'a> {
    Response {
        id: Option<RequestId>,
        result: Option<&'a RawValue>,
        error: Option<&'a RawValue>,
    },
    Message {
        id: Option<RequestId>,
        method: Cow<'a, str>,
        params: Option<ParamsRead<'a>>,
    },
}

/// Whether a read message's envelope holds as JSON-RPC has it (for a server's messages and
/// a client's alike), or why not.
fn checked(pass: OnePass<'_>) -> Result<Checked<'_>, Rejected> {
    let id = id_of(pass.id)?;
    if pass.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        let message = "Invalid Request: \"jsonrpc\" must be \"2.0\"";
        return Err(rejected(id, code::INVALID_REQUEST, message));
    }
    if pass.result.is_some() || pass.error.is_some() {
        if pass.method.is_some() {
            let message = "Invalid Request: a request has no result or error";
            return Err(rejected(id, code::INVALID_REQUEST, message));
        }
        return Ok(Checked::Response {
            id,
            result: pass.result,
            error: pass.error,
        });
    }
    let Some(method) = pass.method else {
        let message = "Invalid Request: \"method\" is missing";
        return Err(rejected(id, code::INVALID_REQUEST, message));
    };
    // A raw value has no whitespace around it: an object starts with its brace.
    if let Some(ParamsRead::Raw(raw)) = &pass.params {
        if !raw.get().starts_with('{') {
            let message = "Invalid Request: \"params\" must be an object";
            return Err(rejected(id, code::INVALID_REQUEST, message));
        }
    }
    Ok(Checked::Message {
        id,
        method,
        params: pass.params,
    })
}

/// The message a read says came, or why it is not one.
fn message_of(pass: OnePass<'_>) -> Result<Incoming<'_>, Rejected> {
    let (id, method, params) = match checked(pass)? {
        Checked::Response { id, result, error } => {
            let outcome = outcome_of(result, error);
            return Ok(Incoming::Response { id, outcome });
        }
        Checked::Message { id, method, params } => (id, method, params),
    };
    let raw = match params {
        Some(ParamsRead::Raw(raw)) => Some(raw),
        Some(ParamsRead::MethodParams(asked)) => {
            return Ok(match id {
                Some(id) => Incoming::Request { id, method, asked },
                // A notification named as a request: nothing reads its params.
                None => Incoming::Notification {
                    method,
                    params: None,
                },
            });
        }
        None => None,
    };
    Ok(match id {
        Some(id) => {
            let asked = MethodParams::read(Method::of(&method), raw);
            Incoming::Request { id, method, asked }
        }
        None => Incoming::Notification {
            method,
            params: raw,
        },
    })
}

/// A message's fields, read in one pass (see [`parse`]).
#[derive(Default)]
struct OnePass<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<Cow<'a, str>>,
    params: Option<ParamsRead<'a>>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

/// A message's params: read into what its method asks when the method came before them
/// (as clients write it), else kept as written.
enum ParamsRead<'a> {
    Raw(&'a RawValue),
    MethodParams(MethodParams),
}

/// The fields of a message.
enum Field {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> serde::Deserialize<'de> for Field {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Field, D::Error> {
        struct Names;
        impl serde::de::Visitor<'_> for Names {
            type Value = Field;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a field of a JSON-RPC message")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Field, E> {
                Ok(match name {
                    "jsonrpc" => Field::Jsonrpc,
                    "id" => Field::Id,
                    "method" => Field::Method,
                    "params" => Field::Params,
                    "result" => Field::Result,
                    "error" => Field::Error,
                    _ => Field::Other,
                })
            }
        }
        deserializer.deserialize_identifier(Names)
    }
}

/// A string borrowed from the message when it has no escapes.
#[derive(serde::Deserialize)]
struct Borrowed<'a>(#[serde(borrow)] Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for OnePass<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(OnePassVisitor)
    }
}

struct OnePassVisitor;

impl<'de> serde::de::Visitor<'de> for OnePassVisitor {
    type Value = OnePass<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<OnePass<'de>, A::Error> {
        use serde::de::Error;
        let mut pass = OnePass::default();
        while let Some(field) = map.next_key::<Field>()? {
            // A field given twice is for the second reading to refuse.
            let twice = || A::Error::custom("a field given twice");
            match field {
                Field::Jsonrpc if pass.jsonrpc.is_some() => return Err(twice()),
                Field::Jsonrpc => pass.jsonrpc = Some(map.next_value()?),
                Field::Id if pass.id.is_some() => return Err(twice()),
                Field::Id => pass.id = Some(map.next_value()?),
                Field::Method if pass.method.is_some() => return Err(twice()),
                Field::Method => pass.method = Some(map.next_value::<Borrowed<'de>>()?.0),
                Field::Params if pass.params.is_some() => return Err(twice()),
                Field::Params => {
                    let method = pass.method.as_deref().map(Method::of);
                    pass.params = Some(match method {
                        Some(method) if method != Method::Unknown => {
                            ParamsRead::MethodParams(map.next_value_seed(AskedSeed(method))?)
                        }
                        _ => ParamsRead::Raw(map.next_value()?),
                    });
                }
                Field::Result if pass.result.is_some() => return Err(twice()),
                Field::Result => pass.result = Some(map.next_value()?),
                Field::Error if pass.error.is_some() => return Err(twice()),
                Field::Error => pass.error = Some(map.next_value()?),
                Field::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(pass)
    }
}

/// Reads params, an object only, into what `0` asks.
struct AskedSeed(Method);

impl<'de> serde::de::DeserializeSeed<'de> for AskedSeed {
    type Value = MethodParams;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<MethodParams, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for AskedSeed {
    type Value = MethodParams;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("params, an object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<MethodParams, A::Error> {
        MethodParams::deserialize(self.0, serde::de::value::MapAccessDeserializer::new(map))
    }
}

/// Why an array is refused: batches were removed from MCP in 2025-06-18, though a valid
/// array is still a batch.
fn batch(array: &[u8]) -> Rejected {
    match serde_json::from_slice::<serde::de::IgnoredAny>(array) {
        Ok(_) => rejected(
            None,
            code::INVALID_REQUEST,
            "Invalid Request: batches are not supported; send one message at a time",
        ),
        Err(error) => rejected(
            None,
            code::PARSE_ERROR,
            &format!("Parse error: {}", short(&error)),
        ),
    }
}

/// The message's id: a string or a number, or none (a notification); `null` and other
/// values are refused.
fn id_of(id: Option<&RawValue>) -> Result<Option<RequestId>, Rejected> {
    let Some(id) = id else {
        return Ok(None);
    };
    if let Some(id) = RequestId::as_written(id.get()) {
        return Ok(Some(id));
    }
    let message = match serde_json::from_str(id.get()) {
        // Re-serialized, so the same id always has the same text (for cancellation).
        Ok(value @ (Value::String(_) | Value::Number(_))) => {
            return Ok(Some(RequestId::from_value(&value)))
        }
        Ok(Value::Null) => "Invalid Request: the id must not be null",
        Ok(_) => "Invalid Request: the id must be a string or a number",
        // Valid JSON that serde_json cannot hold (a number out of range, a lone surrogate).
        Err(error) => {
            let message = format!("Parse error: {}", short(&error));
            return Err(rejected(None, code::PARSE_ERROR, &message));
        }
    };
    Err(rejected(None, code::INVALID_REQUEST, message))
}

/// What a response of the client's says: its result, or its error's code and message.
fn outcome_of(result: Option<&RawValue>, error: Option<&RawValue>) -> Result<Value, (i64, String)> {
    if let Some(result) = result {
        return Ok(serde_json::from_str(result.get()).unwrap_or(Value::Null));
    }
    let error: Value = error
        .and_then(|e| serde_json::from_str(e.get()).ok())
        .unwrap_or(Value::Null);
    let code = error
        .get("code")
        .and_then(Value::as_i64)
        .unwrap_or(code::INTERNAL_ERROR);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the client sent an error without a message");
    Err((code, message.to_owned()))
}

/// Reads a raw field that is present (even as `null`) as `Some`.
fn present_raw<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue as serde::Deserialize>::deserialize(deserializer).map(Some)
}

/// Reads a field that is present (even as `null`) as `Some`.
fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |end| end + 1);
    &bytes[start..end]
}

fn rejected(id: Option<RequestId>, code: i64, message: &str) -> Rejected {
    Rejected {
        id,
        code,
        message: message.to_owned(),
    }
}

/// serde_json's message, without a position that means nothing to the client when the
/// input was one line.
fn short(error: &serde_json::Error) -> String {
    match error.classify() {
        serde_json::error::Category::Eof => "the message ends early".to_owned(),
        _ => {
            let text = error.to_string();
            text.split(" at line ").next().unwrap_or(&text).to_owned()
        }
    }
}

/// How a success response starts, before its id: written so by this crate, and read by
/// this start by its client (an answer that starts so is read no further than its id).
pub(crate) const RESPONSE_START: &str = r#"{"jsonrpc":"2.0","id":"#;
/// What a success response has between its id and its result.
pub(crate) const RESPONSE_RESULT: &str = r#","result":"#;

/// A success response with a result serialized by serde, written where it goes.
pub fn response<T: Serialize>(id: &RequestId, result: &T) -> Vec<u8> {
    response_written(id, |out| serde_json::to_writer(out, result))
}

/// A success response whose result `write` appends.
pub(crate) fn response_written(
    id: &RequestId,
    write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(RESPONSE_START.as_bytes());
    out.extend_from_slice(id.0.as_bytes());
    out.extend_from_slice(RESPONSE_RESULT.as_bytes());
    match write(&mut out) {
        Ok(()) => {
            out.push(b'}');
            out
        }
        Err(error) => {
            tracing::error!(%error, "a response could not be serialized");
            error_response(Some(id), code::INTERNAL_ERROR, "Internal error", None)
        }
    }
}

/// A success response around an already-serialized result.
pub fn response_raw(id: &RequestId, result: &str) -> Vec<u8> {
    const ENVELOPE: usize = RESPONSE_START.len() + RESPONSE_RESULT.len() + 1;
    let mut out = Vec::with_capacity(ENVELOPE + id.0.len() + result.len());
    out.extend_from_slice(RESPONSE_START.as_bytes());
    out.extend_from_slice(id.0.as_bytes());
    out.extend_from_slice(RESPONSE_RESULT.as_bytes());
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
    out
}

/// An error response; `id` is `null` when unknown.
pub fn error_response(
    id: Option<&RequestId>,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> Vec<u8> {
    let mut error = Map::new();
    error.insert("code".to_owned(), code.into());
    error.insert("message".to_owned(), message.into());
    if let Some(data) = data {
        error.insert("data".to_owned(), data);
    }
    let id = id.map_or("null", |id| id.as_json());
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{}}}",
        Value::Object(error)
    )
    .into_bytes()
}

/// A request of ours to the other side (a question while a call runs, or a client's
/// request), `params` serialized where they go.
pub(crate) fn request<P: Serialize + ?Sized>(id: &Value, method: &str, params: &P) -> Vec<u8> {
    message(Some(id), method, Some(params))
}

/// A notification.
pub fn notification<P: Serialize + ?Sized>(method: &str, params: &P) -> Vec<u8> {
    message(None, method, Some(params))
}

/// A request (with `id`) or a notification (without), its `params` serialized where they
/// go and left out when there are none.
pub(crate) fn message<P: Serialize + ?Sized>(
    id: Option<&Value>,
    method: &str,
    params: Option<&P>,
) -> Vec<u8> {
    let write = params.map(|params| move |out: &mut Vec<u8>| serde_json::to_writer(out, params));
    message_written(id, method, write)
}

/// [`message`], its params put where they go by `write` (for params written in part from
/// JSON text kept ready, which a `Serialize` cannot splice in).
pub(crate) fn message_written(
    id: Option<&Value>,
    method: &str,
    write: Option<impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>>,
) -> Vec<u8> {
    // Room for most messages whole (a 2026-07-28 client's request carries its `_meta`), so
    // writing one seldom grows the buffer.
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\"");
    if let Some(id) = id {
        out.extend_from_slice(b",\"id\":");
        // A `Value` always serializes.
        let _ = serde_json::to_writer(&mut out, id);
    }
    out.extend_from_slice(b",\"method\":");
    let _ = serde_json::to_writer(&mut out, method);
    if let Some(write) = write {
        out.extend_from_slice(b",\"params\":");
        let start = out.len();
        if let Err(error) = write(&mut out) {
            // A writer that fails (a map with keys that are not strings, say) has what it
            // wrote taken back, so the message stays JSON.
            tracing::error!(%error, method, "a message's params could not be serialized");
            out.truncate(start);
            out.extend_from_slice(b"{}");
        }
    }
    out.push(b'}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rejected_code(text: &str) -> (i64, Option<String>) {
        match parse(text.as_bytes()) {
            Err(rejected) => (rejected.code, rejected.id.map(|id| id.0.to_string())),
            Ok(other) => panic!("{text} was accepted as {other:?}"),
        }
    }

    #[test]
    fn requests_and_notifications_are_written_with_exactly_their_fields() {
        let parsed = |bytes: Vec<u8>| serde_json::from_slice::<Value>(&bytes).unwrap();
        assert_eq!(
            parsed(request(&json!(7), "roots/list", &json!({"a": "\"b"}))),
            json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list", "params": {"a": "\"b"}})
        );
        assert_eq!(
            parsed(message::<Value>(None, "notifications/initialized", None)),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        );
        // Params that cannot be JSON (a map keyed by pairs) are written as `{}`, never cut
        // off halfway.
        let unwritable = std::collections::BTreeMap::from([((1, 2), 3)]);
        assert_eq!(
            parsed(notification("notifications/x", &unwritable)),
            json!({"jsonrpc": "2.0", "method": "notifications/x", "params": {}})
        );
    }

    #[test]
    fn an_id_is_kept_as_json_text_whatever_its_length() {
        for id in [
            json!(7),
            json!(-1.5),
            json!("a\"b\u{1}"),
            json!("é".repeat(100)),
        ] {
            assert_eq!(RequestId::from_value(&id).as_json(), id.to_string());
        }
    }

    #[test]
    fn an_id_has_the_same_text_however_it_was_written() {
        // Taken as written or written again, an id's text is the one its value writes, so
        // a cancellation naming it finds its request.
        for written in [
            "7",
            "-12",
            "-0",
            "123456789012345678",
            "12345678901234567890123",
            "1.0",
            "1e3",
            r#""plain é""#,
            r#""a\"b""#,
            r#""\u0061""#,
            r#""a\/b""#,
        ] {
            let message = format!(r#"{{"jsonrpc":"2.0","id":{written},"method":"ping"}}"#);
            let value: Value = serde_json::from_str(written).unwrap();
            match parse(message.as_bytes()).unwrap() {
                Incoming::Request { id, .. } => {
                    assert_eq!(id, RequestId::from_value(&value), "{written}");
                }
                other => panic!("{other:?}"),
            }
        }
        // One serde_json cannot hold is not read at all.
        let out_of_range = r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#;
        assert_eq!(rejected_code(out_of_range), (code::PARSE_ERROR, None));
    }

    #[test]
    fn requests_and_notifications_are_read() {
        match parse(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap() {
            Incoming::Request { id, method, asked } => {
                assert_eq!((&*id.0, &*method), ("7", "ping"));
                assert!(matches!(asked, MethodParams::Ping(_)), "{asked:?}");
            }
            other => panic!("{other:?}"),
        }
        match parse(br#" {"jsonrpc":"2.0","id":"a\"b","method":"x","params":{"k":1}} "#).unwrap() {
            Incoming::Request { id, asked, .. } => {
                assert_eq!(&*id.0, r#""a\"b""#);
                assert!(matches!(asked, MethodParams::Unknown(_)), "{asked:?}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap(),
            Incoming::Notification { .. }
        ));
        // A method with an escape is read as what it says.
        match parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools\/list"}"#).unwrap() {
            Incoming::Request { method, .. } => assert_eq!(method, "tools/list"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap(),
            Incoming::Response { outcome: Ok(_), .. }
        ));
        match parse(br#"{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}"#).unwrap() {
            Incoming::Response { id, outcome } => {
                assert_eq!(id, Some(RequestId("4".into())));
                assert_eq!(outcome, Err((-1, "no".to_owned())));
            }
            other => panic!("{other:?}"),
        }
    }

    /// The tool a `tools/call` read from `text` names.
    fn called(text: &str) -> String {
        match parse(text.as_bytes()) {
            Ok(Incoming::Request {
                asked: MethodParams::CallTool(call),
                ..
            }) => format!("{} {}", call.name, call.arguments),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn params_are_read_into_what_the_method_asks_whatever_the_order() {
        let in_order = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","#,
            r#""params":{"name":"add","arguments":{"a":1}}}"#
        );
        let params_first = concat!(
            r#"{"params":{"arguments":{"a":1},"name":"add"},"#,
            r#""id":1,"method":"tools/call","jsonrpc":"2.0"}"#
        );
        assert_eq!(called(in_order), r#"add {"a":1}"#);
        assert_eq!(called(params_first), r#"add {"a":1}"#);
        // Params that do not fit are the method's to refuse, with the request's id.
        match parse(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}"#) {
            Ok(Incoming::Request {
                id,
                asked: MethodParams::Unfit(Method::CallTool, _, why),
                ..
            }) => {
                assert_eq!(id.as_json(), "2");
                assert!(why.contains("\"name\""), "{why}");
            }
            other => panic!("{other:?}"),
        }
        // Params that are not an object are no request at all.
        for params in ["null", "[]", "[\"add\"]", "3"] {
            let text =
                format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{params}}}"#);
            assert_eq!(
                rejected_code(&text),
                (code::INVALID_REQUEST, Some("3".into()))
            );
        }
        // A field given twice is refused.
        assert_eq!(
            rejected_code(r#"{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}"#).0,
            code::INVALID_REQUEST
        );
    }

    #[test]
    fn json_serde_json_cannot_hold_is_a_parse_error_with_a_null_id() {
        // Valid JSON text, but a lone surrogate escape or a number out of range is nothing
        // serde_json can hold: whatever the message looks like, its parse error has no id.
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":"\ud800"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":"\udc00"}}}"#,
            r#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"\ud800"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"ping","extra":"\ud800"}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{"a":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":1e999}}}"#,
        ] {
            assert_eq!(rejected_code(text), (code::PARSE_ERROR, None), "{text}");
        }
    }

    #[test]
    fn an_id_taken_as_written_is_what_a_full_parse_would_give() {
        // Every id text the fast path takes must be the text serde_json's full parse and
        // write give back: otherwise one id would have two texts (and a cancellation would
        // miss its request).
        let mut texts: Vec<String> = vec![
            "0".into(),
            "-0".into(),
            "-1".into(),
            "\"\"".into(),
            "\"a b\"".into(),
            "\"é✓\"".into(),
            "\"\\u0041\"".into(),
            "\"\\n\"".into(),
            "\"\\/\"".into(),
            "1.0".into(),
            "1e3".into(),
            "1E3".into(),
            "-0.5".into(),
        ];
        let mut digits = String::new();
        for n in 1..=25 {
            digits.push(char::from(b'0' + (n % 9 + 1) as u8));
            texts.push(digits.clone());
            texts.push(format!("-{digits}"));
        }
        for text in texts {
            let full = serde_json::from_str::<Value>(&text).expect("valid JSON");
            let rewritten = serde_json::to_string(&full).unwrap();
            match RequestId::as_written(&text) {
                Some(id) => assert_eq!(id.0.as_ref(), rewritten, "{text}"),
                None => assert!(
                    matches!(full, Value::String(_) | Value::Number(_)),
                    "{text}"
                ),
            }
        }
    }

    #[test]
    fn malformed_messages_get_the_standard_codes() {
        assert_eq!(rejected_code("{"), (code::PARSE_ERROR, None));
        assert_eq!(rejected_code("not json"), (code::PARSE_ERROR, None));
        assert_eq!(
            rejected_code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            (code::INVALID_REQUEST, None)
        );
        assert_eq!(rejected_code("[1,"), (code::PARSE_ERROR, None));
        assert_eq!(rejected_code("42"), (code::INVALID_REQUEST, None));
        assert_eq!(
            rejected_code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            (code::INVALID_REQUEST, None)
        );
        assert_eq!(
            rejected_code(r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#),
            (code::INVALID_REQUEST, None)
        );
        assert_eq!(
            rejected_code(r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#),
            (code::INVALID_REQUEST, Some("3".into()))
        );
        assert_eq!(
            rejected_code(r#"{"id":3,"method":"ping"}"#),
            (code::INVALID_REQUEST, Some("3".into()))
        );
        assert_eq!(
            rejected_code(r#"{"jsonrpc":"2.0","id":3}"#),
            (code::INVALID_REQUEST, Some("3".into()))
        );
        assert_eq!(
            rejected_code(r#"{"jsonrpc":"2.0","id":3,"method":"x","params":[1]}"#),
            (code::INVALID_REQUEST, Some("3".into()))
        );
    }

    #[test]
    fn responses_echo_the_id_as_written() {
        let id = RequestId("\"abc\"".into());
        assert_eq!(
            String::from_utf8(response(&id, &serde_json::json!({"ok": true}))).unwrap(),
            r#"{"jsonrpc":"2.0","id":"abc","result":{"ok":true}}"#
        );
        assert_eq!(
            String::from_utf8(error_response(None, code::PARSE_ERROR, "Parse error", None))
                .unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
        );
    }
}
