//! The registry: the static catalog plus tools, prompts and resources added at run time,
//! shared state, and one entry point to call any of them.
//!
//! The static catalog never changes. Tools made at run time (closures, the factory pattern)
//! and groups of them under a prefix (namespacing), prompts and resources made at run time,
//! live in a layer on top, which refuses name (and URI) clashes and announces every change.

mod admission;
mod builder;
mod calls;
mod changes;
mod dynamic;
mod dynamic_surfaces;
mod error;
mod handle;
mod layers;
mod mounted_names;
mod operations;
mod shared;
mod shared_limits;
mod surfaces;

pub use crate::call::runnable::ToolRef;
#[cfg(feature = "cli")]
pub(crate) use builder::described;
pub use builder::RegistryBuilder;
pub(crate) use calls::{CallStart, PendingCall};
pub(crate) use changes::Versions;
pub use changes::{Changes, ListsChanged};
pub use dynamic::DynamicTool;
pub use dynamic_surfaces::{DynamicPrompt, DynamicResource};
pub(crate) use error::Holder;
pub use error::RegistryError;
pub use handle::RegistryHandle;
pub(crate) use surfaces::completion_context;
pub(crate) use surfaces::Update;
pub use surfaces::{
    Completion, CompletionTarget, PromptRef, ResourceRef, ResourceUpdates, SurfaceError, SurfaceRef,
};

use crate::call::context::CallContext;
use crate::call::runnable::{Entry, Runnable};
use crate::catalog::time::Rate;
use crate::catalog::{Catalog, ItemKind, Tool};
use crate::ops::watch::Observer;
use crate::registration::StaticTools;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::watch;

/// Every tool a server offers, and the one way to call them.
///
/// ```
/// use tool_runtime::{tool, Registry, State};
///
/// struct Config { unit: &'static str }
///
/// /// Convert a length to the configured unit.
/// #[tool]
/// fn convert(meters: f64, config: State<Config>) -> String {
///     format!("{meters} {}", config.unit)
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::builder().state(Config { unit: "m" }).build().unwrap();
/// let result = registry.call("convert", serde_json::json!({"meters": 2.5})).await;
/// assert_eq!(result.output(), Some(&serde_json::json!("2.5 m")));
/// # });
/// ```
pub struct Registry {
    default_timeout: Option<Duration>,
    /// What is recorded of each call (of an unknown tool too, which no layer sees).
    observer: Observer,
    /// The rate limits of tools and clients and the budgets calls are held to.
    limits: Arc<admission::Limits>,
    /// The limits the builder set in place of tools' own (`RegistryBuilder::rate_limit`),
    /// kept so a tool removed and added again keeps its.
    rate_overrides: BTreeMap<String, Rate>,
    statics: &'static StaticTools,
    dynamic: RwLock<BTreeMap<String, Arc<(Tool, Runnable)>>>,
    /// Prompts and resources added at run time.
    surfaces: RwLock<surfaces::DynamicSurfaces>,
    context: CallContext,
    changes: Arc<watch::Sender<Versions>>,
    resource_updates: ResourceUpdates,
    /// The store shared with other replicas, when there is one: rate limits and budgets
    /// are counted there, and list changes and resource updates go to every replica.
    shared: std::sync::OnceLock<crate::store::Store>,
    /// Whether a model's almost-JSON arguments are repaired before they are checked.
    repair_arguments: bool,
    /// The handle its builder gave out, pointed at it once it is shared.
    handle: RegistryHandle,
    /// What starts once the registry is shared on a runtime; taken by the first start.
    starters: std::sync::Mutex<Vec<Starter>>,
    /// The prefixes of the mounted servers' tools (empty for a mount that takes its
    /// server's names as they are).
    mounted_prefixes: Vec<String>,
    /// The tasks started that run for as long as the registry lives (a mount's
    /// connection): stopped when it is dropped.
    background: std::sync::Mutex<Vec<tokio::task::AbortHandle>>,
    /// What ends the connections started work opened (a mount's), in order, when the
    /// registry is closed.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    closers: std::sync::Mutex<Vec<Closer>>,
    /// The layers around calls: the registry's own (`operations`) and those given, in
    /// their order.
    layers: Arc<crate::layers::Stages>,
    /// The answers of read-only tools kept to be given again.
    result_cache: Arc<crate::layers::ResultCache>,
}

/// Ends a connection started work opened (a mounted server's), politely.
pub(crate) type Closer =
    Box<dyn FnOnce() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> + Send>;

impl Drop for Registry {
    fn drop(&mut self) {
        for task in crate::sync::lock(&self.background).drain(..) {
            task.abort();
        }
    }
}

/// What a registry starts once it is shared on a runtime (a mounted server's connection);
/// it gives what resolves once the started work is ready (a mount's first listing of tools
/// was tried).
pub(crate) type Starter = Box<dyn FnOnce(&Arc<Registry>) -> Ready + Send>;

/// What resolves once started work is ready: `Err` says why it is not (a mounted server
/// that could not be reached, say); it keeps trying in the background.
pub(crate) type Ready =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>> + Send>>;

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("static_tools", &self.statics.catalog.len())
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// A registry over the static catalog, with no state and no run-time tools.
    pub fn new() -> Result<Registry, RegistryError> {
        Registry::builder().build()
    }

    /// Starts building a registry with state and run-time tools.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// Points the handle its builder gave out at it, now that a server shares it.
    pub(crate) fn attach_handle(self: &Arc<Self>) {
        self.handle.attach(self);
    }

    /// Starts what the registry runs in the background (its mounted servers), once: on the
    /// current tokio runtime. What it gives resolves once each has been tried.
    pub(crate) fn start(self: &Arc<Self>) -> Ready {
        let starters = std::mem::take(&mut *crate::sync::lock(&self.starters));
        let ready: Vec<Ready> = starters.into_iter().map(|starter| starter(self)).collect();
        Box::pin(async move {
            let failed: Vec<String> = futures_util::future::join_all(ready)
                .await
                .into_iter()
                .filter_map(Result::err)
                .collect();
            match failed.is_empty() {
                true => Ok(()),
                false => Err(failed.join("; ")),
            }
        })
    }

    /// Whether the registry gets entries once started (it mounts other servers): a server
    /// over it offers every list and announces their changes.
    pub(crate) fn grows_when_started(&self) -> bool {
        !self.mounted_prefixes.is_empty()
    }

    /// Has `closer` run when the registry's connections are closed.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn on_close(&self, closer: Closer) {
        crate::sync::lock(&self.closers).push(closer);
    }

    /// Runs every closer given so far, one after the other.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) async fn close_connections(&self) {
        let closers = std::mem::take(&mut *crate::sync::lock(&self.closers));
        for closer in closers {
            closer().await;
        }
    }

    /// Keeps `task` running for as long as the registry lives.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn keep_running(&self, task: tokio::task::AbortHandle) {
        crate::sync::lock(&self.background).push(task);
    }

    /// Replaces the run-time tools named `replaced` with `tools`, in one step: no call and
    /// no listing sees neither set, and if `tools` cannot be added the old ones stay.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn replace_group(
        &self,
        replaced: &[String],
        tools: Vec<DynamicTool>,
    ) -> Result<(), RegistryError> {
        self.insert_all(replaced, tools)
    }

    /// Whether a model's almost-JSON arguments are repaired before they are checked
    /// ([`RegistryBuilder::repair_arguments`]).
    pub(crate) fn repairs_arguments(&self) -> bool {
        self.repair_arguments
    }

    /// The static catalog underneath.
    pub fn catalog(&self) -> &'static Catalog {
        &self.statics.catalog
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<ToolRef> {
        let statics = self.statics;
        if let Some(index) = statics.catalog.position(name) {
            return Some(ToolRef::of_static(
                &statics.catalog.tools()[index],
                &statics.runnables[index],
            ));
        }
        let dynamic = crate::sync::read(&self.dynamic);
        dynamic
            .get(name)
            .map(|entry| ToolRef::of_dynamic(Arc::clone(entry) as Arc<dyn Entry>))
    }

    /// Every tool, sorted by name.
    pub fn tools(&self) -> Vec<ToolRef> {
        let dynamic = crate::sync::read(&self.dynamic);
        let statics = self.statics;
        let mut tools: Vec<ToolRef> = statics
            .catalog
            .tools()
            .iter()
            .zip(&statics.runnables)
            .map(|(tool, runnable)| ToolRef::of_static(tool, runnable))
            .chain(
                dynamic
                    .values()
                    .map(|entry| ToolRef::of_dynamic(Arc::clone(entry) as Arc<dyn Entry>)),
            )
            .collect();
        tools.sort_by(|a, b| a.name().cmp(b.name()));
        tools
    }

    /// Whether tools can change while the registry runs (any were added at run time).
    pub(crate) fn has_dynamic_tools(&self) -> bool {
        !crate::sync::read(&self.dynamic).is_empty()
    }

    /// Adds a tool made at run time; refused when its name is taken.
    pub fn add_tool(&self, tool: DynamicTool) -> Result<(), RegistryError> {
        self.insert_all(&[], vec![tool])
    }

    /// Adds tools under `prefix` (`github` + `list` = `github_list`), all or none.
    pub fn add_group(
        &self,
        prefix: &str,
        tools: impl IntoIterator<Item = DynamicTool>,
    ) -> Result<(), RegistryError> {
        let renamed = tools
            .into_iter()
            .map(|tool| {
                let name = format!("{prefix}_{}", tool.tool.name());
                DynamicTool {
                    tool: tool.tool.renamed(name),
                    handler: tool.handler,
                }
            })
            .collect();
        self.insert_all(&[], renamed)
    }

    /// Adds `tools` in place of the run-time tools named `replaced` (which then do not
    /// count as taken): all checked before any change, under one lock.
    fn insert_all(
        &self,
        replaced: &[String],
        tools: Vec<DynamicTool>,
    ) -> Result<(), RegistryError> {
        let mut dynamic = crate::sync::write(&self.dynamic);
        let taken = |name: &str| dynamic.contains_key(name) && !replaced.iter().any(|r| r == name);
        for (index, tool) in tools.iter().enumerate() {
            // A group's prefix can make a name that breaks the rule.
            let name = dynamic::checked_name(ItemKind::Tool, tool.name().to_owned())?;
            if tool.tool.cache().is_some() && tool.tool.annotations().read_only != Some(true) {
                return Err(RegistryError::CacheNotReadOnly { tool: name });
            }
            let holder = if let Some(existing) = self.statics.catalog.get(&name) {
                Some(Holder::Static(existing.location()))
            } else if taken(&name) || tools[..index].iter().any(|t| t.name() == name) {
                Some(Holder::RunTime)
            } else {
                None
            };
            if let Some(holder) = holder {
                return Err(RegistryError::already_exists(ItemKind::Tool, name, holder));
            }
        }
        // All checked before any is added: all or none.
        let mut runnables = Vec::with_capacity(tools.len());
        for DynamicTool { tool, handler } in &tools {
            let runnable = Runnable::dynamic(tool.name(), Arc::clone(handler));
            runnable
                .compile_checker(tool)
                .map_err(|reason| RegistryError::SchemaNotCheckable {
                    what: ItemKind::Tool,
                    name: tool.name().to_owned(),
                    reason,
                })?;
            runnables.push(runnable);
        }
        for name in replaced {
            let staying = tools.iter().any(|tool| tool.name() == name);
            if dynamic.remove(name).is_some() && !staying {
                self.set_rate_limit(name, None);
            }
        }
        for (DynamicTool { tool, .. }, runnable) in tools.into_iter().zip(runnables) {
            // A tool put back in its own place (a mounted server's list read again) keeps
            // what its limit has counted: reading the list anew must not reset it.
            let rate = self.rate_for(&tool);
            if self.limits.rate_limit_of(tool.name()) != rate {
                self.set_rate_limit(tool.name(), rate);
            }
            dynamic.insert(tool.name().to_owned(), Arc::new((tool, runnable)));
        }
        drop(dynamic);
        self.list_changed(changes::List::Tools);
        Ok(())
    }

    /// Removes a tool added at run time; `false` when there was none by that name.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = crate::sync::write(&self.dynamic).remove(name).is_some();
        if removed {
            self.set_rate_limit(name, None);
            self.list_changed(changes::List::Tools);
        }
        removed
    }

    /// How many times each list (tools, prompts, resources) has changed.
    pub(crate) fn versions(&self) -> Versions {
        *self.changes.borrow()
    }

    /// Changes to the sets of tools, prompts and resources from now on: what a server
    /// watches to tell its clients that a list changed.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use tool_runtime::{DynamicTool, Registry};
    ///
    /// let registry = Registry::new().unwrap();
    /// let mut changes = registry.changes();
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct NoArgs {}
    ///
    /// let ping = DynamicTool::new("ping", "Answer pong.", |_: NoArgs| async {
    ///     Ok::<_, String>("pong".to_owned())
    /// })
    /// .unwrap();
    /// registry.add_tool(ping).unwrap();
    /// assert!(changes.changed().await);
    /// # });
    /// ```
    pub fn changes(&self) -> Changes {
        Changes::new(self.changes.subscribe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Nothing {}

    fn tool(name: &str) -> DynamicTool {
        DynamicTool::new(name, "A tool.", |_: Nothing| async {
            Ok::<_, String>("ok")
        })
        .unwrap()
    }

    fn names(registry: &Registry) -> Vec<String> {
        let mut names: Vec<String> = registry
            .tools()
            .iter()
            .map(|tool| tool.name().to_owned())
            .filter(|name| name.starts_with("up_"))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_group_is_replaced_in_one_step_or_not_at_all() {
        let registry = RegistryBuilder::default().build().unwrap();
        registry
            .replace_group(&[], vec![tool("up_a"), tool("up_b")])
            .unwrap();
        // The old names do not count as taken by the set that replaces them.
        let old = ["up_a".to_owned(), "up_b".to_owned()];
        registry
            .replace_group(&old, vec![tool("up_a"), tool("up_c")])
            .unwrap();
        assert_eq!(names(&registry), ["up_a", "up_c"]);
        // A set that cannot join (a name twice) leaves the tools of before in place.
        let old = ["up_a".to_owned(), "up_c".to_owned()];
        let refused = registry.replace_group(&old, vec![tool("up_d"), tool("up_d")]);
        assert!(refused.is_err());
        assert_eq!(names(&registry), ["up_a", "up_c"]);
        // Names it does not replace are still taken.
        let refused = registry.replace_group(&[], vec![tool("up_a")]);
        assert!(refused.is_err());
    }
}
