//! What a `#[prompt]` or a `#[resource]` function may return, and how it becomes the
//! protocol's messages or contents. Unlike a tool's return value (any `Serialize` type),
//! these are small closed sets, so plain trait impls pick the conversion.

use super::content::{Content, EmbeddedResource};
use super::output::{Produced, ToolError};
use base64::Engine;
use serde::Serialize;
use serde_json::Value;
use std::fmt::Display;

/// Who says a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One message of a prompt: who says it, and what (text, an image, an embedded
/// resource...).
///
/// ```
/// use tool_runtime::prompt;
/// use tool_runtime::result::PromptMessage;
/// use tool_runtime::Content;
///
/// /// Review a diff for bugs.
/// #[prompt]
/// fn review(
///     /// The diff to review.
///     diff: String,
/// ) -> Vec<PromptMessage> {
///     vec![
///         PromptMessage::user(format!("Review this diff:\n{diff}")),
///         PromptMessage::assistant(Content::text("I will look for bugs first.")),
///     ]
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptMessage {
    role: Role,
    content: Content,
}

impl PromptMessage {
    /// A message from the user.
    pub fn user(content: impl Into<Content>) -> Self {
        PromptMessage {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the model.
    pub fn assistant(content: impl Into<Content>) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }

    /// Who says it.
    pub fn role(&self) -> Role {
        self.role
    }

    /// What it says.
    pub fn content(&self) -> &Content {
        &self.content
    }
}

/// A value a `#[prompt]` function can return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt",
    label = "a prompt returns its messages",
    note = "return a `String` (one message from the user), a `PromptMessage`, a \
            `Vec<PromptMessage>`, or a `Result` of one of these whose error implements `Display`"
)]
pub trait PromptOutput {
    /// The messages, or the prompt's own error.
    fn into_messages(self) -> Result<Vec<PromptMessage>, ToolError>;
}

impl PromptOutput for String {
    fn into_messages(self) -> Result<Vec<PromptMessage>, ToolError> {
        Ok(vec![PromptMessage::user(self)])
    }
}

impl PromptOutput for &str {
    fn into_messages(self) -> Result<Vec<PromptMessage>, ToolError> {
        Ok(vec![PromptMessage::user(self)])
    }
}

impl PromptOutput for PromptMessage {
    fn into_messages(self) -> Result<Vec<PromptMessage>, ToolError> {
        Ok(vec![self])
    }
}

impl PromptOutput for Vec<PromptMessage> {
    fn into_messages(self) -> Result<Vec<PromptMessage>, ToolError> {
        Ok(self)
    }
}

impl<T: PromptOutput, E: Display> PromptOutput for Result<T, E> {
    fn into_messages(self) -> Result<Vec<PromptMessage>, ToolError> {
        self.map_err(|error| ToolError::new(error.to_string()))?
            .into_messages()
    }
}

/// A value a `#[resource]` function can return: its contents.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource",
    label = "a resource returns its contents",
    note = "return a `String` (text), a `Vec<u8>` (binary), a `serde_json::Value` (JSON \
            text), an `EmbeddedResource` or a `Vec` of them, or a `Result` of one of these \
            whose error implements `Display`"
)]
pub trait ResourceOutput {
    /// The contents; a content without a URI gets the URI that was read.
    fn into_contents(self) -> Result<Vec<EmbeddedResource>, ToolError>;
}

fn contents(
    text: Option<String>,
    blob: Option<String>,
    mime_type: Option<&str>,
) -> EmbeddedResource {
    EmbeddedResource {
        uri: String::new(),
        mime_type: mime_type.map(str::to_owned),
        text,
        blob,
    }
}

impl ResourceOutput for String {
    fn into_contents(self) -> Result<Vec<EmbeddedResource>, ToolError> {
        Ok(vec![contents(Some(self), None, None)])
    }
}

impl ResourceOutput for &str {
    fn into_contents(self) -> Result<Vec<EmbeddedResource>, ToolError> {
        Ok(vec![contents(Some(self.to_owned()), None, None)])
    }
}

impl ResourceOutput for Vec<u8> {
    fn into_contents(self) -> Result<Vec<EmbeddedResource>, ToolError> {
        let blob = base64::engine::general_purpose::STANDARD.encode(self);
        Ok(vec![contents(None, Some(blob), None)])
    }
}

impl ResourceOutput for Value {
    fn into_contents(self) -> Result<Vec<EmbeddedResource>, ToolError> {
        Ok(vec![contents(
            Some(self.to_string()),
            None,
            Some("application/json"),
        )])
    }
}

impl ResourceOutput for EmbeddedResource {
    fn into_contents(self) -> Result<Vec<EmbeddedResource>, ToolError> {
        Ok(vec![self])
    }
}

impl ResourceOutput for Vec<EmbeddedResource> {
    fn into_contents(self) -> Result<Vec<EmbeddedResource>, ToolError> {
        Ok(self)
    }
}

impl<T: ResourceOutput, E: Display> ResourceOutput for Result<T, E> {
    fn into_contents(self) -> Result<Vec<EmbeddedResource>, ToolError> {
        self.map_err(|error| ToolError::new(error.to_string()))?
            .into_contents()
    }
}

/// A prompt's messages as dispatch carries them; generated code calls it.
#[doc(hidden)]
pub fn prompt_output<T: PromptOutput>(output: T) -> Result<Produced, ToolError> {
    let messages = output.into_messages()?;
    serde_json::to_value(messages)
        .map(Produced::Json)
        .map_err(|error| ToolError::new(format!("the prompt's messages cannot be sent: {error}")))
}

/// A resource's contents as dispatch carries them; generated code calls it.
#[doc(hidden)]
pub fn resource_output<T: ResourceOutput>(output: T) -> Result<Produced, ToolError> {
    let contents = output.into_contents()?;
    serde_json::to_value(contents)
        .map(Produced::Json)
        .map_err(|error| ToolError::new(format!("the resource's contents cannot be sent: {error}")))
}
