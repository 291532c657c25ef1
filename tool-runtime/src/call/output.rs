//! Turning a tool's return value into JSON, and finding its output schema.
//!
//! A tool returns any `T: Serialize`, or a `Result<T, E>` with `E: Display`, or nothing.
//! `Result` cannot be told apart from other serializable types by a trait impl (it is
//! itself `Serialize`), so generated code picks the conversion by autoref specialization
//! on the concrete return type: the more specific impl sits behind more references.

use super::content::{AnswerBlocks, Content, IntoContent};
use super::error::FailedAnswer;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::Value;
use std::fmt::{self, Display};
use std::marker::PhantomData;

/// A tool's own failure: an `Err` it returned, with the error's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
    /// Another server's error answer, when this failure passes one on.
    answer: Option<Box<FailedAnswer>>,
}

impl ToolError {
    /// A failure with this message, shown to the caller as is.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            answer: None,
        }
    }

    /// Another server's error answer, passed on: its content blocks (as it sent them) and
    /// structured content. Its message, for callers that read words only (REST, an agent's
    /// model, logs), is the text of its text blocks, else its structured content as JSON.
    // Made by a mount (feature `client`); read everywhere.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn relayed(blocks: AnswerBlocks, structured: Option<Value>) -> Self {
        let text = super::result::text_for_model(Some(blocks.read()), || &Value::Null);
        let message = match (text.is_empty(), &structured) {
            (false, _) => text.into_owned(),
            (true, Some(structured)) => structured.to_string(),
            (true, None) => "the tool reported an error and gave no text".to_owned(),
        };
        ToolError {
            message,
            answer: Some(Box::new(FailedAnswer { blocks, structured })),
        }
    }

    /// The message shown to the caller.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message, and another server's error answer when this failure passes one on.
    pub(crate) fn into_parts(self) -> (String, Option<Box<FailedAnswer>>) {
        (self.message, self.answer)
    }
}

impl Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// A value a tool can return: anything serializable.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "the tool's result must be serialized to JSON",
    note = "return a type that implements `serde::Serialize` (derive it), or a \
            `Result<T, E>` where `T: Serialize` and `E: Display`"
)]
pub trait ToolOutput {
    /// The value as JSON.
    fn to_json(&self) -> Result<Value, ToolError>;
}

impl<T: Serialize + ?Sized> ToolOutput for T {
    fn to_json(&self) -> Result<Value, ToolError> {
        serde_json::to_value(self).map_err(|error| {
            tracing::error!(%error, "a tool returned a value that cannot be serialized");
            ToolError::new("the tool returned a value that cannot be represented as JSON")
        })
    }
}

/// What a tool produced: JSON data, or content blocks to show as they are.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub enum Produced {
    /// JSON data: the tool's value (MCP's handshake era wraps it as `{"result": ...}` on
    /// its wire when it is not an object).
    Json(Value),
    /// MCP content blocks.
    Content(Vec<Content>),
    /// What another server's tool answered, passed on as it came: its content blocks, and
    /// its structured content when it has some.
    Relayed {
        /// Its content blocks, as the server sent them.
        content: RelayedJson,
        /// Its structured content, as the server sent it.
        structured: Option<RelayedJson>,
    },
}

/// JSON another server sent (its content blocks, its structured content), as the text it
/// came as.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub struct RelayedJson(pub(crate) Box<serde_json::value::RawValue>);

/// Equal when written the same.
impl PartialEq for RelayedJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

/// Stands for a return type `R` while generated code picks how to handle it.
#[doc(hidden)]
pub struct OutputProbe<R>(PhantomData<fn() -> R>);

impl<R> OutputProbe<R> {
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        OutputProbe(PhantomData)
    }
}

/// The return type is `Result<C, E>` with `C` content and `E: Display`.
#[doc(hidden)]
pub struct ContentResultKind;
/// The return type is content.
#[doc(hidden)]
pub struct ContentKind;
/// The return type is `Result<T, E>` with `E: Display`.
#[doc(hidden)]
pub struct ResultKind;
/// Any other return type: it must be `Serialize`.
#[doc(hidden)]
pub struct SerializeKind;

#[doc(hidden)]
pub trait ViaContentResult {
    fn tool_output_kind(&self) -> ContentResultKind {
        ContentResultKind
    }
}
impl<C: IntoContent, E: Display> ViaContentResult for &&&OutputProbe<Result<C, E>> {}

#[doc(hidden)]
pub trait ViaContent {
    fn tool_output_kind(&self) -> ContentKind {
        ContentKind
    }
}
impl<C: IntoContent> ViaContent for &&OutputProbe<C> {}

#[doc(hidden)]
pub trait ViaResult {
    fn tool_output_kind(&self) -> ResultKind {
        ResultKind
    }
}
// Any `Result`, so one whose error type lacks `Display` is told exactly that (rather than
// falling through to the plain serializable kind and being told to derive `Serialize`).
impl<T, E> ViaResult for &OutputProbe<Result<T, E>> {}

#[doc(hidden)]
pub trait ViaSerialize {
    fn tool_output_kind(&self) -> SerializeKind {
        SerializeKind
    }
}
impl<R> ViaSerialize for OutputProbe<R> {}

/// A tool's `Err`, with the whole chain for errors that have one (anyhow, eyre show it
/// with `{:#}`).
fn failure<E: Display>(error: E) -> ToolError {
    ToolError::new(format!("{error:#}"))
}

impl ContentResultKind {
    pub fn convert<C: IntoContent, E: Display>(
        self,
        result: Result<C, E>,
    ) -> Result<Produced, ToolError> {
        result
            .map(|content| Produced::Content(content.into_content()))
            .map_err(failure)
    }
}

impl ContentKind {
    pub fn convert<C: IntoContent>(self, content: C) -> Result<Produced, ToolError> {
        Ok(Produced::Content(content.into_content()))
    }
}

impl ResultKind {
    pub fn convert<T: ToolOutput, E: Display>(
        self,
        result: Result<T, E>,
    ) -> Result<Produced, ToolError> {
        match result {
            Ok(value) => value.to_json().map(Produced::Json),
            Err(error) => Err(failure(error)),
        }
    }
}

impl SerializeKind {
    pub fn convert<R: ToolOutput>(self, value: R) -> Result<Produced, ToolError> {
        value.to_json().map(Produced::Json)
    }
}

fn root_schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.root_schema_for::<T>()
}

// Four levels, most specific first: Result with a described T, Result without, a described
// type, anything else.
#[doc(hidden)]
pub trait OutputSchemaViaResult {
    fn output_schema(&self, generator: &mut SchemaGenerator) -> Option<Schema>;
}
impl<T: JsonSchema, E> OutputSchemaViaResult for &&&OutputProbe<Result<T, E>> {
    fn output_schema(&self, generator: &mut SchemaGenerator) -> Option<Schema> {
        Some(root_schema_of::<T>(generator))
    }
}
#[doc(hidden)]
pub trait OutputSchemaNoneForResult {
    fn output_schema(&self, _generator: &mut SchemaGenerator) -> Option<Schema> {
        None
    }
}
impl<T, E> OutputSchemaNoneForResult for &&OutputProbe<Result<T, E>> {}
#[doc(hidden)]
pub trait OutputSchemaViaType {
    fn output_schema(&self, generator: &mut SchemaGenerator) -> Option<Schema>;
}
impl<T: JsonSchema> OutputSchemaViaType for &OutputProbe<T> {
    fn output_schema(&self, generator: &mut SchemaGenerator) -> Option<Schema> {
        Some(root_schema_of::<T>(generator))
    }
}
#[doc(hidden)]
pub trait OutputSchemaNone {
    fn output_schema(&self, _generator: &mut SchemaGenerator) -> Option<Schema> {
        None
    }
}
impl<T> OutputSchemaNone for OutputProbe<T> {}

/// Stands for a parameter's default value while generated code asks whether it can be
/// shown in the schema (only when its type is `Serialize`).
#[doc(hidden)]
pub struct DefaultProbe<'a, T>(pub &'a T);

#[doc(hidden)]
pub trait DefaultViaSerialize {
    fn default_json(&self) -> Option<Value>;
}
impl<T: Serialize> DefaultViaSerialize for &DefaultProbe<'_, T> {
    fn default_json(&self) -> Option<Value> {
        serde_json::to_value(self.0).ok()
    }
}
#[doc(hidden)]
pub trait DefaultNotShown {
    fn default_json(&self) -> Option<Value> {
        None
    }
}
impl<T> DefaultNotShown for DefaultProbe<'_, T> {}

// The extra borrows are the point: they pick the impl, exactly as generated code does.
#[cfg(test)]
#[allow(clippy::needless_borrow)]
mod tests {
    use super::*;

    #[derive(Serialize, JsonSchema)]
    struct Described {
        x: i32,
    }
    #[derive(Serialize)]
    struct Plain;
    struct Opaque;

    #[test]
    fn results_plain_values_and_content_convert() {
        let ok: Result<i32, String> = Ok(3);
        assert_eq!(
            (&&&&OutputProbe::<Result<i32, String>>::new())
                .tool_output_kind()
                .convert(ok),
            Ok(Produced::Json(Value::from(3)))
        );
        let err: Result<i32, String> = Err("no station".into());
        assert_eq!(
            (&&&&OutputProbe::<Result<i32, String>>::new())
                .tool_output_kind()
                .convert(err),
            Err(ToolError::new("no station"))
        );
        assert_eq!(
            (&&&&OutputProbe::<Vec<u8>>::new())
                .tool_output_kind()
                .convert(vec![1u8]),
            Ok(Produced::Json(serde_json::json!([1])))
        );
        assert_eq!(
            (&&&&OutputProbe::<()>::new())
                .tool_output_kind()
                .convert(()),
            Ok(Produced::Json(Value::Null))
        );
        assert_eq!(
            (&&&&OutputProbe::<Content>::new())
                .tool_output_kind()
                .convert(Content::text("hi")),
            Ok(Produced::Content(vec![Content::text("hi")]))
        );
        let content: Result<Vec<Content>, String> = Ok(vec![Content::text("a")]);
        assert_eq!(
            (&&&&OutputProbe::<Result<Vec<Content>, String>>::new())
                .tool_output_kind()
                .convert(content),
            Ok(Produced::Content(vec![Content::text("a")]))
        );
        let failed: Result<Content, String> = Err("no image".into());
        assert_eq!(
            (&&&&OutputProbe::<Result<Content, String>>::new())
                .tool_output_kind()
                .convert(failed),
            Err(ToolError::new("no image"))
        );
    }

    #[test]
    fn output_schemas_follow_the_type() {
        let mut generator = SchemaGenerator::default();
        assert!((&&&&OutputProbe::<Described>::new())
            .output_schema(&mut generator)
            .is_some());
        assert!((&&&&OutputProbe::<Result<Described, String>>::new())
            .output_schema(&mut generator)
            .is_some());
        assert!((&&&&OutputProbe::<Result<Plain, String>>::new())
            .output_schema(&mut generator)
            .is_none());
        assert!((&&&&OutputProbe::<Plain>::new())
            .output_schema(&mut generator)
            .is_none());
    }

    #[test]
    fn defaults_show_only_when_serializable() {
        assert_eq!((&&DefaultProbe(&5u8)).default_json(), Some(Value::from(5)));
        assert_eq!((&&DefaultProbe(&Opaque)).default_json(), None);
    }
}
