//! Sampling: what a tool asks the client's model ([`Sampling`], built up message by
//! message, with tools the model may call), and what comes back ([`Sampled`]).

use crate::call::surface_output::Role;
use serde_json::{json, Map, Value};

/// A request for one message from the client's model.
///
/// ```
/// use tool_runtime::ask::{Sampling, ToolChoice};
/// use serde_json::json;
///
/// let asked = Sampling::new(300)
///     .system_prompt("You answer in one word.")
///     .user("What is the capital of France?")
///     .temperature(0.2)
///     .model_hint("claude")
///     .tool(
///         "lookup",
///         "Looks a city up",
///         json!({"type": "object", "properties": {"city": {"type": "string"}}}),
///     )
///     .tool_choice(ToolChoice::Auto);
/// # let _ = asked;
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Sampling {
    messages: Vec<Value>,
    max_tokens: u32,
    system_prompt: Option<String>,
    temperature: Option<f64>,
    stop_sequences: Vec<String>,
    hints: Vec<String>,
    priorities: Option<(f64, f64, f64)>,
    tools: Vec<Value>,
    tool_choice: Option<ToolChoice>,
}

/// Whether the model must, may or must not call one of the tools offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// The model must call a tool.
    Required,
    /// The model must not call a tool.
    None,
}

impl Sampling {
    /// A request for at most `max_tokens` tokens, with no messages yet.
    pub fn new(max_tokens: u32) -> Sampling {
        Sampling {
            messages: Vec::new(),
            max_tokens,
            system_prompt: None,
            temperature: None,
            stop_sequences: Vec::new(),
            hints: Vec::new(),
            priorities: None,
            tools: Vec::new(),
            tool_choice: None,
        }
    }

    /// Adds a user message of text.
    pub fn user(self, text: impl Into<String>) -> Sampling {
        self.message(Role::User, json!({"type": "text", "text": text.into()}))
    }

    /// Adds an assistant message of text (an earlier answer of the model).
    pub fn assistant(self, text: impl Into<String>) -> Sampling {
        self.message(
            Role::Assistant,
            json!({"type": "text", "text": text.into()}),
        )
    }

    /// Adds a message of any content: one block (text, image, audio, `tool_use`,
    /// `tool_result`) or a list of them, as MCP spells them.
    pub fn message(mut self, role: Role, content: Value) -> Sampling {
        // `Role` serializes as MCP spells it (`user`, `assistant`).
        self.messages
            .push(json!({"role": role, "content": content}));
        self
    }

    /// Adds the model's calls of `sampled` and the user's results for them, to ask again
    /// after running the tools the model called: `results` pairs each [`ToolUse`]'s id with
    /// its result text and whether it failed.
    pub fn tool_results(
        self,
        sampled: &Sampled,
        results: impl IntoIterator<Item = (String, String, bool)>,
    ) -> Sampling {
        let asked = self.message(Role::Assistant, Value::Array(sampled.content.clone()));
        let blocks: Vec<Value> = results
            .into_iter()
            .map(|(id, text, is_error)| {
                json!({"type": "tool_result", "toolUseId": id,
                       "content": [{"type": "text", "text": text}], "isError": is_error})
            })
            .collect();
        asked.message(Role::User, Value::Array(blocks))
    }

    /// The system prompt (the client may change or ignore it).
    pub fn system_prompt(mut self, text: impl Into<String>) -> Sampling {
        self.system_prompt = Some(text.into());
        self
    }

    /// The sampling temperature.
    pub fn temperature(mut self, temperature: f64) -> Sampling {
        self.temperature = Some(temperature);
        self
    }

    /// Stops the model at any of `sequences`.
    pub fn stop_sequences(
        mut self,
        sequences: impl IntoIterator<Item = impl Into<String>>,
    ) -> Sampling {
        self.stop_sequences = sequences.into_iter().map(Into::into).collect();
        self
    }

    /// Names a model the client should prefer (a hint, matched loosely; add several in
    /// order of preference).
    pub fn model_hint(mut self, name: impl Into<String>) -> Sampling {
        self.hints.push(name.into());
        self
    }

    /// How much cost, speed and intelligence matter, each from 0 to 1.
    pub fn priorities(mut self, cost: f64, speed: f64, intelligence: f64) -> Sampling {
        self.priorities = Some((cost, speed, intelligence));
        self
    }

    /// Offers the model a tool it may call (needs a client that declared sampling with
    /// tools): its name, description and input schema.
    pub fn tool(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Sampling {
        self.tools.push(json!({
            "name": name.into(),
            "description": description.into(),
            "inputSchema": input_schema,
        }));
        self
    }

    /// Whether the model must, may or must not call a tool.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Sampling {
        self.tool_choice = Some(choice);
        self
    }

    pub(super) fn uses_tools(&self) -> bool {
        !self.tools.is_empty() || self.tool_choice.is_some()
    }

    pub(super) fn into_params(self) -> Value {
        let mut params = Map::new();
        params.insert("messages".to_owned(), Value::Array(self.messages));
        params.insert("maxTokens".to_owned(), self.max_tokens.into());
        if let Some(system) = self.system_prompt {
            params.insert("systemPrompt".to_owned(), system.into());
        }
        if let Some(temperature) = self.temperature {
            params.insert("temperature".to_owned(), temperature.into());
        }
        if !self.stop_sequences.is_empty() {
            params.insert("stopSequences".to_owned(), json!(self.stop_sequences));
        }
        if !self.hints.is_empty() || self.priorities.is_some() {
            let mut preferences = Map::new();
            if !self.hints.is_empty() {
                let hints: Vec<Value> = self
                    .hints
                    .iter()
                    .map(|name| json!({"name": name}))
                    .collect();
                preferences.insert("hints".to_owned(), Value::Array(hints));
            }
            if let Some((cost, speed, intelligence)) = self.priorities {
                preferences.insert("costPriority".to_owned(), cost.into());
                preferences.insert("speedPriority".to_owned(), speed.into());
                preferences.insert("intelligencePriority".to_owned(), intelligence.into());
            }
            params.insert("modelPreferences".to_owned(), Value::Object(preferences));
        }
        if !self.tools.is_empty() {
            params.insert("tools".to_owned(), Value::Array(self.tools));
        }
        if let Some(choice) = self.tool_choice {
            let mode = match choice {
                ToolChoice::Auto => "auto",
                ToolChoice::Required => "required",
                ToolChoice::None => "none",
            };
            params.insert("toolChoice".to_owned(), json!({"mode": mode}));
        }
        Value::Object(params)
    }
}

/// The model's message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Sampled {
    /// Who speaks (the assistant).
    pub role: Role,
    /// Its content blocks, as MCP spells them (text, image, audio, `tool_use`).
    pub content: Vec<Value>,
    /// The model that answered.
    pub model: String,
    /// Why it stopped (`endTurn`, `stopSequence`, `maxTokens`, `toolUse`...), if said.
    pub stop_reason: Option<String>,
}

/// A call of a tool by the model.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolUse {
    /// The id its result must name.
    pub id: String,
    /// The tool called.
    pub name: String,
    /// Its arguments.
    pub input: Value,
}

impl Sampled {
    /// The text of the message (its text blocks, joined).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("")
    }

    /// The tools the model called.
    pub fn tool_uses(&self) -> Vec<ToolUse> {
        self.content
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
            .filter_map(|block| {
                Some(ToolUse {
                    id: block.get("id")?.as_str()?.to_owned(),
                    name: block.get("name")?.as_str()?.to_owned(),
                    input: block.get("input").cloned().unwrap_or(Value::Null),
                })
            })
            .collect()
    }
}

pub(super) fn decode_sampled(answer: Value) -> Result<Sampled, String> {
    let invalid = |what: &str| {
        format!(
            "a sampling result needs {what}; got {}",
            crate::schema::describe::compact(&answer)
        )
    };
    let role = match answer.get("role").and_then(Value::as_str) {
        Some("assistant") => Role::Assistant,
        Some("user") => Role::User,
        _ => return Err(invalid("\"role\": \"assistant\"")),
    };
    let content = match answer.get("content") {
        Some(Value::Array(blocks)) if blocks.iter().all(Value::is_object) => blocks.clone(),
        Some(block @ Value::Object(_)) => vec![block.clone()],
        _ => return Err(invalid("\"content\", a content block or a list of them")),
    };
    let Some(model) = answer.get("model").and_then(Value::as_str) else {
        return Err(invalid("\"model\", a string"));
    };
    Ok(Sampled {
        role,
        content,
        model: model.to_owned(),
        stop_reason: answer
            .get("stopReason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_spelled_as_mcp_says() {
        let asked = Sampling::new(100)
            .user("Hi")
            .model_hint("m")
            .priorities(0.1, 0.2, 0.3);
        assert!(!asked.uses_tools());
        assert_eq!(
            asked.into_params(),
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
                   "maxTokens": 100,
                   "modelPreferences": {"hints": [{"name": "m"}], "costPriority": 0.1,
                                        "speedPriority": 0.2, "intelligencePriority": 0.3}})
        );
        let with_tools = Sampling::new(5)
            .tool("t", "d", json!({"type": "object"}))
            .tool_choice(ToolChoice::Required);
        assert!(with_tools.uses_tools());
        let params = with_tools.into_params();
        assert_eq!(params["toolChoice"], json!({"mode": "required"}));
        assert_eq!(params["tools"][0]["name"], "t");
    }

    #[test]
    fn answers_are_read_with_their_tool_calls() {
        let sampled = decode_sampled(json!({"role": "assistant", "model": "m",
            "stopReason": "toolUse",
            "content": [{"type": "text", "text": "Let me look."},
                        {"type": "tool_use", "id": "u1", "name": "lookup",
                            "input": {"city": "Paris"}}]}))
        .unwrap();
        assert_eq!(sampled.text(), "Let me look.");
        assert_eq!(sampled.tool_uses()[0].input, json!({"city": "Paris"}));
        let single = decode_sampled(json!({"role": "assistant", "model": "m",
            "content": {"type": "text", "text": "Paris"}}))
        .unwrap();
        assert_eq!(single.text(), "Paris");
        assert!(decode_sampled(json!({"role": "assistant", "content": []}))
            .unwrap_err()
            .contains("\"model\""));
    }
}
