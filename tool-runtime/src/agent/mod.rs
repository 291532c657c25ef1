//! Tools in your own agent loop: a model's tool calls in, in its provider's dialect, the
//! results its next turn needs out, and a loop that stops in time.
//!
//! - [`Dialect`] reads a model's turn (OpenAI Chat Completions, OpenAI Responses, Anthropic
//!   Messages, Gemini `generateContent`): the calls it made, in order, with their ids, and
//!   the turn itself as history keeps it. It writes the results: one per call, in the
//!   model's order, whatever failed, in the shape that provider accepts (text where it
//!   takes text, images where it takes them, an object where it needs one).
//! - [`Tools`] runs the calls through the registry's one dispatcher (the arguments checked
//!   against the schema, time limits, cancellation, panics and output limits as for any
//!   call), concurrently up to a bound; a tool marked `#[tool(exclusive)]` runs alone.
//!   Arguments that are almost JSON (fenced, with text around them, cut off) are repaired
//!   before they are checked ([`repair`]), and the result says so.
//! - [`AgentLoop`] asks a [`Model`] and answers its calls until it is done or a limit is
//!   reached (turns, tokens, tool calls, retries of invalid calls), or a call waits for a
//!   user's approval (`#[tool(approval)]`); its [`Outcome`] says which, with the whole
//!   history and the usage.
//! - With the feature `openai`, `openai::ChatClient` is a [`Model`] over any server of
//!   the OpenAI Chat Completions API (OpenAI, vLLM, llama.cpp, Ollama, LiteLLM), streaming
//!   included. With the feature `async-openai`, a turn, the results and the tools convert
//!   from and to the request and response types of the `async-openai` crate.
//!
//! ```
//! use serde_json::json;
//! use tool_runtime::agent::{Dialect, Tools};
//! use tool_runtime::{tool, Registry};
//!
//! /// Add two integers.
//! #[tool]
//! fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let registry = Registry::new().unwrap();
//! let tools = Tools::new(&registry);
//! // What an OpenAI Chat Completions model answered.
//! let message = json!({"role": "assistant", "content": null, "tool_calls": [
//!     {"id": "call_1", "type": "function",
//!         "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}},
//!     {"id": "call_2", "type": "function", "function": {"name": "ad", "arguments": "{}"}},
//! ]});
//! let turn = Dialect::OpenAiChat.read_turn(&message).unwrap();
//! let answer = tools.answer(Dialect::OpenAiChat, &turn).await;
//! assert_eq!(
//!     answer.messages[0],
//!     json!({"role": "tool", "tool_call_id": "call_1", "content": "5"})
//! );
//! assert_eq!(answer.messages[1]["tool_call_id"], "call_2");
//! assert!(answer.messages[1]["content"].as_str().unwrap().contains("did you mean 'add'"));
//! # });
//! ```

mod answer;
#[cfg(feature = "async-openai")]
mod async_openai;
mod dialect;
mod limits;
mod looping;
#[cfg(feature = "openai")]
pub mod openai;
pub mod repair;
mod reply;
#[cfg(feature = "openai")]
mod sse;
mod traced;

pub use answer::{Answer, AnsweredCall, Tools};
pub use dialect::{Dialect, ReadError};
pub use limits::{Limits, Usage};
pub use looping::{AgentLoop, Approval, Model, ModelError, ModelRequest, Outcome, Status};

use serde_json::{Map, Value};

/// One tool call a model made.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// Its id, which its result echoes (Gemini's calls may have none).
    pub id: Option<String>,
    /// The tool it names.
    pub name: String,
    /// Its arguments, as the model wrote them.
    pub arguments: ModelArguments,
}

impl ToolCall {
    /// A call of `name` with `arguments`, whose result echoes `id`.
    pub fn new(id: Option<String>, name: impl Into<String>, arguments: ModelArguments) -> ToolCall {
        ToolCall {
            id,
            name: name.into(),
            arguments,
        }
    }
}

/// The arguments of a call as the model wrote them: an object (Anthropic, Gemini), or text
/// that should be a JSON object (OpenAI).
#[derive(Debug, Clone, PartialEq)]
pub enum ModelArguments {
    /// Already an object.
    Object(Map<String, Value>),
    /// Text to read as JSON.
    Text(String),
}

/// A model's turn: the turn as the history keeps it (verbatim: a provider may need its own
/// fields back, such as Gemini's thought signatures), the calls it made in order, what it
/// said, and what it cost.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ModelTurn {
    /// The turn as the next request's history carries it (OpenAI Responses: an array of
    /// its output items, which the history takes one by one).
    pub message: Value,
    /// The tool calls, in the model's order.
    pub calls: Vec<ToolCall>,
    /// Its text (joined), when it said any.
    pub text: Option<String>,
    /// What it cost, when the response said.
    pub usage: Option<Usage>,
}
