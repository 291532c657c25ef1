//! What generated code reaches; not public API, and it changes without notice.

pub use crate::__register_tool as register_tool;
pub use crate::call::arguments::{assert_option, is_optional, schema_of, Arguments, IsOption};
pub use crate::call::context::StateRequirement;
pub use crate::call::inject::Injected;
pub use crate::call::invoke::Invocation;
pub use crate::call::output::{
    ContentKind, ContentResultKind, DefaultNotShown, DefaultProbe, DefaultViaSerialize,
    OutputProbe, OutputSchemaNone, OutputSchemaNoneForResult, OutputSchemaViaResult,
    OutputSchemaViaType, Produced, ResultKind, SerializeKind, ViaContent, ViaContentResult,
    ViaResult, ViaSerialize,
};
#[cfg(feature = "linkme")]
pub use crate::catalog::registration::TOOL_REGISTRY;
pub use crate::catalog::registration::{
    Annotations, Example, ParamKind, ParamSpec, SourceLocation, ToolRegistration,
};
pub use inventory;
#[cfg(feature = "linkme")]
pub use linkme;
pub use schemars::{Schema, SchemaGenerator};
pub use serde_json::Value;

/// The runtime-provided requirement of an injected parameter type.
pub fn requirement_of<T: Injected>() -> Option<StateRequirement> {
    T::requirement()
}
