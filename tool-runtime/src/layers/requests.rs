//! Tower layers around every MCP request a server is sent (listing, reading a resource,
//! getting a prompt, a call, a task's status...), given to the server with
//! [`ServerOptions::request_layer`](crate::mcp::ServerOptions::request_layer). A layer sees
//! the request's method, its target (the tool, prompt or resource it names), its id and who
//! sent it; it may let it through, refuse it with words the client reads, or time it. The
//! server answers the request as it always does once the innermost layer lets it through.

use super::stage::{Passing, Stage};
use super::BoxError;
use crate::call::caller::Caller;
use crate::call::error::CallError;
use crate::call::scope::Protocol;
use futures_util::future::BoxFuture;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

/// What answers a request once every layer let it through: the server's own handling.
pub(crate) type Handling = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

/// One MCP request on its way through the request layers.
///
/// It is not `Clone`: a request is answered once (`tower`'s `Retry` is for tool calls,
/// [`CallRequest`](super::CallRequest)).
pub struct McpRequest {
    method: Arc<str>,
    id: Arc<str>,
    target: Option<String>,
    caller: Caller,
    protocol: Protocol,
    handling: Option<Handling>,
    next: usize,
    stages: Arc<RequestStages>,
}

impl McpRequest {
    /// The method (`tools/list`, `resources/read`, `prompts/get`, `tools/call`...).
    pub fn method(&self) -> &str {
        &self.method
    }

    /// What the request names, when it names one thing: the tool called, the prompt got,
    /// the resource read or subscribed to.
    pub fn target(&self) -> Option<&str> {
        self.target.as_deref()
    }

    /// The request's id, as the client wrote it (`7`, `"abc"`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Who sent it: its transport, session, authenticated subject and scopes.
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// How it came: MCP in the handshake era, or at 2026-07-28.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }
}

impl fmt::Debug for McpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpRequest")
            .field("method", &self.method)
            .field("target", &self.target)
            .field("id", &self.id)
            .field("caller", &self.caller)
            .finish_non_exhaustive()
    }
}

/// What a request layer wraps: the layers after it, then the server's own handling.
#[derive(Clone)]
pub struct NextRequest {
    _private: (),
}

impl fmt::Debug for NextRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NextRequest")
    }
}

impl tower::Service<McpRequest> for NextRequest {
    type Response = ();
    type Error = CallError;
    type Future = BoxFuture<'static, Result<(), CallError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), CallError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: McpRequest) -> Self::Future {
        Box::pin(pass(request))
    }
}

impl Passing for McpRequest {
    type Answer = ();
    type Name = String;

    fn name(&self) -> String {
        self.target
            .clone()
            .unwrap_or_else(|| self.method.to_string())
    }

    fn failed(name: &String, error: BoxError) -> CallError {
        super::into_call_error_named(name, error)
    }
}

/// One request layer, made into one service for every request.
pub(crate) struct RequestStage(Stage<McpRequest>);

impl RequestStage {
    pub(crate) fn new<L>(layer: L) -> Self
    where
        L: tower::Layer<NextRequest>,
        L::Service: tower::Service<McpRequest, Response = ()> + Send + 'static,
        <L::Service as tower::Service<McpRequest>>::Error: Into<BoxError>,
        <L::Service as tower::Service<McpRequest>>::Future: Send + 'static,
    {
        RequestStage(Stage::new(layer.layer(NextRequest { _private: () })))
    }
}

impl fmt::Debug for RequestStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RequestStage")
    }
}

/// A server's request layers, the first given outermost.
pub(crate) struct RequestStages {
    stages: Vec<Arc<RequestStage>>,
}

impl fmt::Debug for RequestStages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RequestStages({})", self.stages.len())
    }
}

/// What a request is, for its layers.
pub(crate) struct RequestFacts {
    pub(crate) method: Arc<str>,
    pub(crate) id: Arc<str>,
    pub(crate) target: Option<String>,
    pub(crate) caller: Caller,
    pub(crate) protocol: Protocol,
}

impl RequestStages {
    pub(crate) fn new(stages: Vec<Arc<RequestStage>>) -> Option<Arc<Self>> {
        (!stages.is_empty()).then(|| Arc::new(RequestStages { stages }))
    }

    /// Passes a request through the layers to `handling`; a refusal (an error of a layer,
    /// before the request was let through) is what `refuse` answers with: its words, and
    /// when to send the request again if the refusal says (a limit, load shed).
    pub(crate) async fn run(
        self: Arc<Self>,
        facts: RequestFacts,
        handling: Handling,
        refuse: impl FnOnce(String, Option<std::time::Duration>),
    ) {
        let let_through = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&let_through);
        let handling: Handling = Box::new(move || {
            seen.store(true, Ordering::Release);
            handling()
        });
        let method = Arc::clone(&facts.method);
        let request = McpRequest {
            method: facts.method,
            id: facts.id,
            target: facts.target,
            caller: facts.caller,
            protocol: facts.protocol,
            handling: Some(handling),
            next: 0,
            stages: self,
        };
        let Err(error) = pass(request).await else {
            return;
        };
        if let_through.load(Ordering::Acquire) {
            // Answered already: a layer's error after the answer is only logged.
            tracing::warn!(%method, %error, "a request layer failed after the answer");
            return;
        }
        match error {
            CallError::Refused {
                reason,
                retry_after,
                ..
            } => match retry_after {
                Some(wait) => refuse(
                    format!(
                        "{method} was refused: {reason}; send it again in {}",
                        crate::catalog::time::show_duration(wait)
                    ),
                    Some(wait),
                ),
                None => refuse(format!("{method} was refused: {reason}"), None),
            },
            other => refuse(other.to_string(), None),
        }
    }
}

/// Hands `request` to its next layer, or to the server's handling after the last.
async fn pass(mut request: McpRequest) -> Result<(), CallError> {
    let stages = Arc::clone(&request.stages);
    let Some(stage) = stages.stages.get(request.next) else {
        if let Some(handling) = request.handling.take() {
            handling().await;
        }
        return Ok(());
    };
    request.next += 1;
    match stage.0.hand_now(request) {
        Ok(answer) => answer.await,
        Err(request) => stage.0.hand(request).await,
    }
}
