//! Rich results: text, images, audio, embedded resources and links, returned as MCP
//! content blocks instead of JSON data.

use base64::Engine;
use serde::{Deserialize, Serialize};

/// One block of a tool's result, as MCP content.
///
/// A tool that returns `Content`, `Vec<Content>` (or a `Result` of either) answers with
/// these blocks as they are; any other return type is JSON data.
///
/// ```
/// use tool_runtime::{tool, Content};
///
/// /// Draw a one-pixel picture with a caption.
/// #[tool]
/// fn pixel() -> Vec<Content> {
///     vec![
///         Content::text("a single red pixel"),
///         Content::image(b"\x89PNG...", "image/png"),
///     ]
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 of the image bytes.
        data: String,
        /// For example `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 of the audio bytes.
        data: String,
        /// For example `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A resource embedded in the result.
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
    /// A link to a resource the client can fetch.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// Its MIME type, if known.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none", default)]
        mime_type: Option<String>,
        /// What it is.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        description: Option<String>,
    },
}

/// The contents of an embedded resource: text or base64 `blob`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type, if known.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none", default)]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub text: Option<String>,
    /// Binary contents, base64.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub blob: Option<String>,
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image block from raw bytes.
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: base64(bytes.as_ref()),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from raw bytes.
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: base64(bytes.as_ref()),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded text resource.
    pub fn resource_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::Resource {
            resource: EmbeddedResource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: Some(text.into()),
                blob: None,
            },
        }
    }

    /// An embedded binary resource from raw bytes.
    pub fn resource_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Self {
        Content::Resource {
            resource: EmbeddedResource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: None,
                blob: Some(base64(bytes.as_ref())),
            },
        }
    }

    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            mime_type: None,
            description: None,
        }
    }
}

/// Text is a text block (so a prompt message can be written `PromptMessage::user("...")`).
impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

/// A return value made of content blocks.
pub trait IntoContent {
    /// The blocks.
    fn into_content(self) -> Vec<Content>;
}

impl IntoContent for Content {
    fn into_content(self) -> Vec<Content> {
        vec![self]
    }
}

impl IntoContent for Vec<Content> {
    fn into_content(self) -> Vec<Content> {
        self
    }
}

/// The blocks of `blocks` (as another server sent them) of a kind [`Content`] knows, read
/// in place; the others are left out.
pub(crate) fn known<'a>(blocks: impl IntoIterator<Item = &'a serde_json::Value>) -> Vec<Content> {
    blocks
        .into_iter()
        .filter_map(|block| Content::deserialize(block).ok())
        .collect()
}

/// The content blocks of a call's answer: a tool's own, or another server's passed on.
#[derive(Debug, Clone)]
pub(crate) enum AnswerBlocks {
    /// A tool's own blocks.
    Own(Vec<Content>),
    /// Another server's blocks exactly as it sent them (boxed: a call's result is moved
    /// about whole, and most are not relayed).
    Sent(Box<SentBlocks>),
}

/// Another server's blocks exactly as it sent them, so that what [`Content`] does not
/// model (annotations, `_meta`, a resource link's title or size) reaches the caller too:
/// kept as the JSON text they came as (written out again as they are, numbers and all),
/// read as values or as [`Content`] the first time that is asked for.
#[derive(Debug, Clone)]
pub(crate) struct SentBlocks {
    /// The blocks as sent: a JSON list.
    raw: Box<serde_json::value::RawValue>,
    /// Their reading as values.
    values: std::sync::OnceLock<Vec<serde_json::Value>>,
    /// Their reading as [`Content`], blocks of unknown kinds left out.
    read: std::sync::OnceLock<Vec<Content>>,
}

impl SentBlocks {
    /// The blocks as the JSON text they came as.
    pub(crate) fn raw(&self) -> &serde_json::value::RawValue {
        &self.raw
    }

    /// The blocks as values; a block that is JSON but not a value this crate can hold (a
    /// number past `f64`, a lone surrogate, nesting past the parser's depth) is passed on
    /// as it came and left out here.
    pub(crate) fn values(&self) -> &[serde_json::Value] {
        self.values.get_or_init(|| each_value(self.raw.get()))
    }

    /// The blocks as one JSON value (a list), read anew.
    pub(crate) fn to_value(&self) -> serde_json::Value {
        serde_json::Value::Array(match self.values.get() {
            Some(values) => values.clone(),
            None => each_value(self.raw.get()),
        })
    }
}

/// Each block of `list` (a JSON list) as a value, those that cannot be one left out.
fn each_value(list: &str) -> Vec<serde_json::Value> {
    let blocks: Vec<&serde_json::value::RawValue> = match serde_json::from_str(list) {
        Ok(blocks) => blocks,
        // Blocks are made a list before they are kept.
        Err(error) => {
            tracing::warn!(%error, "content blocks that are not a list were read as none");
            Vec::new()
        }
    };
    blocks
        .into_iter()
        .filter_map(|block| match serde_json::from_str(block.get()) {
            Ok(value) => Some(value),
            Err(error) => {
                tracing::warn!(%error, "a content block another server sent is passed on as it came but cannot be read here");
                None
            }
        })
        .collect()
}

impl AnswerBlocks {
    /// Another server's blocks, as sent.
    pub(crate) fn sent(blocks: Vec<serde_json::Value>) -> AnswerBlocks {
        // A list of values always serializes.
        let raw = serde_json::value::to_raw_value(&blocks).unwrap_or_else(|_| empty_list());
        AnswerBlocks::Sent(Box::new(SentBlocks {
            raw,
            values: std::sync::OnceLock::from(blocks),
            read: std::sync::OnceLock::new(),
        }))
    }

    /// Another server's blocks, as the JSON text they came as; text that is not a list
    /// stands for none.
    pub(crate) fn sent_as_text(raw: Box<serde_json::value::RawValue>) -> AnswerBlocks {
        let raw = if crate::schema::is_json_list(raw.get()) {
            raw
        } else {
            empty_list()
        };
        AnswerBlocks::Sent(Box::new(SentBlocks {
            raw,
            values: std::sync::OnceLock::new(),
            read: std::sync::OnceLock::new(),
        }))
    }

    /// The blocks as [`Content`]; another server's of a kind this crate does not know are
    /// left out.
    pub(crate) fn read(&self) -> &[Content] {
        match self {
            AnswerBlocks::Own(blocks) => blocks,
            AnswerBlocks::Sent(sent) => sent.read.get_or_init(|| known(sent.values())),
        }
    }

    /// The same blocks after a text block of `text`: another server's still written as
    /// they came.
    pub(crate) fn after_text(self, text: &str) -> AnswerBlocks {
        // Written as this crate writes its own text blocks.
        let first = serde_json::to_string(&Content::text(text)).unwrap_or_default();
        match self {
            AnswerBlocks::Own(mut blocks) => {
                blocks.insert(0, Content::text(text));
                AnswerBlocks::Own(blocks)
            }
            AnswerBlocks::Sent(sent) => {
                // The list's text after its `[`: its blocks, if any, then its `]`.
                let Some(rest) = sent.raw.get().trim_start().strip_prefix('[') else {
                    return AnswerBlocks::Sent(sent);
                };
                let rest = rest.trim_start();
                let separator = if rest.starts_with(']') { "" } else { "," };
                let listed = format!("[{first}{separator}{rest}");
                // A text block put before the blocks of a list is a list.
                serde_json::value::RawValue::from_string(listed)
                    .map_or(AnswerBlocks::Sent(sent), AnswerBlocks::sent_as_text)
            }
        }
    }

    /// The length of the blocks as JSON: another server's as the text they came as.
    pub(crate) fn json_len(&self) -> usize {
        match self {
            AnswerBlocks::Own(blocks) => crate::schema::json_len(blocks),
            AnswerBlocks::Sent(sent) => sent.raw().get().len(),
        }
    }

    /// The blocks as one JSON value (a list).
    pub(crate) fn to_value(&self) -> serde_json::Value {
        match self {
            AnswerBlocks::Own(blocks) => serde_json::to_value(blocks).unwrap_or_default(),
            AnswerBlocks::Sent(sent) => sent.to_value(),
        }
    }
}

/// `[]`, as JSON text.
pub(crate) fn empty_list() -> Box<serde_json::value::RawValue> {
    serde_json::value::RawValue::from_string("[]".to_owned()).expect("[] is JSON")
}

/// Blocks are equal when they are written the same.
impl PartialEq for AnswerBlocks {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (AnswerBlocks::Own(mine), AnswerBlocks::Own(theirs)) => mine == theirs,
            (AnswerBlocks::Sent(mine), AnswerBlocks::Sent(theirs)) => {
                mine.values() == theirs.values()
            }
            (AnswerBlocks::Own(own), AnswerBlocks::Sent(sent))
            | (AnswerBlocks::Sent(sent), AnswerBlocks::Own(own)) => {
                matches!(serde_json::to_value(own), Ok(serde_json::Value::Array(written)) if written == sent.values())
            }
        }
    }
}

/// Written as the list of blocks: another server's exactly as it sent them.
impl Serialize for AnswerBlocks {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            AnswerBlocks::Own(blocks) => blocks.serialize(serializer),
            AnswerBlocks::Sent(sent) => sent.raw.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::value::RawValue;

    #[test]
    fn blocks_sent_by_another_server_are_written_as_sent_and_read_as_far_as_known() {
        let sent = vec![
            json!({"type": "text", "text": "hi", "annotations": {"audience": ["user"], "priority": 0.5}}),
            json!({"type": "hologram", "frames": 3}),
            json!({"type": "resource_link", "uri": "file:///a", "name": "a", "title": "A", "size": 3}),
        ];
        let blocks = AnswerBlocks::sent(sent.clone());
        assert_eq!(serde_json::to_value(&blocks).unwrap(), json!(sent));
        // As text: written as it came, to the byte, and read the same.
        let text = r#"[{"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5}},{"type":"hologram","frames":3},{"type":"resource_link","uri":"file:///a","name":"a","title":"A","size":3}]"#;
        let as_text = AnswerBlocks::sent_as_text(RawValue::from_string(text.to_owned()).unwrap());
        assert_eq!(serde_json::to_string(&as_text).unwrap(), text);
        assert_eq!(as_text, blocks);
        assert_eq!(as_text.read(), blocks.read());
        assert_eq!(as_text.to_value(), json!(sent));
        let not_a_list =
            AnswerBlocks::sent_as_text(RawValue::from_string("{}".to_owned()).unwrap());
        assert_eq!(serde_json::to_string(&not_a_list).unwrap(), "[]");
        assert_eq!(
            blocks.read(),
            [
                Content::text("hi"),
                Content::resource_link("file:///a", "a")
            ]
        );
    }

    #[test]
    fn blocks_json_cannot_hold_are_passed_on_and_left_out_when_read() {
        let text = r#"[{"type":"text","text":"a"},{"type":"text","text":"b","_meta":{"n":1e400}},{"type":"text","text":"\ud800"}]"#;
        let blocks = AnswerBlocks::sent_as_text(RawValue::from_string(text.to_owned()).unwrap());
        assert_eq!(serde_json::to_string(&blocks).unwrap(), text);
        assert_eq!(blocks.read(), [Content::text("a")]);
        assert_eq!(blocks.to_value(), json!([{"type": "text", "text": "a"}]));
    }

    #[test]
    fn a_text_block_put_first_leaves_the_others_as_they_came() {
        let text =
            r#"[ {"type":"image","data":"AA==","mimeType":"image/png","_meta":{"x":1.50}} ]"#;
        let blocks = AnswerBlocks::sent_as_text(RawValue::from_string(text.to_owned()).unwrap());
        assert_eq!(
            serde_json::to_string(&blocks.after_text("out of stock")).unwrap(),
            r#"[{"type":"text","text":"out of stock"},{"type":"image","data":"AA==","mimeType":"image/png","_meta":{"x":1.50}} ]"#
        );
        let none = AnswerBlocks::sent_as_text(RawValue::from_string("[ ]".to_owned()).unwrap());
        assert_eq!(
            serde_json::to_string(&none.after_text("no")).unwrap(),
            r#"[{"type":"text","text":"no"}]"#
        );
        let own = AnswerBlocks::Own(vec![Content::text("b")]);
        assert_eq!(
            own.after_text("a").read(),
            [Content::text("a"), Content::text("b")]
        );
    }

    #[test]
    fn blocks_are_equal_when_written_the_same() {
        let own = AnswerBlocks::Own(vec![Content::text("hi")]);
        assert_eq!(
            own,
            AnswerBlocks::sent(vec![json!({"type": "text", "text": "hi"})])
        );
        assert_ne!(
            own,
            AnswerBlocks::sent(vec![json!({"type": "text", "text": "hi", "_meta": {}})])
        );
    }
}
