//! A request's params as the client holds them until they are written: a value, or a
//! tool call whose arguments are JSON text already (a mounted call's, written once from the
//! arguments its caller sent, rather than copied and made a map only to be written).

use serde_json::{Map, Value};
use std::borrow::Cow;

/// A tool call's arguments: a value, or the JSON text of an object as this crate wrote it
/// (a `String` rather than a `RawValue`, which would be one more allocation to box).
#[derive(Clone, Debug)]
pub(crate) enum Arguments {
    Value(Value),
    Written(String),
}

impl Arguments {
    /// The arguments as a value: read back when written, which only a call that needs one
    /// (its arguments go in headers, say) does. Text that cannot be read back (deeper than
    /// the reader goes) reads as `null`.
    pub(crate) fn as_value(&self) -> Cow<'_, Value> {
        match self {
            Arguments::Value(value) => Cow::Borrowed(value),
            Arguments::Written(text) => Cow::Owned(read_back(text)),
        }
    }
}

/// Arguments written as text, read back as a value (`null` for text the reader cannot hold).
fn read_back(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// The params of a request that may take several rounds, each sending them again with what
/// the last one added (a task asked for, the answers to the server's questions).
#[derive(Debug)]
pub(crate) enum RoundParams<'a> {
    /// Params held as a value (an object).
    Value(Value),
    /// A tool call of `name` with arguments written already, and the members the rounds
    /// add.
    Call {
        name: &'a str,
        arguments: String,
        added: Map<String, Value>,
    },
}

impl<'a> RoundParams<'a> {
    /// The params of a call of tool or prompt `name` with `arguments`.
    pub(crate) fn named(name: &'a str, arguments: Arguments) -> RoundParams<'a> {
        match arguments {
            Arguments::Value(arguments) => {
                // Moved in: the `json!` macro would copy them.
                let mut params = Map::with_capacity(2);
                params.insert("name".to_owned(), Value::String(name.to_owned()));
                params.insert("arguments".to_owned(), arguments);
                RoundParams::Value(Value::Object(params))
            }
            Arguments::Written(arguments) => RoundParams::Call {
                name,
                arguments,
                added: Map::new(),
            },
        }
    }

    /// The params to write.
    pub(crate) fn as_written(&self) -> ParamsOf<'_> {
        match self {
            RoundParams::Value(value) => ParamsOf::Value(value),
            RoundParams::Call {
                name,
                arguments,
                added,
            } => ParamsOf::Call {
                name,
                arguments,
                added,
            },
        }
    }

    /// The arguments (only a call sent again with headers its first try lacked needs
    /// them again; written ones are read back); `None` when there are none.
    pub(crate) fn arguments(&self) -> Option<Cow<'_, Value>> {
        match self {
            RoundParams::Value(params) => params.get("arguments").map(Cow::Borrowed),
            RoundParams::Call { arguments, .. } => Some(Cow::Owned(read_back(arguments))),
        }
    }

    /// Sets member `key` (a call's name and arguments are not set this way).
    pub(crate) fn set(&mut self, key: &str, value: Value) {
        if let Some(members) = self.members_mut() {
            members.insert(key.to_owned(), value);
        }
    }

    /// Removes member `key`.
    pub(crate) fn remove(&mut self, key: &str) {
        if let Some(members) = self.members_mut() {
            members.remove(key);
        }
    }

    fn members_mut(&mut self) -> Option<&mut Map<String, Value>> {
        match self {
            RoundParams::Value(value) => value.as_object_mut(),
            RoundParams::Call { added, .. } => Some(added),
        }
    }
}

impl From<Value> for RoundParams<'_> {
    fn from(value: Value) -> Self {
        RoundParams::Value(value)
    }
}

/// Params as they are written: a value, or a call's name, its arguments as written, and
/// further members.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ParamsOf<'a> {
    Value(&'a Value),
    Call {
        name: &'a str,
        arguments: &'a str,
        added: &'a Map<String, Value>,
    },
}

impl<'a> ParamsOf<'a> {
    /// What a request of `method` names, for its `Mcp-Name` header (2026-07-28): the tool
    /// or prompt, the resource, or the task.
    pub(crate) fn named(self, method: &str) -> Option<&'a str> {
        let key = match method {
            "tools/call" | "prompts/get" => "name",
            "resources/read" => "uri",
            "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
            _ => return None,
        };
        match self {
            ParamsOf::Value(params) => params[key].as_str(),
            ParamsOf::Call { name, .. } => (key == "name").then_some(name),
        }
    }
}

impl<'a> From<&'a Value> for ParamsOf<'a> {
    fn from(value: &'a Value) -> Self {
        ParamsOf::Value(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn written(value: &Value) -> String {
        serde_json::to_string(value).expect("a value writes")
    }

    #[test]
    fn a_call_names_its_tool_whether_its_arguments_are_written_or_not() {
        let arguments = json!({"a": 1});
        let held = RoundParams::named("add", Arguments::Value(arguments.clone()));
        let text = RoundParams::named("add", Arguments::Written(written(&arguments)));
        for params in [&held, &text] {
            assert_eq!(params.as_written().named("tools/call"), Some("add"));
            assert_eq!(params.as_written().named("prompts/get"), Some("add"));
            assert_eq!(params.as_written().named("resources/read"), None);
            assert_eq!(params.as_written().named("tools/list"), None);
        }
        let ParamsOf::Value(value) = held.as_written() else {
            panic!("arguments held as a value stay one: {held:?}");
        };
        assert_eq!(value, &json!({"name": "add", "arguments": {"a": 1}}));
    }

    #[test]
    fn members_set_on_a_written_call_go_beside_its_name_and_arguments() {
        let mut params = RoundParams::named("add", Arguments::Written(written(&json!({}))));
        params.set("task", json!({}));
        params.set("requestState", json!("s"));
        params.remove("requestState");
        let ParamsOf::Call { added, .. } = params.as_written() else {
            panic!("still a written call: {params:?}");
        };
        assert_eq!(Value::Object(added.clone()), json!({"task": {}}));
    }

    #[test]
    fn written_arguments_read_back_as_the_value_they_were_written_from() {
        let arguments = json!({"region": "Hello, 世界", "n": [1, 2.5, null]});
        let text = Arguments::Written(written(&arguments));
        assert_eq!(*text.as_value(), arguments);
        let held = Arguments::Value(arguments.clone());
        assert!(
            matches!(held.as_value(), Cow::Borrowed(_)),
            "lent, not copied"
        );
        assert_eq!(*held.as_value(), arguments);
        let params = RoundParams::named("add", text);
        assert_eq!(*params.arguments().unwrap(), arguments);
    }
}
