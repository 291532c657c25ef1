//! The client's side of JSON-RPC: the messages it writes (requests with the `_meta` each
//! 2026-07-28 request carries, notifications, responses to the server's requests) and the
//! messages it reads, told apart once. The framing, ids, error codes and protocol
//! versions are the server's own (`mcp::jsonrpc`, `mcp`): one definition for both roles.

use crate::mcp::era::{Era, META_VERSION};
use crate::mcp::jsonrpc::{self, RequestId};
use crate::mcp::params::META_CAPABILITIES;
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
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
    pub(crate) client_info: Value,
    /// What the client can do, as `initialize` declares it.
    pub(crate) capabilities: Value,
    /// The same at 2026-07-28, with the extensions the client speaks (tasks).
    pub(crate) capabilities_2026: Value,
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
    Json(&'a Value),
}

/// The params of a message: `params` as an object, with the progress token when one is
/// given. The `_meta` every 2026-07-28 message carries is added as it is written
/// ([`Speaker::meta`]), never copied into each message's params.
pub(crate) fn message_params(params: Value, progress_token: Option<&Value>) -> Value {
    let mut params = match params {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    // `_meta` is an object in MCP: one that is not (`null`, say) is replaced, so that
    // what the client adds to it (progress token, trace context, at 2026-07-28 its
    // version and name) is never dropped.
    if params.get("_meta").is_some_and(|meta| !meta.is_object()) {
        params.insert("_meta".to_owned(), Value::Object(Map::new()));
    }
    if let Some(token) = progress_token {
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert("progressToken".to_owned(), token.clone());
        }
    }
    Value::Object(params)
}

/// A message's params, written with the speaker's `_meta` entries merged into the params'
/// own `_meta` (the speaker's win over an entry of the same name).
struct Params<'a> {
    params: &'a Value,
    speaker: Option<&'a Speaker>,
}

impl Serialize for Params<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (Value::Object(params), Some(speaker)) = (self.params, self.speaker) else {
            return self.params.serialize(serializer);
        };
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in params.iter().filter(|(key, _)| *key != "_meta") {
            map.serialize_entry(key, value)?;
        }
        let own = params.get("_meta").and_then(Value::as_object);
        map.serialize_entry("_meta", &Meta { own, speaker })?;
        map.end()
    }
}

/// A message's `_meta`: the speaker's entries, then the params' own others.
struct Meta<'a> {
    own: Option<&'a Map<String, Value>>,
    speaker: &'a Speaker,
}

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.speaker.meta_entries() {
            map.serialize_entry(key, &value)?;
        }
        let speakers = |key: &str| self.speaker.meta_entries().any(|(name, _)| name == key);
        let own = self.own.into_iter().flatten();
        for (key, value) in own.filter(|(key, _)| !speakers(key)) {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// The bytes of request `id` of `method` with `params`, its `_meta` carrying `speaker`'s
/// entries when there is one.
pub(crate) fn request(id: u64, method: &str, params: &Value, speaker: Option<&Speaker>) -> Vec<u8> {
    jsonrpc::request(&Value::from(id), method, &Params { params, speaker })
}

/// The bytes of a notification, its `_meta` carrying `speaker`'s entries when there is
/// one.
pub(crate) fn notification(
    method: &str,
    params: Option<&Value>,
    speaker: Option<&Speaker>,
) -> Vec<u8> {
    let params = params.map(|params| Params { params, speaker });
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
            parsed(request(7, "tools/call", &json!({"name": "add"}), None)),
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
            client_info: json!({"name": "c", "version": "1"}),
            capabilities: json!({"elicitation": {}}),
            capabilities_2026: json!({"elicitation": {}, "extensions": {"x": {}}}),
            log_level: None,
        };
        let params = message_params(
            json!({"name": "add", "_meta": {"mine": 1, "io.modelcontextprotocol/clientInfo": "old"}}),
            Some(&json!("p1")),
        );
        let written = request(1, "tools/call", &params, speaker.meta());
        assert_eq!(
            serde_json::from_slice::<Value>(&written).unwrap()["params"],
            json!({"name": "add", "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {"x": {}}},
                "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                "progressToken": "p1",
                "mine": 1
            }})
        );
        let not_an_object = message_params(json!({"_meta": null}), Some(&json!("p2")));
        let written = request(2, "tools/call", &not_an_object, speaker.meta());
        let meta = &serde_json::from_slice::<Value>(&written).unwrap()["params"]["_meta"];
        assert_eq!(meta["progressToken"], json!("p2"));
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
    }
}
