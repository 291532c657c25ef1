//! A call's output as JSON: the value a tool gave, or its content blocks as JSON, made the
//! first time something reads it (an MCP answer sends the blocks and never does).

use super::content::AnswerBlocks;
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
    /// The answer's content blocks as JSON, once read.
    OfBlocks(OnceLock<Value>),
}

impl OutputValue {
    /// The value a tool gave.
    pub(crate) fn given(value: Value) -> OutputValue {
        OutputValue::Given(value)
    }

    /// The value of an answer's content blocks, made when first read.
    pub(crate) fn of_blocks() -> OutputValue {
        OutputValue::OfBlocks(OnceLock::new())
    }

    /// The value the tool gave; `None` when it is its blocks, which are kept instead.
    pub(crate) fn as_given(&self) -> Option<&Value> {
        match self {
            OutputValue::Given(value) => Some(value),
            OutputValue::OfBlocks(_) => None,
        }
    }

    /// The value: as given, or `blocks` as JSON (`null` without blocks), made now if it was
    /// not read before.
    pub(crate) fn get(&self, blocks: Option<&AnswerBlocks>) -> &Value {
        match self {
            OutputValue::Given(value) => value,
            OutputValue::OfBlocks(made) => made.get_or_init(|| of(blocks)),
        }
    }

    /// The value, to change in place: made first as [`get`](Self::get) does.
    pub(crate) fn get_mut(&mut self, blocks: Option<&AnswerBlocks>) -> &mut Value {
        match self {
            OutputValue::Given(value) => value,
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
            OutputValue::OfBlocks(made) => made.into_inner().unwrap_or_else(|| of(blocks)),
        }
    }
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
