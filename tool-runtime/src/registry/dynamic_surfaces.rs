//! Prompts and resources made at run time from closures, as `DynamicTool` makes tools: for
//! what only the running program knows (the files of a workspace opened at start-up, the
//! prompts a user saved).

use super::dynamic::{checked_name, described};
use super::RegistryError;
use crate::call::complete::CompletionContext;
use crate::call::dynamic::{closure_handler_with, DynamicHandler};
use crate::call::runnable::{Entry, Runnable};
use crate::call::surface_output::{prompt_output, resource_output, PromptOutput, ResourceOutput};
use crate::catalog::uri_template::UriTemplate;
use crate::catalog::{ItemKind, Prompt, Resource, Tool};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::{self, Display};
use std::future::Future;
use std::sync::Arc;

/// A completion function given to a run-time prompt or resource template.
pub(crate) type DynCompleter = Arc<dyn Fn(&str, &CompletionContext) -> Vec<String> + Send + Sync>;

/// A prompt or resource added at run time, kept with how it runs and completes.
pub(crate) struct Surfaced<T> {
    pub(crate) item: T,
    pub(crate) runnable: Runnable,
    /// Completion functions by argument name.
    pub(crate) completers: BTreeMap<String, DynCompleter>,
}

impl<T: Surface> Entry for Surfaced<T> {
    fn tool(&self) -> &Tool {
        self.item.about()
    }
    fn runnable(&self) -> &Runnable {
        &self.runnable
    }
}

/// A prompt or a resource, seen the way the registry handles both.
pub(crate) trait Surface: Send + Sync + 'static {
    /// Which kind it is.
    const KIND: ItemKind;
    /// The description dispatch runs it by.
    fn about(&self) -> &Tool;
    fn about_mut(&mut self) -> &mut Tool;
    /// What identifies it: a prompt's name, a resource's URI (or URI template).
    fn key(&self) -> &str;
}

impl Surface for Prompt {
    const KIND: ItemKind = ItemKind::Prompt;
    fn about(&self) -> &Tool {
        Prompt::about(self)
    }
    fn about_mut(&mut self) -> &mut Tool {
        Prompt::about_mut(self)
    }
    fn key(&self) -> &str {
        self.name()
    }
}

impl Surface for Resource {
    const KIND: ItemKind = ItemKind::Resource;
    fn about(&self) -> &Tool {
        Resource::about(self)
    }
    fn about_mut(&mut self) -> &mut Tool {
        Resource::about_mut(self)
    }
    fn key(&self) -> &str {
        self.uri()
    }
}

/// The builder steps a run-time prompt and resource share.
impl<T: Surface> Surfaced<T> {
    fn titled(mut self, title: String) -> Self {
        self.item.about_mut().set_title(Some(title));
        self
    }

    fn timed(mut self, limit: std::time::Duration) -> Self {
        self.item.about_mut().set_timeout(Some(limit));
        self
    }

    fn completing(mut self, argument: &str, complete: DynCompleter) -> Self {
        self.completers.insert(argument.to_owned(), complete);
        self
    }
}

/// The argument type of a prompt or resource that takes none.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArguments {}

/// A prompt made at run time, ready to add to a [`Registry`](crate::Registry) with
/// [`add_prompt`](crate::Registry::add_prompt) or
/// [`RegistryBuilder::prompt`](super::RegistryBuilder::prompt).
///
/// Its arguments are a struct deriving `Deserialize` and `JsonSchema` (clients send them as
/// strings; a field typed as a number or a boolean gets the string read as one). They are
/// listed in name order, since a schema does not keep the order of a struct's fields:
///
/// ```
/// use tool_runtime::registry::DynamicPrompt;
/// use tool_runtime::Registry;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Topic {
///     /// What to explain.
///     topic: String,
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let explain = DynamicPrompt::new(
///     "explain",
///     "Explain a topic simply.",
///     |args: Topic| async move {
///         Ok::<_, String>(format!("Explain {} to a ten-year-old.", args.topic))
///     },
/// )
/// .unwrap()
/// .complete("topic", |typed, _| {
///     ["gravity", "glaciers"]
///         .iter()
///         .filter(|t| t.starts_with(typed))
///         .map(|t| t.to_string())
///         .collect()
/// });
/// let registry = Registry::builder().prompt(explain).build().unwrap();
/// let messages = registry
///     .get_prompt("explain", serde_json::json!({"topic": "tides"}))
///     .await
///     .unwrap();
/// assert_eq!(messages[0]["content"]["text"], "Explain tides to a ten-year-old.");
/// # });
/// ```
pub struct DynamicPrompt {
    pub(crate) entry: Surfaced<Prompt>,
}

impl fmt::Debug for DynamicPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicPrompt")
            .field("prompt", &self.entry.item)
            .finish_non_exhaustive()
    }
}

impl DynamicPrompt {
    /// A prompt named `name`, described by `description`, whose messages `handler` makes
    /// from its arguments read into `A`.
    ///
    /// Fails when the name breaks the naming rule or `A` is not described as an object.
    pub fn new<A, F, Fut, P, E>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Result<DynamicPrompt, RegistryError>
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<P, E>> + Send + 'static,
        P: PromptOutput + 'static,
        E: Display,
    {
        let name = checked_name(ItemKind::Prompt, name.into())?;
        let about = described::<A>(ItemKind::Prompt, name, description.into(), None)?;
        let handler = closure_handler_with(handler, prompt_output);
        Ok(DynamicPrompt {
            entry: surfaced(Prompt::new(about), handler),
        })
    }

    /// A prompt that takes no arguments.
    pub fn without_arguments<F, Fut, P, E>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Result<DynamicPrompt, RegistryError>
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<P, E>> + Send + 'static,
        P: PromptOutput + 'static,
        E: Display,
    {
        DynamicPrompt::new(name, description, move |_: NoArguments| handler())
    }

    /// A human-friendly title clients may show instead of the name.
    pub fn title(self, title: impl Into<String>) -> Self {
        Self {
            entry: self.entry.titled(title.into()),
        }
    }

    /// Stops a prompt that takes longer than `limit` to make its messages.
    pub fn timeout(self, limit: std::time::Duration) -> Self {
        Self {
            entry: self.entry.timed(limit),
        }
    }

    /// Completes the argument `argument` with `complete` (the text typed so far and the
    /// arguments already given in, the candidates out).
    pub fn complete(
        self,
        argument: &str,
        complete: impl Fn(&str, &CompletionContext) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            entry: self.entry.completing(argument, Arc::new(complete)),
        }
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        self.entry.item.name()
    }

    /// The prompt as clients see it.
    pub fn prompt(&self) -> &Prompt {
        &self.entry.item
    }
}

#[cfg(feature = "client")]
impl DynamicPrompt {
    /// A prompt described as another server lists one (its arguments by name, each a
    /// string, required or not), whose messages `handler` gets with the arguments as they
    /// came and the call's context: the prompts of a mounted server.
    pub(crate) fn relayed(
        name: String,
        description: String,
        arguments: &[(String, Option<String>, bool)],
        handler: Arc<dyn DynamicHandler>,
    ) -> Result<DynamicPrompt, RegistryError> {
        let name = checked_name(ItemKind::Prompt, name)?;
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for (argument, about, needed) in arguments {
            let mut property = serde_json::json!({"type": "string"});
            if let Some(about) = about {
                property["description"] = about.clone().into();
            }
            properties.insert(argument.clone(), property);
            if *needed {
                required.push(serde_json::Value::String(argument.clone()));
            }
        }
        let schema =
            serde_json::json!({"type": "object", "properties": properties, "required": required});
        let params = super::dynamic::params_of(&schema);
        let about = Tool::dynamic(name, description, schema, None, params);
        Ok(DynamicPrompt {
            entry: surfaced(Prompt::new(about), handler),
        })
    }
}

#[cfg(feature = "client")]
impl DynamicResource {
    /// A resource (or template) of another server, listed under `name`, whose reads
    /// `handler` gets as `{"uri": ...}` (with the template's variables beside it) and
    /// passes on.
    pub(crate) fn relayed(
        uri: &str,
        name: String,
        description: String,
        handler: Arc<dyn DynamicHandler>,
    ) -> Result<DynamicResource, RegistryError> {
        let template = UriTemplate::parse(uri).map_err(|error| RegistryError::InvalidResource {
            uri: uri.to_owned(),
            reason: error.to_string(),
        })?;
        let mut properties = serde_json::Map::new();
        for variable in template.variables() {
            properties.insert(variable.to_owned(), serde_json::json!({"type": "string"}));
        }
        let schema = serde_json::json!({"type": "object", "properties": properties});
        let params = super::dynamic::params_of(&schema);
        let about = Tool::dynamic(name, description, schema, None, params);
        let mut resource = Resource::new(about, template, None, None);
        resource.set_relays_uri();
        Ok(DynamicResource {
            entry: surfaced(resource, handler),
        })
    }

    /// Sets the title (what another server says of its resource).
    pub(crate) fn titled_as(self, title: Option<String>) -> Self {
        match title {
            Some(title) => self.title(title),
            None => self,
        }
    }
}

/// A resource (or a resource template) made at run time, ready to add to a
/// [`Registry`](crate::Registry) with [`add_resource`](crate::Registry::add_resource) or
/// [`RegistryBuilder::resource`](super::RegistryBuilder::resource).
///
/// A plain resource has a fixed URI; a template's URI has RFC 6570 variables, each a field
/// of its argument struct, and it answers every URI it matches:
///
/// ```
/// use tool_runtime::registry::DynamicResource;
/// use tool_runtime::Registry;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Note {
///     /// The note's number.
///     id: u32,
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let readme = DynamicResource::new("notes://readme", "readme", "How notes work.", || async {
///     Ok::<_, String>("Notes are numbered from 1.")
/// })
/// .unwrap()
/// .mime_type("text/plain");
/// let note = DynamicResource::template(
///     "notes://{id}",
///     "note",
///     "One note.",
///     |args: Note| async move { Ok::<_, String>(format!("note {}", args.id)) },
/// )
/// .unwrap();
/// let registry = Registry::builder().resource(readme).resource(note).build().unwrap();
/// let contents = registry.read_resource("notes://7").await.unwrap();
/// assert_eq!(contents[0].text.as_deref(), Some("note 7"));
/// # });
/// ```
pub struct DynamicResource {
    pub(crate) entry: Surfaced<Resource>,
}

impl fmt::Debug for DynamicResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicResource")
            .field("resource", &self.entry.item)
            .finish_non_exhaustive()
    }
}

impl DynamicResource {
    /// The resource at the fixed URI `uri`, shown to clients as `name`, whose contents
    /// `handler` reads.
    ///
    /// Fails when `uri` has template variables (use [`DynamicResource::template`]) or is
    /// not a URI.
    pub fn new<F, Fut, R, E>(
        uri: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Result<DynamicResource, RegistryError>
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
        R: ResourceOutput + 'static,
        E: Display,
    {
        DynamicResource::build(uri.into(), name.into(), description.into(), false, {
            move |_: NoArguments| handler()
        })
    }

    /// The resource template `template` (an RFC 6570 URI template such as
    /// `files:///{+path}`), whose every variable is a field of `A`, and every field of `A`
    /// a variable.
    pub fn template<A, F, Fut, R, E>(
        template: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Result<DynamicResource, RegistryError>
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
        R: ResourceOutput + 'static,
        E: Display,
    {
        DynamicResource::build(
            template.into(),
            name.into(),
            description.into(),
            true,
            handler,
        )
    }

    fn build<A, F, Fut, R, E>(
        uri: String,
        name: String,
        description: String,
        template_wanted: bool,
        handler: F,
    ) -> Result<DynamicResource, RegistryError>
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
        R: ResourceOutput + 'static,
        E: Display,
    {
        let invalid = |reason: String| RegistryError::InvalidResource {
            uri: uri.clone(),
            reason,
        };
        let template = UriTemplate::parse(&uri).map_err(|error| invalid(error.to_string()))?;
        if !template.has_scheme() {
            return Err(invalid(
                "a resource URI starts with a scheme, such as `files://`".to_owned(),
            ));
        }
        match (template_wanted, template.is_template()) {
            (false, true) => {
                return Err(invalid(
                    "it has template variables; make it with DynamicResource::template".to_owned(),
                ))
            }
            (true, false) => {
                return Err(invalid(
                    "it has no template variables; make it with DynamicResource::new".to_owned(),
                ))
            }
            _ => {}
        }
        let about = described::<A>(ItemKind::Resource, name, description, None)?;
        let fields: Vec<&str> = about.arguments().map(|param| param.name()).collect();
        let variables: Vec<&str> = template.variables().collect();
        if let Some(missing) = variables.iter().find(|v| !fields.contains(v)) {
            return Err(invalid(format!(
                "the template variable `{missing}` is not a field of the argument type (its \
                fields: {})",
                list_or_none(&fields)
            )));
        }
        if let Some(extra) = fields.iter().find(|f| !variables.contains(f)) {
            return Err(invalid(format!(
                "the argument field `{extra}` is not a variable of the template (its variables: \
                {})",
                list_or_none(&variables)
            )));
        }
        let handler = closure_handler_with(handler, resource_output);
        let resource = Resource::new(about, template, None, None);
        Ok(DynamicResource {
            entry: surfaced(resource, handler),
        })
    }

    /// The MIME type of the contents, when every read has the same one.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.entry.item.set_mime_type(Some(mime_type.into()));
        self
    }

    /// The size of the contents in bytes, when known before reading.
    pub fn size(mut self, bytes: u64) -> Self {
        self.entry.item.set_size(Some(bytes));
        self
    }

    /// A human-friendly title clients may show instead of the name.
    pub fn title(self, title: impl Into<String>) -> Self {
        Self {
            entry: self.entry.titled(title.into()),
        }
    }

    /// Stops a read that takes longer than `limit`.
    pub fn timeout(self, limit: std::time::Duration) -> Self {
        Self {
            entry: self.entry.timed(limit),
        }
    }

    /// Completes the template variable `variable` with `complete`.
    pub fn complete(
        self,
        variable: &str,
        complete: impl Fn(&str, &CompletionContext) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            entry: self.entry.completing(variable, Arc::new(complete)),
        }
    }

    /// The URI, or the URI template.
    pub fn uri(&self) -> &str {
        self.entry.item.uri()
    }

    /// The resource as clients see it.
    pub fn resource(&self) -> &Resource {
        &self.entry.item
    }
}

fn surfaced<T: Surface>(item: T, handler: Arc<dyn DynamicHandler>) -> Surfaced<T> {
    Surfaced {
        runnable: Runnable::dynamic(item.key(), handler),
        item,
        completers: BTreeMap::new(),
    }
}

/// Names as a comma-separated list, or `none`.
pub(super) fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}
