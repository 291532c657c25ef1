//! Tools made at run time from closures: the factory pattern, where a function captures
//! some context and returns a tool.

use super::RegistryError;
use crate::call::dynamic::{closure_handler, DynamicHandler};
use crate::call::output::ToolOutput;
use crate::catalog::{ItemKind, ParamInfo, Tool};
use crate::schema;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

/// A tool made at run time, ready to add to a [`Registry`](crate::Registry).
///
/// Its arguments are a struct deriving `Deserialize` and `JsonSchema`; its schema is that
/// struct's. The closure may capture anything, which is how one function can make a tool
/// bound to a context (the factory pattern):
///
/// ```
/// use std::sync::Arc;
/// use tool_runtime::DynamicTool;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct ListArgs { prefix: Option<String> }
///
/// fn list_products_tool(catalog: Arc<Vec<String>>) -> DynamicTool {
///     DynamicTool::new("list_products", "List product names.", move |args: ListArgs| {
///         let catalog = Arc::clone(&catalog);
///         async move {
///             let prefix = args.prefix.unwrap_or_default();
///             Ok::<_, String>(
///                 catalog
///                     .iter()
///                     .filter(|p| p.starts_with(&prefix))
///                     .cloned()
///                     .collect::<Vec<_>>(),
///             )
///         }
///     })
///     .expect("a valid tool")
/// }
/// # let _ = list_products_tool(Arc::new(vec!["apple".into()]));
/// ```
pub struct DynamicTool {
    pub(crate) tool: Tool,
    pub(crate) handler: Arc<dyn DynamicHandler>,
}

impl std::fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTool")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

impl DynamicTool {
    /// A tool named `name`, described by `description`, that runs `handler` with its
    /// arguments read into `A`.
    ///
    /// Fails when the name breaks the naming rule or `A` is not described as an object.
    pub fn new<A, F, Fut, T, E>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Result<DynamicTool, RegistryError>
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        T: ToolOutput + JsonSchema + 'static,
        E: Display,
    {
        let name = checked_name(ItemKind::Tool, name.into())?;
        let output_schema = schema::output_schema_of::<T>();
        let tool = described::<A>(ItemKind::Tool, name, description.into(), output_schema)?;
        Ok(DynamicTool {
            tool,
            handler: closure_handler(handler),
        })
    }

    /// Limits how often the tool may be called, by all its callers together.
    pub fn rate(mut self, rate: crate::ops::Rate) -> Self {
        self.tool.set_rate(Some(rate));
        self
    }

    /// The OAuth scopes a caller's access token must grant to call the tool (what
    /// `#[tool(scopes = [...])]` says). Fails on a scope that is empty or holds a space, a
    /// quote or a backslash (which a token's `scope` cannot carry), or is listed twice.
    pub fn scopes(
        mut self,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Result<Self, RegistryError> {
        let scopes: Vec<String> = scopes.into_iter().map(Into::into).collect();
        if let Err((index, reason)) = tool_rules::check_scopes(scopes.iter().map(String::as_str)) {
            return Err(RegistryError::InvalidScope {
                tool: self.tool.name().to_owned(),
                scope: scopes[index].clone(),
                reason,
            });
        }
        self.tool.set_scopes(scopes);
        Ok(self)
    }

    /// Stops calls that run longer than `limit`.
    pub fn timeout(mut self, limit: std::time::Duration) -> Self {
        self.tool.set_timeout(Some(limit));
        self
    }

    /// Whether a call may, or must, run as a task (what `#[tool(task = "...")]` says).
    pub fn task(mut self, support: crate::catalog::TaskSupport) -> Self {
        self.tool.set_task_support(support);
        self
    }

    /// Stores an output over the server's threshold and answers a link to it with a
    /// preview, instead of cutting it (what `#[tool(large_output = "resource")]` says).
    pub fn large_output_as_resource(mut self) -> Self {
        self.tool.set_large_output_as_resource(true);
        self
    }

    /// The tool changes nothing (what `#[tool(read_only)]` says): clients may call it
    /// freely, and its answers may be kept ([`cache`](Self::cache)).
    pub fn read_only(mut self) -> Self {
        let mut annotations = self.tool.annotations();
        annotations.read_only = Some(true);
        self.tool.set_annotations(annotations);
        self
    }

    /// Keeps the tool's answers and gives them again for the same arguments (what
    /// `#[tool(read_only, cache = "30s")]` says). Only for a tool that changes nothing: the
    /// registry refuses a cached tool that is not [`read_only`](Self::read_only).
    pub fn cache(mut self, policy: crate::catalog::CachePolicy) -> Self {
        self.tool.set_cache(Some(policy));
        self
    }

    /// In an agent loop, a call of this tool runs alone, never beside another call of the
    /// same turn (what `#[tool(exclusive)]` says).
    pub fn exclusive(mut self) -> Self {
        self.tool.set_exclusive(true);
        self
    }

    /// In an agent loop, a call of this tool waits for a user's approval before it runs
    /// (what `#[tool(approval)]` says).
    pub fn approval(mut self) -> Self {
        self.tool.set_approval(true);
        self
    }

    #[cfg(feature = "client")]
    /// A tool whose schemas are given as they are (another server's tool, say) rather than
    /// a Rust type's: the input schema is made publishable as every schema of the catalog is
    /// (boolean schemas, nullable types, "any value" spelled out) and keeps what it allows;
    /// its arguments reach `handler` as they came, once checked against it.
    pub(crate) fn from_schemas(
        name: String,
        description: String,
        input_schema: Value,
        output_schema: Option<Value>,
        handler: Arc<dyn DynamicHandler>,
    ) -> Result<DynamicTool, RegistryError> {
        let name = checked_name(ItemKind::Tool, name)?;
        let mut input_schema = input_schema;
        let Value::Object(root) = &mut input_schema else {
            return Err(RegistryError::InvalidSchema {
                what: ItemKind::Tool,
                name,
                reason: "the input schema is not an object schema".to_owned(),
            });
        };
        // The catalog's form: no dialect named, no title at the root, an object with its
        // properties always present.
        root.remove("$schema");
        root.remove("title");
        root.insert("type".to_owned(), "object".into());
        root.entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
        schema::publishable(&mut input_schema);
        let params = params_of(&input_schema);
        let output_schema = output_schema.map(|mut output| {
            if let Value::Object(root) = &mut output {
                root.remove("$schema");
            }
            schema::publishable(&mut output);
            schema::OutputSchema::of(output)
        });
        Ok(DynamicTool {
            tool: Tool::dynamic(name, description, input_schema, output_schema, params),
            handler,
        })
    }

    #[cfg(feature = "client")]
    /// Sets the tool's title and hints (what another server says of its tool).
    pub(crate) fn described_as(
        mut self,
        title: Option<String>,
        annotations: crate::catalog::Annotations,
    ) -> Self {
        self.tool.set_title(title);
        self.tool.set_annotations(annotations);
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        self.tool.name()
    }

    /// The tool as callers see it.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }
}

/// `name`, when it follows the naming rule of tools and prompts.
pub(super) fn checked_name(what: ItemKind, name: String) -> Result<String, RegistryError> {
    match crate::catalog::names::check_name(&name) {
        Ok(()) => Ok(name),
        Err(reason) => Err(RegistryError::InvalidName { what, name, reason }),
    }
}

/// The description of something made at run time (a tool, a prompt, a resource) whose
/// arguments are read into `A`.
pub(super) fn described<A: JsonSchema>(
    what: ItemKind,
    name: String,
    description: String,
    output_schema: Option<schema::OutputSchema>,
) -> Result<Tool, RegistryError> {
    let (input_schema, params) =
        arguments_schema::<A>().map_err(|reason| RegistryError::InvalidSchema {
            what,
            name: name.clone(),
            reason,
        })?;
    Ok(Tool::dynamic(
        name,
        description,
        input_schema,
        output_schema,
        params,
    ))
}

/// The parameters a root object schema describes.
pub(super) fn params_of(schema: &Value) -> Vec<ParamInfo> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, property)| ParamInfo {
            name: name.clone(),
            description: property
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            required: required.contains(&name.as_str()),
            injected: false,
            default: property.get("default").cloned(),
            header: property
                .get(crate::catalog::HEADER_KEYWORD)
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
        .collect()
}

/// The canonical schema of an argument struct, and its parameters.
fn arguments_schema<A: JsonSchema>() -> Result<(Value, Vec<ParamInfo>), String> {
    let mut generator = schema::generator_for_input();
    let root = generator.root_schema_for::<A>().to_value();
    let Value::Object(mut root) = root else {
        return Err("the argument type must be a struct of named fields".to_owned());
    };
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err("the argument type must be a struct of named fields".to_owned());
    }
    let properties = match root.remove("properties") {
        Some(Value::Object(properties)) => properties,
        _ => Default::default(),
    };
    let required: Vec<Value> = match root.remove("required") {
        Some(Value::Array(required)) => required,
        _ => Vec::new(),
    };
    let definitions = match root.remove("$defs") {
        Some(Value::Object(definitions)) => definitions,
        _ => Default::default(),
    };
    let mut schema = schema::object_schema(properties, required, definitions);
    // What else the type's schema says of the whole object (composition, conditionals,
    // its own `additionalProperties`, the dialect it names) is kept as written: dropping
    // it would publish, and check calls against, a looser schema than the author's.
    if let Value::Object(object) = &mut schema {
        for (keyword, value) in root {
            if !matches!(keyword.as_str(), "title" | "description" | "type") {
                object.insert(keyword, value);
            }
        }
    }
    let params = params_of(&schema);
    Ok((schema, params))
}
