//! Prompts and resources in the registry: getting a prompt's messages, reading a resource
//! by URI, completing an argument, and telling subscribers a resource changed. Each runs
//! through the same dispatch as a tool call (argument checks, injected state, time limits,
//! panics caught), with its own errors.

use super::Registry;
use crate::call::complete::{self, CompletionContext};
use crate::call::content::EmbeddedResource;
use crate::call::context::CallContext;
use crate::call::error::CallError;
use crate::call::runnable::ToolRef;
use crate::catalog::{Prompt, Resource, Tool};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Why a prompt could not be got or a resource read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SurfaceError {
    /// No prompt has this name.
    UnknownPrompt {
        /// The name asked for.
        name: String,
    },
    /// No resource or resource template matches this URI.
    UnknownResource {
        /// The URI asked for.
        uri: String,
    },
    /// The arguments (or the URI's variables) were refused; the message says which and why.
    InvalidArguments(String),
    /// The function returned an error; its message is shown as is.
    Failed(String),
    /// The function panicked, ran past its time limit, or lacks its state (the details are
    /// in the server's log).
    Internal(String),
}

impl fmt::Display for SurfaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SurfaceError::UnknownPrompt { name } => write!(f, "Unknown prompt: {name}"),
            SurfaceError::UnknownResource { uri } => write!(f, "Resource not found: {uri}"),
            SurfaceError::InvalidArguments(message)
            | SurfaceError::Failed(message)
            | SurfaceError::Internal(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for SurfaceError {}

/// Tells clients that a resource changed: those subscribed to its URI get
/// `notifications/resources/updated`. Cheap to clone; keep one in your state so the code
/// that changes a resource can say so.
///
/// ```
/// use tool_runtime::Registry;
/// use tool_runtime::registry::ResourceUpdates;
///
/// struct Files { updates: ResourceUpdates }
///
/// let builder = Registry::builder();
/// let updates = builder.resource_updates();
/// let registry = builder.state(Files { updates: updates.clone() }).build().unwrap();
/// // Later, where a file is written:
/// updates.updated("files:///notes.txt");
/// # drop(registry);
/// ```
#[derive(Debug, Clone)]
pub struct ResourceUpdates {
    sender: tokio::sync::broadcast::Sender<Arc<str>>,
}

impl Default for ResourceUpdates {
    fn default() -> Self {
        // A subscriber that falls this far behind skips to the newest updates.
        let (sender, _) = tokio::sync::broadcast::channel(256);
        ResourceUpdates { sender }
    }
}

impl ResourceUpdates {
    /// The resource at `uri` changed.
    pub fn updated(&self, uri: &str) {
        let _ = self.sender.send(Arc::from(uri));
    }

    pub(crate) fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Arc<str>> {
        self.sender.subscribe()
    }
}

/// What a completion answers: at most 100 values, and how many there are in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The candidates, best first.
    pub values: Vec<String>,
    /// How many candidates there are, the values given included.
    pub total: usize,
}

impl Completion {
    /// Whether more candidates exist than the values given.
    pub fn has_more(&self) -> bool {
        self.total > self.values.len()
    }
}

/// What a completion is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionTarget<'a> {
    /// An argument of the prompt with this name.
    Prompt(&'a str),
    /// A variable of the resource template with this URI template.
    Resource(&'a str),
}

impl Registry {
    /// Every prompt, sorted by name.
    pub fn prompts(&self) -> &'static [Prompt] {
        self.statics.catalog.prompts()
    }

    /// Every resource and resource template, sorted by URI.
    pub fn resources(&self) -> &'static [Resource] {
        self.statics.catalog.resources()
    }

    /// The handle that tells subscribed clients a resource changed.
    pub fn resource_updates(&self) -> &ResourceUpdates {
        &self.resource_updates
    }

    /// Whether `uri` names a resource or matches a resource template.
    pub fn has_resource(&self, uri: &str) -> bool {
        self.find_resource(uri).is_some()
    }

    /// The resource `uri` reads, and the template variables it gives: the resource with
    /// that exact URI, else the first template (in URI order) that matches it.
    fn find_resource(&self, uri: &str) -> Option<(usize, Vec<(String, String)>)> {
        let resources = self.resources();
        let exact = resources
            .iter()
            .position(|resource| !resource.is_template() && resource.uri() == uri);
        exact.map(|index| (index, Vec::new())).or_else(|| {
            resources.iter().enumerate().find_map(|(index, resource)| {
                let variables = resource.template().match_uri(uri)?;
                resource.is_template().then_some((index, variables))
            })
        })
    }

    /// The messages of the prompt `name`, filled in with `arguments` (a JSON object of
    /// strings, or `null`).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<Vec<Value>, SurfaceError> {
        self.get_prompt_in(name, arguments, &self.context).await
    }

    pub(crate) async fn get_prompt_in(
        &self,
        name: &str,
        arguments: Value,
        context: &CallContext,
    ) -> Result<Vec<Value>, SurfaceError> {
        let statics = self.statics;
        let index =
            statics
                .catalog
                .prompt_position(name)
                .ok_or_else(|| SurfaceError::UnknownPrompt {
                    name: name.to_owned(),
                })?;
        let prompt = &statics.catalog.prompts()[index];
        let tool = ToolRef::of_static(prompt.about(), &statics.prompt_runnables[index]);
        let arguments = match arguments {
            Value::Object(map) => Value::Object(coerce(prompt.about(), map)),
            other => other,
        };
        let output = self.run(tool, arguments, "prompt", context).await?;
        match output {
            Value::Array(messages) => Ok(messages),
            other => Ok(vec![other]),
        }
    }

    /// The contents of the resource at `uri`: the resource with that exact URI, else the
    /// first template (in URI order) that matches it.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<EmbeddedResource>, SurfaceError> {
        self.read_resource_in(uri, &self.context).await
    }

    pub(crate) async fn read_resource_in(
        &self,
        uri: &str,
        context: &CallContext,
    ) -> Result<Vec<EmbeddedResource>, SurfaceError> {
        let statics = self.statics;
        let Some((index, variables)) = self.find_resource(uri) else {
            return Err(SurfaceError::UnknownResource {
                uri: uri.to_owned(),
            });
        };
        let resource = &statics.catalog.resources()[index];
        let tool = ToolRef::of_static(resource.about(), &statics.resource_runnables[index]);
        let arguments: Map<String, Value> = variables
            .into_iter()
            .map(|(name, value)| (name, Value::String(value)))
            .collect();
        let arguments = Value::Object(coerce(resource.about(), arguments));
        let output = self.run(tool, arguments, "resource", context).await?;
        let mut contents: Vec<EmbeddedResource> =
            serde_json::from_value(output).map_err(|error| {
                SurfaceError::Internal(format!("the resource's contents are malformed: {error}"))
            })?;
        for content in &mut contents {
            if content.uri.is_empty() {
                uri.clone_into(&mut content.uri);
            }
            if content.mime_type.is_none() {
                content.mime_type = resource.mime_type().map(str::to_owned);
            }
        }
        Ok(contents)
    }

    /// The candidates for the argument `argument` of a prompt, or the variable of a
    /// resource template, given the text typed so far and the arguments already given.
    ///
    /// Its `#[arg(complete = ...)]` function answers when it has one; else an enumeration
    /// completes from its values; else there are no candidates.
    pub fn complete(
        &self,
        target: CompletionTarget<'_>,
        argument: &str,
        typed: &str,
        context: &CompletionContext,
    ) -> Result<Completion, SurfaceError> {
        let statics = self.statics;
        let (about, runnable) = match target {
            CompletionTarget::Prompt(name) => {
                let index = statics.catalog.prompt_position(name).ok_or_else(|| {
                    SurfaceError::UnknownPrompt {
                        name: name.to_owned(),
                    }
                })?;
                (
                    statics.catalog.prompts()[index].about(),
                    &statics.prompt_runnables[index],
                )
            }
            CompletionTarget::Resource(uri) => {
                let index = statics
                    .catalog
                    .resources()
                    .iter()
                    .position(|resource| resource.uri() == uri)
                    .ok_or_else(|| SurfaceError::UnknownResource {
                        uri: uri.to_owned(),
                    })?;
                (
                    statics.catalog.resources()[index].about(),
                    &statics.resource_runnables[index],
                )
            }
        };
        let Some(position) = about
            .params()
            .iter()
            .position(|param| param.name() == argument && !param.is_injected())
        else {
            let known: Vec<&str> = about.arguments().map(|param| param.name()).collect();
            return Err(SurfaceError::InvalidArguments(format!(
                "`{}` has no argument `{argument}`; its arguments: {}",
                about.name(),
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )));
        };
        let mut values = match runnable.completer(position) {
            Some(function) => {
                let caught = std::panic::catch_unwind(|| function(typed, context));
                caught.map_err(|payload| {
                    tracing::error!(
                        target_name = about.name(),
                        argument,
                        panic = %crate::call::invoke::panic_message(payload.as_ref()),
                        "a completion function panicked"
                    );
                    SurfaceError::Internal("Internal error: the completion failed".to_owned())
                })?
            }
            None => {
                let schema = about.input_schema();
                let values = enum_values(schema, &schema["properties"][argument], 0);
                complete::from_enum(&values, typed)
            }
        };
        let total = values.len();
        values.truncate(complete::MAX_VALUES);
        Ok(Completion { values, total })
    }
}

impl Registry {
    /// Runs a prompt or a resource through dispatch; its output, or the error in its terms.
    async fn run(
        &self,
        tool: ToolRef,
        arguments: Value,
        what: &str,
        context: &CallContext,
    ) -> Result<Value, SurfaceError> {
        let limit = tool.timeout().or(self.default_timeout);
        let name = tool.name().to_owned();
        let outcome = match crate::call::start(&tool, &arguments, context) {
            crate::call::Started::Finished(outcome) => outcome,
            crate::call::Started::Pending(invocation) => {
                crate::call::complete(&tool, invocation, context, limit).await
            }
        };
        match outcome {
            Ok(answer) => Ok(answer.value),
            Err(CallError::InvalidArguments { problems, .. }) => {
                let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
                Err(SurfaceError::InvalidArguments(format!(
                    "Invalid arguments for {what} `{name}`: {}",
                    problems.join("; ")
                )))
            }
            Err(CallError::Failed { message, .. }) => Err(SurfaceError::Failed(message)),
            Err(CallError::TimedOut { after, .. }) => Err(SurfaceError::Internal(format!(
                "{what} `{name}` did not finish within {} and was stopped",
                crate::call::error::show_duration(after)
            ))),
            Err(_) => Err(SurfaceError::Internal(format!(
                "Internal error: {what} `{name}` failed"
            ))),
        }
    }
}

/// The values an enumeration allows, seen through `$ref`, `anyOf`/`oneOf` (an `Option`,
/// documented variants as `const`s); empty for anything else.
fn enum_values(root: &Value, schema: &Value, depth: usize) -> Vec<Value> {
    if depth > 8 {
        return Vec::new();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.clone();
    }
    if let Some(value) = schema.get("const") {
        return vec![value.clone()];
    }
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        let pointer = target.trim_start_matches('#');
        return root
            .pointer(pointer)
            .map(|found| enum_values(root, found, depth + 1))
            .unwrap_or_default();
    }
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .flatten()
        .flat_map(|branch| enum_values(root, branch, depth + 1))
        .collect()
}

/// Arguments arrive as strings (prompt arguments, URI variables); a parameter whose schema
/// says number, integer or boolean gets the string read as one, so `id: u32` works. A
/// string that does not read as one stays a string, and validation says what was expected.
fn coerce(about: &Tool, arguments: Map<String, Value>) -> Map<String, Value> {
    let properties = &about.input_schema()["properties"];
    arguments
        .into_iter()
        .map(|(name, value)| {
            let Value::String(text) = &value else {
                return (name, value);
            };
            let kind = properties[&name]["type"].as_str().unwrap_or("string");
            let coerced = match kind {
                "integer" => text.parse::<i64>().ok().map(Value::from),
                "number" => text.parse::<f64>().ok().map(Value::from),
                "boolean" => text.parse::<bool>().ok().map(Value::from),
                _ => None,
            };
            (name, coerced.unwrap_or(value))
        })
        .collect()
}

/// The arguments a client sends with a completion, as the context functions see.
pub(crate) fn completion_context(arguments: Option<&Map<String, Value>>) -> CompletionContext {
    let arguments: BTreeMap<String, String> = arguments
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_owned())))
        .collect();
    CompletionContext::new(arguments)
}
