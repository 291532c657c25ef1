//! What `#[tool]` writes for each tool: a constant `ToolRegistration`, collected into the
//! binary's static catalog by `inventory` (or, with the `linkme` feature, a `linkme`
//! distributed slice).

use crate::call::context::StateRequirement;
use crate::call::{Arguments, Invocation};
use schemars::{Schema, SchemaGenerator};
use serde_json::Value;

/// One tool as the macro describes it. Built in a `static`, so every field is constant.
#[doc(hidden)]
#[derive(Debug)]
pub struct ToolRegistration {
    pub name: &'static str,
    pub title: Option<&'static str>,
    pub summary: &'static str,
    pub description: &'static str,
    pub examples: &'static [Example],
    pub params: &'static [ParamSpec],
    pub annotations: Annotations,
    /// `#[tool(timeout = "...")]`: a call running longer is stopped and answered with an error.
    pub timeout: Option<std::time::Duration>,
    pub output_schema: fn(&mut SchemaGenerator) -> Option<Schema>,
    pub invoke: InvokeFn,
    pub location: SourceLocation,
}

/// The call shim: reads the arguments into typed values and returns the work to run, or
/// `None` when an argument could not be read (the problem is then in `Arguments`).
#[doc(hidden)]
pub type InvokeFn = fn(&mut Arguments<'_>) -> Option<Invocation>;

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
    pub kind: ParamKind,
}

#[doc(hidden)]
#[derive(Debug)]
pub enum ParamKind {
    /// Read from the caller's JSON arguments.
    Argument {
        schema: fn(&mut SchemaGenerator) -> Schema,
        /// Whether the type itself accepts a missing value (an `Option`).
        optional: fn() -> bool,
        /// Present for `#[arg(default)]`; gives the default as JSON when the type can say it.
        default: Option<fn() -> Option<Value>>,
    },
    /// Filled in by the runtime; never shown to callers.
    Injected {
        requirement: fn() -> Option<StateRequirement>,
    },
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
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

#[cfg(not(feature = "linkme"))]
inventory::collect!(ToolRegistration);

/// The linkme slice every tool lands in when the `linkme` feature is on.
#[cfg(feature = "linkme")]
#[doc(hidden)]
#[linkme::distributed_slice]
pub static TOOL_REGISTRY: [ToolRegistration];

/// Every tool registration linked into this binary, in no particular order.
pub(crate) fn registrations() -> impl Iterator<Item = &'static ToolRegistration> {
    #[cfg(not(feature = "linkme"))]
    {
        inventory::iter::<ToolRegistration>.into_iter()
    }
    #[cfg(feature = "linkme")]
    {
        TOOL_REGISTRY.iter()
    }
}

/// Registers one tool; the macro calls it so the registration mechanism is chosen by this
/// crate's features, not by the crate the tool is written in.
#[cfg(not(feature = "linkme"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __register_tool {
    ($registration:expr) => {
        $crate::__private::inventory::submit! { $registration }
    };
}

/// Registers one tool; the macro calls it so the registration mechanism is chosen by this
/// crate's features, not by the crate the tool is written in.
#[cfg(feature = "linkme")]
#[doc(hidden)]
#[macro_export]
macro_rules! __register_tool {
    ($registration:expr) => {
        #[$crate::__private::linkme::distributed_slice($crate::__private::TOOL_REGISTRY)]
        #[linkme(crate = $crate::__private::linkme)]
        static __TOOL_REGISTRATION: $crate::__private::ToolRegistration = $registration;
    };
}
