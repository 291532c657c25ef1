//! Prompts and resources in the registry (the binary's own and those added at run time):
//! getting a prompt's messages, reading a resource by URI, completing an argument, and
//! telling subscribers a resource changed. Each runs
//! through the same dispatch as a tool call (argument checks, injected state, time limits,
//! panics caught), with its own errors.

use super::dynamic_surfaces::{DynCompleter, Surface, Surfaced};
use super::{DynamicPrompt, DynamicResource, Holder, Registry, RegistryError};
use crate::call::complete::{self, CompletionContext};
use crate::call::content::EmbeddedResource;
use crate::call::context::CallContext;
use crate::call::error::CallError;
use crate::call::runnable::{Entry, Runnable, ToolRef};
use crate::catalog::{Prompt, Resource, Tool};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Why a prompt could not be got or a resource read. (A *surface*, in this crate's names,
/// is a prompt or a resource: what a client shows its user, beside the tools a model
/// calls.)
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
    /// The store shared with other replicas, which every update also reaches.
    shared: Arc<std::sync::OnceLock<crate::store::Store>>,
}

impl Default for ResourceUpdates {
    fn default() -> Self {
        // A subscriber that falls this far behind skips to the newest updates.
        let (sender, _) = tokio::sync::broadcast::channel(256);
        ResourceUpdates {
            sender,
            shared: Arc::default(),
        }
    }
}

impl ResourceUpdates {
    /// The resource at `uri` changed. With replicas sharing a store, the clients of every
    /// replica that subscribed to it are told.
    pub fn updated(&self, uri: &str) {
        self.updated_here(uri);
        if let Some(store) = self.shared.get() {
            let uri = uri.to_owned();
            store.backend.later(crate::store::Later::Publish(
                crate::store::Event::ResourceUpdated { uri },
            ));
        }
    }

    /// The resource at `uri` changed, as another replica said: this replica's clients are
    /// told.
    pub(crate) fn updated_here(&self, uri: &str) {
        let _ = self.sender.send(Arc::from(uri));
    }

    /// Tells every replica sharing `store` of the updates from now on.
    pub(crate) fn share(&self, store: crate::store::Store) {
        let _ = self.shared.set(store);
    }

    pub(crate) fn subscribe(&self) -> UpdatesReceiver {
        UpdatesReceiver {
            receiver: self.sender.subscribe(),
        }
    }
}

/// The URIs of updated resources, from now on.
pub(crate) struct UpdatesReceiver {
    receiver: tokio::sync::broadcast::Receiver<Arc<str>>,
}

/// What an [`UpdatesReceiver`] says next.
pub(crate) enum Update {
    /// This resource changed.
    Of(Arc<str>),
    /// The receiver fell behind and some updates were lost: any watched resource may have
    /// changed (telling of all of them costs a client a re-read, never a missed change).
    Missed,
}

impl UpdatesReceiver {
    /// The next update; `None` once no update can come.
    pub(crate) async fn next(&mut self) -> Option<Update> {
        use tokio::sync::broadcast::error::RecvError;
        match self.receiver.recv().await {
            Ok(uri) => Some(Update::Of(uri)),
            Err(RecvError::Lagged(_)) => Some(Update::Missed),
            Err(RecvError::Closed) => None,
        }
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

/// A surface (a prompt or a resource) the registry holds: one of the binary's `#[prompt]`s
/// or `#[resource]`s, or one added at run time. Cheap to clone; dereferences to the
/// [`Prompt`] or [`Resource`]. Named [`PromptRef`] and [`ResourceRef`], as a tool the
/// registry holds is a [`ToolRef`](super::ToolRef).
pub struct SurfaceRef<T: 'static>(Held<T>);

/// A prompt the registry holds.
pub type PromptRef = SurfaceRef<Prompt>;

/// A resource (or resource template) the registry holds.
pub type ResourceRef = SurfaceRef<Resource>;

enum Held<T: 'static> {
    Static(&'static T, &'static Runnable),
    Dynamic(Arc<Surfaced<T>>),
}

impl<T> Clone for SurfaceRef<T> {
    fn clone(&self) -> Self {
        SurfaceRef(match &self.0 {
            Held::Static(item, runnable) => Held::Static(item, runnable),
            Held::Dynamic(entry) => Held::Dynamic(Arc::clone(entry)),
        })
    }
}

impl<T> Deref for SurfaceRef<T> {
    type Target = T;
    fn deref(&self) -> &T {
        match &self.0 {
            Held::Static(item, _) => item,
            Held::Dynamic(entry) => &entry.item,
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for SurfaceRef<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// What dispatch runs of a prompt or resource. (Free functions, not methods: the bound
/// they need is internal, and methods would show it on a public type.)
fn tool_ref<T: Surface>(target: &SurfaceRef<T>) -> ToolRef {
    match &target.0 {
        Held::Static(item, runnable) => ToolRef::of_static(item.about(), runnable),
        Held::Dynamic(entry) => ToolRef::of_dynamic(Arc::clone(entry) as Arc<dyn Entry>),
    }
}

/// The completion function of the argument `name` (at `position` among the parameters),
/// if it has one.
fn completer<T>(target: &SurfaceRef<T>, position: usize, name: &str) -> Option<DynCompleter> {
    match &target.0 {
        Held::Static(_, runnable) => runnable
            .completer(position)
            .map(|function| Arc::new(function) as DynCompleter),
        Held::Dynamic(entry) => entry.completers.get(name).cloned(),
    }
}

/// The values of a URI template's variables, by name.
type Variables = Vec<(String, String)>;

/// The prompts and resources added at run time, by name and by URI.
#[derive(Default)]
pub(crate) struct DynamicSurfaces {
    prompts: BTreeMap<String, Arc<Surfaced<Prompt>>>,
    resources: BTreeMap<String, Arc<Surfaced<Resource>>>,
}

impl Registry {
    fn dynamic_surfaces(&self) -> std::sync::RwLockReadGuard<'_, DynamicSurfaces> {
        crate::sync::read(&self.surfaces)
    }

    /// Every prompt, sorted by name.
    pub fn prompts(&self) -> Vec<PromptRef> {
        let statics = self.statics;
        merged(
            statics.catalog.prompts(),
            &statics.prompt_runnables,
            &self.dynamic_surfaces().prompts,
        )
    }

    /// Every resource and resource template, sorted by URI.
    pub fn resources(&self) -> Vec<ResourceRef> {
        let statics = self.statics;
        merged(
            statics.catalog.resources(),
            &statics.resource_runnables,
            &self.dynamic_surfaces().resources,
        )
    }

    /// The prompt called `name`.
    pub fn prompt(&self, name: &str) -> Option<PromptRef> {
        let statics = self.statics;
        if let Some(index) = statics.catalog.prompt_position(name) {
            return Some(SurfaceRef(Held::Static(
                &statics.catalog.prompts()[index],
                &statics.prompt_runnables[index],
            )));
        }
        let surfaces = self.dynamic_surfaces();
        let entry = surfaces.prompts.get(name)?;
        Some(SurfaceRef(Held::Dynamic(Arc::clone(entry))))
    }

    /// Whether prompts were added at run time (so the list can change).
    pub(crate) fn has_dynamic_prompts(&self) -> bool {
        !self.dynamic_surfaces().prompts.is_empty()
    }

    /// Whether resources were added at run time (so the list can change).
    pub(crate) fn has_dynamic_resources(&self) -> bool {
        !self.dynamic_surfaces().resources.is_empty()
    }

    /// Adds a prompt made at run time; refused when its name is taken.
    pub fn add_prompt(&self, prompt: DynamicPrompt) -> Result<(), RegistryError> {
        let statics = self.statics;
        let existing = statics
            .catalog
            .prompt_position(prompt.name())
            .map(|index| statics.catalog.prompts()[index].location());
        self.insert_surface(prompt.entry, existing, |surfaces| &mut surfaces.prompts)?;
        self.list_changed(super::changes::List::Prompts);
        Ok(())
    }

    /// Adds a resource (or resource template) made at run time; refused when its URI is
    /// taken.
    pub fn add_resource(&self, resource: DynamicResource) -> Result<(), RegistryError> {
        let catalog = &self.statics.catalog;
        let existing = catalog
            .resource_position(resource.uri())
            .map(|index| catalog.resources()[index].location());
        self.insert_surface(resource.entry, existing, |surfaces| &mut surfaces.resources)?;
        self.list_changed(super::changes::List::Resources);
        Ok(())
    }

    /// Removes a prompt added at run time; `false` when there was none by that name.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.remove_surface(name, |surfaces| &mut surfaces.prompts);
        if removed {
            self.list_changed(super::changes::List::Prompts);
        }
        removed
    }

    /// Removes a resource added at run time; `false` when there was none with that URI.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self.remove_surface(uri, |surfaces| &mut surfaces.resources);
        if removed {
            self.list_changed(super::changes::List::Resources);
        }
        removed
    }

    /// Adds `entry` under its key unless a static one (`existing`, with its location) or
    /// one added at run time holds it.
    fn insert_surface<T: Surface>(
        &self,
        entry: Surfaced<T>,
        existing: Option<Option<crate::catalog::SourceLocation>>,
        map: impl FnOnce(&mut DynamicSurfaces) -> &mut BTreeMap<String, Arc<Surfaced<T>>>,
    ) -> Result<(), RegistryError> {
        let key = entry.item.key().to_owned();
        let about = entry.item.about();
        if let Some(unknown) = entry
            .completers
            .keys()
            .find(|name| !about.arguments().any(|param| param.name() == name.as_str()))
        {
            let known: Vec<&str> = about.arguments().map(|param| param.name()).collect();
            return Err(RegistryError::InvalidSchema {
                what: T::KIND,
                name: key,
                reason: format!(
                    "it completes `{unknown}`, which is not one of its arguments ({})",
                    super::dynamic_surfaces::list_or_none(&known)
                ),
            });
        }
        let mut surfaces = crate::sync::write(&self.surfaces);
        let map = map(&mut surfaces);
        let holder = match existing {
            Some(location) => Some(Holder::Static(location)),
            None if map.contains_key(&key) => Some(Holder::RunTime),
            None => None,
        };
        if let Some(holder) = holder {
            return Err(RegistryError::already_exists(T::KIND, key, holder));
        }
        map.insert(key, Arc::new(entry));
        Ok(())
    }

    fn remove_surface<T>(
        &self,
        key: &str,
        map: impl FnOnce(&mut DynamicSurfaces) -> &mut BTreeMap<String, Arc<Surfaced<T>>>,
    ) -> bool {
        let mut surfaces = crate::sync::write(&self.surfaces);
        map(&mut surfaces).remove(key).is_some()
    }

    /// The handle that tells subscribed clients a resource changed.
    pub fn resource_updates(&self) -> &ResourceUpdates {
        &self.resource_updates
    }

    /// Whether `uri` names a resource or matches a resource template.
    pub fn has_resource(&self, uri: &str) -> bool {
        self.find_resource(uri).is_some()
    }

    /// The resource or template whose URI (or URI template) is exactly `uri`.
    fn resource_at(&self, uri: &str) -> Option<ResourceRef> {
        let statics = self.statics;
        if let Some(index) = statics.catalog.resource_position(uri) {
            return Some(SurfaceRef(Held::Static(
                &statics.catalog.resources()[index],
                &statics.resource_runnables[index],
            )));
        }
        let surfaces = self.dynamic_surfaces();
        let entry = surfaces.resources.get(uri)?;
        Some(SurfaceRef(Held::Dynamic(Arc::clone(entry))))
    }

    /// The resource `uri` reads, and the template variables it gives: the resource with
    /// that exact URI, else the first template (in URI order) that matches it. Nothing is
    /// collected or sorted: this runs for every read.
    fn find_resource(&self, uri: &str) -> Option<(SurfaceRef<Resource>, Variables)> {
        if let Some(exact) = self.resource_at(uri).filter(|r| !r.is_template()) {
            return Some((exact, Vec::new()));
        }
        let statics = self.statics;
        let first_static = statics
            .catalog
            .resources()
            .iter()
            .zip(&statics.resource_runnables)
            .filter(|(resource, _)| resource.is_template())
            .find_map(|(resource, runnable)| {
                let variables = resource.template().match_uri(uri)?;
                Some((SurfaceRef(Held::Static(resource, runnable)), variables))
            });
        let surfaces = self.dynamic_surfaces();
        let first_dynamic = surfaces
            .resources
            .values()
            .filter(|entry| entry.item.is_template())
            .find_map(|entry| {
                let variables = entry.item.template().match_uri(uri)?;
                Some((SurfaceRef(Held::Dynamic(Arc::clone(entry))), variables))
            });
        // Both are in URI order; the first of the two is the first of all.
        match (first_static, first_dynamic) {
            (Some(a), Some(b)) => Some(if a.0.uri() <= b.0.uri() { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    /// The messages of the prompt `name`, filled in with `arguments` (a JSON object of
    /// strings, or `null`).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<Vec<Value>, SurfaceError> {
        self.get_prompt_in(name, arguments, &self.direct_context())
            .await
    }

    pub(crate) async fn get_prompt_in(
        &self,
        name: &str,
        arguments: Value,
        context: &CallContext,
    ) -> Result<Vec<Value>, SurfaceError> {
        let prompt = self
            .prompt(name)
            .ok_or_else(|| SurfaceError::UnknownPrompt {
                name: name.to_owned(),
            })?;
        let arguments = match arguments {
            Value::Object(map) => Value::Object(coerce(prompt.about(), map)),
            other => other,
        };
        let output = self
            .run(tool_ref(&prompt), arguments, "prompt", context)
            .await?;
        match output {
            Value::Array(messages) => Ok(messages),
            // Prompt outputs are always made into a list of messages.
            _ => Err(SurfaceError::Internal(format!(
                "Internal error: prompt `{name}` gave no list of messages"
            ))),
        }
    }

    /// The contents of the resource at `uri`: the resource with that exact URI, else the
    /// first template (in URI order) that matches it.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<EmbeddedResource>, SurfaceError> {
        let contents = self.read_resource_in(uri, &self.direct_context()).await?;
        serde_json::from_value(Value::Array(contents)).map_err(|error| {
            SurfaceError::Internal(format!("the resource's contents are malformed: {error}"))
        })
    }

    /// The contents of the resource at `uri` as JSON objects (`EmbeddedResource`'s form),
    /// each with its URI and MIME type filled in when the resource left them out: what
    /// `resources/read` sends, with no trip through the typed form.
    pub(crate) async fn read_resource_in(
        &self,
        uri: &str,
        context: &CallContext,
    ) -> Result<Vec<Value>, SurfaceError> {
        let Some((resource, variables)) = self.find_resource(uri) else {
            return Err(SurfaceError::UnknownResource {
                uri: uri.to_owned(),
            });
        };
        let mut arguments: Map<String, Value> = variables
            .into_iter()
            .map(|(name, value)| (name, Value::String(value)))
            .collect();
        if resource.relays_uri() {
            arguments.insert("uri".to_owned(), Value::String(uri.to_owned()));
        }
        let arguments = Value::Object(coerce(resource.about(), arguments));
        let output = self
            .run(tool_ref(&resource), arguments, "resource", context)
            .await?;
        // Resource outputs are always made into a list of contents objects.
        let Value::Array(mut contents) = output else {
            return Err(SurfaceError::Internal(
                "the resource's contents are malformed: not a list".to_owned(),
            ));
        };
        for content in &mut contents {
            let Some(content) = content.as_object_mut() else {
                continue;
            };
            if content
                .get("uri")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                content.insert("uri".to_owned(), uri.into());
            }
            if let Some(mime_type) = resource.mime_type() {
                if content.get("mimeType").is_none_or(Value::is_null) {
                    content.insert("mimeType".to_owned(), mime_type.into());
                }
            }
        }
        Ok(contents)
    }

    /// The candidates for the argument `argument` of a prompt, or the variable of a
    /// resource template, given the text typed so far and the arguments already given.
    ///
    /// Its completion function answers when it has one (`#[arg(complete = ...)]`, or
    /// `complete` on a run-time prompt or resource); else an enumeration completes from its
    /// values; else there are no candidates.
    pub fn complete(
        &self,
        target: CompletionTarget<'_>,
        argument: &str,
        typed: &str,
        context: &CompletionContext,
    ) -> Result<Completion, SurfaceError> {
        match target {
            CompletionTarget::Prompt(name) => {
                let prompt = self
                    .prompt(name)
                    .ok_or_else(|| SurfaceError::UnknownPrompt {
                        name: name.to_owned(),
                    })?;
                complete_argument(&prompt, argument, typed, context)
            }
            CompletionTarget::Resource(uri) => {
                let resource =
                    self.resource_at(uri)
                        .ok_or_else(|| SurfaceError::UnknownResource {
                            uri: uri.to_owned(),
                        })?;
                complete_argument(&resource, argument, typed, context)
            }
        }
    }
}

/// The binary's own entries (sorted, with their runnables) and the run-time ones, as one
/// list sorted by key.
fn merged<T: Surface>(
    statics: &'static [T],
    runnables: &'static [Runnable],
    dynamic: &BTreeMap<String, Arc<Surfaced<T>>>,
) -> Vec<SurfaceRef<T>> {
    let mut all: Vec<SurfaceRef<T>> = statics
        .iter()
        .zip(runnables)
        .map(|(item, runnable)| SurfaceRef(Held::Static(item, runnable)))
        .chain(
            dynamic
                .values()
                .map(|entry| SurfaceRef(Held::Dynamic(Arc::clone(entry)))),
        )
        .collect();
    all.sort_by(|a, b| a.key().cmp(b.key()));
    all
}

/// The candidates for `argument` of `target`.
fn complete_argument<T: Surface>(
    target: &SurfaceRef<T>,
    argument: &str,
    typed: &str,
    context: &CompletionContext,
) -> Result<Completion, SurfaceError> {
    let about = target.about();
    let Some(position) = about
        .params()
        .iter()
        .position(|param| param.name() == argument && !param.is_injected())
    else {
        let known: Vec<&str> = about.arguments().map(|param| param.name()).collect();
        return Err(SurfaceError::InvalidArguments(format!(
            "`{}` has no argument `{argument}`; its arguments: {}",
            about.name(),
            super::dynamic_surfaces::list_or_none(&known)
        )));
    };
    let mut values = match completer(target, position, argument) {
        Some(function) => {
            let caught =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| function(typed, context)));
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

impl Registry {
    /// Runs a prompt or a resource through dispatch; its output, or the error in its terms.
    async fn run(
        &self,
        tool: ToolRef,
        arguments: Value,
        what: &str,
        context: &CallContext,
    ) -> Result<Value, SurfaceError> {
        let limit = self.limit_for(&tool);
        let name = tool.name().to_owned();
        let outcome = match crate::call::start(&tool, &arguments, context) {
            crate::call::Started::Finished(outcome) => outcome,
            crate::call::Started::Pending(invocation) => {
                let work = crate::call::complete(&tool, invocation, context);
                match limit {
                    Some(limit) => crate::call::within(&tool, limit, context, work).await,
                    None => work.await,
                }
            }
        };
        match outcome {
            Ok(answer) => Ok(answer.into_value()),
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
                crate::catalog::time::show_duration(after)
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
    let schema = crate::schema::resolve(schema, root);
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.clone();
    }
    if let Some(value) = schema.get("const") {
        return vec![value.clone()];
    }
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .flatten()
        .flat_map(|branch| enum_values(root, branch, depth + 1))
        .collect()
}

/// Arguments arrive as strings (prompt arguments, URI variables); a parameter whose schema
/// says number, integer or boolean (an `Option` of one included) gets the string read as
/// one, so `id: u32` works. A string that does not read as one stays a string, and
/// validation says what was expected.
fn coerce(about: &Tool, arguments: Map<String, Value>) -> Map<String, Value> {
    let root = about.input_schema();
    let properties = &root["properties"];
    arguments
        .into_iter()
        .map(|(name, value)| {
            let Value::String(text) = &value else {
                return (name, value);
            };
            let mut kinds = Vec::new();
            scalar_kinds(root, &properties[&name], 0, &mut kinds);
            if kinds.contains(&"string") {
                return (name, value);
            }
            let coerced = kinds.iter().find_map(|kind| match *kind {
                "integer" => text.parse::<i64>().ok().map(Value::from),
                "number" => text.parse::<f64>().ok().map(Value::from),
                "boolean" => text.parse::<bool>().ok().map(Value::from),
                _ => None,
            });
            (name, coerced.unwrap_or(value))
        })
        .collect()
}

/// The JSON types a schema allows, read from `type` and the branches of `anyOf`/`oneOf`,
/// through `$ref`s.
fn scalar_kinds<'a>(root: &'a Value, schema: &'a Value, depth: usize, kinds: &mut Vec<&'a str>) {
    if depth > 8 {
        return;
    }
    let schema = crate::schema::resolve(schema, root);
    kinds.extend(crate::schema::types(schema));
    for key in ["anyOf", "oneOf"] {
        for branch in schema[key].as_array().into_iter().flatten() {
            scalar_kinds(root, branch, depth + 1, kinds);
        }
    }
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
