//! Running tools made at run time from closures: the handler that reads a call's
//! arguments into the closure's own type and returns its work.

use super::arguments::decode;
use super::context::CallContext;
use super::invoke::ToolFuture;
use super::output::{Produced, ToolError, ToolOutput};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

/// Runs a run-time tool: reads its arguments and returns its work.
pub(crate) trait DynamicHandler: Send + Sync {
    /// `Err` says why the (already schema-checked) arguments could not be read. `context`
    /// is the call's (its progress, logs, cancellation, and how it asks its client).
    fn start(&self, arguments: &Value, context: &CallContext) -> Result<ToolFuture, String>;
}

struct ClosureHandler<F> {
    start: F,
}

impl<F> DynamicHandler for ClosureHandler<F>
where
    F: Fn(&Value) -> Result<ToolFuture, String> + Send + Sync,
{
    fn start(&self, arguments: &Value, _context: &CallContext) -> Result<ToolFuture, String> {
        (self.start)(arguments)
    }
}

/// The handler of a closure taking its arguments as `A`.
pub(crate) fn closure_handler<A, F, Fut, T, E>(handler: F) -> Arc<dyn DynamicHandler>
where
    A: DeserializeOwned + Send + 'static,
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, E>> + Send + 'static,
    T: ToolOutput + 'static,
    E: Display,
{
    closure_handler_with(handler, |value: T| value.to_json().map(Produced::Json))
}

/// The handler of a closure taking its arguments as `A`, whose value `convert` turns into
/// what dispatch carries (a tool's output, a prompt's messages, a resource's contents).
pub(crate) fn closure_handler_with<A, F, Fut, T, E>(
    handler: F,
    convert: fn(T) -> Result<Produced, ToolError>,
) -> Arc<dyn DynamicHandler>
where
    A: DeserializeOwned + Send + 'static,
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, E>> + Send + 'static,
    T: 'static,
    E: Display,
{
    let start = move |arguments: &Value| -> Result<ToolFuture, String> {
        let arguments: A = decode(arguments).map_err(|error| error.to_string())?;
        let future = handler(arguments);
        Ok(Box::pin(async move {
            match future.await {
                Ok(value) => convert(value),
                Err(error) => Err(ToolError::new(format!("{error:#}"))),
            }
        }) as ToolFuture)
    };
    Arc::new(ClosureHandler { start })
}

#[cfg(feature = "client")]
/// The handler of a run-time tool that takes its arguments as they came, with its call's
/// context: for tools whose schema is not a Rust type's (another server's, say). The
/// arguments are lent: a handler keeps what it needs of them (another server's tool writes
/// them as the text it sends, and copies nothing).
pub(crate) fn raw_handler<F>(start: F) -> Arc<dyn DynamicHandler>
where
    F: Fn(&Value, CallContext) -> ToolFuture + Send + Sync + 'static,
{
    struct Raw<F>(F);
    impl<F> DynamicHandler for Raw<F>
    where
        F: Fn(&Value, CallContext) -> ToolFuture + Send + Sync,
    {
        fn start(&self, arguments: &Value, context: &CallContext) -> Result<ToolFuture, String> {
            Ok((self.0)(arguments, context.clone()))
        }
    }
    Arc::new(Raw(start))
}
