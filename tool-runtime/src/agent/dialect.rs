//! The four providers' dialects: reading a model's turn (its tool calls, its text, its
//! usage) and writing what the next request needs (one result per call, in the shape the
//! provider accepts).

use super::answer::AnsweredCall;
use super::reply::{Media, Reply};
use super::{ModelArguments, ModelTurn, ToolCall, Usage};
use crate::catalog::Tool;
use serde_json::{json, Map, Value};
use std::fmt;

/// A provider's API, as far as tool calls go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// OpenAI Chat Completions (and every server compatible with it: vLLM, llama.cpp,
    /// Ollama, LiteLLM): `tool_calls` in, one `role: "tool"` message per call out.
    OpenAiChat,
    /// OpenAI Responses: `function_call` items in, `function_call_output` items out.
    OpenAiResponses,
    /// Anthropic Messages: `tool_use` blocks in, one `user` message of `tool_result`
    /// blocks out.
    Anthropic,
    /// Gemini `generateContent`: `functionCall` parts in, one content of
    /// `functionResponse` parts out.
    Gemini,
}

/// Why a model's turn could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    dialect: Dialect,
    reason: String,
}

impl ReadError {
    pub(crate) fn new(dialect: Dialect, reason: impl Into<String>) -> ReadError {
        ReadError {
            dialect,
            reason: reason.into(),
        }
    }

    /// The dialect the turn was read as.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// What is wrong, naming the field.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a model turn of {}: {}",
            self.dialect.title(),
            self.reason
        )
    }
}

impl std::error::Error for ReadError {}

impl std::str::FromStr for Dialect {
    type Err = String;

    fn from_str(name: &str) -> Result<Dialect, String> {
        // `openai` names Chat Completions here as it does for `list --format`.
        let name = if name == "openai" {
            "openai-chat"
        } else {
            name
        };
        Dialect::ALL
            .into_iter()
            .find(|dialect| dialect.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
                format!("unknown dialect '{name}'; use one of {}", names.join(", "))
            })
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 4] = [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::Gemini,
    ];

    /// Its name on the command line: `openai-chat`, `openai-responses`, `anthropic`,
    /// `gemini`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::OpenAiChat => "openai-chat",
            Dialect::OpenAiResponses => "openai-responses",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
        }
    }

    /// The API's name, for messages.
    fn title(self) -> &'static str {
        match self {
            Dialect::OpenAiChat => "OpenAI Chat Completions",
            Dialect::OpenAiResponses => "OpenAI Responses",
            Dialect::Anthropic => "Anthropic Messages",
            Dialect::Gemini => "Gemini generateContent",
        }
    }

    /// Reads a model's turn: its whole response, or the message (Responses: the output
    /// items) it holds. The turn's `message` is what the history keeps; the calls come in
    /// the model's order.
    ///
    /// ```
    /// use tool_runtime::agent::{ModelArguments, Dialect};
    ///
    /// let response = serde_json::json!({
    ///     "role": "assistant",
    ///     "content": [
    ///         {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1, "b": 2}}
    ///     ],
    ///     "usage": {"input_tokens": 10, "output_tokens": 5}
    /// });
    /// let turn = Dialect::Anthropic.read_turn(&response).unwrap();
    /// assert_eq!(turn.calls[0].id.as_deref(), Some("toolu_1"));
    /// assert!(matches!(&turn.calls[0].arguments, ModelArguments::Object(a) if a["b"] == 2));
    /// assert_eq!(turn.usage.unwrap().total_tokens, 15);
    /// ```
    pub fn read_turn(self, value: &Value) -> Result<ModelTurn, ReadError> {
        match self {
            Dialect::OpenAiChat => read_chat(value),
            Dialect::OpenAiResponses => read_responses(value),
            Dialect::Anthropic => read_anthropic(value),
            Dialect::Gemini => read_gemini(value),
        }
        .map_err(|reason| ReadError::new(self, reason))
    }

    /// What the next request's history gets from answered calls: OpenAI Chat one
    /// `tool` message per call, Responses one `function_call_output` item per call,
    /// Anthropic one `user` message of `tool_result` blocks, Gemini one `user` content of
    /// `functionResponse` parts. One result per call, in the order given; nothing for no
    /// calls.
    pub fn results(self, answered: &[AnsweredCall]) -> Vec<Value> {
        if answered.is_empty() {
            // No calls, no results: an empty message is one no provider takes.
            return Vec::new();
        }
        match self {
            Dialect::OpenAiChat => answered.iter().map(chat_result).collect(),
            Dialect::OpenAiResponses => answered.iter().map(responses_result).collect(),
            Dialect::Anthropic => vec![json!({
                "role": "user",
                "content": answered.iter().map(anthropic_result).collect::<Vec<_>>(),
            })],
            Dialect::Gemini => vec![json!({
                "role": "user",
                "parts": answered.iter().map(gemini_result).collect::<Vec<_>>(),
            })],
        }
    }

    /// The items a model's turn adds to the history: its message (Responses: each of its
    /// output items).
    pub fn turn_items(self, turn: &ModelTurn) -> Vec<Value> {
        match (self, &turn.message) {
            (Dialect::OpenAiResponses, Value::Array(items)) => items.clone(),
            (_, message) => vec![message.clone()],
        }
    }

    /// A user's message in this dialect, to start a conversation with.
    ///
    /// ```
    /// use tool_runtime::agent::Dialect;
    ///
    /// assert_eq!(
    ///     Dialect::Gemini.user_message("Hello"),
    ///     serde_json::json!({"role": "user", "parts": [{"text": "Hello"}]})
    /// );
    /// ```
    pub fn user_message(self, text: &str) -> Value {
        match self {
            Dialect::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
            _ => json!({"role": "user", "content": text}),
        }
    }

    /// The request's `tools` in this dialect, as the catalog exports them.
    pub fn tools(self, tools: &[&Tool]) -> Value {
        match self {
            Dialect::OpenAiChat => crate::export::openai_chat_tools(tools, false).value,
            Dialect::OpenAiResponses => crate::export::openai_responses_tools(tools, false).value,
            Dialect::Anthropic => crate::export::anthropic_tools(tools),
            Dialect::Gemini => json!([crate::export::gemini_declarations(tools)]),
        }
    }
}

/// `value[key]` as a string, when it is one.
fn text_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// `value[key]` as a count of tokens, when it is one.
fn count_at(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

/// `value[key]` as a required string, or what is wrong with it.
fn required_text(value: &Value, key: &str, at: &str) -> Result<String, String> {
    match value.get(key) {
        Some(Value::String(text)) => Ok(text.clone()),
        None | Some(Value::Null) => Err(format!("`{at}.{key}` is missing")),
        Some(other) => Err(format!(
            "`{at}.{key}` should be a string, not {}",
            kind_of(other)
        )),
    }
}

/// What `value` holds under `key` as an array (null or missing: none).
fn array_at<'a>(value: &'a Value, key: &str, at: &str) -> Result<&'a [Value], String> {
    match value.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(format!(
            "`{at}.{key}` should be an array, not {}",
            kind_of(other)
        )),
    }
}

fn joined(texts: Vec<&str>) -> Option<String> {
    (!texts.is_empty()).then(|| texts.join(""))
}

fn read_chat(value: &Value) -> Result<ModelTurn, String> {
    let (message, usage) = chat_message(value)?;
    let Value::Object(fields) = message else {
        return Err("the message should be an object".to_owned());
    };
    if let Some(role) = fields.get("role").filter(|role| !role.is_null()) {
        if role != "assistant" {
            return Err(format!("the message's role is {role}, not \"assistant\""));
        }
    }
    let mut calls = Vec::new();
    let mut history_calls = Vec::new();
    for (index, call) in array_at(message, "tool_calls", "message")?
        .iter()
        .enumerate()
    {
        let (read, kept) = chat_call(index, call)?;
        calls.push(read);
        history_calls.push(kept);
    }
    let text = match fields.get("content") {
        Some(Value::String(text)) if !text.is_empty() => Some(text.clone()),
        Some(Value::Array(parts)) => joined(
            parts
                .iter()
                .filter_map(|part| text_at(part, "text"))
                .collect(),
        ),
        _ => None,
    };
    Ok(ModelTurn {
        message: chat_history_message(fields, history_calls),
        calls,
        text,
        usage,
    })
}

/// The assistant message of a Chat Completions response (its first choice), or the
/// message itself, and the tokens the response says it used.
fn chat_message(value: &Value) -> Result<(&Value, Option<Usage>), String> {
    let Some(choices) = value.get("choices") else {
        return Ok((value, None));
    };
    let first = choices
        .as_array()
        .and_then(|choices| choices.first())
        .ok_or("`choices` is empty or not an array")?;
    let message = first
        .get("message")
        .ok_or("`choices[0].message` is missing")?;
    let usage = value.get("usage").and_then(|usage| {
        let input = count_at(usage, "prompt_tokens")?;
        let output = count_at(usage, "completion_tokens")?;
        let total = count_at(usage, "total_tokens").unwrap_or(input + output);
        Some(Usage::new(input, output, total))
    });
    Ok((message, usage))
}

/// The tool call at `index` of an assistant message, and the call as the history keeps it
/// (with its id, made here when the server left it out).
fn chat_call(index: usize, call: &Value) -> Result<(ToolCall, Value), String> {
    let at = format!("tool_calls[{index}]");
    // A compatible server may leave out the id; the history then carries one made here, so
    // that the result can name its call.
    let id = text_at(call, "id").map_or_else(|| format!("call_{index}"), str::to_owned);
    let (name, arguments) = match text_at(call, "type").unwrap_or("function") {
        "custom" => {
            let custom = call
                .get("custom")
                .ok_or(format!("`{at}.custom` is missing"))?;
            let name = required_text(custom, "name", &format!("{at}.custom"))?;
            let input = text_at(custom, "input").unwrap_or_default().to_owned();
            (name, ModelArguments::Text(input))
        }
        "function" => {
            let function = call
                .get("function")
                .ok_or(format!("`{at}.function` is missing"))?;
            let name = required_text(function, "name", &format!("{at}.function"))?;
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => ModelArguments::Text(text.clone()),
                // Some compatible servers send an object rather than its text.
                Some(Value::Object(object)) => ModelArguments::Object(object.clone()),
                None | Some(Value::Null) => ModelArguments::Text(String::new()),
                Some(other) => ModelArguments::Text(other.to_string()),
            };
            (name, arguments)
        }
        other => return Err(format!("`{at}.type` is \"{other}\", not \"function\"")),
    };
    let mut kept = call.clone();
    kept["id"] = Value::String(id.clone());
    Ok((ToolCall::new(Some(id), name, arguments), kept))
}

/// The assistant message as the history keeps it: as a request takes it, since a
/// response's extra fields (`annotations`, `audio: null`) are not request fields.
fn chat_history_message(fields: &Map<String, Value>, calls: Vec<Value>) -> Value {
    let mut kept = Map::new();
    kept.insert("role".to_owned(), "assistant".into());
    kept.insert(
        "content".to_owned(),
        fields.get("content").cloned().unwrap_or(Value::Null),
    );
    for key in ["name", "refusal"] {
        if let Some(value) = fields.get(key).filter(|value| !value.is_null()) {
            kept.insert(key.to_owned(), value.clone());
        }
    }
    if !calls.is_empty() {
        kept.insert("tool_calls".to_owned(), Value::Array(calls));
    }
    Value::Object(kept)
}

fn read_responses(value: &Value) -> Result<ModelTurn, String> {
    let (items, usage): (Vec<Value>, _) = match value {
        Value::Array(items) => (items.clone(), None),
        Value::Object(fields) if fields.contains_key("output") => {
            let items = array_at(value, "output", "response")?.to_vec();
            let usage = value.get("usage").and_then(|usage| {
                let input = count_at(usage, "input_tokens")?;
                let output = count_at(usage, "output_tokens")?;
                let total = count_at(usage, "total_tokens").unwrap_or(input + output);
                Some(Usage::new(input, output, total))
            });
            (items, usage)
        }
        Value::Object(fields) if fields.contains_key("type") => (vec![value.clone()], None),
        _ => {
            return Err(
                "expected a response (with `output`), its output items, or one item".to_owned(),
            )
        }
    };
    let mut calls = Vec::new();
    let mut texts = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let at = format!("output[{index}]");
        match text_at(item, "type") {
            Some("function_call") => {
                let id = required_text(item, "call_id", &at)?;
                let name = required_text(item, "name", &at)?;
                let arguments = text_at(item, "arguments").unwrap_or_default().to_owned();
                calls.push(ToolCall::new(
                    Some(id),
                    name,
                    ModelArguments::Text(arguments),
                ));
            }
            Some("message") => {
                for part in array_at(item, "content", &at)? {
                    if text_at(part, "type") == Some("output_text") {
                        texts.extend(text_at(part, "text"));
                    }
                }
            }
            Some(_) => {}
            None => return Err(format!("`{at}.type` is missing")),
        }
    }
    Ok(ModelTurn {
        message: Value::Array(items.clone()),
        calls,
        text: joined(texts),
        usage,
    })
}

fn read_anthropic(value: &Value) -> Result<ModelTurn, String> {
    if let Some(role) = value.get("role") {
        if role != "assistant" {
            return Err(format!("the message's role is {role}, not \"assistant\""));
        }
    }
    let content = match value.get("content") {
        Some(Value::String(text)) => vec![json!({"type": "text", "text": text})],
        Some(Value::Array(blocks)) => blocks.clone(),
        Some(other) => {
            return Err(format!(
                "`content` should be an array of blocks, not {}",
                kind_of(other)
            ))
        }
        None => return Err("`content` is missing".to_owned()),
    };
    let mut calls = Vec::new();
    let mut texts = Vec::new();
    for (index, block) in content.iter().enumerate() {
        let at = format!("content[{index}]");
        match text_at(block, "type") {
            Some("tool_use") => {
                let id = required_text(block, "id", &at)?;
                let name = required_text(block, "name", &at)?;
                let arguments = match block.get("input") {
                    Some(Value::Object(input)) => ModelArguments::Object(input.clone()),
                    None | Some(Value::Null) => ModelArguments::Object(Map::new()),
                    Some(other) => ModelArguments::Text(other.to_string()),
                };
                calls.push(ToolCall::new(Some(id), name, arguments));
            }
            Some("text") => texts.extend(text_at(block, "text")),
            Some(_) => {}
            None => return Err(format!("`{at}.type` is missing")),
        }
    }
    let usage = value.get("usage").and_then(|usage| {
        let input = count_at(usage, "input_tokens")?
            + count_at(usage, "cache_creation_input_tokens").unwrap_or(0)
            + count_at(usage, "cache_read_input_tokens").unwrap_or(0);
        let output = count_at(usage, "output_tokens")?;
        Some(Usage::new(input, output, input + output))
    });
    Ok(ModelTurn {
        message: json!({"role": "assistant", "content": content}),
        calls,
        text: joined(texts),
        usage,
    })
}

fn read_gemini(value: &Value) -> Result<ModelTurn, String> {
    let content = match value.get("candidates") {
        Some(candidates) => {
            let first = candidates
                .as_array()
                .and_then(|candidates| candidates.first())
                .ok_or("`candidates` is empty or not an array")?;
            match first.get("content") {
                Some(content) => content,
                None => {
                    let reason = text_at(first, "finishReason").unwrap_or("none given");
                    return Err(format!(
                        "`candidates[0]` has no content (finish reason: {reason})"
                    ));
                }
            }
        }
        None => value,
    };
    if let Some(role) = content.get("role") {
        if role != "model" {
            return Err(format!("the content's role is {role}, not \"model\""));
        }
    }
    let parts = match content.get("parts") {
        Some(Value::Array(parts)) => parts,
        _ => return Err("`parts` is missing or not an array".to_owned()),
    };
    let mut calls = Vec::new();
    let mut texts = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        let at = format!("parts[{index}].functionCall");
        if let Some(call) = part
            .get("functionCall")
            .or_else(|| part.get("function_call"))
        {
            let name = required_text(call, "name", &at)?;
            let arguments = match call.get("args") {
                Some(Value::Object(args)) => ModelArguments::Object(args.clone()),
                None | Some(Value::Null) => ModelArguments::Object(Map::new()),
                Some(other) => ModelArguments::Text(other.to_string()),
            };
            let id = text_at(call, "id").map(str::to_owned);
            calls.push(ToolCall::new(id, name, arguments));
        } else if part.get("thought") != Some(&Value::Bool(true)) {
            texts.extend(text_at(part, "text"));
        }
    }
    let usage = value
        .get("usageMetadata")
        .or_else(|| value.get("usage_metadata"))
        .and_then(|usage| {
            let count = |camel: &str, snake: &str| {
                count_at(usage, camel).or_else(|| count_at(usage, snake))
            };
            let input = count("promptTokenCount", "prompt_token_count")?
                + count("toolUsePromptTokenCount", "tool_use_prompt_token_count").unwrap_or(0);
            let output = count("candidatesTokenCount", "candidates_token_count").unwrap_or(0)
                + count("thoughtsTokenCount", "thoughts_token_count").unwrap_or(0);
            let total = count("totalTokenCount", "total_token_count").unwrap_or(input + output);
            Some(Usage::new(input, output, total))
        });
    // The history keeps the model's content as it came: Gemini wants its thought
    // signatures back untouched.
    let mut message = content.clone();
    if message.get("role").is_none() {
        message["role"] = "model".into();
    }
    Ok(ModelTurn {
        message,
        calls,
        text: joined(texts),
        usage,
    })
}

/// The id a result echoes (a call without one has it made from its position).
fn call_id(answered: &AnsweredCall) -> String {
    answered.call.id.clone().unwrap_or_default()
}

/// What a text-only result says: the error marked as one, the note and any media left out.
fn plain_text(reply: &Reply) -> String {
    let mut text = if reply.is_error {
        format!("Error: {}", reply.text)
    } else {
        reply.text.clone()
    };
    if let Some(note) = &reply.note {
        text.push_str(&format!("\n\n[{note}]"));
    }
    if let Some(left_out) = reply.media_left_out() {
        text.push_str(&format!("\n\n{left_out}"));
    }
    text
}

fn is_image(media: &Media) -> bool {
    media.mime_type.starts_with("image/")
}

fn chat_result(answered: &AnsweredCall) -> Value {
    json!({
        "role": "tool",
        "tool_call_id": call_id(answered),
        "content": plain_text(&answered.reply),
    })
}

fn responses_result(answered: &AnsweredCall) -> Value {
    let reply = &answered.reply;
    let images: Vec<&Media> = reply.media.iter().filter(|m| is_image(m)).collect();
    let output = if images.is_empty() {
        Value::String(plain_text(reply))
    } else {
        let others = Reply {
            media: reply
                .media
                .iter()
                .filter(|m| !is_image(m))
                .cloned()
                .collect(),
            ..reply.clone()
        };
        let mut parts = vec![json!({"type": "input_text", "text": plain_text(&others)})];
        parts.extend(images.iter().map(|image| {
            json!({
                "type": "input_image",
                "image_url": format!("data:{};base64,{}", image.mime_type, image.data),
            })
        }));
        Value::Array(parts)
    };
    json!({
        "type": "function_call_output",
        "call_id": call_id(answered),
        "output": output,
    })
}

/// The image types Anthropic's image blocks take.
const ANTHROPIC_IMAGES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

fn anthropic_result(answered: &AnsweredCall) -> Value {
    let reply = &answered.reply;
    let (images, others): (Vec<Media>, Vec<Media>) = reply
        .media
        .iter()
        .cloned()
        .partition(|media| ANTHROPIC_IMAGES.contains(&media.mime_type.as_str()));
    let described = Reply {
        media: others,
        is_error: false,
        ..reply.clone()
    };
    let text = plain_text(&described);
    let content = if images.is_empty() {
        Value::String(text)
    } else {
        let mut blocks = Vec::new();
        if !text.is_empty() {
            blocks.push(json!({"type": "text", "text": text}));
        }
        blocks.extend(images.into_iter().map(|image| {
            json!({
                "type": "image",
                "source": {"type": "base64", "media_type": image.mime_type, "data": image.data},
            })
        }));
        Value::Array(blocks)
    };
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": call_id(answered),
        "content": content,
    });
    if reply.is_error {
        block["is_error"] = Value::Bool(true);
    }
    block
}

fn gemini_result(answered: &AnsweredCall) -> Value {
    let reply = &answered.reply;
    let mut response = Map::new();
    if reply.is_error {
        response.insert("error".to_owned(), Value::String(reply.text.clone()));
    } else {
        let output = reply
            .value
            .clone()
            .unwrap_or_else(|| Value::String(reply.text.clone()));
        response.insert("output".to_owned(), output);
    }
    if let Some(note) = &reply.note {
        response.insert("note".to_owned(), Value::String(note.clone()));
    }
    let mut function_response = Map::new();
    if let Some(id) = &answered.call.id {
        function_response.insert("id".to_owned(), Value::String(id.clone()));
    }
    function_response.insert("name".to_owned(), Value::String(answered.call.name.clone()));
    function_response.insert("response".to_owned(), Value::Object(response));
    if !reply.media.is_empty() {
        let parts: Vec<Value> = reply
            .media
            .iter()
            .map(|media| json!({"inlineData": {"mimeType": media.mime_type, "data": media.data}}))
            .collect();
        function_response.insert("parts".to_owned(), Value::Array(parts));
    }
    json!({"functionResponse": function_response})
}

/// What kind of JSON value came, in words.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
