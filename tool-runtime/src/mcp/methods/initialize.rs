//! What the handshake era begins with: `initialize` (the version and capabilities agreed for
//! the session) and `logging/setLevel`.

use crate::call::scope::LogLevel;
use crate::mcp::connection::Connection;
use crate::mcp::jsonrpc::{self, RequestId};
use crate::mcp::methods::{invalid, TASKS_CORE_VERSION};
use crate::mcp::outbox::Outbox;
use crate::mcp::params::{InitializeParams, SetLevelParams};
use crate::mcp::responses::{answered, empty_result};
use crate::mcp::work::Work;
use crate::mcp::{ServerMessage, HANDSHAKE_VERSIONS, STATELESS_VERSIONS};
use crate::store::sessions::Change;
use crate::sync::lock;
use serde_json::{json, Map, Value};
use std::sync::atomic::Ordering;

impl Connection {
    /// `initialize`: agrees on the version asked for when it is served, else the newest of
    /// the handshake era, and keeps what the client can do.
    pub(super) fn initialize(
        &self,
        id: &RequestId,
        params: InitializeParams,
        sink: &Outbox,
    ) -> Option<Work> {
        let version = HANDSHAKE_VERSIONS
            .iter()
            .find(|v| **v == params.protocol_version)
            .copied()
            .unwrap_or(HANDSHAKE_VERSIONS[0]);
        *lock(&self.state.handshake) = Some(version);
        if let Some(capabilities) = params.capabilities {
            *lock(&self.state.client_capabilities) = Value::Object(capabilities);
        }
        let info = &self.shared.info;
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": self.capabilities(version),
            "serverInfo": {"name": info.name(), "version": info.version()},
        });
        if let Some(instructions) = info.instructions() {
            result["instructions"] = instructions.into();
        }
        // Watching starts before the answer, so no change after it goes unannounced.
        let watcher = if self.shared.list_changed.any() {
            self.watch_list_changes()
        } else {
            None
        };
        sink.send(ServerMessage::result(jsonrpc::response(id, &result)));
        watcher
    }

    /// `logging/setLevel`: the lowest level of log messages sent from now on.
    pub(super) fn set_log_level(
        &self,
        id: &RequestId,
        params: SetLevelParams,
        sink: &Outbox,
    ) -> Option<Work> {
        match LogLevel::from_name(&params.level) {
            Some(level) => {
                self.state.log_level.store(level as u8, Ordering::Relaxed);
                let change = Change::LogLevel(level as u8);
                self.recorded(id, change, empty_result(id), sink)
            }
            None => answered(
                sink,
                invalid(
                    id,
                    &format!(
                        "Invalid params: \"level\" must be one of debug, info, notice, warning, \
                     error, critical, alert, emergency; got {:?}",
                        params.level
                    ),
                ),
            ),
        }
    }

    /// What this server offers at `version`: tools and logging always; prompts, resources
    /// (with subscriptions: `resources/subscribe` in the handshake era,
    /// `resourceSubscriptions` of `subscriptions/listen` at 2026-07-28) and completion when
    /// the registry has any; tasks where the version has them.
    pub(super) fn capabilities(&self, version: &str) -> Value {
        let offered = self.shared.offered;
        let list_changed = self.shared.list_changed;
        let mut capabilities = Map::new();
        // Tasks: the core capability of 2025-11-25, the extension of 2026-07-28 (never both).
        if offered.tasks && version == TASKS_CORE_VERSION {
            capabilities.insert(
                "tasks".to_owned(),
                json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            );
        } else if offered.tasks && STATELESS_VERSIONS.contains(&version) {
            capabilities.insert(
                "extensions".to_owned(),
                json!({crate::mcp::tasks::EXTENSION: {}}),
            );
        }
        capabilities.insert(
            "tools".to_owned(),
            json!({"listChanged": list_changed.tools}),
        );
        capabilities.insert("logging".to_owned(), json!({}));
        if offered.prompts {
            capabilities.insert(
                "prompts".to_owned(),
                json!({"listChanged": list_changed.prompts}),
            );
        }
        if offered.resources {
            capabilities.insert(
                "resources".to_owned(),
                json!({"subscribe": true, "listChanged": list_changed.resources}),
            );
        }
        if offered.completions {
            capabilities.insert("completions".to_owned(), json!({}));
        }
        Value::Object(capabilities)
    }
}
