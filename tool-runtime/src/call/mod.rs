//! Calling a tool: check the arguments against its schema, read them into typed values, run
//! the tool, and turn what it returns (or how it failed) into a result.

pub(crate) mod arguments;
pub(crate) mod context;
pub(crate) mod dynamic;
pub(crate) mod error;
pub(crate) mod invoke;
pub(crate) mod output;
pub(crate) mod result;
pub(crate) mod scope;
pub(crate) mod validate;

pub use arguments::Arguments;
pub use invoke::Invocation;

use crate::catalog::{Handler, Tool};
use context::CallContext;
use error::{ArgumentProblem, CallError};
use invoke::RunFailure;
use serde_json::{Map, Value};

/// Calls `tool` with `input` (a JSON object, or `null` for no arguments).
pub(crate) async fn call_tool(
    tool: &Tool,
    input: &Value,
    context: &CallContext,
) -> Result<Value, CallError> {
    let empty = Value::Object(Map::new());
    let input = match input {
        Value::Object(_) => input,
        Value::Null => &empty,
        other => {
            return Err(invalid(
                tool,
                vec![ArgumentProblem::new(
                    "",
                    format!(
                        "the arguments must be a JSON object of named parameters; got {}",
                        crate::schema::describe::compact(other)
                    ),
                )],
            ))
        }
    };
    let problems = validate::problems(tool, input);
    if !problems.is_empty() {
        return Err(invalid(tool, problems));
    }

    let invocation = match &tool.handler {
        Handler::Static(registration) => {
            let empty_map = Map::new();
            let values = input.as_object().unwrap_or(&empty_map);
            let mut arguments = Arguments::new(tool, registration.params, values, context);
            match (registration.invoke)(&mut arguments) {
                Some(invocation) => invocation,
                None => {
                    if let Some(reason) = arguments.unavailable {
                        tracing::error!(tool = %tool.name(), %reason, "a tool cannot run");
                        return Err(CallError::Unavailable {
                            tool: tool.name().to_owned(),
                        });
                    }
                    return Err(invalid(tool, arguments.problems));
                }
            }
        }
        Handler::Dynamic(handler) => match handler.start(input) {
            Ok(future) => Invocation::Async(future),
            Err(reason) => {
                return Err(invalid(tool, vec![ArgumentProblem::new("", reason)]));
            }
        },
    };

    match invoke::run(invocation).await {
        Ok(value) if tool.wraps_output() => {
            let mut wrapped = Map::new();
            wrapped.insert("result".to_owned(), value);
            Ok(Value::Object(wrapped))
        }
        Ok(value) => Ok(value),
        Err(RunFailure::Failed(error)) => Err(CallError::Failed {
            tool: tool.name().to_owned(),
            message: error.message().to_owned(),
        }),
        Err(RunFailure::Panicked(message)) => {
            tracing::error!(tool = %tool.name(), panic = %message, "a tool panicked");
            Err(CallError::Panicked {
                tool: tool.name().to_owned(),
            })
        }
    }
}

fn invalid(tool: &Tool, problems: Vec<ArgumentProblem>) -> CallError {
    CallError::InvalidArguments {
        tool: tool.name().to_owned(),
        problems,
    }
}
