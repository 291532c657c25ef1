//! What generated code reaches; not public API, and it changes without notice.

pub use crate::__register_tool as register_tool;
pub use crate::call::arguments::{
    assert_option, is_optional, schema_of, ArgumentReader, IsOption, ToolArgument,
};
pub use crate::call::ask::ElicitForm;
pub use crate::call::complete::{complete_with, CompleteFn, CompletionContext};
pub use crate::call::context::StateRequirement;
pub use crate::call::inject::Injected;
pub use crate::call::invoke::Invocation;
pub use crate::call::output::{
    ContentKind, ContentResultKind, DefaultNotShown, DefaultProbe, DefaultViaSerialize,
    OutputProbe, OutputSchemaNone, OutputSchemaNoneForResult, OutputSchemaViaResult,
    OutputSchemaViaType, Produced, ResultKind, SerializeKind, ViaContent, ViaContentResult,
    ViaResult, ViaSerialize,
};
pub use crate::call::param::{NotOption, OptionProbe, ToolParam};
pub use crate::call::surface_output::{prompt_output, resource_output};
pub use crate::catalog::contract::FormSpec;
pub use crate::catalog::contract::{
    Annotations, CachePolicy, Example, ParamKind, ParamSpec, Registered, ResourceSpec,
    SourceLocation, ToolDescription,
};
pub use crate::catalog::limits::{LengthLimit, Limit, LimitValue, PatternLimit, RangeLimit};
pub use crate::catalog::time::Rate;
pub use crate::catalog::TaskSupport;
pub use crate::registration::{namespace_prefix_is_valid, NamespaceRegistration, ToolRegistration};
#[cfg(feature = "linkme")]
pub use crate::registration::{NAMESPACE_REGISTRY, TOOL_REGISTRY};
pub use inventory;
#[cfg(feature = "linkme")]
pub use linkme;
pub use schemars::{Schema, SchemaGenerator};
pub use serde_json::Value;

/// Confirms that a parameter spelled like a runtime-provided type (`State<...>`,
/// `CallContext`, ...) or marked `#[arg(inject)]` really is one.
pub fn assert_injected<T: Injected>() {}
