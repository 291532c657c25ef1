//! The way a call takes through the layers: each layer given to the registry is one
//! service (a `Stage`); a call passes those that apply to its tool in order, and after the
//! last, the tool runs.

use super::request::CallRequest;
use super::selection::Tools;
use super::stage::{Passing, Stage};
use super::{into_call_error, BoxError, ToolAnswer};
use crate::call::context::CallContext;
use crate::call::error::CallError;
use crate::call::runnable::ToolRef;
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::Service;

/// What a step gives back: the call's answer, when it comes.
pub(crate) type AnswerFuture = BoxFuture<'static, Result<ToolAnswer, CallError>>;

impl Passing for CallRequest {
    type Answer = ToolAnswer;
    type Name = ToolRef;

    fn name(&self) -> ToolRef {
        self.tool.clone()
    }

    fn failed(tool: &ToolRef, error: BoxError) -> CallError {
        into_call_error(tool, error)
    }
}

/// One layer, made into one service for every tool it applies to.
struct Step {
    tools: Tools,
    service: StepService,
}

/// How a step's service is handed a call.
enum StepService {
    /// Behind a lock, so that any service works, `Clone` or not.
    Locked(Stage<CallRequest>),
    /// A step of the registry's own, always ready: each call is handed to it with no lock
    /// for calls to wait on.
    Free(Box<dyn Fn(CallRequest) -> AnswerFuture + Send + Sync>),
}

/// Every layer a registry was given, in the order given (the first outermost).
#[derive(Default)]
pub(crate) struct Stages {
    stages: Vec<Step>,
}

impl fmt::Debug for Stages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.stages.iter().map(|stage| &stage.tools))
            .finish()
    }
}

impl Stages {
    /// Adds the stages of `inner`, in their order, after (inside) those added before.
    pub(crate) fn append(&mut self, inner: Stages) {
        self.stages.extend(inner.stages);
    }

    /// Adds `layer` for `tools`, after (inside) those added before.
    pub(crate) fn push<L>(&mut self, tools: Tools, layer: L)
    where
        L: tower::Layer<Next>,
        L::Service: Service<CallRequest, Response = ToolAnswer> + Send + 'static,
        <L::Service as Service<CallRequest>>::Error: Into<BoxError>,
        <L::Service as Service<CallRequest>>::Future: Send + 'static,
    {
        let stage = Stage::new(layer.layer(Next { _private: () }));
        self.stages.push(Step {
            tools,
            service: StepService::Locked(stage),
        });
    }

    /// Adds `step` for `tools`, after (inside) those added before: a step of the registry's
    /// own, always ready and holding nothing a call must wait for, so it needs no lock. It
    /// is given each call and the rest of its way, as a layer's service is.
    pub(crate) fn push_free<F>(&mut self, tools: Tools, step: F)
    where
        F: Fn(CallRequest, Next) -> AnswerFuture + Send + Sync + 'static,
    {
        let run = move |call| step(call, Next { _private: () });
        self.stages.push(Step {
            tools,
            service: StepService::Free(Box::new(run)),
        });
    }

    /// What the stages were given for, to check against the registry once it is built.
    pub(crate) fn selections(&self) -> impl Iterator<Item = &Tools> {
        self.stages.iter().map(|stage| &stage.tools)
    }

    /// Whether a call of `tool` goes through any layer.
    pub(crate) fn apply_to(&self, tool: &crate::catalog::Tool) -> bool {
        self.stages.iter().any(|stage| stage.tools.picks(tool))
    }
}

/// Where a call is on its way: the stages, and the first it has yet to consider.
#[derive(Clone)]
pub(super) struct Route {
    stages: Arc<Stages>,
    next: usize,
    /// The tool's time limit, which bounds its run.
    pub(super) limit: Option<Duration>,
}

/// A call that goes through layers, ready to start, and the arguments its caller sent.
pub(crate) struct Layered {
    call: CallRequest,
    sent: Arc<Value>,
}

impl Layered {
    /// The call of `tool` with `arguments` (already checked against its schema), on its
    /// way through `stages`, with what the registry decided about it when it arrived
    /// (`decided`), for its own layers.
    pub(crate) fn new(
        stages: &Arc<Stages>,
        tool: ToolRef,
        arguments: Value,
        context: &CallContext,
        limit: Option<Duration>,
        decided: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Self {
        let sent = Arc::new(arguments);
        let call = CallRequest {
            tool,
            arguments: Arc::clone(&sent),
            arguments_changed: false,
            context: context.clone(),
            decided,
            route: Route {
                stages: Arc::clone(stages),
                next: 0,
                limit,
            },
        };
        Layered { call, sent }
    }

    /// The arguments the caller sent.
    pub(crate) fn sent(&self) -> &Value {
        &self.sent
    }

    /// Passes the call through its layers to the tool; its outcome, and the arguments the
    /// caller sent (no longer shared once the call has ended, so not copied).
    pub(crate) async fn run(self) -> (Result<ToolAnswer, CallError>, Value) {
        let Layered { call, sent } = self;
        let outcome = pass(call).await;
        let sent = Arc::try_unwrap(sent).unwrap_or_else(|shared| Value::clone(&shared));
        (outcome, sent)
    }
}

/// What a layer wraps: the rest of the call's way (the layers after it, then the tool).
/// A layer given to the registry is a `tower::Layer` of this service.
///
/// Always ready; cheap to clone, as `tower`'s `Retry` needs.
#[derive(Clone)]
pub struct Next {
    _private: (),
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Next")
    }
}

impl Service<CallRequest> for Next {
    type Response = ToolAnswer;
    type Error = CallError;
    type Future = AnswerFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), CallError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: CallRequest) -> Self::Future {
        pass(call)
    }
}

/// Hands `call` to the next stage that applies to its tool, or runs the tool after the last.
fn pass(mut call: CallRequest) -> AnswerFuture {
    let found = call.route.stages.stages[call.route.next..]
        .iter()
        .position(|stage| stage.tools.picks(&call.tool));
    let Some(offset) = found else {
        return Box::pin(run_tool(call));
    };
    let index = call.route.next + offset;
    call.route.next = index + 1;
    let stages = Arc::clone(&call.route.stages);
    let stage = match &stages.stages[index].service {
        StepService::Free(run) => return run(call),
        StepService::Locked(stage) => stage,
    };
    match stage.hand_now(call) {
        Ok(answer) => answer,
        Err(call) => Box::pin(async move {
            match &stages.stages[index].service {
                StepService::Locked(stage) => stage.hand(call).await,
                StepService::Free(run) => run(call).await,
            }
        }),
    }
}

/// Runs the tool, past every layer: its arguments checked again if a layer changed them,
/// then read into its typed values, then run.
async fn run_tool(call: CallRequest) -> Result<ToolAnswer, CallError> {
    if call.arguments_changed {
        crate::call::check(&call.tool, &call.arguments)?;
    }
    match crate::call::begin(&call.tool, &call.arguments, &call.context) {
        crate::call::Started::Finished(outcome) => outcome,
        crate::call::Started::Pending(invocation) => {
            crate::call::complete(&call.tool, invocation, &call.context).await
        }
    }
}
