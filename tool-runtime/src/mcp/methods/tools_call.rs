//! `tools/call`: the call checked (its retry, whether it may become a task), started by the
//! registry, and handed back as work; the REST endpoints' calls too, answered in their own
//! format.

use crate::catalog::TaskSupport;
use crate::mcp::connection::origin::Origin;
use crate::mcp::connection::requests::{RequestScope, RoundBinding};
use crate::mcp::connection::Connection;
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::{code, RequestId};
use crate::mcp::methods::{invalid, TASKS_CORE_VERSION};
use crate::mcp::outbox::Outbox;
use crate::mcp::params::{CallParams, TaskAsked};
use crate::mcp::responses::{answer, answered, error_message, AnswerFormat};
use crate::mcp::tasks::{self, TaskPlan};
use crate::mcp::work::{CallWork, Work};
use crate::mcp::ServerMessage;
use crate::registry::CallStart;
use serde_json::Value;
use std::sync::Arc;

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
        let scope = self.request_scope((&id, meta.progress_token()), origin, asking, sink);
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
        use crate::mcp::connection::requests::Asking::Nobody;
        // The REST call's span learns which tool it runs once the body is read.
        #[cfg(feature = "otel")]
        if crate::otel::active() {
            let span = tracing::Span::current();
            if span
                .metadata()
                .is_some_and(|meta| meta.name() == "rest call")
            {
                span.record("gen_ai.tool.name", name);
                crate::otel::spans::rename(&span, format!("execute_tool {name}"));
            }
        }
        // Counted against the in-flight caps first, as an MCP request is.
        let arrival = match self.arrive_to_work(&id, false) {
            Ok(arrival) => arrival,
            Err(refusal) => return answered(sink, refusal),
        };
        crate::mcp::connection::in_flight::Arrival::handle(Some(arrival), || {
            let scope = self.request_scope((&id, None), Origin::rest(&self.caller), Nobody, sink);
            self.start_call(id, name, arguments, scope, None, format, sink)
        })
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
        let guard = self.register(id, scope.cancellation.clone());
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
        // A server that announced no tasks (none of its tools ran as one, and its tool list
        // was announced as never changing) runs none, even for a tool added later that
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
        if self.negotiated_version() != Some(TASKS_CORE_VERSION) {
            return Ok(None);
        }
        let method_not_found = |message: String| {
            Err(error_message(
                Some(id),
                code::METHOD_NOT_FOUND,
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
