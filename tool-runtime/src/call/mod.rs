//! Calling a tool: check the arguments against its schema, read them into typed values, run
//! the tool, and turn what it returns (or how it failed) into a result.

pub(crate) mod arguments;
pub(crate) mod ask;
pub(crate) mod blocking;
pub(crate) mod caller;
pub(crate) mod complete;
pub(crate) mod content;
pub(crate) mod context;
pub(crate) mod dynamic;
pub(crate) mod error;
pub(crate) mod ids;
pub(crate) mod inject;
pub(crate) mod invoke;
pub(crate) mod output;
pub(crate) mod param;
pub(crate) mod result;
pub(crate) mod runnable;
pub(crate) mod scope;
pub(crate) mod surface_output;
pub(crate) mod validate;

pub use arguments::ArgumentReader;
pub use invoke::Invocation;

use crate::catalog::Tool;
use content::Content;
use context::CallContext;
use error::{ArgumentProblem, CallError};
use invoke::RunFailure;
use output::Produced;
use runnable::{How, ToolRef};
use serde_json::{Map, Value};
use std::time::Duration;

/// What a successful call gives: its output as JSON, and the content blocks when the tool
/// answered with content rather than data.
pub(crate) struct Answer {
    pub(crate) value: Value,
    pub(crate) content: Option<Vec<Content>>,
}

/// How a call stands once started.
pub(crate) enum Started {
    /// Finished without running: the arguments were refused.
    Finished(Result<Answer, CallError>),
    /// Work to await.
    Pending(Invocation),
}

/// Checks the arguments and starts the call; finishes it at once when it can.
pub(crate) fn start(tool: &ToolRef, input: &Value, context: &CallContext) -> Started {
    let empty = Value::Object(Map::new());
    let input = match input {
        Value::Object(_) => input,
        Value::Null => &empty,
        other => {
            return Started::Finished(Err(invalid(
                tool,
                vec![ArgumentProblem::new(
                    "",
                    format!(
                        "the arguments must be a JSON object of named parameters; got {}",
                        crate::schema::describe::compact(other)
                    ),
                )],
            )))
        }
    };
    let problems = validate::problems(tool, input);
    if !problems.is_empty() {
        return Started::Finished(Err(invalid(tool, problems)));
    }

    let invocation = match &tool.runnable().how {
        How::Macro { invoke, .. } => {
            let empty_map = Map::new();
            let values = input.as_object().unwrap_or(&empty_map);
            let mut arguments = ArgumentReader::new(tool, values, context);
            match invoke(&mut arguments) {
                Some(invocation) => invocation,
                None => {
                    if let Some(reason) = arguments.unavailable {
                        tracing::error!(tool = %tool.name(), %reason, "a tool cannot run");
                        return Started::Finished(Err(CallError::Unavailable {
                            tool: tool.name().to_owned(),
                        }));
                    }
                    return Started::Finished(Err(invalid(tool, arguments.problems)));
                }
            }
        }
        How::Dynamic(handler) => match handler.start(input, context) {
            Ok(future) => Invocation::Async(future),
            Err(reason) => {
                return Started::Finished(Err(invalid(
                    tool,
                    vec![ArgumentProblem::new("", reason)],
                )));
            }
        },
    };
    Started::Pending(invocation)
}

/// Awaits a started call's work. A call running past `limit` is stopped and cancelled.
pub(crate) async fn complete(
    tool: &ToolRef,
    invocation: Invocation,
    context: &CallContext,
    limit: Option<Duration>,
) -> Result<Answer, CallError> {
    let outcome = match limit {
        Some(limit) => {
            let run = invoke::run(invocation, tool.runnable().pace());
            match tokio::time::timeout(limit, run).await.ok() {
                Some(outcome) => outcome,
                None => {
                    // The future is dropped here; a sync tool sees its Cancellation fire.
                    if let Some(scope) = context.scope() {
                        scope.cancellation.cancel();
                    }
                    return Err(CallError::TimedOut {
                        tool: tool.name().to_owned(),
                        after: limit,
                    });
                }
            }
        }
        None => invoke::run(invocation, tool.runnable().pace()).await,
    };
    needing_pages(tool, finish(tool, outcome), context.scope().map(|s| &**s))
}

/// A tool that failed after saying the user must visit pages first
/// ([`CallContext::url_elicitation_required`]) failed for that reason, which the protocol
/// layer answers as such.
fn needing_pages(
    tool: &Tool,
    outcome: Result<Answer, CallError>,
    scope: Option<&scope::CallScope>,
) -> Result<Answer, CallError> {
    let pages = match (&outcome, scope) {
        (Err(CallError::Failed { .. }), Some(scope)) => scope.take_required_pages(),
        _ => return outcome,
    };
    if pages.is_empty() {
        return outcome;
    }
    Err(CallError::UrlElicitationRequired {
        tool: tool.name().to_owned(),
        pages,
    })
}

/// Turns what the tool did into the call's answer.
fn finish(tool: &Tool, outcome: Result<Produced, RunFailure>) -> Result<Answer, CallError> {
    match outcome {
        Ok(Produced::Relayed {
            content,
            structured,
        }) => Ok(Answer {
            value: structured
                .unwrap_or_else(|| serde_json::to_value(&content).unwrap_or(Value::Null)),
            content: Some(content),
        }),
        Ok(Produced::Content(content)) => Ok(Answer {
            value: serde_json::to_value(&content).unwrap_or(Value::Null),
            content: Some(content),
        }),
        Ok(Produced::Json(value)) => Ok(Answer {
            value,
            content: None,
        }),
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
