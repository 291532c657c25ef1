//! The static catalog: every `#[tool]` linked into the binary, built once, sorted by name,
//! with names checked unique and schemas in canonical form.

pub(crate) mod names;
pub(crate) mod registration;
mod schemas;

use crate::call::dynamic::DynamicHandler;
use crate::schema;
pub use registration::{Annotations, SourceLocation};
use registration::{Example, ToolRegistration};
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// One tool: what callers see of it (name, descriptions, schemas, examples, hints) and how
/// to run it.
pub struct Tool {
    name: String,
    title: Option<String>,
    summary: String,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    wrap_output: bool,
    params: Vec<ParamInfo>,
    annotations: Annotations,
    examples: Vec<ToolExample>,
    location: Option<SourceLocation>,
    timeout: Option<std::time::Duration>,
    pace: Arc<crate::call::invoke::Pace>,
    pub(crate) handler: Handler,
    checker: OnceLock<schema::validate::Validator>,
}

pub(crate) enum Handler {
    Static(&'static ToolRegistration),
    Dynamic(Arc<dyn DynamicHandler>),
}

/// What the schema says of one parameter of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamInfo {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
    pub(crate) injected: bool,
    pub(crate) default: Option<Value>,
}

impl ParamInfo {
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

impl Tool {
    pub(crate) fn from_registration(registration: &'static ToolRegistration) -> Tool {
        let (input_schema, params) = schemas::input_schema(registration);
        let (output_schema, wrap_output) = match schemas::output_schema(registration) {
            Some((schema, wrap)) => (Some(schema), wrap),
            None => (None, false),
        };
        let examples = registration
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
            name: registration.name.to_owned(),
            title: registration.title.map(str::to_owned),
            summary: registration.summary.to_owned(),
            description: registration.description.to_owned(),
            input_schema,
            output_schema,
            wrap_output,
            params,
            annotations: registration.annotations,
            examples,
            location: Some(registration.location),
            timeout: registration.timeout,
            pace: Arc::new(crate::call::invoke::Pace::new(registration.name)),
            handler: Handler::Static(registration),
            checker: OnceLock::new(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dynamic(
        name: String,
        description: String,
        input_schema: Value,
        output_schema: Option<(Value, bool)>,
        params: Vec<ParamInfo>,
        handler: Arc<dyn DynamicHandler>,
    ) -> Tool {
        let (output_schema, wrap_output) = match output_schema {
            Some((schema, wrap)) => (Some(schema), wrap),
            None => (None, false),
        };
        Tool {
            title: None,
            summary: crate::call::dynamic::first_paragraph(&description),
            pace: Arc::new(crate::call::invoke::Pace::new(&name)),
            name,
            description,
            input_schema,
            output_schema,
            wrap_output,
            params,
            annotations: Annotations::default(),
            examples: Vec::new(),
            location: None,
            timeout: None,
            handler: Handler::Dynamic(handler),
            checker: OnceLock::new(),
        }
    }

    pub(crate) fn renamed(mut self, name: String) -> Tool {
        self.pace = Arc::new(crate::call::invoke::Pace::new(&name));
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
    /// The JSON Schema of the result, when the return type describes itself.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }
    /// Whether results are wrapped as `{"result": ...}` to make them objects.
    pub fn wraps_output(&self) -> bool {
        self.wrap_output
    }
    /// The parameters, in declaration order, injected ones included.
    pub fn params(&self) -> &[ParamInfo] {
        &self.params
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

    /// Where the tool's sync work runs (the blocking pool, or a lane once proven quick).
    pub(crate) fn pace(&self) -> &Arc<crate::call::invoke::Pace> {
        &self.pace
    }

    pub(crate) fn set_timeout(&mut self, timeout: Option<std::time::Duration>) {
        self.timeout = timeout;
    }

    /// Where the tool is written; `None` for tools added at run time.
    pub fn location(&self) -> Option<SourceLocation> {
        self.location
    }

    /// How the arguments are checked, decided on first use.
    pub(crate) fn checker(&self) -> &schema::validate::Validator {
        self.checker.get_or_init(|| {
            schema::validate::Validator::for_schema(&self.input_schema).unwrap_or_else(|error| {
                tracing::error!(tool = %self.name, %error, "the input schema does not compile; arguments are checked by name only");
                schema::validate::Validator::Unchecked
            })
        })
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
}

/// Why the catalog could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogError {
    /// Two or more tools share a name.
    DuplicateName {
        /// The shared name.
        name: String,
        /// Where each tool with that name is written, sorted.
        locations: Vec<SourceLocation>,
    },
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogError::DuplicateName { name, locations } => {
                let places: Vec<String> = locations
                    .iter()
                    .map(|l| format!("{l} ({})", l.module_path))
                    .collect();
                write!(
                    f,
                    "tool name `{name}` is used by {} tools, at {}; give each a unique name with #[tool(name = \"...\")]",
                    locations.len(),
                    places.join(" and ")
                )
            }
        }
    }
}

impl std::error::Error for CatalogError {}

impl Catalog {
    /// The catalog of this binary, built on first use.
    ///
    /// ```
    /// use tool_runtime::{tool, Catalog};
    ///
    /// /// Add two integers.
    /// #[tool]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::global().expect("tool names are unique");
    /// let add = catalog.get("add").unwrap();
    /// assert_eq!(add.summary(), "Add two integers.");
    /// assert_eq!(add.input_schema()["required"], serde_json::json!(["a", "b"]));
    /// ```
    pub fn global() -> Result<&'static Catalog, CatalogError> {
        static GLOBAL: OnceLock<Result<Catalog, CatalogError>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| Catalog::from_registrations(registration::registrations()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Builds the catalog afresh from every registration in the binary: what
    /// [`Catalog::global`] does once. For measuring start-up; servers use `global`.
    pub fn build() -> Result<Catalog, CatalogError> {
        Catalog::from_registrations(registration::registrations())
    }

    pub(crate) fn from_registrations(
        registrations: impl Iterator<Item = &'static ToolRegistration>,
    ) -> Result<Catalog, CatalogError> {
        let mut registrations: Vec<&'static ToolRegistration> = registrations.collect();
        registrations.sort_by(|a, b| {
            (a.name, a.location.file, a.location.line).cmp(&(
                b.name,
                b.location.file,
                b.location.line,
            ))
        });
        for window in registrations.chunk_by(|a, b| a.name == b.name) {
            if window.len() > 1 {
                return Err(CatalogError::DuplicateName {
                    name: window[0].name.to_owned(),
                    locations: window.iter().map(|r| r.location).collect(),
                });
            }
        }
        let tools = registrations
            .into_iter()
            .map(Tool::from_registration)
            .collect();
        Ok(Catalog { tools })
    }

    /// Every tool, sorted by name.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools
            .binary_search_by(|tool| tool.name.as_str().cmp(name))
            .ok()
            .map(|index| &self.tools[index])
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
