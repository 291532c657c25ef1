//! What a server's answers hold, as the client gives them: its tools, a call's result, the
//! notifications it sends, a call's progress. Each keeps the server's JSON as it came
//! (`raw`), so nothing a server sent is lost to a field this client does not know.

use crate::Content;
use serde_json::Value;

/// A tool of a remote server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RemoteTool {
    /// Its name.
    pub name: String,
    /// A human-friendly title, if the server gives one.
    pub title: Option<String>,
    /// What it does.
    pub description: Option<String>,
    /// Its arguments' JSON Schema, exactly as the server sent it.
    pub input_schema: Value,
    /// Its output's JSON Schema, if it has one.
    pub output_schema: Option<Value>,
    /// Its annotations (`readOnlyHint` and the others), if any.
    pub annotations: Option<Value>,
    /// The tool as the server listed it.
    pub raw: Value,
}

impl RemoteTool {
    pub(crate) fn from_value(raw: Value) -> Option<RemoteTool> {
        let name = raw.get("name")?.as_str()?.to_owned();
        let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(RemoteTool {
            title: text("title"),
            description: text("description"),
            input_schema: raw
                .get("inputSchema")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "object"})),
            // Only an object is a schema (`null` is none).
            output_schema: raw
                .get("outputSchema")
                .filter(|schema| schema.is_object())
                .cloned(),
            annotations: raw.get("annotations").cloned(),
            name,
            raw,
        })
    }

    /// Whether the tool says it changes nothing (`readOnlyHint`).
    pub fn is_read_only(&self) -> bool {
        self.hint("readOnlyHint")
    }

    /// Whether the tool says a call may be repeated to the same effect (`idempotentHint`).
    pub fn is_idempotent(&self) -> bool {
        self.hint("idempotentHint")
    }

    /// Whether a call may run as a task on the server, as a server of the handshake era
    /// says (`execution.taskSupport`): `forbidden`, `optional` or `required`; `None` when
    /// it says nothing (at 2026-07-28 a tool has no such field: the server makes a call a
    /// task by itself). A tool that requires one, once [`Client::list_tools`](super::Client::list_tools)
    /// has listed it, is called as a task by [`Client::call_tool`](super::Client::call_tool),
    /// and its result waited for.
    pub fn task_support(&self) -> Option<&str> {
        self.raw["execution"]["taskSupport"].as_str()
    }

    fn hint(&self, name: &str) -> bool {
        self.annotations
            .as_ref()
            .and_then(|annotations| annotations.get(name))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

/// What a call of a remote tool gave.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CallResult {
    /// Its content blocks; blocks of a kind this client does not know are left out (they
    /// are in `raw`).
    pub content: Vec<Content>,
    /// Its structured content, when the tool has an output schema.
    pub structured: Option<Value>,
    /// Whether the tool failed (the content says why, for the model to read).
    pub is_error: bool,
    /// The result as the server sent it.
    pub raw: Value,
}

impl CallResult {
    pub(crate) fn from_value(raw: Value) -> CallResult {
        let content = crate::call::content::known(raw["content"].as_array().into_iter().flatten());
        CallResult {
            content,
            structured: raw.get("structuredContent").cloned(),
            is_error: raw["isError"].as_bool().unwrap_or(false),
            raw,
        }
    }

    /// The text of the result's text blocks, joined by newlines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block {
                Content::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// What a server said of itself when the client connected.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerDescription {
    /// The protocol version agreed with it.
    pub protocol_version: String,
    /// Its name (`serverInfo.name`).
    pub name: String,
    /// Its version (`serverInfo.version`).
    pub version: String,
    /// What it offers (`tools`, `prompts`, `resources`, `logging`, ...), as it said.
    pub capabilities: Value,
    /// Its instructions for the client's model, if any.
    pub instructions: Option<String>,
    /// Its `serverInfo` as it sent it (title, icons, website, ...).
    pub info: Value,
}

impl ServerDescription {
    /// Whether it declared `capability` (`"tools"`, `"resources"`, ...).
    pub fn offers(&self, capability: &str) -> bool {
        self.capabilities.get(capability).is_some()
    }
}

/// A call's progress, as the server reports it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// How far it is.
    pub progress: f64,
    /// Out of how much, when known.
    pub total: Option<f64>,
    /// What it is doing.
    pub message: Option<String>,
}

/// What a server sends on its own.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Notification {
    /// A log message (`notifications/message`).
    Log {
        /// Its level (`info`, `warning`, ...).
        level: String,
        /// Who logged it, if said.
        logger: Option<String>,
        /// What it says.
        data: Value,
    },
    /// The list of tools changed.
    ToolsChanged,
    /// The list of prompts changed.
    PromptsChanged,
    /// The list of resources changed.
    ResourcesChanged,
    /// A resource subscribed to changed.
    ResourceUpdated {
        /// Its URI.
        uri: String,
    },
    /// A task's status changed (its object as sent).
    TaskStatus(Value),
    /// A page the user was sent to was completed (`notifications/elicitation/complete`).
    ElicitationComplete {
        /// The elicitation's id.
        id: String,
    },
    /// The client connected to the server again (after the connection ended): what the
    /// server offers may have changed.
    Connected,
    /// Anything else.
    Other {
        /// Its method.
        method: String,
        /// Its params.
        params: Value,
    },
}

impl Notification {
    pub(crate) fn of(method: &str, params: Value) -> Notification {
        match method {
            "notifications/message" => Notification::Log {
                level: params["level"].as_str().unwrap_or("info").to_owned(),
                logger: params["logger"].as_str().map(str::to_owned),
                data: params.get("data").cloned().unwrap_or(Value::Null),
            },
            "notifications/tools/list_changed" => Notification::ToolsChanged,
            "notifications/prompts/list_changed" => Notification::PromptsChanged,
            "notifications/resources/list_changed" => Notification::ResourcesChanged,
            "notifications/resources/updated" => Notification::ResourceUpdated {
                uri: params["uri"].as_str().unwrap_or_default().to_owned(),
            },
            "notifications/tasks/status" => Notification::TaskStatus(params),
            "notifications/elicitation/complete" => Notification::ElicitationComplete {
                id: params["elicitationId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            },
            _ => Notification::Other {
                method: method.to_owned(),
                params,
            },
        }
    }
}
