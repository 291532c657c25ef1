//! The requests that run user code: `tools/call`, `prompts/get`, `resources/read` and
//! `completion/complete`, and the calls of the REST endpoints. Each is checked here,
//! registered in flight, and handed back as work; the call is started once, by the
//! registry, whatever the format it is answered in.

use super::super::asking::retry::RetryAsker;
use super::super::era::Era;
use super::super::jsonrpc::RequestId;
use super::super::outbox::Outbox;
use super::super::params::{
    CallParams, CompleteParams, GetPromptParams, ReadResourceParams, TaskAsked,
};
use super::super::responses::{answer, answered, error_message, AnswerFormat};
use super::super::surfaces;
use super::super::tasks::{self, TaskPlan};
use super::super::work::{CallWork, InFlightGuard, RequestSink, Work};
use super::super::ServerMessage;
#[cfg(feature = "http")]
use super::per_request::NO_LOGS;
use super::route::invalid;
use super::{Connection, State};
use crate::call::caller::Caller;
use crate::call::scope::{CallScope, Cancellation, Notifier};
use crate::registry::CallStart;
use serde_json::{Map, Value};
use std::sync::atomic::AtomicU8;
use std::sync::Arc;

/// How a request came: in which era (with what the era says of it), from whom, and the log
/// level its messages are held to.
pub(crate) struct Origin<'a> {
    pub(super) era: Era,
    log_level: Arc<AtomicU8>,
    /// At 2026-07-28, the capabilities the request declares.
    capabilities: Option<Map<String, Value>>,
    pub(super) caller: &'a Caller,
}

impl<'a> Origin<'a> {
    /// A request in a handshake-era session, at the session's log level.
    pub(super) fn handshake(state: &State, caller: &'a Caller) -> Self {
        Origin {
            era: Era::Handshake,
            log_level: Arc::clone(&state.log_level),
            capabilities: None,
            caller,
        }
    }

    /// A 2026-07-28 request, at the level its `_meta` names, with the capabilities it
    /// declares.
    pub(super) fn per_request(
        level: u8,
        capabilities: Map<String, Value>,
        caller: &'a Caller,
    ) -> Self {
        Origin {
            era: Era::PerRequest,
            log_level: Arc::new(AtomicU8::new(level)),
            capabilities: Some(capabilities),
            caller,
        }
    }

    /// A call of a REST endpoint: no session, no log messages (nothing could carry them).
    #[cfg(feature = "http")]
    fn rest(caller: &'a Caller) -> Self {
        Origin {
            era: Era::Handshake,
            log_level: Arc::new(AtomicU8::new(NO_LOGS)),
            capabilities: None,
            caller,
        }
    }

    /// Whether the request declares the tasks extension (2026-07-28).
    pub(super) fn declares_tasks(&self) -> bool {
        tasks::declares_extension(self.capabilities.as_ref())
    }
}

/// What the connection keeps for a request that runs user code (see
/// [`Connection::request_scope`]).
struct RequestScope {
    context: crate::call::context::CallContext,
    cancellation: Cancellation,
    notifier: Arc<RequestSink>,
    /// At 2026-07-28, the round of asking whose verdict shapes the answer.
    retry: Option<Arc<RetryAsker>>,
    era: Era,
}

/// How a request asks its client (see [`Connection::asking`]).
enum Asking {
    Nobody,
    Live,
    Retry(Arc<RetryAsker>),
}

/// What a request that may ask its client names, for the state of its next round.
struct RoundBinding<'a> {
    method: &'a str,
    target: &'a str,
    arguments: &'a Value,
    responses: Option<Map<String, Value>>,
    sealed: Option<String>,
}

impl Connection {
    /// `tools/call`: refused at once when its retry or its task does not fit, answered at
    /// once when the call ends at once (an unknown tool, an argument error), else handed
    /// back as work.
    pub(super) fn tools_call(
        &self,
        id: RequestId,
        params: CallParams,
        origin: Origin<'_>,
        sink: &Outbox,
    ) -> Option<Work> {
        let CallParams {
            name,
            arguments,
            task,
            input_responses,
            request_state,
            meta,
        } = params;
        let asked = RoundBinding {
            method: "tools/call",
            target: &name,
            arguments: &arguments,
            responses: input_responses,
            sealed: request_state,
        };
        let asking = match self.asking(asked, &origin) {
            Ok(asking) => asking,
            Err(why) => return answered(sink, invalid(&id, &why)),
        };
        let task = match self.task_plan(&id, &name, task, &origin) {
            Ok(task) => task,
            Err(refusal) => return answered(sink, refusal),
        };
        let format = AnswerFormat::Mcp(origin.era);
        let scope = self.request_scope(meta.progress_token(), origin, asking, sink);
        self.start_call(id, &name, arguments, scope, task, format, sink)
    }

    /// A call of a REST endpoint (`format`), with no protocol around it: it asks nobody
    /// and never becomes a task; its answer goes to `sink` as any call's does.
    #[cfg(feature = "http")]
    pub(crate) fn rest_call(
        &self,
        name: &str,
        arguments: Value,
        format: AnswerFormat,
        id: RequestId,
        sink: &Outbox,
    ) -> Option<Work> {
        let scope = self.request_scope(None, Origin::rest(&self.caller), Asking::Nobody, sink);
        self.start_call(id, name, arguments, scope, None, format, sink)
    }

    /// Starts the call of `name`: answered at once when it ends at once, else registered
    /// in flight and handed back as work (the transport decides where it runs).
    #[allow(clippy::too_many_arguments)]
    fn start_call(
        &self,
        id: RequestId,
        name: &str,
        arguments: Value,
        scope: RequestScope,
        task: Option<TaskPlan>,
        format: AnswerFormat,
        sink: &Outbox,
    ) -> Option<Work> {
        let registry = &self.shared.registry;
        let pending = match registry.start_call(name, arguments, &scope.context) {
            CallStart::Ended(result) => {
                return answered(sink, answer(&self.shared, &id, result, format))
            }
            CallStart::Running(pending) => pending,
        };
        // Registered before the work starts, so a cancellation that arrives at once finds it.
        let guard = match self.register(id, scope.cancellation.clone()) {
            Ok(guard) => guard,
            Err(refusal) => return answered(sink, refusal),
        };
        Some(Work::call(CallWork {
            shared: Arc::clone(&self.shared),
            guard,
            pending,
            context: scope.context,
            cancellation: scope.cancellation,
            notifier: scope.notifier,
            format,
            retry: scope.retry,
            task,
        }))
    }

    /// `prompts/get`, as work.
    pub(super) fn get_prompt(
        &self,
        id: RequestId,
        params: GetPromptParams,
        origin: Origin<'_>,
        sink: &Outbox,
    ) -> Option<Work> {
        let GetPromptParams {
            name,
            arguments,
            input_responses,
            request_state,
            meta,
        } = params;
        let asked = RoundBinding {
            method: "prompts/get",
            target: &name,
            arguments: &arguments,
            responses: input_responses,
            sealed: request_state,
        };
        let request = self.surface_request(&id, asked, meta.progress_token(), origin, sink);
        let request = match request {
            Ok(request) => request,
            Err(refusal) => return answered(sink, refusal),
        };
        Some(request.get_prompt(name, arguments))
    }

    /// `resources/read`, as work.
    pub(super) fn read_resource(
        &self,
        id: RequestId,
        params: ReadResourceParams,
        origin: Origin<'_>,
        sink: &Outbox,
    ) -> Option<Work> {
        let ReadResourceParams {
            uri,
            input_responses,
            request_state,
            meta,
        } = params;
        let asked = RoundBinding {
            method: "resources/read",
            target: &uri,
            arguments: &Value::Null,
            responses: input_responses,
            sealed: request_state,
        };
        let request = self.surface_request(&id, asked, meta.progress_token(), origin, sink);
        match request {
            Ok(request) => Some(request.read_resource(uri)),
            Err(refusal) => answered(sink, refusal),
        }
    }

    /// `completion/complete`, as work. Completing an argument asks nobody: it runs as the
    /// user types.
    pub(super) fn complete(
        &self,
        id: RequestId,
        params: CompleteParams,
        origin: Origin<'_>,
        sink: &Outbox,
    ) -> Option<Work> {
        let progress_token = params.meta.progress_token();
        let scope = self.request_scope(progress_token, origin, Asking::Nobody, sink);
        let request = match self.surface_work(id, scope) {
            Ok(request) => request,
            Err(refusal) => return answered(sink, refusal),
        };
        Some(request.complete(surfaces::CompletionAsked::from(params)))
    }

    /// A `prompts/get` or `resources/read` request, checked and registered, ready to run.
    fn surface_request(
        &self,
        id: &RequestId,
        asked: RoundBinding<'_>,
        progress_token: Option<Value>,
        origin: Origin<'_>,
        sink: &Outbox,
    ) -> Result<surfaces::Request, ServerMessage> {
        let asking = self
            .asking(asked, &origin)
            .map_err(|why| invalid(id, &why))?;
        let scope = self.request_scope(progress_token, origin, asking, sink);
        self.surface_work(id.clone(), scope)
    }

    /// Registers a request for a prompt, a resource or a completion, to run as work.
    fn surface_work(
        &self,
        id: RequestId,
        scope: RequestScope,
    ) -> Result<surfaces::Request, ServerMessage> {
        let era = scope.era;
        let guard = self.register(id, scope.cancellation.clone())?;
        Ok(surfaces::Request {
            shared: Arc::clone(&self.shared),
            guard,
            context: scope.context,
            cancellation: scope.cancellation,
            notifier: scope.notifier,
            era,
            retry: scope.retry,
        })
    }

    /// Records a request as in flight (see [`State::register`]).
    pub(super) fn register(
        &self,
        id: RequestId,
        cancellation: Cancellation,
    ) -> Result<InFlightGuard, ServerMessage> {
        self.state.register(
            id,
            cancellation,
            self.shared.max_in_flight,
            &self.shared.in_flight_total,
        )
    }

    /// What a request that runs user code gets: its context (progress token, log level,
    /// cancellation) and the one sink its notifications and answer go to.
    fn request_scope(
        &self,
        progress_token: Option<Value>,
        origin: Origin<'_>,
        asking: Asking,
        sink: &Outbox,
    ) -> RequestScope {
        let notifier = RequestSink::new(&self.state, sink);
        let (asker, retry) = match asking {
            Asking::Nobody => (None, None),
            Asking::Live => {
                let asker = Arc::clone(&notifier) as Arc<dyn crate::call::ask::Asker>;
                (Some(asker), None)
            }
            Asking::Retry(asker) => (
                Some(Arc::clone(&asker) as Arc<dyn crate::call::ask::Asker>),
                Some(asker),
            ),
        };
        let scope = Arc::new(CallScope::of_request(
            progress_token,
            Some(Arc::clone(&notifier) as Arc<dyn Notifier>),
            origin.log_level,
            origin.caller.clone(),
            asker,
        ));
        RequestScope {
            cancellation: scope.cancellation.clone(),
            context: self.shared.registry.call_context(scope),
            notifier,
            retry,
            era: origin.era,
        }
    }

    /// How a request that runs user code asks its client: live in the handshake era; at
    /// 2026-07-28 by rounds, reading the answers and the sealed state a retry brings,
    /// refused (-32602, with why) when the state was altered or issued to another token's
    /// subject.
    fn asking(&self, asked: RoundBinding<'_>, origin: &Origin<'_>) -> Result<Asking, String> {
        let Some(capabilities) = &origin.capabilities else {
            return Ok(Asking::Live);
        };
        let request = (asked.method, asked.target, origin.caller.subject());
        RetryAsker::of_request(
            &self.shared.sealing_key,
            request,
            (asked.responses, asked.sealed),
            asked.arguments,
            Value::Object(capabilities.clone()),
        )
        .map(|asker| Asking::Retry(Arc::new(asker)))
    }

    /// Whether a call of `name` may become a task, and how: at 2026-07-28 when the tool
    /// allows it and the request declares the tasks extension (a tool that runs only as a
    /// task is refused with -32021 otherwise); at 2025-11-25 when the client asks for one
    /// (`task`), which a tool that does not allow it refuses with -32601, as one that runs
    /// only as a task refuses a call without it. Unknown tools are left to the call, which
    /// names them.
    fn task_plan(
        &self,
        id: &RequestId,
        name: &str,
        asked: Option<TaskAsked>,
        origin: &Origin<'_>,
    ) -> Result<Option<TaskPlan>, ServerMessage> {
        use crate::catalog::TaskSupport;
        // A server that announced no tasks runs none, even for a tool added later that
        // allows them: its clients were never told it could.
        if !self.shared.offered.tasks {
            return Ok(None);
        }
        let Some(tool) = self.shared.registry.get(name) else {
            return Ok(None);
        };
        let support = tool.task_support();
        if origin.era == Era::PerRequest {
            return match (support, origin.declares_tasks()) {
                (TaskSupport::Forbidden, _) => Ok(None),
                (TaskSupport::Required, false) => {
                    Err(tasks::extension_required(id, &format!("tool {name:?}")))
                }
                (TaskSupport::Optional, false) => Ok(None),
                (support, true) => Ok(Some(TaskPlan::Extension {
                    required: support == TaskSupport::Required,
                })),
            };
        }
        if self.negotiated_version() != Some(super::route::TASKS_CORE_VERSION) {
            return Ok(None);
        }
        let method_not_found = |message: String| {
            Err(error_message(
                Some(id),
                super::super::jsonrpc::code::METHOD_NOT_FOUND,
                &message,
                None,
            ))
        };
        match (support, asked) {
            (TaskSupport::Forbidden, Some(_)) => method_not_found(format!(
                "Method not found: tool {name:?} does not run as a task; call it without \"task\""
            )),
            (TaskSupport::Required, None) => method_not_found(format!(
                "Method not found: tool {name:?} runs only as a task; call it with \"task\": {{}}"
            )),
            (_, None) => Ok(None),
            (_, Some(asked)) => {
                let most = self.shared.tasks.ttl;
                let ttl = asked
                    .ttl
                    .map_or(most, |ms| most.min(std::time::Duration::from_millis(ms)));
                Ok(Some(TaskPlan::Core { ttl }))
            }
        }
    }
}
