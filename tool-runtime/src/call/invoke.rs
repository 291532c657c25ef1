//! Running a tool's work: an async tool on the caller's executor, a sync tool where
//! [`blocking`](super::blocking) says, and a panic in either caught.

use super::blocking::{self, BlockingWork, Pace};
use super::output::{Produced, ToolError};
use futures_util::FutureExt;
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

/// What a tool returns when its work finishes.
pub(crate) type ToolFuture = Pin<Box<dyn Future<Output = Result<Produced, ToolError>> + Send>>;

/// The work of one call, ready to run.
#[doc(hidden)]
pub enum Invocation {
    /// An `async fn` tool.
    Async(ToolFuture),
    /// A plain `fn` tool; it may block, so it never runs on the executor.
    Blocking(BlockingWork),
}

/// How a run ended when it produced no value.
pub(crate) enum RunFailure {
    Failed(ToolError),
    /// The panic message, for the log only.
    Panicked(String),
}

/// Runs a call's work to its end; `pace` is the tool's, for a sync tool.
pub(crate) async fn run(invocation: Invocation, pace: &Arc<Pace>) -> Result<Produced, RunFailure> {
    let outcome = match invocation {
        Invocation::Async(future) => AssertUnwindSafe(future).catch_unwind().await,
        Invocation::Blocking(work) => blocking::run(work, pace).await,
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
