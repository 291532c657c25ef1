//! A handle to the registry a builder makes, for code that exists before the registry does
//! (a tool's state) and changes it later: a tool that adds or removes tools, prompts or
//! resources, whose clients are then told the list changed.

use super::Registry;
use std::sync::{Arc, OnceLock, Weak};

/// The registry a [`RegistryBuilder`](super::RegistryBuilder) builds, reachable once a server
/// holds it. Register it as state and a tool can change the catalog it is part of:
///
/// ```
/// use tool_runtime::mcp::{McpServer, ServerInfo};
/// use tool_runtime::registry::RegistryHandle;
/// use tool_runtime::{tool, DynamicTool, Registry, State};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct NoArguments {}
///
/// /// Turn on the extra tools.
/// #[tool]
/// fn enable_extras(registry: State<RegistryHandle>) -> Result<&'static str, String> {
///     let registry = registry.registry().ok_or("not served yet")?;
///     let extra = DynamicTool::new("extra", "An extra tool.", |_: NoArguments| async {
///         Ok::<_, String>("hi")
///     })
///     .map_err(|e| e.to_string())?;
///     registry.add_tool(extra).map_err(|e| e.to_string())?;
///     Ok("enabled")
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let builder = Registry::builder();
/// let handle = builder.handle();
/// let server = McpServer::new(
///     builder.state(handle.clone()).build().unwrap(),
///     ServerInfo::new("demo", "1"),
/// );
/// assert!(server.registry().get("extra").is_none());
/// server.registry().call("enable_extras", serde_json::json!({})).await;
/// assert!(server.registry().get("extra").is_some());
/// # });
/// ```
#[derive(Clone, Default)]
pub struct RegistryHandle(Arc<OnceLock<Weak<Registry>>>);

impl std::fmt::Debug for RegistryHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryHandle")
            .field("served", &self.registry().is_some())
            .finish()
    }
}

impl RegistryHandle {
    /// The registry, once a server holds it and while it lives; `None` before (a registry
    /// used on its own, not served, is not reachable through its handle).
    pub fn registry(&self) -> Option<Arc<Registry>> {
        self.0.get()?.upgrade()
    }

    /// Points the handle at `registry`, now shared.
    pub(crate) fn attach(&self, registry: &Arc<Registry>) {
        let _ = self.0.set(Arc::downgrade(registry));
    }
}
