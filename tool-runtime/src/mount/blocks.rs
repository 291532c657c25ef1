//! What of a mounted server's answer is passed on as the text it came as: its content
//! blocks that any client can read (objects of a kind the protocol has; the others are
//! left out), and its structured content, each made one line.

use crate::call::content::empty_list;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::fmt;

/// `text` (JSON) on one line: its line ends made spaces. A line end in JSON text can only
/// be white space between tokens (inside a string it is written `\n`), so the value is
/// the same; and what is passed on over stdio, one message per line, stays one message. A
/// server over HTTP may well send its answer with line ends, indented.
pub(super) fn one_line(text: Box<RawValue>) -> Box<RawValue> {
    if memchr::memchr2(b'\n', b'\r', text.get().as_bytes()).is_none() {
        return text;
    }
    let spaced = text.get().replace(['\n', '\r'], " ");
    // Still JSON: only white space changed.
    RawValue::from_string(spaced).unwrap_or(text)
}

/// The kinds of content block the protocol has.
const BLOCK_KINDS: [&str; 5] = ["text", "image", "audio", "resource", "resource_link"];

/// The blocks of a mounted server's answer that any client can read: objects of a kind the
/// protocol has, each exactly as it was sent (annotations, `_meta` and all), as JSON text.
/// Anything else is left out, with a warning: a client that checks answers against the
/// protocol would refuse the whole answer for one block it cannot read. Content that is
/// not a list is no blocks.
pub(super) fn readable(content: Option<Box<RawValue>>, mount: &str) -> Box<RawValue> {
    let Some(content) = content.map(one_line) else {
        return empty_list();
    };
    // Nearly always every block is readable: checked in one reading of the list, the
    // answer is passed on as it came.
    if serde_json::from_str::<Vec<Readable>>(content.get()).is_ok() {
        return content;
    }
    let Ok(blocks) = serde_json::from_str::<Vec<&RawValue>>(content.get()) else {
        return empty_list();
    };
    let is_readable = |block: &&RawValue| serde_json::from_str::<Readable>(block.get()).is_ok();
    let kept: Vec<&RawValue> = blocks.iter().copied().filter(is_readable).collect();
    tracing::warn!(
        mount,
        left_out = blocks.len() - kept.len(),
        "content blocks of a kind MCP does not have were left out of a mounted tool's answer"
    );
    let mut list = String::from("[");
    for (at, block) in kept.iter().enumerate() {
        if at > 0 {
            list.push(',');
        }
        list.push_str(block.get());
    }
    list.push(']');
    // Made of blocks that were each JSON.
    RawValue::from_string(list).unwrap_or_else(|_| empty_list())
}

/// A block any client can read: it reads only from an object with one `type`, a kind the
/// protocol has (the rest of the block skipped, nothing of it kept or allocated).
struct Readable;

impl<'de> Deserialize<'de> for Readable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // A map only: serde's derived structs would also read a list, and `["text"]` is no
        // block.
        deserializer.deserialize_map(BlockVisitor)
    }
}

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = Readable;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block: an object with a `type` the protocol has")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Readable, A::Error> {
        let mut known = None;
        while let Some(is_type) = map.next_key_seed(StrIs(|key| key == "type"))? {
            if !is_type {
                map.next_value::<IgnoredAny>()?;
            } else if known.is_some() {
                return Err(de::Error::duplicate_field("type"));
            } else {
                known = Some(map.next_value_seed(StrIs(|kind| BLOCK_KINDS.contains(&kind)))?);
            }
        }
        match known {
            Some(true) => Ok(Readable),
            Some(false) => Err(de::Error::custom(
                "a kind of block the protocol does not have",
            )),
            None => Err(de::Error::missing_field("type")),
        }
    }
}

/// Whether a string (a key, a kind) passes a test, read without being kept.
struct StrIs(fn(&str) -> bool);

impl<'de> DeserializeSeed<'de> for StrIs {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for StrIs {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<bool, E> {
        Ok((self.0)(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn blocks_of_the_protocol_pass_as_sent_and_others_are_left_out() {
        let annotated = json!({"type": "text", "text": "hi", "annotations": {"priority": 1.0}, "_meta": {"a": 1}});
        let link = json!({"type": "resource_link", "uri": "file:///a", "name": "a", "size": 3, "title": "A"});
        let as_text = |value: Value| Some(serde_json::value::to_raw_value(&value).unwrap());
        let read = |content| serde_json::from_str::<Value>(readable(content, "up").get()).unwrap();
        let blocks = json!([
            annotated,
            {"type": "hologram", "frames": 3},
            "not a block",
            {"text": "no kind"},
            ["text"],
            {"type": 3},
            link,
        ]);
        assert_eq!(read(as_text(blocks)), json!([annotated, link]));
        // All readable: the very text that came, to the byte.
        let exact = r#"[{"type":"text","text":"1.50","annotations":{"priority":1.0}}, {"type":"image","data":"AA==","mimeType":"image/png"}]"#;
        let kept = readable(Some(RawValue::from_string(exact.to_owned()).unwrap()), "up");
        assert_eq!(kept.get(), exact);
        // Some left out: those kept are each still the text that came.
        let mixed = r#"[{"type":"hologram"},{"type":"text","text":"1.50","_meta":{"n":1.50}}]"#;
        let kept = readable(Some(RawValue::from_string(mixed.to_owned()).unwrap()), "up");
        assert_eq!(
            kept.get(),
            r#"[{"type":"text","text":"1.50","_meta":{"n":1.50}}]"#
        );
        // A block with two kinds is no block (as serde reads objects), nor one with a kind
        // that is not text, and a key spelt with an escape is the key it spells.
        let odd = r#"[{"type":"text","type":"text","text":"twice"},{"type":["text"]},{"typ\u0065":"text","text":"escaped"}]"#;
        let kept = readable(Some(RawValue::from_string(odd.to_owned()).unwrap()), "up");
        assert_eq!(kept.get(), r#"[{"typ\u0065":"text","text":"escaped"}]"#);
        // Indented, as a server over HTTP may send it: the same blocks, on one line.
        let indented = "[\r\n {\"type\": \"text\",\n  \"text\": \"a\\nb\"}\n]";
        let kept = readable(
            Some(RawValue::from_string(indented.to_owned()).unwrap()),
            "up",
        );
        assert_eq!(
            kept.get(),
            "[   {\"type\": \"text\",   \"text\": \"a\\nb\"} ]"
        );
        let indented = "[\n{\"type\": \"hologram\"},\n{\"type\": \"text\",\r\"text\": \"a\"}\n]";
        let kept = readable(
            Some(RawValue::from_string(indented.to_owned()).unwrap()),
            "up",
        );
        assert_eq!(kept.get(), "[{\"type\": \"text\", \"text\": \"a\"}]");
        for none in [
            None,
            as_text(json!({"type": "text"})),
            as_text(json!("text")),
        ] {
            assert_eq!(read(none), json!([]));
        }
    }
}
