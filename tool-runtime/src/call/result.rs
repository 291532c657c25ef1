//! The result of a call: `{name, input, output?, error?}`.

use super::content::{AnswerBlocks, Content};
use super::error::CallError;
use super::output_value::OutputValue;
use super::runnable::ToolRef;
use serde::ser::{Serialize, SerializeStruct, Serializer};
use serde_json::Value;
use std::borrow::Cow;

/// What one call produced: the tool's output, or why there is none.
///
/// Serializes as `{"name", "input", "output"}` or `{"name", "input", "error"}`.
///
/// ```
/// use tool_runtime::{tool, Registry};
///
/// /// Add two integers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::new().unwrap();
/// let result = registry.call("add", serde_json::json!({"a": 2, "b": 3})).await;
/// // The output is the tool's value, whatever its type.
/// assert_eq!(result.output(), Some(&serde_json::json!(5)));
/// assert_eq!(
///     serde_json::to_value(&result).unwrap(),
///     serde_json::json!({"name": "add", "input": {"a": 2, "b": 3}, "output": 5})
/// );
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct ToolResult {
    name: Cow<'static, str>,
    input: Value,
    /// The output: for an answer of content blocks, made from them when first read.
    outcome: Result<OutputValue, CallError>,
    content: Option<AnswerBlocks>,
    /// Whether the output was kept from an earlier call and given again.
    cached: bool,
    /// The tool that ran, when there was one: what is sent back depends on its output
    /// schema, and nothing downstream should look it up again.
    tool: Option<ToolRef>,
}

/// Two results are equal when they say the same: the same call and the same outcome.
impl PartialEq for ToolResult {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.input == other.input
            && self.content == other.content
            && match (&self.outcome, &other.outcome) {
                (Ok(_), Ok(_)) => self.output() == other.output(),
                (Err(mine), Err(theirs)) => mine == theirs,
                _ => false,
            }
    }
}

impl ToolResult {
    pub(crate) fn new(
        name: impl Into<Cow<'static, str>>,
        input: Value,
        tool: Option<ToolRef>,
        outcome: Result<super::ToolAnswer, CallError>,
    ) -> Self {
        let (outcome, content, cached) = match outcome {
            Ok(answer) => (Ok(answer.value), answer.content, answer.cached),
            Err(error) => (Err(error), None, false),
        };
        ToolResult {
            name: name.into(),
            input,
            outcome,
            content,
            cached,
            tool,
        }
    }

    /// The content blocks, when the tool answered with content (text, images, audio,
    /// resources) rather than data; `output()` then holds the same blocks as JSON (or, for
    /// another server's tool with an output schema, the structured content it sent).
    pub fn content(&self) -> Option<&[Content]> {
        self.content.as_ref().map(AnswerBlocks::read)
    }

    /// The tool asked for.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The arguments as the caller sent them.
    pub fn input(&self) -> &Value {
        &self.input
    }

    /// The output, when the call succeeded: the tool's value as it serializes (a number,
    /// a list, an object...), or its content blocks as JSON (made when first asked for), or
    /// the structured content another server's tool sent with its blocks.
    pub fn output(&self) -> Option<&Value> {
        let output = self.outcome.as_ref().ok()?;
        Some(output.get(self.content.as_ref()))
    }

    /// The output as a model reads it in a text block, with its media type: a string as it
    /// is, anything else as compact JSON. `None` for a failure or content blocks.
    pub(crate) fn shown_text(&self) -> Option<(std::borrow::Cow<'_, str>, &'static str)> {
        Some(match self.shown_value()? {
            Value::String(text) => (std::borrow::Cow::Borrowed(text.as_str()), "text/plain"),
            // `to_string` starts with room for a short value; `Display` grows from none.
            other => (
                std::borrow::Cow::Owned(serde_json::to_string(other).unwrap_or_default()),
                "application/json",
            ),
        })
    }

    /// The output as a model reads it: the value. `None` for a failure or content blocks.
    pub(crate) fn shown_value(&self) -> Option<&Value> {
        if self.content.is_some() {
            return None;
        }
        self.output()
    }

    /// The text of a successful call as a model reads it: [`shown_text`](Self::shown_text),
    /// or the text of its text blocks.
    pub(crate) fn text_for_model(&self) -> Option<std::borrow::Cow<'_, str>> {
        let output = self.outcome.as_ref().ok()?;
        Some(text_for_model(self.content(), || {
            output.get(self.content.as_ref())
        }))
    }

    /// Why the call failed, when it did.
    pub fn error(&self) -> Option<&CallError> {
        self.outcome.as_ref().err()
    }

    /// Whether the output was kept from an earlier call with the same arguments and given
    /// again, rather than made by the tool now (`#[tool(read_only, cache = "...")]`).
    pub fn is_cached(&self) -> bool {
        self.cached
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.outcome.is_err()
    }

    /// The outcome, taken apart.
    pub fn into_outcome(self) -> Result<Value, CallError> {
        let content = self.content;
        self.outcome
            .map(|output| output.into_value(content.as_ref()))
    }

    /// The outcome, the content blocks and the tool that ran, taken apart.
    pub(crate) fn into_parts(
        self,
    ) -> (
        Result<OutputValue, CallError>,
        Option<AnswerBlocks>,
        Option<ToolRef>,
    ) {
        (self.outcome, self.content, self.tool)
    }
}

impl Serialize for ToolResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("ToolResult", 3)?;
        out.serialize_field("name", &self.name)?;
        out.serialize_field("input", &self.input)?;
        match &self.outcome {
            Ok(output) => out.serialize_field("output", output.get(self.content.as_ref()))?,
            Err(error) => out.serialize_field("error", &error.to_string())?,
        }
        out.end()
    }
}

/// The text of an answer as a model reads it: the text of its text blocks when it is made
/// of content blocks, else its value (a string as it is, anything else as compact JSON).
/// `value` is asked for only when there are no blocks.
pub(crate) fn text_for_model<'a>(
    content: Option<&'a [Content]>,
    value: impl FnOnce() -> &'a Value,
) -> std::borrow::Cow<'a, str> {
    if let Some(content) = content {
        let texts: Vec<&str> = content
            .iter()
            .filter_map(|block| match block {
                Content::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        return std::borrow::Cow::Owned(texts.join("\n"));
    }
    match value() {
        Value::String(text) => std::borrow::Cow::Borrowed(text.as_str()),
        other => std::borrow::Cow::Owned(serde_json::to_string(other).unwrap_or_default()),
    }
}
