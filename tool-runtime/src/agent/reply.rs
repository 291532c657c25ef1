//! One call's result as every provider's dialect can write it: the text a model reads,
//! the structured output where a provider takes a value, the media where it takes media,
//! and a note when the arguments had to be repaired or the output was cut.

use super::repair::Repair;
use crate::call::content::Content;
use crate::{CallError, ToolResult};
use serde_json::Value;

/// An image or other media a tool answered with, base64.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Media {
    pub data: String,
    pub mime_type: String,
}

/// What a call answered, before it is written in a dialect.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    /// Whether the call failed.
    pub is_error: bool,
    /// What a model reads: the output as text (a string as it is, anything else as JSON),
    /// the text of content blocks, or the error's message.
    pub text: String,
    /// The output as a value, for a provider that takes one; `None` for an error or
    /// content blocks.
    pub value: Option<Value>,
    /// Images and audio, for a provider that takes them.
    pub media: Vec<Media>,
    /// What the model should know besides: the arguments were repaired, the output cut.
    pub note: Option<String>,
}

impl Reply {
    /// The reply to `result`, its output cut past `max_bytes`; `repair` says what was
    /// repaired in the arguments, `known` lists the tools a model may call (for an unknown
    /// name).
    pub(crate) fn new(
        result: &ToolResult,
        repair: Option<&Repair>,
        known: &[String],
        max_bytes: usize,
    ) -> Reply {
        let mut notes = Vec::new();
        if let Some(repair) = repair {
            notes.push(format!(
                "The arguments were not valid JSON and were repaired ({}); send a plain JSON \
                object next time.",
                repair.describe()
            ));
        }
        let mut reply = match result.error() {
            Some(error) => Reply::error(error, known),
            None => Reply::output(result),
        };
        if reply.text.len() > max_bytes {
            let size = reply.text.len();
            let mut cut = max_bytes;
            while !reply.text.is_char_boundary(cut) {
                cut -= 1;
            }
            reply.text.truncate(cut);
            reply.value = None;
            notes.push(format!(
                "The output was cut: it was {size} bytes and the limit is {max_bytes}. Ask for \
                less."
            ));
        }
        if !notes.is_empty() {
            reply.note = Some(notes.join(" "));
        }
        reply
    }

    fn error(error: &CallError, known: &[String]) -> Reply {
        let mut text = error.to_string();
        if matches!(error, CallError::UnknownTool { .. }) {
            if !text.ends_with(['?', '.']) {
                text.push('.');
            }
            if known.is_empty() {
                text.push_str(" No tools are available.");
            } else {
                text.push_str(&format!(" The tools are: {}.", known.join(", ")));
            }
        }
        Reply {
            is_error: true,
            text,
            value: None,
            media: Vec::new(),
            note: None,
        }
    }

    fn output(result: &ToolResult) -> Reply {
        let mut media = Vec::new();
        let mut texts = Vec::new();
        let value = match result.content() {
            Some(blocks) => {
                for block in blocks {
                    match block {
                        Content::Text { text } => texts.push(text.clone()),
                        Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                            media.push(Media {
                                data: data.clone(),
                                mime_type: mime_type.clone(),
                            })
                        }
                        Content::Resource { resource } => {
                            if let Some(text) = &resource.text {
                                texts.push(text.clone());
                            } else if let (Some(blob), Some(mime_type)) =
                                (&resource.blob, &resource.mime_type)
                            {
                                media.push(Media {
                                    data: blob.clone(),
                                    mime_type: mime_type.clone(),
                                });
                            }
                        }
                        Content::ResourceLink { uri, name, .. } => {
                            texts.push(format!("[{name}]({uri})"))
                        }
                    }
                }
                None
            }
            None => result.shown_value().cloned(),
        };
        let text = match result.text_for_model() {
            Some(text) if result.content().is_none() => text.into_owned(),
            _ => texts.join("\n"),
        };
        Reply {
            is_error: false,
            text,
            value,
            media,
            note: None,
        }
    }

    /// A description of the media a text-only provider cannot take, so the model knows
    /// they were there.
    pub(crate) fn media_left_out(&self) -> Option<String> {
        if self.media.is_empty() {
            return None;
        }
        let kinds: Vec<&str> = self.media.iter().map(|m| m.mime_type.as_str()).collect();
        Some(format!(
            "[The tool also answered {} ({}), which this API does not take in a tool result.]",
            match kinds.len() {
                1 => "one attachment".to_owned(),
                n => format!("{n} attachments"),
            },
            kinds.join(", ")
        ))
    }
}
