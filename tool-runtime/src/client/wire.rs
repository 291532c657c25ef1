//! The client's side of JSON-RPC: the messages it writes (requests with the `_meta` each
//! 2026-07-28 request carries, notifications, responses to the server's requests) and the
//! messages it reads, told apart once. Ids, error codes and protocol versions are the
//! server's own (`mcp::jsonrpc`, `mcp`): one definition for both roles.

use crate::mcp::era::{Era, META_VERSION};
use crate::mcp::params::META_CAPABILITIES;
use serde::Deserialize;
use serde_json::{json, Map, Value};

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
    /// The params of a request of `method`: `params`, with at 2026-07-28 the `_meta` every
    /// request carries (and a progress token when one is given).
    pub(crate) fn params(&self, params: Value, progress_token: Option<&Value>) -> Value {
        let mut params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let needs_meta = self.era == Era::PerRequest || progress_token.is_some();
        if !needs_meta {
            return Value::Object(params);
        }
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            if self.era == Era::PerRequest {
                meta.insert(META_VERSION.to_owned(), self.version.clone().into());
                meta.insert(META_CAPABILITIES.to_owned(), self.capabilities_2026.clone());
                meta.insert(META_CLIENT_INFO.to_owned(), self.client_info.clone());
                if let Some(level) = &self.log_level {
                    meta.insert(META_LOG_LEVEL.to_owned(), level.clone().into());
                }
            }
            if let Some(token) = progress_token {
                meta.insert("progressToken".to_owned(), token.clone());
            }
        }
        Value::Object(params)
    }
}

/// The bytes of request `id` of `method` with `params`.
pub(crate) fn request(id: u64, method: &str, params: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .unwrap_or_default()
}

/// The bytes of a notification.
pub(crate) fn notification(method: &str, params: Option<&Value>) -> Vec<u8> {
    let message = match params {
        Some(params) => json!({"jsonrpc": "2.0", "method": method, "params": params}),
        None => json!({"jsonrpc": "2.0", "method": method}),
    };
    serde_json::to_vec(&message).unwrap_or_default()
}

/// The bytes of our answer to the server's request `id`.
pub(crate) fn response(id: &Value, outcome: Result<Value, (i64, String)>) -> Vec<u8> {
    let message = match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    };
    serde_json::to_vec(&message).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_2026_request_carries_the_version_capabilities_and_client_in_meta() {
        let speaker = Speaker {
            era: Era::PerRequest,
            version: "2026-07-28".to_owned(),
            client_info: json!({"name": "c", "version": "1"}),
            capabilities: json!({"elicitation": {}}),
            capabilities_2026: json!({"elicitation": {}, "extensions": {"x": {}}}),
            log_level: None,
        };
        let params = speaker.params(json!({"name": "add"}), Some(&json!("p1")));
        assert_eq!(
            params,
            json!({"name": "add", "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {"x": {}}},
                "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                "progressToken": "p1"
            }})
        );
        let handshake = Speaker {
            era: Era::Handshake,
            ..speaker
        };
        assert_eq!(handshake.params(json!({}), None), json!({}));
    }
}
