//! The description half of what `#[tool]` writes for each tool: names, docs, examples,
//! hints and how to build each parameter's schema. All constant data; how the tool runs is
//! the other half (see the crate's `registration` module), so the catalog never needs to know it.

use schemars::{Schema, SchemaGenerator};
use serde_json::Value;

/// One tool as the macro describes it. Built in a `static`, so every field is constant.
#[doc(hidden)]
#[derive(Debug)]
pub struct ToolDescription {
    pub name: &'static str,
    pub title: Option<&'static str>,
    pub summary: &'static str,
    pub description: &'static str,
    pub examples: &'static [Example],
    pub params: &'static [ParamSpec],
    pub annotations: Annotations,
    /// `#[tool(timeout = "...")]`: a call running longer is stopped and answered with an error.
    pub timeout: Option<std::time::Duration>,
    /// `#[tool(rate = "...")]`: how often the tool may be called, by all callers together.
    pub rate: Option<super::time::Rate>,
    /// `#[tool(scopes = [...])]`: the OAuth scopes a caller's access token must grant.
    pub scopes: &'static [&'static str],
    /// `#[tool(large_output = "resource")]`: an output over the server's threshold is
    /// stored and answered as a link to it, with a preview.
    pub large_output_as_resource: bool,
    /// `#[tool(task = "...")]`: whether a call may, or must, run as a task.
    pub task: super::TaskSupport,
    /// `#[tool(exclusive)]`: in an agent loop, a call of this tool runs alone, never
    /// beside another call of the same turn.
    pub exclusive: bool,
    /// `#[tool(approval)]`: in an agent loop, a call of this tool waits for a user's
    /// approval before it runs.
    pub approval: bool,
    /// `#[tool(layers = [...])]`: the named layers a call of the tool goes through.
    pub layers: &'static [&'static str],
    /// `#[tool(cache = "...")]`: how the tool's answers are kept and given again.
    pub cache: Option<CachePolicy>,
    /// The elicitation forms the function's body asks with (`elicit::<T>`, `Elicited<T>`).
    pub forms: &'static [FormSpec],
    pub output_schema: fn(&mut SchemaGenerator) -> Option<Schema>,
    pub location: SourceLocation,
}

/// An elicitation form a tool asks with: the type's name as written, and its form schema
/// (or why the type cannot be one).
#[doc(hidden)]
#[derive(Debug)]
pub struct FormSpec {
    pub name: &'static str,
    pub schema: fn() -> Result<Value, String>,
}

/// What a registration is: a tool, a prompt, or a resource (or resource template).
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum Registered {
    /// `#[tool]`: called by the model with JSON arguments.
    Tool,
    /// `#[prompt]`: messages a user picks, with string arguments.
    Prompt,
    /// `#[resource("uri")]`: content read by URI; the parameters are the template's
    /// variables.
    Resource(ResourceSpec),
}

/// What `#[resource(...)]` says besides the function.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ResourceSpec {
    /// The URI, or an RFC 6570 URI template when the function has parameters.
    pub uri: &'static str,
    /// The MIME type of the content, when known.
    pub mime_type: Option<&'static str>,
    /// The size of the content in bytes, when known.
    pub size: Option<u64>,
}

/// An `Example:` line of the doc comment.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Example {
    /// A JSON object of arguments, as canonical JSON text checked at compile time.
    Arguments(&'static str),
    /// Any other example text.
    Text(&'static str),
}

/// One parameter of the function, in declaration order.
#[doc(hidden)]
#[derive(Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub description: Option<&'static str>,
    /// Decided by the parameter's type (its `ToolParam` implementation), so an alias of a
    /// runtime-provided type is recognised as one.
    pub kind: ParamKind,
    /// Present for `#[arg(default)]`; gives the default as JSON when the type can say it.
    pub default: Option<fn() -> Option<Value>>,
    /// `#[arg(header = "Name")]`: mirrored in the HTTP header `Mcp-Param-Name`.
    pub header: Option<&'static str>,
    /// `#[arg(range(..), length(..), pattern = "..")]`: schema keywords and their values.
    pub limits: &'static [super::limits::Limit],
}

#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum ParamKind {
    /// Read from the caller's JSON arguments.
    Argument {
        schema: fn(&mut SchemaGenerator) -> Schema,
        /// Whether the type itself accepts a missing value (an `Option`).
        optional: fn() -> bool,
    },
    /// Filled in by the runtime; never shown to callers.
    Injected,
}

/// How a read-only tool's answers are kept and given again (`#[tool(read_only, cache =
/// "30s")]`, [`DynamicTool::cache`](crate::DynamicTool::cache)): the same arguments give
/// the kept answer until it is that old. An answer is kept per caller (the subject of its
/// token), unless the tool says its answers are the same for everyone.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::catalog::CachePolicy;
///
/// let policy = CachePolicy::new(Duration::from_secs(30)).same_for_everyone();
/// assert_eq!(policy.ttl(), Duration::from_secs(30));
/// assert!(policy.is_same_for_everyone());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachePolicy {
    ttl: std::time::Duration,
    same_for_everyone: bool,
}

impl CachePolicy {
    /// Answers kept for `ttl`, per caller.
    pub const fn new(ttl: std::time::Duration) -> Self {
        CachePolicy {
            ttl,
            same_for_everyone: false,
        }
    }

    /// The same, with one answer for every caller (`#[tool(same_for_everyone)]`): for a
    /// tool whose answer does not depend on who asks.
    pub const fn same_for_everyone(mut self) -> Self {
        self.same_for_everyone = true;
        self
    }

    #[doc(hidden)]
    /// What `#[tool(cache = "...")]` writes, checked by the macro.
    pub const fn __from_macro(ttl_ms: u64, same_for_everyone: bool) -> Self {
        CachePolicy {
            ttl: std::time::Duration::from_millis(ttl_ms),
            same_for_everyone,
        }
    }

    /// How long an answer is kept.
    pub fn ttl(&self) -> std::time::Duration {
        self.ttl
    }

    /// Whether every caller shares one answer (else each caller's subject has its own).
    pub fn is_same_for_everyone(&self) -> bool {
        self.same_for_everyone
    }
}

/// The MCP behaviour hints given in `#[tool(...)]`; `None` when not said.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    /// The tool does not change its environment.
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite data.
    pub destructive: Option<bool>,
    /// Calling the tool twice with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// The tool reaches outside systems (the web, other services).
    pub open_world: Option<bool>,
}

/// Where a tool is written, for messages that point the user at their code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceLocation {
    /// `file!()` of the tool.
    pub file: &'static str,
    /// `line!()` of the tool's name.
    pub line: u32,
    /// `module_path!()` of the tool.
    pub module_path: &'static str,
    /// The name of the package the tool is written in (`CARGO_PKG_NAME`).
    pub package: &'static str,
    /// That package's version (`CARGO_PKG_VERSION`).
    pub version: &'static str,
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}
