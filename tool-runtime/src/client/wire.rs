//! The client's side of JSON-RPC: the messages it writes (requests with the `_meta` each
//! 2026-07-28 request carries, notifications, responses to the server's requests) and the
//! messages it reads, told apart once. Ids, error codes and protocol versions are the
//! server's own (`mcp::jsonrpc`, `mcp`): one definition for both roles.

use crate::mcp::era::{Era, META_VERSION};
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
    /// The params of a request of `method`: `params` as an object, with the progress token
    /// when one is given. The `_meta` every 2026-07-28 request carries is added as it is
    /// written ([`Speaker::meta`]), never copied into each request's params.
    pub(crate) fn params(params: Value, progress_token: Option<&Value>) -> Value {
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

    /// What each message's `_meta` carries at 2026-07-28 (the version, the client's
    /// capabilities and name, the log level wanted); nothing in the handshake era.
    pub(crate) fn meta(&self) -> Option<&Speaker> {
        (self.era == Era::PerRequest).then_some(self)
    }

    /// The `_meta` entries of [`Speaker::meta`], each written with `write`.
    fn write_meta<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry(META_VERSION, &self.version)?;
        map.serialize_entry(META_CAPABILITIES, &self.capabilities_2026)?;
        map.serialize_entry(META_CLIENT_INFO, &self.client_info)?;
        if let Some(level) = &self.log_level {
            map.serialize_entry(META_LOG_LEVEL, level)?;
        }
        Ok(())
    }

    /// Whether `key` is one of the `_meta` entries the speaker writes.
    fn writes(&self, key: &str) -> bool {
        key == META_VERSION
            || key == META_CAPABILITIES
            || key == META_CLIENT_INFO
            || (key == META_LOG_LEVEL && self.log_level.is_some())
    }
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
        self.speaker.write_meta(&mut map)?;
        let own = self.own.into_iter().flatten();
        for (key, value) in own.filter(|(key, _)| !self.speaker.writes(key)) {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// A message we write, its parts borrowed: written straight to bytes, never first copied
/// into a `Value` (a request's params are the bulk of what a mount relays).
#[derive(Serialize)]
struct Outgoing<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Id<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<Params<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<OutgoingError<'a>>,
}

/// A request id of ours (a number) or the server's (as it came).
#[derive(Serialize)]
#[serde(untagged)]
enum Id<'a> {
    Ours(u64),
    Theirs(&'a Value),
}

/// The error of our answer to a server's request.
#[derive(Serialize)]
struct OutgoingError<'a> {
    code: i64,
    message: &'a str,
}

impl<'a> Outgoing<'a> {
    const EMPTY: Outgoing<'static> = Outgoing {
        jsonrpc: "2.0",
        id: None,
        method: None,
        params: None,
        result: None,
        error: None,
    };

    fn bytes(&self) -> Vec<u8> {
        // Only maps with string keys and borrowed values: it cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// The bytes of request `id` of `method` with `params`, its `_meta` carrying `speaker`'s
/// entries when there is one.
pub(crate) fn request(id: u64, method: &str, params: &Value, speaker: Option<&Speaker>) -> Vec<u8> {
    Outgoing {
        id: Some(Id::Ours(id)),
        method: Some(method),
        params: Some(Params { params, speaker }),
        ..Outgoing::EMPTY
    }
    .bytes()
}

/// The bytes of a notification, its `_meta` carrying `speaker`'s entries when there is
/// one.
pub(crate) fn notification(
    method: &str,
    params: Option<&Value>,
    speaker: Option<&Speaker>,
) -> Vec<u8> {
    Outgoing {
        method: Some(method),
        params: params.map(|params| Params { params, speaker }),
        ..Outgoing::EMPTY
    }
    .bytes()
}

/// The bytes of our answer to the server's request `id`.
pub(crate) fn response(id: &Value, outcome: Result<Value, (i64, String)>) -> Vec<u8> {
    let id = Some(Id::Theirs(id));
    match &outcome {
        Ok(result) => Outgoing {
            id,
            result: Some(result),
            ..Outgoing::EMPTY
        },
        Err((code, message)) => Outgoing {
            id,
            error: Some(OutgoingError {
                code: *code,
                message,
            }),
            ..Outgoing::EMPTY
        },
    }
    .bytes()
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
        let params = Speaker::params(
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
        let not_an_object = Speaker::params(json!({"_meta": null}), Some(&json!("p2")));
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
