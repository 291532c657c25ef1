//! The client's side of JSON-RPC: the messages it writes (requests with the `_meta` each
//! 2026-07-28 request carries, notifications, responses to the server's requests) and the
//! messages it reads, told apart once. The framing, ids, error codes and protocol
//! versions are the server's own (`mcp::jsonrpc`, `mcp`): one definition for both roles.

use crate::mcp::era::{Era, META_VERSION};
use crate::mcp::jsonrpc::{self, RequestId};
use crate::mcp::params::META_CAPABILITIES;
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Where a 2026-07-28 request names its client.
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// Where a 2026-07-28 request names the level of log messages it wants.
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// One message from the server.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Message {
    /// The answer to a request of ours.
    Response {
        id: Value,
        outcome: Result<Value, ErrorObject>,
    },
    /// A request of the server's (a question for the client, or `ping`).
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// A notification.
    Notification { method: String, params: Value },
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

#[derive(Deserialize)]
struct Envelope {
    jsonrpc: Option<String>,
    #[serde(default)]
    id: Option<Value>,
    method: Option<String>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<ErrorObject>,
}

/// Reads one message from the server; why not, in words.
pub(crate) fn read(bytes: &[u8]) -> Result<Message, String> {
    let envelope: Envelope = serde_json::from_slice(bytes)
        .map_err(|error| format!("a message that is not JSON-RPC ({error})"))?;
    if envelope.jsonrpc.as_deref() != Some("2.0") {
        return Err("a message without \"jsonrpc\": \"2.0\"".to_owned());
    }
    let params = envelope.params.unwrap_or(Value::Null);
    match (envelope.method, envelope.id) {
        (Some(method), Some(id)) if !id.is_null() => Ok(Message::Request { id, method, params }),
        (Some(method), _) => Ok(Message::Notification { method, params }),
        (None, Some(id)) => match (envelope.result, envelope.error) {
            (Some(result), None) => Ok(Message::Response {
                id,
                outcome: Ok(result),
            }),
            (None, Some(error)) => Ok(Message::Response {
                id,
                outcome: Err(error),
            }),
            _ => Err("a response with neither a result nor an error".to_owned()),
        },
        (None, None) => Err("a message that is neither a request nor a response".to_owned()),
    }
}

/// Who the client is, what it can do, and the era it speaks in: what each request carries.
#[derive(Debug, Clone)]
pub(crate) struct Speaker {
    pub(crate) era: Era,
    /// The protocol version agreed (or, before, asked for).
    pub(crate) version: String,
    /// Its name and version, written once: a 2026-07-28 message carries them each time.
    pub(crate) client_info: Box<RawValue>,
    /// What the client can do, as `initialize` declares it.
    pub(crate) capabilities: Value,
    /// The same at 2026-07-28, with the extensions the client speaks (tasks), written once
    /// as `client_info` is.
    pub(crate) capabilities_2026: Box<RawValue>,
    /// The level of log messages wanted at 2026-07-28 (none unless set).
    pub(crate) log_level: Option<String>,
}

impl Speaker {
    /// What each message's `_meta` carries at 2026-07-28 (the version, the client's
    /// capabilities and name, the log level wanted); nothing in the handshake era.
    pub(crate) fn meta(&self) -> Option<&Speaker> {
        (self.era == Era::PerRequest).then_some(self)
    }

    /// The `_meta` entries of [`Speaker::meta`]: what each is named and what it holds.
    fn meta_entries(&self) -> impl Iterator<Item = (&'static str, MetaValue<'_>)> {
        [
            (META_VERSION, Some(MetaValue::Text(&self.version))),
            (
                META_CAPABILITIES,
                Some(MetaValue::Json(&self.capabilities_2026)),
            ),
            (META_CLIENT_INFO, Some(MetaValue::Json(&self.client_info))),
            (
                META_LOG_LEVEL,
                self.log_level.as_deref().map(MetaValue::Text),
            ),
        ]
        .into_iter()
        .filter_map(|(key, value)| Some((key, value?)))
    }
}

/// The value of one of the speaker's `_meta` entries, borrowed.
#[derive(Serialize)]
#[serde(untagged)]
enum MetaValue<'a> {
    Text(&'a str),
    Json(&'a RawValue),
}

/// `value` as JSON text, for the speaker's entries every message carries: written once,
/// not each time.
pub(crate) fn written(value: &Value) -> Box<RawValue> {
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
    params: &'a Value,
    speaker: Option<&'a Speaker>,
    added: &'a Added,
}

impl Serialize for Params<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let empty = Map::new();
        let params = self.params.as_object().unwrap_or(&empty);
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in params.iter().filter(|(key, _)| *key != "_meta") {
            map.serialize_entry(key, value)?;
        }
        let own = params.get("_meta");
        if own.is_some() || self.speaker.is_some() || !self.added.is_empty() {
            let meta = Meta {
                own: own.and_then(Value::as_object),
                speaker: self.speaker,
                added: self.added,
            };
            map.serialize_entry("_meta", &meta)?;
        }
        map.end()
    }
}

/// A message's `_meta`: the speaker's entries, the request's additions, then the params'
/// own others.
struct Meta<'a> {
    own: Option<&'a Map<String, Value>>,
    speaker: Option<&'a Speaker>,
    added: &'a Added,
}

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let speaker = self.speaker.into_iter().flat_map(Speaker::meta_entries);
        for (key, value) in speaker {
            map.serialize_entry(key, &value)?;
        }
        if let Some(token) = self.added.progress_token {
            map.serialize_entry("progressToken", &token)?;
        }
        for (key, value) in &self.added.trace {
            map.serialize_entry(key, value)?;
        }
        let speakers = |key: &str| {
            let mut speaker = self.speaker.into_iter().flat_map(Speaker::meta_entries);
            speaker.any(|(name, _)| name == key)
        };
        let own = self.own.into_iter().flatten();
        for (key, value) in own.filter(|(key, _)| !speakers(key) && !self.added.names(key)) {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// The bytes of request `id` of `method` with `params`, its `_meta` carrying `speaker`'s
/// entries when there is one, and what the request adds.
pub(crate) fn request(
    id: u64,
    method: &str,
    params: &Value,
    speaker: Option<&Speaker>,
    added: &Added,
) -> Vec<u8> {
    let params = Params {
        params,
        speaker,
        added,
    };
    jsonrpc::request(&Value::from(id), method, &params)
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
        params,
        speaker,
        added: &added,
    });
    jsonrpc::message(None, method, params.as_ref())
}

/// The bytes of our answer to the server's request `id`.
pub(crate) fn response(id: &Value, outcome: Result<Value, (i64, String)>) -> Vec<u8> {
    let id = RequestId::from_value(id);
    match outcome {
        Ok(result) => jsonrpc::response(&id, &result),
        Err((code, message)) => jsonrpc::error_response(Some(&id), code, &message, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_are_told_apart_by_their_fields() {
        let read = |text: &str| read(text.as_bytes());
        assert_eq!(
            read(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#),
            Ok(Message::Response {
                id: json!(1),
                outcome: Ok(json!({"tools": []}))
            })
        );
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
            "no jsonrpc version"
        );
        assert!(
            read(r#"{"jsonrpc":"2.0","id":1}"#).is_err(),
            "neither result nor error"
        );
        assert!(read("not json").is_err());
    }

    #[test]
    fn messages_written_are_json_rpc_with_exactly_their_fields() {
        let parsed = |bytes: Vec<u8>| serde_json::from_slice::<Value>(&bytes).unwrap();
        assert_eq!(
            parsed(request(
                7,
                "tools/call",
                &json!({"name": "add"}),
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
            parsed(response(&json!("s-1"), Ok(json!({"roots": []})))),
            json!({"jsonrpc": "2.0", "id": "s-1", "result": {"roots": []}})
        );
        assert_eq!(
            parsed(response(
                &json!(3),
                Err((-32601, "no such method".to_owned()))
            )),
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "no such method"}})
        );
    }

    #[test]
    fn a_2026_request_carries_the_version_capabilities_and_client_in_meta() {
        let speaker = Speaker {
            era: Era::PerRequest,
            version: "2026-07-28".to_owned(),
            client_info: written(&json!({"name": "c", "version": "1"})),
            capabilities: json!({"elicitation": {}}),
            capabilities_2026: written(&json!({"elicitation": {}, "extensions": {"x": {}}})),
            log_level: None,
        };
        let params = json!({"name": "add", "_meta": {"mine": 1, "io.modelcontextprotocol/clientInfo": "old", "progressToken": "theirs", "traceparent": "theirs"}});
        let added = Added {
            progress_token: Some(7),
            trace: Map::from_iter([("traceparent".to_owned(), json!("00-ab-cd-01"))]),
        };
        let written = request(1, "tools/call", &params, speaker.meta(), &added);
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
        let written = request(2, "tools/call", &not_an_object, speaker.meta(), &progress);
        let meta = &serde_json::from_slice::<Value>(&written).unwrap()["params"]["_meta"];
        assert_eq!(meta["progressToken"], json!(2));
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            json!("2026-07-28")
        );
        let handshake = Speaker {
            era: Era::Handshake,
            ..speaker
        };
        assert!(handshake.meta().is_none());
        let written = notification("notifications/x", Some(&json!({})), handshake.meta());
        assert_eq!(
            serde_json::from_slice::<Value>(&written).unwrap()["params"],
            json!({})
        );
        // In the handshake era a request carries its own additions alone, and params that
        // are not an object are sent as an object.
        let written = request(3, "tools/call", &json!(null), handshake.meta(), &progress);
        assert_eq!(
            serde_json::from_slice::<Value>(&written).unwrap()["params"],
            json!({"_meta": {"progressToken": 2}})
        );
    }
}
