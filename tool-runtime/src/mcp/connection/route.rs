//! The one router: a request's method, read once, goes to what does it, in either era.
//! What only one era has is matched with that era; everything else is shared; and a
//! method this server does not serve is answered "Method not found" in one place.

use super::super::era::{Decision, Era};
use super::super::jsonrpc::{code, RequestId};
use super::super::outbox::Outbox;
use super::super::pages::List;
use super::super::params::{self, Capability, ListParams, Method, Params};
use super::super::responses::{answered, empty_result, error_message};
use super::super::work::Work;
use super::super::ServerMessage;
use super::calls::Origin;
use super::state::duplicate_id;
use super::Connection;
use crate::call::caller::Caller;
use serde_json::{Map, Value};

/// The one version whose handshake offers tasks as a core capability.
pub(super) const TASKS_CORE_VERSION: &str = "2025-11-25";

impl Connection {
    /// Handles a request: refused as its era decides, then routed by its method.
    pub(super) fn request(
        &self,
        id: RequestId,
        name: &str,
        params: Option<Map<String, Value>>,
        decision: &Decision,
        caller: &Caller,
        sink: &Outbox,
    ) -> Option<Work> {
        let refuse = |code: i64, message: &str, data: Option<Value>| {
            answered(sink, error_message(Some(&id), code, message, data))
        };
        if self.state.is_in_flight(&id) {
            return refuse(code::INVALID_REQUEST, &duplicate_id(&id), None);
        }
        if let Some((code, message, data)) = decision.refusal() {
            return refuse(code, &message, data);
        }
        let era = decision.era();
        let origin = match era {
            Era::Handshake => Origin::handshake(&self.state, caller),
            Era::PerRequest => match self.per_request_origin(params.as_ref(), caller) {
                Ok(origin) => origin,
                Err(message) => return refuse(code::INVALID_PARAMS, &message, None),
            },
        };
        let method = Method::of(name);
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
        let routed = Routed {
            connection: self,
            id,
            params,
            sink,
        };
        routed.to(method, name, origin)
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

/// A request on its way to what handles it.
struct Routed<'a> {
    connection: &'a Connection,
    id: RequestId,
    params: Option<Map<String, Value>>,
    sink: &'a Outbox,
}

impl Routed<'_> {
    /// Hands the request to what handles `method` in its era.
    fn to(mut self, method: Method, name: &str, origin: Origin<'_>) -> Option<Work> {
        let connection = self.connection;
        let era = origin.era;
        match (method, era) {
            (Method::Initialize, Era::Handshake) => {
                let params = self.read()?;
                connection.initialize(&self.id, params, self.sink)
            }
            (Method::Ping, Era::Handshake) => answered(self.sink, empty_result(&self.id)),
            (Method::SetLogLevel, Era::Handshake) => {
                let params = self.read()?;
                answered(self.sink, connection.set_log_level(&self.id, params))
            }
            (Method::Discover, Era::PerRequest) => {
                answered(self.sink, connection.discover(&self.id))
            }
            (Method::Listen, Era::PerRequest) => {
                let params = self.read()?;
                connection.listen(self.id, params, self.sink)
            }
            (
                Method::ListTools
                | Method::ListPrompts
                | Method::ListResources
                | Method::ListResourceTemplates,
                _,
            ) => {
                let params: ListParams = self.read()?;
                let page = connection.list(&self.id, method, params.cursor.as_deref(), &origin);
                answered(self.sink, page)
            }
            (Method::CallTool, _) => {
                let params = self.read()?;
                connection.tools_call(self.id, params, origin, self.sink)
            }
            (Method::GetPrompt, _) => {
                let params = self.read()?;
                connection.get_prompt(self.id, params, origin, self.sink)
            }
            (Method::ReadResource, _) => {
                let params = self.read()?;
                connection.read_resource(self.id, params, origin, self.sink)
            }
            (Method::Complete, _) => {
                let params = self.read()?;
                connection.complete(self.id, params, origin, self.sink)
            }
            (Method::Subscribe | Method::Unsubscribe, Era::Handshake) => {
                let params = self.read()?;
                let subscribe = method == Method::Subscribe;
                connection.subscription(&self.id, subscribe, params, self.sink)
            }
            (
                Method::GetTask | Method::ListTasks | Method::CancelTask | Method::TaskResult,
                Era::Handshake,
            ) if connection.serves_core_tasks() => {
                connection.core_task_request(self.id, method, self.params, origin.caller, self.sink)
            }
            (Method::GetTask | Method::UpdateTask | Method::CancelTask, Era::PerRequest)
                if connection.shared.offered.tasks =>
            {
                connection.extension_task_request(
                    self.id,
                    method,
                    name,
                    self.params,
                    &origin,
                    self.sink,
                )
            }
            _ => answered(
                self.sink,
                error_message(
                    Some(&self.id),
                    code::METHOD_NOT_FOUND,
                    &format!("Method not found: {name}"),
                    None,
                ),
            ),
        }
    }

    /// The request's params as `T`; else it is answered -32602 here, and `None`.
    fn read<T: Params>(&mut self) -> Option<T> {
        // Taken, not copied: every arm reads its params once.
        match params::read(self.params.take()) {
            Ok(params) => Some(params),
            Err(message) => {
                self.sink.send(invalid(&self.id, &message));
                None
            }
        }
    }
}

/// A -32602 answer.
pub(super) fn invalid(id: &RequestId, message: &str) -> ServerMessage {
    error_message(Some(id), code::INVALID_PARAMS, message, None)
}

impl Connection {
    /// A page of one of the lists (tools, prompts, resources or resource templates), from
    /// `cursor` (`None`: the first), as the request's caller sees it.
    fn list(
        &self,
        id: &RequestId,
        method: Method,
        cursor: Option<&str>,
        origin: &Origin<'_>,
    ) -> ServerMessage {
        let list = match method {
            Method::ListPrompts => List::Prompts,
            Method::ListResources => List::Resources,
            Method::ListResourceTemplates => List::ResourceTemplates,
            _ => List::Tools,
        };
        let shared = &self.shared;
        match shared
            .pages
            .page(shared, list, cursor, origin.era, origin.caller)
        {
            Ok(page) => ServerMessage::result(super::super::jsonrpc::response_raw(id, &page)),
            Err(message) => invalid(id, &message),
        }
    }
}
