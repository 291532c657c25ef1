//! Running a tool's work: async tools on the caller's executor, sync tools on tokio's
//! blocking pool so they never stall it, and a panic in either caught and logged.

use super::output::{Produced, ToolError};
use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

/// What a tool returns when its work finishes.
pub(crate) type ToolFuture = Pin<Box<dyn Future<Output = Result<Produced, ToolError>> + Send>>;

/// The work of one call, ready to run.
#[doc(hidden)]
pub enum Invocation {
    /// An `async fn` tool.
    Async(ToolFuture),
    /// A plain `fn` tool; it may block, so it runs on the blocking pool.
    Blocking(Box<dyn FnOnce() -> Result<Produced, ToolError> + Send>),
}

/// How a run ended when it produced no value.
pub(crate) enum RunFailure {
    Failed(ToolError),
    /// The panic message, for the log only.
    Panicked(String),
}

pub(crate) async fn run(invocation: Invocation) -> Result<Produced, RunFailure> {
    let outcome = match invocation {
        Invocation::Async(future) => CatchUnwind(future).await,
        Invocation::Blocking(work) => match tokio::runtime::Handle::try_current() {
            Ok(_) => match tokio::task::spawn_blocking(work).await {
                Ok(result) => Ok(result),
                Err(join_error) if join_error.is_panic() => Err(join_error.into_panic()),
                // Cancelled only when the runtime shuts down under us.
                Err(_) => Ok(Err(ToolError::new("the server is shutting down"))),
            },
            // Outside a runtime (a plain test, a CLI): run in place.
            Err(_) => catch_unwind(AssertUnwindSafe(work)),
        },
    };
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(RunFailure::Failed(error)),
        Err(payload) => Err(RunFailure::Panicked(panic_message(payload.as_ref()))),
    }
}

pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-text payload".to_owned()
    }
}

/// Polls a boxed future, turning a panic into an error. (futures-util has the same
/// combinator; for one small wrapper over a boxed future we do not take the dependency.)
struct CatchUnwind(ToolFuture);

impl Future for CatchUnwind {
    type Output = Result<Result<Produced, ToolError>, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match catch_unwind(AssertUnwindSafe(|| self.0.as_mut().poll(cx))) {
            Ok(Poll::Ready(result)) => Poll::Ready(Ok(result)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}
