//! A layer around tool calls made of a function, for tests of what layers see and do.

use futures_util::future::BoxFuture;
use std::sync::Arc;
use std::task::{Context, Poll};
use tool_runtime::layers::{CallRequest, Next, ToolAnswer};
use tool_runtime::CallError;

/// A layer of any behaviour: a function of the call and the rest of its way.
#[derive(Clone)]
pub struct Around<S, F> {
    inner: S,
    run: F,
}

/// The function an [`Around`] runs.
pub type Run = Arc<
    dyn Fn(CallRequest, Next) -> BoxFuture<'static, Result<ToolAnswer, CallError>> + Send + Sync,
>;

impl tower::Service<CallRequest> for Around<Next, Run> {
    type Response = ToolAnswer;
    type Error = CallError;
    type Future = BoxFuture<'static, Result<ToolAnswer, CallError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CallError>> {
        tower::Service::poll_ready(&mut self.inner, cx)
    }

    fn call(&mut self, call: CallRequest) -> Self::Future {
        (self.run)(call, self.inner.clone())
    }
}

/// A layer that runs `run` around each call it sees.
pub fn around<F>(run: F) -> impl tower::Layer<Next, Service = Around<Next, Run>> + Clone
where
    F: Fn(CallRequest, Next) -> BoxFuture<'static, Result<ToolAnswer, CallError>>
        + Send
        + Sync
        + 'static,
{
    let run: Run = Arc::new(run);
    tower::layer::layer_fn(move |inner| Around {
        inner,
        run: Arc::clone(&run),
    })
}
