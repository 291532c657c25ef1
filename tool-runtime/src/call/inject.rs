//! Parameters the runtime fills in: the [`Injected`] trait and its implementations for
//! shared state, the call context and the call's scope (progress, logs, cancellation).

use super::context::{CallContext, State, StateRequirement};
use super::scope::{Cancellation, Logger, Progress};
use std::any::TypeId;

/// A parameter type the runtime fills in, instead of the caller.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a parameter the runtime can fill in",
    label = "named like a runtime-provided parameter",
    note = "parameters spelled `State<...>`, `CallContext`, `Progress`, `Logger` or \
            `Cancellation` are filled in by the runtime and must be those types of tool_runtime",
    note = "to take an argument of your own type with this name, import the type under \
            another name"
)]
pub trait Injected: Sized + Send + 'static {
    /// The registered state this parameter needs, if any.
    fn requirement() -> Option<StateRequirement>;
    /// Builds the value for one call; `Err` names what is missing.
    fn inject(context: &CallContext) -> Result<Self, String>;
}

impl<T: Send + Sync + 'static> Injected for State<T> {
    fn requirement() -> Option<StateRequirement> {
        Some(StateRequirement {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
        })
    }

    fn inject(context: &CallContext) -> Result<Self, String> {
        context.state::<T>().ok_or_else(|| {
            format!(
                "no state of type {} was registered; add it with Registry::builder().state(...)",
                std::any::type_name::<T>()
            )
        })
    }
}

impl Injected for CallContext {
    fn requirement() -> Option<StateRequirement> {
        None
    }
    fn inject(context: &CallContext) -> Result<Self, String> {
        Ok(context.clone())
    }
}

impl Injected for Progress {
    fn requirement() -> Option<StateRequirement> {
        None
    }
    fn inject(context: &CallContext) -> Result<Self, String> {
        Ok(Progress::for_scope(context.scope().cloned()))
    }
}

impl Injected for Logger {
    fn requirement() -> Option<StateRequirement> {
        None
    }
    fn inject(context: &CallContext) -> Result<Self, String> {
        Ok(Logger::for_scope(context.scope().cloned()))
    }
}

impl Injected for Cancellation {
    fn requirement() -> Option<StateRequirement> {
        None
    }
    fn inject(context: &CallContext) -> Result<Self, String> {
        Ok(context
            .scope()
            .map(|scope| scope.cancellation.clone())
            .unwrap_or_default())
    }
}
