//! The fixture's answers to what a server asks: every form is accepted, each field filled
//! with its default (or, without one, a value of its type), as a user who confirms what
//! is proposed would.

use serde_json::{json, Map, Value};
use tool_runtime::client::{Answer, ClientHandler, Elicitation};

/// Accepts every form with its defaults.
pub(crate) struct Defaults;

impl ClientHandler for Defaults {
    fn supports(&self, capability: &str) -> bool {
        capability == "elicitation"
    }

    fn elicit<'a>(&'a self, _message: &'a str, schema: &'a Value) -> Answer<'a, Elicitation> {
        let mut content = Map::new();
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            let value = match property.get("default") {
                Some(default) => default.clone(),
                None => match property["type"].as_str() {
                    Some("boolean") => json!(true),
                    Some("integer") => json!(0),
                    Some("number") => json!(0.0),
                    _ => match property["enum"].get(0) {
                        Some(first) => first.clone(),
                        None => json!(""),
                    },
                },
            };
            content.insert(name.clone(), value);
        }
        Box::pin(async move { Ok(Elicitation::Accept(content)) })
    }
}
