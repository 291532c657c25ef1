//! A call's output as JSON: the value a tool gave, another server's structured content as
//! the text it came as, or its content blocks as JSON; the last two read as values the
//! first time something reads them (an MCP answer sends them as they are and never does).

use super::content::AnswerBlocks;
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;
use std::sync::OnceLock;

/// The output of a successful call as JSON. A tool's value is kept as it came; for an
/// answer of content blocks (a tool's own or another server's passed on), the blocks as
/// JSON are made only when read, since most answers are sent as blocks and never read so.
///
/// It does not hold the blocks: whoever holds both passes them in when reading.
#[derive(Clone)]
pub(crate) enum OutputValue {
    /// The value a tool gave (another server's structured content, for one passed on).
    Given(Value),
    /// Another server's structured content as it sent it, and as a value once read. A
    /// change in place makes it `Given`: the text then no longer says what the value is.
    Sent {
        text: Box<RawValue>,
        read: OnceLock<Value>,
    },
    /// The answer's content blocks as JSON, once read.
    OfBlocks(OnceLock<Value>),
}

/// An output to write: a value, or the text another server sent (written as it came).
#[derive(Debug)]
pub(crate) enum OutputJson {
    Value(Value),
    Text(Box<RawValue>),
}

impl OutputValue {
    /// The value a tool gave.
    pub(crate) fn given(value: Value) -> OutputValue {
        OutputValue::Given(value)
    }

    /// Another server's structured content, `text` as it sent it: read as a value only
    /// when something asks.
    pub(crate) fn sent(text: Box<RawValue>) -> OutputValue {
        OutputValue::Sent {
            text,
            read: OnceLock::new(),
        }
    }

    /// The value of an answer's content blocks, made when first read.
    pub(crate) fn of_blocks() -> OutputValue {
        OutputValue::OfBlocks(OnceLock::new())
    }

    /// The value the tool gave (another server's structured content read now if it was
    /// not before); `None` when it is its blocks, which are kept instead.
    pub(crate) fn as_given(&self) -> Option<&Value> {
        match self {
            OutputValue::Given(value) => Some(value),
            OutputValue::Sent { text, read } => Some(read.get_or_init(|| read_sent(text))),
            OutputValue::OfBlocks(_) => None,
        }
    }

    /// The value: as given, or `blocks` as JSON (`null` without blocks), made now if it was
    /// not read before.
    pub(crate) fn get(&self, blocks: Option<&AnswerBlocks>) -> &Value {
        match self {
            OutputValue::Given(value) => value,
            OutputValue::Sent { text, read } => read.get_or_init(|| read_sent(text)),
            OutputValue::OfBlocks(made) => made.get_or_init(|| of(blocks)),
        }
    }

    /// The value, to change in place: made first as [`get`](Self::get) does.
    pub(crate) fn get_mut(&mut self, blocks: Option<&AnswerBlocks>) -> &mut Value {
        match self {
            OutputValue::Given(value) => value,
            OutputValue::Sent { text, read } => {
                let value = read.take().unwrap_or_else(|| read_sent(text));
                *self = OutputValue::Given(value);
                self.get_mut(blocks)
            }
            OutputValue::OfBlocks(made) => {
                if made.get().is_none() {
                    *made = OnceLock::from(of(blocks));
                }
                made.get_mut().expect("the value was set just above")
            }
        }
    }

    /// The value, taken: made from `blocks` if it was never read.
    pub(crate) fn into_value(self, blocks: Option<&AnswerBlocks>) -> Value {
        match self {
            OutputValue::Given(value) => value,
            OutputValue::Sent { text, read } => {
                read.into_inner().unwrap_or_else(|| read_sent(&text))
            }
            OutputValue::OfBlocks(made) => made.into_inner().unwrap_or_else(|| of(blocks)),
        }
    }

    /// The output to write: another server's structured content as the text it sent,
    /// anything else as [`into_value`](Self::into_value) gives it.
    pub(crate) fn into_json(self, blocks: Option<&AnswerBlocks>) -> OutputJson {
        match self {
            OutputValue::Sent { text, .. } => OutputJson::Text(text),
            other => OutputJson::Value(other.into_value(blocks)),
        }
    }
}

/// Another server's structured content as a value. Text that serde_json cannot hold as
/// one (nested deeper than it goes, a lone surrogate) is passed on to MCP clients as it
/// came, and reads as `null` here, with a warning, as content blocks that cannot be read
/// are left out.
fn read_sent(text: &RawValue) -> Value {
    serde_json::from_str(text.get()).unwrap_or_else(|error| {
        tracing::warn!(%error, "structured content another server sent is passed on as it came but cannot be read here");
        Value::Null
    })
}

/// Content blocks as JSON: a list of block objects.
fn of(blocks: Option<&AnswerBlocks>) -> Value {
    #[cfg(test)]
    tests::MADE.with(|made| made.set(made.get() + 1));
    blocks.map_or(Value::Null, AnswerBlocks::to_value)
}

impl fmt::Debug for OutputValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputValue::Given(value) => value.fmt(f),
            OutputValue::Sent { text, .. } => text.fmt(f),
            OutputValue::OfBlocks(made) => match made.get() {
                Some(value) => value.fmt(f),
                None => f.write_str("<the content blocks, not read as JSON yet>"),
            },
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::call::content::Content;
    use serde_json::json;
    use std::cell::Cell;

    thread_local! {
        /// How many times this thread made a value of content blocks.
        pub(crate) static MADE: Cell<usize> = const { Cell::new(0) };
    }

    /// How many times this thread has made a value of content blocks so far.
    pub(crate) fn made() -> usize {
        MADE.with(Cell::get)
    }

    #[test]
    fn a_given_value_is_kept_as_it_came_whatever_the_blocks() {
        let blocks = AnswerBlocks::Own(vec![Content::text("ignored")]);
        let value = OutputValue::given(json!({"a": 1}));
        assert_eq!(value.get(Some(&blocks)), &json!({"a": 1}));
        assert_eq!(value.into_value(Some(&blocks)), json!({"a": 1}));
    }

    #[test]
    fn the_blocks_value_is_made_when_read_and_kept_once_made() {
        let blocks = AnswerBlocks::Own(vec![Content::text("a dot")]);
        let value = OutputValue::of_blocks();
        assert_eq!(
            format!("{value:?}"),
            "<the content blocks, not read as JSON yet>"
        );
        let before = made();
        let expected = json!([{"type": "text", "text": "a dot"}]);
        assert_eq!(value.get(Some(&blocks)), &expected);
        // Once made it is the value, whatever is passed in later, and not made again.
        assert_eq!(value.get(None), &expected);
        assert_eq!(made(), before + 1);
        assert_eq!(format!("{value:?}"), format!("{expected:?}"));
    }

    #[test]
    fn sent_text_is_written_as_it_came_until_changed_and_read_as_a_value_when_asked() {
        let sent = |text: &str| OutputValue::sent(RawValue::from_string(text.to_owned()).unwrap());
        let text_of = |value: OutputValue| match value.into_json(None) {
            OutputJson::Text(text) => Some(text.get().to_owned()),
            OutputJson::Value(_) => None,
        };
        let value = sent(r#"{"n": 1.50}"#);
        assert_eq!(value.as_given(), Some(&json!({"n": 1.5})));
        // Read, not changed: still written as it came.
        assert_eq!(text_of(value).as_deref(), Some(r#"{"n": 1.50}"#));
        let mut value = sent(r#"{"n": 1.50}"#);
        value.get_mut(None)["n"] = json!(2);
        assert_eq!(value.as_given(), Some(&json!({"n": 2})));
        match value.into_json(None) {
            OutputJson::Value(changed) => assert_eq!(changed, json!({"n": 2})),
            OutputJson::Text(text) => panic!("written as it came after a change: {text}"),
        }
        // Deeper than serde_json reads: passed on as it came, `null` to what reads it here.
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let value = sent(&deep);
        assert_eq!(value.get(None), &Value::Null);
        assert_eq!(text_of(value), Some(deep));
    }

    #[test]
    fn a_change_in_place_is_kept() {
        let blocks = AnswerBlocks::Own(vec![Content::text("a dot")]);
        let mut value = OutputValue::of_blocks();
        value.get_mut(Some(&blocks))[0]["text"] = json!("changed");
        assert_eq!(
            value.into_value(None),
            json!([{"type": "text", "text": "changed"}])
        );
        assert_eq!(OutputValue::of_blocks().into_value(None), Value::Null);
        assert_eq!(
            OutputValue::of_blocks().into_value(Some(&blocks)),
            json!([{"type": "text", "text": "a dot"}])
        );
    }
}
