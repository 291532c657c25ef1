//! The protocol side of tasks: when a `tools/call` becomes a task, how the task runs on
//! after the call is answered, and the `tasks/*` methods of both eras.
//!
//! - 2025-11-25 (handshake era): the client asks for a task (`params.task`); the answer is
//!   `{"task": {...}}`; `tasks/get`, `tasks/result` (which waits for the end), `tasks/list`
//!   and `tasks/cancel` follow it; a tool error ends the task `failed`.
//! - 2026-07-28 (the `io.modelcontextprotocol/tasks` extension): the server decides, for a
//!   client that declared the extension in the request; the answer is the task itself,
//!   flat, with `resultType: "task"`; `tasks/get` inlines the result, the error or the
//!   questions waiting (`inputRequests`); `tasks/update` answers them; `tasks/cancel`
//!   acknowledges; a tool error ends the task `completed` (its result says `isError`).
//!
//! - `wire`: the task objects and results as each era writes them, and the errors.
//! - `run`: how a call that may become a task runs, and how its end is recorded.
//! - `methods`: `tasks/*` of both eras, over the task store.
//! - `listed`: the 2025-11-25 tasks a connection lists.
//! - `questions`: a task's open questions, and how its call's askers reach it.

pub(crate) mod lease;
mod listed;
mod methods;
mod questions;
mod run;
mod wire;

pub(crate) use listed::ListedTasks;
pub(crate) use methods::{core_method, extension_method, result_when_ended, TaskRequest};
pub(crate) use questions::{TaskLink, TaskQuestion};
pub(crate) use run::run;
pub(crate) use wire::mark_related;

use super::asking::missing_capability;
use super::era::Era;
use super::jsonrpc::RequestId;
use super::ServerMessage;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// The extension's name, in capabilities.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// Where a 2025-11-25 message names the task it belongs to.
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How a call runs as a task, decided when it starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TaskPlan {
    /// 2026-07-28, the client declared the extension: a task once the call has run for a
    /// moment (or at once for a `required` tool that ends sooner).
    Extension { required: bool },
    /// 2025-11-25, the client asked for a task: one at once, kept for `ttl`.
    Core { ttl: Duration },
}

impl TaskPlan {
    /// The era whose tasks these are: the 2026-07-28 extension's
    /// (`io.modelcontextprotocol/tasks`), or the 2025-11-25 core's. It decides the shape of
    /// their objects and results.
    fn era(self) -> Era {
        match self {
            TaskPlan::Extension { .. } => Era::PerRequest,
            TaskPlan::Core { .. } => Era::Handshake,
        }
    }
}

/// Whether the request's capabilities (2026-07-28 `_meta`) declare the tasks extension.
pub(crate) fn declares_extension(capabilities: Option<&Map<String, Value>>) -> bool {
    capabilities
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(Value::is_object)
}

/// The -32021 error of a request that needs the tasks extension.
pub(crate) fn extension_required(id: &RequestId, what: &str) -> ServerMessage {
    let message = format!(
        "Missing required client capability: {what} needs the tasks extension ({EXTENSION}); \
         declare it in _meta[\"io.modelcontextprotocol/clientCapabilities\"].extensions"
    );
    missing_capability(id, &message, json!({"extensions": {EXTENSION: {}}}))
}
