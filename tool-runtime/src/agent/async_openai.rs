//! Conversions from and to the types of `async-openai`, for a service that already talks to
//! its model with that crate: its response in, the tools and the results' messages out, in
//! its own request types.
//!
//! ```
//! use async_openai::types::chat::CreateChatCompletionResponse;
//! use tool_runtime::agent::{ModelTurn, Tools};
//! use tool_runtime::{tool, Registry};
//!
//! /// Add two integers.
//! #[tool]
//! fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let registry = Registry::new().unwrap();
//! let tools = Tools::new(&registry);
//! // What async-openai's client returned.
//! let response: CreateChatCompletionResponse = serde_json::from_value(serde_json::json!({
//!     "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
//!     "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
//!         "tool_calls": [{"id": "c1", "type": "function",
//!             "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}}]}}]
//! })).unwrap();
//! let turn = ModelTurn::from_async_openai(&response).unwrap();
//! let answer = tools.answer(tool_runtime::agent::Dialect::OpenAiChat, &turn).await;
//! // The next request's messages and tools, as async-openai's request types.
//! let mut messages = vec![turn.async_openai_message().unwrap()];
//! messages.extend(answer.async_openai_messages().unwrap());
//! let declared = tools.async_openai_tools().unwrap();
//! assert_eq!((messages.len(), declared.len()), (2, 1));
//! # });
//! ```

use super::{Answer, Dialect, ModelTurn, ReadError, Tools};
use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionTools, CreateChatCompletionResponse,
};

impl ModelTurn {
    /// Reads a Chat Completions response of `async-openai`.
    pub fn from_async_openai(
        response: &CreateChatCompletionResponse,
    ) -> Result<ModelTurn, ReadError> {
        let value = serde_json::to_value(response).map_err(|error| {
            ReadError::new(
                Dialect::OpenAiChat,
                format!("the response does not serialize: {error}"),
            )
        })?;
        Dialect::OpenAiChat.read_turn(&value)
    }

    /// The turn as the next request's assistant message, for a turn read in the OpenAI
    /// Chat dialect.
    pub fn async_openai_message(&self) -> Result<ChatCompletionRequestMessage, serde_json::Error> {
        serde_json::from_value(self.message.clone())
    }
}

impl Answer {
    /// The results as `tool` messages of `async-openai`, one per call, in order.
    pub fn async_openai_messages(
        &self,
    ) -> Result<Vec<ChatCompletionRequestMessage>, serde_json::Error> {
        Dialect::OpenAiChat
            .results(&self.calls)
            .into_iter()
            .map(serde_json::from_value)
            .collect()
    }
}

impl Tools<'_> {
    /// The tools as a Chat Completions request's `tools` of `async-openai`.
    pub fn async_openai_tools(&self) -> Result<Vec<ChatCompletionTools>, serde_json::Error> {
        serde_json::from_value(self.declarations(Dialect::OpenAiChat))
    }
}
