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
pub(crate) mod output_value;
pub(crate) mod param;
pub(crate) mod result;
pub(crate) mod runnable;
pub(crate) mod scope;
pub(crate) mod surface_output;
pub(crate) mod validate;

pub use arguments::ArgumentReader;
pub use invoke::Invocation;

use crate::catalog::Tool;
use content::{AnswerBlocks, Content};
use context::CallContext;
use error::{ArgumentProblem, CallError};
use invoke::RunFailure;
use output::Produced;
use output_value::OutputValue;
use runnable::{How, ToolRef};
use serde_json::{Map, Value};
use std::future::Future;
use std::time::Duration;

/// What a successful call gives: its output as JSON, and the content blocks when the tool
/// answered with content rather than data. A [layer](crate::layers) sees it, and may change
/// it or give another.
///
/// ```
/// use tool_runtime::layers::ToolAnswer;
///
/// let answer = ToolAnswer::new(serde_json::json!({"temperature": 18}));
/// assert_eq!(answer.value()["temperature"], 18);
/// assert!(answer.content().is_none());
/// ```
#[derive(Debug, Clone)]
pub struct ToolAnswer {
    /// Read through `value()`: for an answer of content blocks it is made from them then.
    pub(crate) value: OutputValue,
    pub(crate) content: Option<AnswerBlocks>,
    /// Whether it was given again from the cache of a read-only tool's answers.
    pub(crate) cached: bool,
}

impl ToolAnswer {
    /// An answer of data: `value` is the output, as a tool's return value would be.
    pub fn new(value: Value) -> Self {
        ToolAnswer {
            value: OutputValue::given(value),
            content: None,
            cached: false,
        }
    }

    /// An answer of content blocks (text, images, audio, resources), as a tool returning
    /// `Vec<Content>` gives.
    pub fn from_content(content: Vec<Content>) -> Self {
        ToolAnswer::of_blocks(AnswerBlocks::Own(content))
    }

    /// An answer of content blocks, their value made when first read.
    pub(crate) fn of_blocks(blocks: AnswerBlocks) -> Self {
        ToolAnswer {
            value: OutputValue::of_blocks(),
            content: Some(blocks),
            cached: false,
        }
    }

    /// The output as JSON: the tool's value; for an answer of content blocks, the
    /// structured content that came with them (another server's tool with an output
    /// schema), else the blocks as JSON, made the first time this is read.
    pub fn value(&self) -> &Value {
        self.value.get(self.content.as_ref())
    }

    /// The output, to change in place. For an answer of content blocks the blocks are what
    /// MCP clients are sent as content, so a change here reaches them only as structured
    /// content (for another server's tool with an output schema) and otherwise only those
    /// reading the value (REST, say): give a new answer ([`ToolAnswer::from_content`]) to
    /// change the blocks.
    pub fn value_mut(&mut self) -> &mut Value {
        self.value.get_mut(self.content.as_ref())
    }

    /// The length of the output as JSON, read without making it: the value a tool gave,
    /// else its blocks as they are written.
    pub(crate) fn output_len(&self) -> usize {
        match (self.value.as_given(), &self.content) {
            (Some(value), _) => crate::schema::json_len(value),
            (None, Some(blocks)) => blocks.json_len(),
            (None, None) => 0,
        }
    }

    /// The output as JSON, taken.
    pub(crate) fn into_value(self) -> Value {
        self.value.into_value(self.content.as_ref())
    }

    /// The content blocks, when the answer is made of them.
    pub fn content(&self) -> Option<&[Content]> {
        self.content.as_ref().map(AnswerBlocks::read)
    }

    /// Whether the answer was kept from an earlier call and given again
    /// (`#[tool(read_only, cache = "...")]`) rather than made by the tool now.
    pub fn is_cached(&self) -> bool {
        self.cached
    }
}

/// Two answers are equal when they say the same: the same output, the same blocks, and
/// both given again from the cache or both made now.
impl PartialEq for ToolAnswer {
    fn eq(&self, other: &Self) -> bool {
        self.content == other.content
            && self.cached == other.cached
            && self.value() == other.value()
    }
}

/// How a call stands once started.
pub(crate) enum Started {
    /// Finished without running: the arguments were refused.
    Finished(Result<ToolAnswer, CallError>),
    /// Work to await.
    Pending(Invocation),
}

/// Checks the arguments and starts the call; finishes it at once when it can.
pub(crate) fn start(tool: &ToolRef, input: &Value, context: &CallContext) -> Started {
    match check(tool, input) {
        Err(refusal) => Started::Finished(Err(refusal)),
        Ok(()) => begin(tool, input, context),
    }
}

/// Checks the arguments against the tool's schema (`null` stands for no arguments).
pub(crate) fn check(tool: &ToolRef, input: &Value) -> Result<(), CallError> {
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
    match problems.is_empty() {
        true => Ok(()),
        false => Err(invalid(tool, problems)),
    }
}

/// Reads arguments already checked into the tool's typed values and starts its work.
pub(crate) fn begin(tool: &ToolRef, input: &Value, context: &CallContext) -> Started {
    let empty = Value::Object(Map::new());
    let input = match input {
        Value::Object(_) => input,
        _ => &empty,
    };
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

/// Awaits a started call's work.
pub(crate) async fn complete(
    tool: &ToolRef,
    invocation: Invocation,
    context: &CallContext,
) -> Result<ToolAnswer, CallError> {
    let outcome = invoke::run(invocation, tool.runnable().pace()).await;
    needing_pages(tool, finish(tool, outcome), context.scope().map(|s| &**s))
}

/// Awaits `work`, a call of `tool`, for `limit` at most: past it, the work is dropped, the
/// call's [`Cancellation`](crate::Cancellation) fires (a sync tool that keeps running sees
/// it), and the call answers that it ran out of time.
pub(crate) async fn within(
    tool: &Tool,
    limit: Duration,
    context: &CallContext,
    work: impl Future<Output = Result<ToolAnswer, CallError>>,
) -> Result<ToolAnswer, CallError> {
    match tokio::time::timeout(limit, work).await {
        Ok(outcome) => outcome,
        Err(_) => {
            if let Some(scope) = context.scope() {
                scope.cancellation.cancel();
            }
            Err(CallError::TimedOut {
                tool: tool.name().to_owned(),
                after: limit,
            })
        }
    }
}

/// A tool that failed after saying the user must visit pages first
/// ([`CallContext::url_elicitation_required`]) failed for that reason, which the protocol
/// layer answers as such.
fn needing_pages(
    tool: &Tool,
    outcome: Result<ToolAnswer, CallError>,
    scope: Option<&scope::CallScope>,
) -> Result<ToolAnswer, CallError> {
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
fn finish(tool: &Tool, outcome: Result<Produced, RunFailure>) -> Result<ToolAnswer, CallError> {
    match outcome {
        Ok(Produced::Relayed {
            content,
            structured,
        }) => {
            let content = AnswerBlocks::sent_as_text(content.0);
            // Without structured content the blocks are the output, read as JSON only if
            // something asks (an MCP caller is sent the blocks as they came).
            Ok(ToolAnswer {
                value: structured.map_or_else(OutputValue::of_blocks, |structured| {
                    OutputValue::sent(structured.0)
                }),
                content: Some(content),
                cached: false,
            })
        }
        Ok(Produced::Content(content)) => Ok(ToolAnswer::from_content(content)),
        Ok(Produced::Json(value)) => Ok(ToolAnswer::new(value)),
        Err(RunFailure::Failed(error)) => {
            let (message, answer) = error.into_parts();
            Err(CallError::Failed {
                tool: tool.name().to_owned(),
                message,
                answer,
            })
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Answers of blocks, none read yet: a tool's own, and another server's as it sent them.
    fn unread_answers() -> Vec<ToolAnswer> {
        let sent = r#"[{"type":"text","text":"a dot","annotations":{"priority":1}}]"#;
        let raw = serde_json::value::RawValue::from_string(sent.to_owned()).unwrap();
        vec![
            ToolAnswer::from_content(vec![Content::text("a dot")]),
            ToolAnswer::of_blocks(AnswerBlocks::sent_as_text(raw)),
        ]
    }

    fn blocks_of(answer: &ToolAnswer) -> Value {
        serde_json::to_value(answer.content.as_ref().unwrap()).unwrap()
    }

    #[test]
    fn an_answer_of_blocks_is_read_as_json_only_when_asked() {
        for answer in unread_answers() {
            let blocks = blocks_of(&answer);
            assert!(format!("{:?}", answer.value).contains("not read"));
            assert_eq!(answer.value(), &blocks);
            assert!(!format!("{:?}", answer.value).contains("not read"));
        }
    }

    #[test]
    fn every_reader_of_an_unread_answer_gets_its_blocks_as_json() {
        let read = |answer: ToolAnswer| result::ToolResult::new("t", json!({}), None, Ok(answer));
        for at in 0..unread_answers().len() {
            // Each reader is given an answer nothing has read yet.
            let fresh = || unread_answers().swap_remove(at);
            let blocks = blocks_of(&fresh());
            assert_eq!(fresh().into_value(), blocks);
            assert_eq!(fresh().value_mut(), &blocks);
            assert_eq!(read(fresh()).output(), Some(&blocks));
            assert_eq!(
                serde_json::to_value(read(fresh())).unwrap(),
                json!({"name": "t", "input": {}, "output": blocks})
            );
            assert_eq!(read(fresh()).into_outcome().unwrap(), blocks);
            assert_eq!(read(fresh()).text_for_model().unwrap(), "a dot");
            // Read or not, it is the same answer.
            let made = fresh();
            made.value();
            assert_eq!(fresh(), made);
            assert_eq!(read(fresh()), read(made));
        }
    }

    #[test]
    fn an_answers_length_is_read_without_making_its_value() {
        let before = output_value::tests::made();
        for answer in unread_answers() {
            let written = serde_json::to_string(answer.content.as_ref().unwrap()).unwrap();
            assert_eq!(answer.output_len(), written.len());
        }
        assert_eq!(output_value::tests::made(), before);
        assert_eq!(
            ToolAnswer::new(json!({"a": 1})).output_len(),
            r#"{"a":1}"#.len()
        );
    }

    #[test]
    fn a_relayed_answer_with_structured_content_has_that_for_its_value() {
        let sent = r#"[{"type":"text","text":"3"}]"#.to_owned();
        let raw = serde_json::value::RawValue::from_string(sent).unwrap();
        let answer = ToolAnswer {
            value: OutputValue::sent(serde_json::value::to_raw_value(&json!({"sum": 3})).unwrap()),
            content: Some(AnswerBlocks::sent_as_text(raw)),
            cached: false,
        };
        assert_eq!(answer.value(), &json!({"sum": 3}));
        let result = result::ToolResult::new("t", json!({}), None, Ok(answer));
        assert_eq!(result.into_outcome().unwrap(), json!({"sum": 3}));
    }
}
