//! Calling a tool: the one entry point every caller goes through (a protocol's connection,
//! REST, a direct call), and the call once started, whose work is still to run.

use super::admission::Admitted;
use super::Registry;
use crate::call::caller::Caller;
use crate::call::context::CallContext;
use crate::call::error::CallError;
use crate::call::result::ToolResult;
use crate::call::runnable::ToolRef;
use crate::catalog::Tool;
use crate::layers::{Layered, Stages};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// How a call started: it ended at once (an unknown tool, a refusal, an argument error),
/// or it runs, with its work still to be awaited.
pub(crate) enum CallStart {
    Ended(ToolResult),
    Running(PendingCall),
}

/// A started call whose work is still to be awaited; it owns everything it needs, so it can
/// move into a task.
pub(crate) struct PendingCall {
    tool: ToolRef,
    input: Value,
    invocation: Started,
}

/// Where a pending call's work is.
enum Started {
    /// Started, with no layer around it.
    Now(crate::call::Invocation),
    /// On its way through the layers that apply to its tool.
    Layered(Box<Layered>),
}

impl PendingCall {
    /// The tool called.
    pub(crate) fn tool(&self) -> &ToolRef {
        &self.tool
    }

    /// The arguments it was called with.
    pub(crate) fn input(&self) -> &Value {
        match &self.invocation {
            Started::Layered(call) => call.sent(),
            Started::Now(_) => &self.input,
        }
    }

    /// Awaits the work and gives the result.
    pub(crate) fn finish(self, context: &CallContext) -> impl Future<Output = ToolResult> + '_ {
        // Taken apart before the future starts, so that it holds each part once: every call
        // allocates this future, and a small one stays in the allocator's fast path.
        let PendingCall {
            tool,
            mut input,
            invocation,
        } = self;
        async move {
            let outcome = match invocation {
                Started::Now(invocation) => crate::call::complete(&tool, invocation, context).await,
                Started::Layered(call) => {
                    let (outcome, sent) = call.run().await;
                    input = sent;
                    outcome
                }
            };
            let name = tool.name_to_keep();
            ToolResult::new(name, input, Some(tool), outcome)
        }
    }
}

impl Registry {
    /// Calls the tool `name` with `input` (a JSON object of arguments, or `null`).
    ///
    /// Never panics, whatever the input or the tool does: every failure is in the result.
    /// Past its time limit the call answers the timeout error at once and the tool's
    /// [`Cancellation`](crate::Cancellation) fires; a sync tool that keeps running is not
    /// waited for.
    pub async fn call(&self, name: &str, input: Value) -> ToolResult {
        self.call_in(name, input, &self.direct_context()).await
    }

    /// Calls a tool on behalf of `caller`, as a transport of your own would: as
    /// [`Registry::call`], with the caller's permissions (the scopes of its token), rate
    /// limit and budget, and the caller named in the audit trail.
    ///
    /// ```
    /// use tool_runtime::context::Caller;
    /// use tool_runtime::{tool, Registry};
    ///
    /// /// Read the shared notes.
    /// #[tool(scopes = ["notes:read"])]
    /// fn read_notes() -> &'static str {
    ///     "remember the milk"
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::new().unwrap();
    /// let reader = Caller::http(None).with_subject("ada", ["notes:read"]);
    /// let result = registry.call_for(reader, "read_notes", serde_json::json!({})).await;
    /// assert!(result.error().is_none());
    ///
    /// let stranger = Caller::http(None).with_subject("eve", ["profile"]);
    /// let result = registry.call_for(stranger, "read_notes", serde_json::json!({})).await;
    /// assert_eq!(result.error().unwrap().status(), "insufficient_scope");
    /// # });
    /// ```
    pub async fn call_for(
        &self,
        caller: crate::call::caller::Caller,
        name: &str,
        input: Value,
    ) -> ToolResult {
        self.call_in(name, input, &self.direct_context_for(caller))
            .await
    }

    /// The context of one call made directly on the registry (not through a protocol): its
    /// own scope, so a timeout cancels this call and no other.
    pub(crate) fn direct_context(&self) -> CallContext {
        self.direct_context_for(Caller::DIRECT)
    }

    /// [`direct_context`](Registry::direct_context), made on behalf of `caller`.
    pub(super) fn direct_context_for(&self, caller: Caller) -> CallContext {
        let scope = crate::call::scope::CallScope::detached().called_by(caller);
        self.context.with_scope(Arc::new(scope))
    }

    /// A tool's time limit: its own, else the registry's default.
    pub(crate) fn limit_for(&self, tool: &Tool) -> Option<Duration> {
        super::operations::limit_of(tool, self.default_timeout)
    }

    /// Calls a tool with a context of the caller's making (the protocol layer gives each
    /// call its own scope: progress, logging, cancellation).
    pub(crate) async fn call_in(
        &self,
        name: &str,
        input: Value,
        context: &CallContext,
    ) -> ToolResult {
        match self.start_call(name, input, context) {
            CallStart::Ended(result) => result,
            CallStart::Running(pending) => pending.finish(context).await,
        }
    }

    /// The context of a call made through a protocol, which gives it `scope` (its
    /// progress, logging, cancellation and caller).
    pub(crate) fn call_context(&self, scope: Arc<crate::call::scope::CallScope>) -> CallContext {
        self.context.with_scope(scope)
    }

    /// Starts a call: its result when it ended without running (an unknown tool, a
    /// refusal, an argument error), else the work to await. A refusal is decided here, when
    /// the call arrives, so that it is answered at once (with its HTTP status, and never as
    /// a task): the caller's scopes, the limits and the budget kept here, then the
    /// arguments.
    pub(crate) fn start_call(&self, name: &str, input: Value, context: &CallContext) -> CallStart {
        let caller = context.caller();
        let Some(tool) = self.get(name) else {
            let unknown = CallError::UnknownTool {
                name: name.to_owned(),
                suggestion: self.closest_name(name),
            };
            return CallStart::Ended(self.refused(name, None, input, caller, unknown));
        };
        let admitted = match self.limits.admit_now(&tool, caller) {
            Ok(admitted) => admitted,
            Err(refusal) => {
                return CallStart::Ended(self.refused(name, Some(tool), input, caller, refusal))
            }
        };
        if let Some(stages) = self.layers_for(&tool) {
            return self.start_layered(stages, tool, input, context, admitted);
        }
        match crate::call::start(&tool, &input, context) {
            crate::call::Started::Finished(outcome) => {
                CallStart::Ended(ToolResult::new(name.to_owned(), input, Some(tool), outcome))
            }
            crate::call::Started::Pending(invocation) => CallStart::Running(PendingCall {
                tool,
                input,
                invocation: Started::Now(invocation),
            }),
        }
    }

    /// Starts a call that goes through layers, its arguments checked first: no layer sees
    /// arguments that do not fit, and such a call is answered at once.
    fn start_layered(
        &self,
        stages: &Arc<Stages>,
        tool: ToolRef,
        input: Value,
        context: &CallContext,
        admitted: Option<Admitted>,
    ) -> CallStart {
        if let Err(refusal) = crate::call::check(&tool, &input) {
            let name = tool.name_to_keep();
            let caller = context.caller();
            return CallStart::Ended(self.refused(&name, Some(tool), input, caller, refusal));
        }
        let limit = self.limit_for(&tool);
        let decided = admitted.map(|admitted| Arc::new(admitted) as Arc<_>);
        let call = Layered::new(stages, tool.clone(), input, context, limit, decided);
        CallStart::Running(PendingCall {
            tool,
            // The arguments are the layered call's, given back when it ends.
            input: Value::Null,
            invocation: Started::Layered(Box::new(call)),
        })
    }

    pub(super) fn closest_name(&self, name: &str) -> Option<String> {
        let tools = self.tools();
        tool_rules::closest(name, tools.iter().map(|tool| tool.name()), 0.7).map(str::to_owned)
    }
}
