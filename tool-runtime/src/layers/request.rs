//! One tool call as a layer sees it: the tool, its arguments, who called, and where the
//! call goes next.

use super::route::Route;
use crate::call::caller::Caller;
use crate::call::context::CallContext;
use crate::call::runnable::ToolRef;
use crate::catalog::Tool;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// A tool call, admitted and with arguments that fit the tool's schema, on its way through
/// the [layers](crate::layers) to the tool.
///
/// Cloning one is cheap (the arguments are shared until a layer changes them), so
/// `tower`'s `Retry` can make the call again.
#[derive(Clone)]
pub struct CallRequest {
    pub(super) tool: ToolRef,
    /// Shared with the call's record, which keeps what the caller sent.
    pub(super) arguments: Arc<Value>,
    /// Whether a layer changed the arguments, which are then checked again.
    pub(super) arguments_changed: bool,
    pub(super) context: CallContext,
    /// What the registry decided about the call when it arrived, for its own layers to
    /// finish (what admission still has to count, say).
    pub(super) decided: Option<Arc<dyn std::any::Any + Send + Sync>>,
    pub(super) route: Route,
}

impl CallRequest {
    /// The tool called: its name, description, annotations, time limit.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// What the registry decided about the call when it arrived, when it is a `T`.
    pub(crate) fn decided<T: std::any::Any>(&self) -> Option<&T> {
        self.decided.as_deref()?.downcast_ref()
    }

    /// The tool called, with what runs it.
    pub(crate) fn tool_ref(&self) -> &ToolRef {
        &self.tool
    }

    /// The arguments, as the caller sent them (or as a layer before this one left them).
    /// `null` when the caller sent none.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The arguments, to change. Changed arguments are checked against the tool's schema
    /// again before the tool runs, so a layer cannot hand the tool what it does not accept.
    pub fn arguments_mut(&mut self) -> &mut Value {
        self.arguments_changed = true;
        Arc::make_mut(&mut self.arguments)
    }

    /// Who made the call: its transport, session, authenticated subject and scopes.
    pub fn caller(&self) -> &Caller {
        self.context.caller()
    }

    /// The id of the request that made the call, as the client wrote it; `None` for a call
    /// made directly on the registry.
    pub fn request_id(&self) -> Option<&str> {
        self.context.request_id()
    }

    /// How the call came: over MCP (and in which era), over REST, or directly.
    pub fn protocol(&self) -> crate::call::scope::Protocol {
        self.context.protocol()
    }

    /// The time limit the tool's run is held to, innermost: the tool's own, else the
    /// registry's default; `None` for none. Past it the call is cancelled (a retry of it
    /// finds it cancelled) and answers that it ran out of time.
    pub fn time_limit(&self) -> Option<std::time::Duration> {
        self.route.limit
    }

    /// The call's context, as the tool receives it (its state, its caller).
    pub fn context(&self) -> &CallContext {
        &self.context
    }
}

impl fmt::Debug for CallRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallRequest")
            .field("tool", &self.tool.name())
            .field("arguments", &self.arguments)
            .field("caller", self.caller())
            .finish_non_exhaustive()
    }
}
