//! The static catalog: every `#[tool]` linked into the binary, built once, sorted by name,
//! with names checked unique and schemas in canonical form.

pub(crate) mod contract;
pub(crate) mod limits;
pub(crate) mod names;
mod schemas;
mod surfaces;
pub(crate) mod time;
pub mod uri_template;

use crate::schema::OutputSchema;
pub use contract::{Annotations, CachePolicy, SourceLocation};
use contract::{Example, ResourceSpec, ToolDescription};
pub(crate) use schemas::HEADER_KEYWORD;
use serde_json::Value;
use std::fmt;
pub use surfaces::{ItemKind, Prompt, Resource};
use uri_template::UriTemplate;

/// One tool as callers see it: name, descriptions, schemas, parameters, examples, hints and
/// where it is written. A pure description: how a tool runs is not part of it.
///
/// ```
/// use tool_runtime::{tool, Registry};
///
/// /// Convert a temperature.
/// ///
/// /// Celsius to Fahrenheit, rounded to a tenth.
/// ///
/// /// Example: {"celsius": 21.5}
/// #[tool(read_only, title = "Temperature converter")]
/// fn to_fahrenheit(
///     /// Degrees Celsius.
///     celsius: f64,
/// ) -> f64 {
///     (celsius * 9.0 / 5.0 + 32.0).round()
/// }
///
/// let registry = Registry::new().unwrap();
/// let tool = registry.catalog().get("to_fahrenheit").unwrap();
/// assert_eq!(tool.title(), Some("Temperature converter"));
/// assert_eq!(tool.summary(), "Convert a temperature.");
/// assert_eq!(tool.annotations().read_only, Some(true));
///
/// let celsius = &tool.params()[0];
/// assert_eq!((celsius.name(), celsius.is_required()), ("celsius", true));
/// assert_eq!(celsius.description(), Some("Degrees Celsius."));
/// assert_eq!(tool.input_schema()["properties"]["celsius"]["type"], "number");
/// assert_eq!(tool.argument_examples().next(), Some(&serde_json::json!({"celsius": 21.5})));
///
/// // The output is the number itself; MCP's handshake era, whose structured content must
/// // be an object, carries it as {"result": ...}.
/// assert_eq!(tool.output_schema().unwrap()["type"], "number");
/// assert!(tool.wraps_output());
/// assert_eq!(tool.location().unwrap().file, file!());
/// ```
pub struct Tool {
    name: String,
    title: Option<String>,
    summary: String,
    description: String,
    input_schema: Value,
    /// The schema of the value the tool returns.
    output_schema: Option<Value>,
    /// `{"result": value}`, for a value that is not an object (MCP's handshake era).
    wrapped_output_schema: Option<Value>,
    params: Vec<ParamInfo>,
    annotations: Annotations,
    examples: Vec<ToolExample>,
    location: Option<SourceLocation>,
    timeout: Option<std::time::Duration>,
    rate: Option<time::Rate>,
    /// The OAuth scopes a caller's access token must grant.
    scopes: Vec<String>,
    large_output_as_resource: bool,
    task: TaskSupport,
    /// In an agent loop: runs alone, never beside another call of the same turn.
    exclusive: bool,
    /// In an agent loop: waits for a user's approval before it runs.
    approval: bool,
    /// The named layers a call goes through (`#[tool(layers = [...])]`).
    layers: &'static [&'static str],
    /// How its answers are kept and given again, when they are.
    cache: Option<CachePolicy>,
    /// The elicitation forms its code asks with (judged only when `check` asks).
    forms: &'static [contract::FormSpec],
}

/// Whether a call of a tool may run as a task: answered at once with a task the client
/// follows (polls, answers the task's questions, cancels) while the tool runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never: every call is answered when the tool ends (the default).
    #[default]
    Forbidden,
    /// A client that can follow tasks gets one; any other waits for the answer.
    Optional,
    /// Only as a task: a client that cannot follow tasks is refused.
    Required,
}

impl TaskSupport {
    /// The name MCP gives it (`execution.taskSupport`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// What the schema says of one parameter of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamInfo {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
    pub(crate) injected: bool,
    pub(crate) default: Option<Value>,
    pub(crate) header: Option<String>,
}

impl ParamInfo {
    /// The HTTP header that mirrors this argument's value (`Mcp-Param-` and this name), from
    /// `#[arg(header = "...")]` or `x-mcp-header` in a run-time tool's schema.
    pub fn header(&self) -> Option<&str> {
        self.header.as_deref()
    }

    /// The name callers use.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The parameter's documentation, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }
    /// Whether callers must give it.
    pub fn is_required(&self) -> bool {
        self.required
    }
    /// Whether the runtime fills it in (it is then absent from the schema).
    pub fn is_injected(&self) -> bool {
        self.injected
    }
    /// The default shown in the schema, if any.
    pub fn default(&self) -> Option<&Value> {
        self.default.as_ref()
    }
}

/// An example from a tool's documentation.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolExample {
    /// A JSON object of arguments; it becomes the schema's `examples`.
    Arguments(Value),
    /// Free text.
    Text(String),
}

/// The value's output schema and its wrapped form, apart.
fn split(schema: Option<OutputSchema>) -> (Option<Value>, Option<Value>) {
    match schema {
        Some(OutputSchema { value, wrapped }) => (Some(value), wrapped),
        None => (None, None),
    }
}

impl Tool {
    pub(crate) fn from_description(description: &ToolDescription) -> Tool {
        let (input_schema, params) = schemas::input_schema(description);
        let (output_schema, wrapped_output_schema) = split(schemas::output_schema(description));
        let examples = description
            .examples
            .iter()
            .map(|example| match example {
                Example::Arguments(json) => ToolExample::Arguments(
                    // Checked to be a JSON object at compile time.
                    serde_json::from_str(json).unwrap_or(Value::Null),
                ),
                Example::Text(text) => ToolExample::Text((*text).to_owned()),
            })
            .collect();
        Tool {
            name: description.name.to_owned(),
            title: description.title.map(str::to_owned),
            summary: description.summary.to_owned(),
            description: description.description.to_owned(),
            input_schema,
            output_schema,
            wrapped_output_schema,
            params,
            annotations: description.annotations,
            examples,
            location: Some(description.location),
            timeout: description.timeout,
            rate: description.rate,
            scopes: description.scopes.iter().map(|s| (*s).to_owned()).collect(),
            large_output_as_resource: description.large_output_as_resource,
            task: description.task,
            exclusive: description.exclusive,
            approval: description.approval,
            layers: description.layers,
            cache: description.cache,
            forms: description.forms,
        }
    }

    /// A tool made at run time, described by its name, its description and its schemas.
    pub(crate) fn dynamic(
        name: String,
        description: String,
        input_schema: Value,
        output_schema: Option<OutputSchema>,
        params: Vec<ParamInfo>,
    ) -> Tool {
        let (output_schema, wrapped_output_schema) = split(output_schema);
        Tool {
            title: None,
            summary: first_paragraph(&description),
            name,
            description,
            input_schema,
            output_schema,
            wrapped_output_schema,
            params,
            annotations: Annotations::default(),
            examples: Vec::new(),
            location: None,
            timeout: None,
            rate: None,
            scopes: Vec::new(),
            large_output_as_resource: false,
            task: TaskSupport::Forbidden,
            exclusive: false,
            approval: false,
            layers: &[],
            cache: None,
            forms: &[],
        }
    }

    pub(crate) fn renamed(mut self, name: String) -> Tool {
        self.name = name;
        self
    }

    /// The name callers use.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// A human-friendly title, from `#[tool(title = "...")]`.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }
    /// The first paragraph of the description.
    pub fn summary(&self) -> &str {
        &self.summary
    }
    /// The full description: the doc comment's prose, or `#[tool(description = "...")]`.
    pub fn description(&self) -> &str {
        &self.description
    }
    /// The canonical JSON Schema of the arguments.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }
    /// The JSON Schema of the value the tool returns, when the return type describes
    /// itself: the schema of the output as [`ToolResult::output`](crate::ToolResult::output),
    /// REST and MCP 2026-07-28 give it.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }
    /// Whether MCP's handshake era (up to 2025-11-25), whose structured content must be an
    /// object, carries the output as `{"result": ...}`: the output is not always an object.
    pub fn wraps_output(&self) -> bool {
        self.wrapped_output_schema.is_some()
    }
    /// The parameters, in declaration order, injected ones included.
    pub fn params(&self) -> &[ParamInfo] {
        &self.params
    }
    /// The parameters callers give, in declaration order (the runtime fills in the rest).
    pub fn arguments(&self) -> impl Iterator<Item = &ParamInfo> {
        self.params.iter().filter(|param| !param.is_injected())
    }
    /// The MCP behaviour hints.
    pub fn annotations(&self) -> Annotations {
        self.annotations
    }
    /// The examples of the doc comment.
    pub fn examples(&self) -> &[ToolExample] {
        &self.examples
    }
    /// The JSON argument examples only.
    pub fn argument_examples(&self) -> impl Iterator<Item = &Value> {
        self.examples.iter().filter_map(|example| match example {
            ToolExample::Arguments(value) => Some(value),
            ToolExample::Text(_) => None,
        })
    }
    /// The tool's own time limit, from `#[tool(timeout = "...")]`.
    pub fn timeout(&self) -> Option<std::time::Duration> {
        self.timeout
    }

    pub(crate) fn set_title(&mut self, title: Option<String>) {
        self.title = title;
    }

    pub(crate) fn set_annotations(&mut self, annotations: Annotations) {
        self.annotations = annotations;
    }

    /// Whether an output over the server's threshold is stored and answered as a link to
    /// it with a preview (`#[tool(large_output = "resource")]`), rather than cut at the
    /// server's output limit. Such a tool publishes no output schema over MCP, since a
    /// link is not a value of its output type; small outputs still carry
    /// `structuredContent`.
    pub fn large_output_as_resource(&self) -> bool {
        self.large_output_as_resource
    }

    /// The output schema callers are promised: the tool's own, except for a tool whose
    /// large outputs become links (a link is not a value of its output type).
    pub fn published_output_schema(&self) -> Option<&Value> {
        self.output_schema()
            .filter(|_| !self.large_output_as_resource)
    }

    /// What MCP's handshake era lists in place of
    /// [`published_output_schema`](Self::published_output_schema): `{"result": ...}` around
    /// an output that is not always an object; `None` when it lists the schema as it is.
    pub(crate) fn published_wrapped_output_schema(&self) -> Option<&Value> {
        self.published_output_schema()?;
        self.wrapped_output_schema.as_ref()
    }

    /// Whether a call may, or must, run as a task (`#[tool(task = "...")]`).
    pub fn task_support(&self) -> TaskSupport {
        self.task
    }

    /// The elicitation forms its code asks with that a form cannot show, each with why
    /// (what `check` reports).
    pub fn unshowable_forms(&self) -> Vec<(String, String)> {
        self.forms
            .iter()
            .filter_map(|form| (form.schema)().err().map(|why| (form.name.to_owned(), why)))
            .collect()
    }

    pub(crate) fn set_task_support(&mut self, task: TaskSupport) {
        self.task = task;
    }

    /// Whether, in an agent loop, a call of this tool runs alone, never beside another
    /// call of the same turn (`#[tool(exclusive)]`): for a tool whose calls must not
    /// overlap, such as one that writes a file the others read.
    pub fn runs_alone(&self) -> bool {
        self.exclusive
    }

    /// Whether, in an agent loop, a call of this tool waits for a user's approval before
    /// it runs (`#[tool(approval)]`).
    pub fn needs_approval(&self) -> bool {
        self.approval
    }

    /// The named [layers](crate::layers) a call of the tool goes through
    /// (`#[tool(layers = [...])]`), each given to the registry by
    /// [`named_layer`](crate::registry::RegistryBuilder::named_layer).
    pub fn layers(&self) -> &[&'static str] {
        self.layers
    }

    /// How the tool's answers are kept and given again (`#[tool(read_only, cache =
    /// "30s")]`), when they are.
    pub fn cache(&self) -> Option<CachePolicy> {
        self.cache
    }

    pub(crate) fn set_cache(&mut self, cache: Option<CachePolicy>) {
        self.cache = cache;
    }

    pub(crate) fn set_exclusive(&mut self, exclusive: bool) {
        self.exclusive = exclusive;
    }

    pub(crate) fn set_approval(&mut self, approval: bool) {
        self.approval = approval;
    }

    pub(crate) fn set_large_output_as_resource(&mut self, as_resource: bool) {
        self.large_output_as_resource = as_resource;
    }

    pub(crate) fn set_timeout(&mut self, timeout: Option<std::time::Duration>) {
        self.timeout = timeout;
    }

    /// How often the tool says it may be called, by all its callers together
    /// (`#[tool(rate = "...")]` or [`DynamicTool::rate`](crate::DynamicTool::rate)); a
    /// registry may hold it to another rate
    /// ([`RegistryBuilder::rate_limit`](crate::registry::RegistryBuilder::rate_limit)).
    pub fn rate(&self) -> Option<time::Rate> {
        self.rate
    }

    pub(crate) fn set_rate(&mut self, rate: Option<time::Rate>) {
        self.rate = rate;
    }

    /// The OAuth scopes a caller's access token must grant to call the tool, all of them
    /// (`#[tool(scopes = [...])]` or
    /// [`DynamicTool::scopes`](super::DynamicTool::scopes)(crate::DynamicTool::scopes));
    /// empty when any caller may. Checked for callers that present a token: over HTTP
    /// with OAuth, a caller without them is refused before the tool runs.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    pub(crate) fn set_scopes(&mut self, scopes: Vec<String>) {
        self.scopes = scopes;
    }

    /// Where the tool is written; `None` for tools added at run time.
    pub fn location(&self) -> Option<SourceLocation> {
        self.location
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("summary", &self.summary)
            .field("input_schema", &self.input_schema)
            .field("output_schema", &self.output_schema)
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

/// Every `#[tool]` of the binary, sorted by name.
#[derive(Debug)]
pub struct Catalog {
    tools: Vec<Tool>,
    /// Sorted by name.
    prompts: Vec<Prompt>,
    /// Sorted by URI.
    resources: Vec<Resource>,
}

/// Why the catalog could not be built. Its `Debug` is its message.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogError {
    /// Two or more tools share a name.
    DuplicateName {
        /// The shared name.
        name: String,
        /// Where each tool with that name is written, sorted.
        locations: Vec<SourceLocation>,
    },
    /// Two or more prompts share a name.
    DuplicatePrompt {
        /// The shared name.
        name: String,
        /// Where each prompt with that name is written.
        locations: Vec<SourceLocation>,
    },
    /// Two or more resources share a URI (or URI template).
    DuplicateResource {
        /// The shared URI.
        uri: String,
        /// Where each resource with that URI is written.
        locations: Vec<SourceLocation>,
    },
    /// A tool's name under its namespace (`prefix_name`) breaks the tool name rule.
    InvalidName {
        /// The name under the namespace.
        name: String,
        /// Where the tool is written.
        location: SourceLocation,
        /// What is wrong with it.
        reason: String,
    },
    /// A resource's URI template cannot be parsed.
    InvalidUriTemplate {
        /// The template as written.
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl std::fmt::Debug for CatalogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogError::DuplicateName { name, locations } => write!(
                f,
                "tool name `{name}` is used by {} tools, at {}; give each a unique name with \
                #[tool(name = \"...\")], or put a module's tools under a prefix with \
                tool_runtime::namespace!",
                locations.len(),
                places(locations)
            ),
            CatalogError::DuplicatePrompt { name, locations } => write!(
                f,
                "prompt name `{name}` is used by {} prompts, at {}; give each a unique name with \
                #[prompt(name = \"...\")]",
                locations.len(),
                places(locations)
            ),
            CatalogError::DuplicateResource { uri, locations } => write!(
                f,
                "resource URI `{uri}` is used by {} resources, at {}; each resource needs its own \
                URI",
                locations.len(),
                places(locations)
            ),
            CatalogError::InvalidName {
                name,
                location,
                reason,
            } => write!(
                f,
                "tool `{name}` ({location}, under its module's namespace) is not a valid tool \
                name: {reason}"
            ),
            CatalogError::InvalidUriTemplate { uri, reason } => {
                write!(f, "resource URI template `{uri}` is invalid: {reason}")
            }
        }
    }
}

/// The first run of neighbours in `sorted` that share a key: items that clash.
fn first_clash<T, K: PartialEq>(sorted: &[T], key: impl Fn(&T) -> K) -> Option<&[T]> {
    sorted
        .chunk_by(|a, b| key(a) == key(b))
        .find(|same| same.len() > 1)
}

fn places(locations: &[SourceLocation]) -> String {
    locations
        .iter()
        .map(|l| format!("{l} ({})", l.module_path))
        .collect::<Vec<_>>()
        .join(" and ")
}

impl std::error::Error for CatalogError {}

impl Catalog {
    /// The order of the catalog: by the name callers use (for a tool, its name under its
    /// namespace), then by place (so duplicates are reported in a stable order).
    pub(crate) fn order_of<'a>(
        name: &'a str,
        description: &ToolDescription,
    ) -> (&'a str, &'static str, u32) {
        (name, description.location.file, description.location.line)
    }

    /// The catalog of these descriptions, each with the name callers use (its own, or its
    /// own under its module's namespace), given in [`Catalog::order_of`]'s order; refused
    /// when two share a name.
    pub(crate) fn from_sorted<'a>(
        descriptions: impl Iterator<Item = (&'a str, &'a ToolDescription)>,
    ) -> Result<Catalog, CatalogError> {
        let sorted: Vec<(&str, &ToolDescription)> = descriptions.collect();
        if let Some(same_name) = first_clash(&sorted, |(name, _)| *name) {
            return Err(CatalogError::DuplicateName {
                name: same_name[0].0.to_owned(),
                locations: same_name.iter().map(|(_, d)| d.location).collect(),
            });
        }
        for (name, description) in &sorted {
            if *name != description.name {
                names::check_name(name).map_err(|reason| CatalogError::InvalidName {
                    name: (*name).to_owned(),
                    location: description.location,
                    reason,
                })?;
            }
        }
        let tools = sorted
            .into_iter()
            .map(|(name, description)| {
                let tool = Tool::from_description(description);
                if name == description.name {
                    tool
                } else {
                    tool.renamed(name.to_owned())
                }
            })
            .collect();
        Ok(Catalog {
            tools,
            prompts: Vec::new(),
            resources: Vec::new(),
        })
    }

    /// Adds the prompts, given in [`Catalog::order_of`]'s order; refused when two share a
    /// name.
    pub(crate) fn add_prompts<'a>(
        &mut self,
        descriptions: impl Iterator<Item = &'a ToolDescription>,
    ) -> Result<(), CatalogError> {
        let sorted: Vec<&ToolDescription> = descriptions.collect();
        if let Some(same_name) = first_clash(&sorted, |d| d.name) {
            return Err(CatalogError::DuplicatePrompt {
                name: same_name[0].name.to_owned(),
                locations: same_name.iter().map(|d| d.location).collect(),
            });
        }
        self.prompts = sorted
            .into_iter()
            .map(|description| Prompt::new(Tool::from_description(description)))
            .collect();
        Ok(())
    }

    /// Adds the resources, given sorted by URI; refused when two share a URI or a
    /// template does not parse.
    pub(crate) fn add_resources<'a>(
        &mut self,
        resources: impl Iterator<Item = (&'a ToolDescription, &'a ResourceSpec)>,
    ) -> Result<(), CatalogError> {
        let sorted: Vec<_> = resources.collect();
        if let Some(same_uri) = first_clash(&sorted, |(_, spec)| spec.uri) {
            return Err(CatalogError::DuplicateResource {
                uri: same_uri[0].1.uri.to_owned(),
                locations: same_uri.iter().map(|(d, _)| d.location).collect(),
            });
        }
        let mut resources = Vec::with_capacity(sorted.len());
        for (description, spec) in sorted {
            let template =
                UriTemplate::parse(spec.uri).map_err(|error| CatalogError::InvalidUriTemplate {
                    uri: spec.uri.to_owned(),
                    reason: error.to_string(),
                })?;
            resources.push(Resource::new(
                Tool::from_description(description),
                template,
                spec.mime_type.map(str::to_owned),
                spec.size,
            ));
        }
        self.resources = resources;
        Ok(())
    }

    /// Every prompt, sorted by name.
    pub fn prompts(&self) -> &[Prompt] {
        &self.prompts
    }

    /// The prompt with this name.
    pub fn prompt(&self, name: &str) -> Option<&Prompt> {
        self.prompt_position(name).map(|index| &self.prompts[index])
    }

    pub(crate) fn prompt_position(&self, name: &str) -> Option<usize> {
        self.prompts
            .binary_search_by(|prompt| prompt.name().cmp(name))
            .ok()
    }

    /// Every resource and resource template, sorted by URI.
    pub fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// Where the resource (or template) with exactly this URI is in
    /// [`Catalog::resources`].
    pub(crate) fn resource_position(&self, uri: &str) -> Option<usize> {
        self.resources
            .binary_search_by(|resource| resource.uri().cmp(uri))
            .ok()
    }

    /// Every tool, sorted by name.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.position(name).map(|index| &self.tools[index])
    }

    /// Where the tool with this name is in [`Catalog::tools`].
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.tools
            .binary_search_by(|tool| tool.name.as_str().cmp(name))
            .ok()
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// The first paragraph of a description.
pub(crate) fn first_paragraph(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .skip_while(|line| line.is_empty())
        .take_while(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
