//! Each MCP method a server answers, in a file named by the method, and the one router
//! that sends a request there: its method, read once, goes to what does it, in either era.
//! What only one era has is matched with that era; everything else is shared; a method
//! this server does not serve is answered "Method not found" in one place.
//!
//! - `initialize`, `logging/setLevel` (handshake era): [`initialize`]
//! - `server/discover` (2026-07-28): [`server_discover`]
//! - `ping`: answered here
//! - `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`: [`lists`]
//! - `tools/call` (and the REST calls): [`tools_call`]
//! - `prompts/get`: [`prompts_get`]
//! - `resources/read`: [`resources_read`]
//! - `completion/complete`: [`completion_complete`]
//! - `resources/subscribe`, `resources/unsubscribe` (handshake era),
//!   `subscriptions/listen` (2026-07-28): [`subscriptions`]
//! - `tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/list` (2025-11-25) and
//!   `tasks/get`, `tasks/update`, `tasks/cancel` (2026-07-28): [`tasks`]
//!
//! A request that runs work arrived in flight before it reached its method
//! (`connection::in_flight`), and is claimed there by what runs it; its scope and how it asks
//! its client are in `connection::requests`.

pub(crate) mod completion_complete;
pub(crate) mod initialize;
pub(crate) mod lists;
pub(crate) mod prompts_get;
pub(crate) mod resources_read;
pub(crate) mod server_discover;
pub(crate) mod subscriptions;
pub(crate) mod tasks;
pub(crate) mod tools_call;

use crate::call::caller::Caller;
use crate::mcp::connection::origin::Origin;
use crate::mcp::connection::Connection;
use crate::mcp::era::{Decision, Era};
use crate::mcp::jsonrpc::{code, RequestId};
use crate::mcp::outbox::Outbox;
use crate::mcp::params::{Capability, Method, MethodParams};
use crate::mcp::responses::{answered, empty_result, error_message};
use crate::mcp::work::Work;
use crate::mcp::ServerMessage;
use serde_json::Value;

/// The one version whose handshake offers tasks as a core capability.
pub(crate) const TASKS_CORE_VERSION: &str = "2025-11-25";

impl Connection {
    /// Handles a request (`name` is its method as written): refused as its era decides,
    /// then routed by what it asks.
    pub(crate) fn request(
        &self,
        id: RequestId,
        name: &str,
        asked: MethodParams,
        decision: &Decision,
        caller: &Caller,
        sink: &Outbox,
    ) -> Option<Work> {
        let refuse = |code: i64, message: &str, data: Option<Value>| {
            answered(sink, error_message(Some(&id), code, message, data))
        };
        // At 2026-07-28 a method the era does not have is not found, whatever else is
        // wrong with the request (a missing `_meta`, params that do not fit).
        if matches!(decision, Decision::PerRequest(_) | Decision::MissingMeta)
            && !asked.method().exists_in(Era::PerRequest)
        {
            return refuse(
                code::METHOD_NOT_FOUND,
                &format!("Method not found: {name}"),
                None,
            );
        }
        if let Some((code, message, data)) = decision.refusal() {
            return refuse(code, &message, data);
        }
        let era = decision.era();
        let origin = match era {
            Era::Handshake => Origin::handshake(&self.state, caller),
            Era::PerRequest => match self.per_request_origin(asked.meta().map(), caller) {
                Ok(origin) => origin,
                Err(message) => return refuse(code::INVALID_PARAMS, &message, None),
            },
        };
        let method = asked.method();
        if let Some(capability) = method.capability().filter(|c| !self.offers(*c)) {
            let message = format!(
                "Method not found: {name} (this server has no {})",
                capability.noun()
            );
            return refuse(code::METHOD_NOT_FOUND, &message, None);
        }
        let handshake_done = self.negotiated_version().is_some();
        if era == Era::Handshake
            && !handshake_done
            && !matches!(method, Method::Initialize | Method::Ping)
        {
            return refuse(
                code::INVALID_REQUEST,
                "Invalid Request: the session is not initialized; send \"initialize\" first, \
                 or name the protocol version in each request's _meta (2026-07-28)",
                None,
            );
        }
        self.route(id, name, asked, origin, sink)
    }

    /// Hands a request to what handles what it asks, in its era; anything else is a method
    /// this server does not serve.
    fn route(
        &self,
        id: RequestId,
        name: &str,
        asked: MethodParams,
        origin: Origin<'_>,
        sink: &Outbox,
    ) -> Option<Work> {
        match (asked, origin.era) {
            (MethodParams::Unfit(_, _, why), _) => answered(sink, invalid(&id, &why)),
            (MethodParams::Initialize(params), Era::Handshake) => {
                self.initialize(&id, params, sink)
            }
            (MethodParams::Ping(_), Era::Handshake) => answered(sink, empty_result(&id)),
            (MethodParams::SetLogLevel(params), Era::Handshake) => {
                self.set_log_level(&id, params, sink)
            }
            (MethodParams::Discover(_), Era::PerRequest) => answered(sink, self.discover(&id)),
            (MethodParams::Listen(params), Era::PerRequest) => self.listen(id, params, sink),
            (MethodParams::List(method, params), _) => {
                let page = self.list(&id, method, params.cursor.as_deref(), &origin);
                answered(sink, page)
            }
            (MethodParams::CallTool(params), _) => self.tools_call(id, params, origin, sink),
            (MethodParams::GetPrompt(params), _) => self.get_prompt(id, params, origin, sink),
            (MethodParams::ReadResource(params), _) => self.read_resource(id, params, origin, sink),
            (MethodParams::Complete(params), _) => self.complete(id, params, origin, sink),
            (MethodParams::Subscribe(params), Era::Handshake) => {
                self.subscription(&id, true, params, sink)
            }
            (MethodParams::Unsubscribe(params), Era::Handshake) => {
                self.subscription(&id, false, params, sink)
            }
            (asked @ (MethodParams::Task(..) | MethodParams::ListTasks(_)), Era::Handshake)
                if self.serves_core_tasks() =>
            {
                self.core_task_request(id, asked, origin.caller, sink)
            }
            (
                asked @ (MethodParams::Task(Method::GetTask | Method::CancelTask, _)
                | MethodParams::UpdateTask(_)),
                Era::PerRequest,
            ) if self.shared.offered.tasks => {
                self.extension_task_request(id, asked, name, &origin, sink)
            }
            _ => answered(
                sink,
                error_message(
                    Some(&id),
                    code::METHOD_NOT_FOUND,
                    &format!("Method not found: {name}"),
                    None,
                ),
            ),
        }
    }

    /// Whether this server offers `capability`: a server without prompts answers
    /// `prompts/*` as unknown methods, as one that never heard of them.
    pub(super) fn offers(&self, capability: Capability) -> bool {
        let offered = self.shared.offered;
        match capability {
            Capability::Prompts => offered.prompts,
            Capability::Resources => offered.resources,
            Capability::Completions => offered.completions,
        }
    }

    /// Whether the 2025-11-25 task methods are served on this connection.
    fn serves_core_tasks(&self) -> bool {
        self.shared.offered.tasks && self.negotiated_version() == Some(TASKS_CORE_VERSION)
    }
}

/// A -32602 answer.
pub(crate) fn invalid(id: &RequestId, message: &str) -> ServerMessage {
    error_message(Some(id), code::INVALID_PARAMS, message, None)
}
