//! The registry: the static catalog plus tools, prompts and resources added at run time,
//! shared state, and one entry point to call any of them.
//!
//! The static catalog never changes. Tools made at run time (closures, the factory pattern)
//! and groups of them under a prefix (namespacing), prompts and resources made at run time,
//! live in a layer on top, which refuses name (and URI) clashes and announces every change.

mod changes;
mod dynamic;
mod dynamic_surfaces;
mod surfaces;

pub use crate::call::runnable::ToolRef;
pub(crate) use changes::Versions;
pub use changes::{Changes, ListsChanged};
pub use dynamic::DynamicTool;
pub use dynamic_surfaces::{DynamicPrompt, DynamicResource};
pub(crate) use surfaces::completion_context;
pub(crate) use surfaces::Update;
pub use surfaces::{Completion, CompletionTarget, ResourceUpdates, SurfaceError, SurfaceRef};

use crate::call::caller::Caller;
use crate::call::context::{CallContext, StateMap};
use crate::call::error::CallError;
use crate::call::result::ToolResult;
use crate::call::runnable::{Entry, Runnable};
use crate::catalog::time::Rate;
use crate::catalog::{Catalog, CatalogError, ItemKind, Tool};
use crate::ops::budget::{Budget, Budgets};
use crate::ops::rate::{ClientLimiter, Limiter};
use crate::ops::watch::{CallWatch, Observer};
use crate::registration::StaticTools;
use serde_json::Value;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::watch;

/// Why a registry could not be built or changed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// The static catalog could not be built.
    Catalog(CatalogError),
    /// A tool or prompt with this name, or a resource with this URI, exists already.
    AlreadyExists {
        /// What was added.
        what: ItemKind,
        /// The name (the URI, for a resource).
        name: String,
        /// What holds the name now: a `#[tool]` and where, or a tool added at run time.
        existing: String,
    },
    /// The name breaks the naming rule.
    InvalidName {
        /// What was made.
        what: ItemKind,
        /// The name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A run-time tool's (prompt's, resource's) argument type does not describe an object.
    InvalidSchema {
        /// What was made.
        what: ItemKind,
        /// Its name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A run-time resource's URI or template is refused.
    InvalidResource {
        /// The URI or URI template.
        uri: String,
        /// Why.
        reason: String,
    },
    /// A rate limit ([`RegistryBuilder::rate_limit`]) names a tool the registry does not
    /// have.
    UnknownTool {
        /// The name given.
        name: String,
    },
    /// A run-time tool's OAuth scope ([`DynamicTool::scopes`]) cannot be one.
    InvalidScope {
        /// The tool.
        tool: String,
        /// The scope given.
        scope: String,
        /// Why.
        reason: String,
    },
    /// A tool, prompt or resource takes `State<T>` but no `T` was registered.
    MissingState {
        /// What takes it.
        what: ItemKind,
        /// Its name.
        tool: String,
        /// The state's type.
        type_name: &'static str,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::Catalog(error) => error.fmt(f),
            RegistryError::AlreadyExists {
                what: ItemKind::Resource,
                name,
                existing,
            } => write!(
                f,
                "a resource with URI `{name}` already exists ({existing})"
            ),
            RegistryError::AlreadyExists {
                what,
                name,
                existing,
            } => write!(f, "a {what} named `{name}` already exists ({existing})"),
            RegistryError::InvalidResource { uri, reason } => {
                write!(f, "resource `{uri}` cannot be built: {reason}")
            }
            RegistryError::InvalidName { what, name, reason } => {
                write!(f, "`{name}` is not a valid {what} name: {reason}")
            }
            RegistryError::InvalidSchema { what, name, reason } => {
                write!(f, "{what} `{name}` cannot be built: {reason}")
            }
            RegistryError::UnknownTool { name } => {
                write!(
                    f,
                    "a rate limit names the tool `{name}`, but no tool has that name"
                )
            }
            RegistryError::InvalidScope {
                tool,
                scope,
                reason,
            } => write!(
                f,
                "tool `{tool}` cannot require the scope {scope:?}: {reason}"
            ),
            RegistryError::MissingState {
                what,
                tool,
                type_name,
            } => write!(
                f,
                "{what} `{tool}` takes State<{type_name}>, but no {type_name} was registered; add \
                 it with Registry::builder().state(...)"
            ),
        }
    }
}

impl std::error::Error for RegistryError {}

/// What holds a name (or URI) already.
pub(crate) enum Holder {
    /// One of the binary's own, written where it says.
    Static(Option<crate::catalog::SourceLocation>),
    /// One added at run time.
    RunTime,
}

impl RegistryError {
    /// The name of a `what` clashes with what `holder` is.
    pub(crate) fn already_exists(what: ItemKind, name: String, holder: Holder) -> RegistryError {
        let existing = match holder {
            Holder::Static(Some(location)) => format!("a #[{what}] at {location}"),
            Holder::Static(None) => format!("a #[{what}]"),
            Holder::RunTime => format!("a {what} added at run time"),
        };
        RegistryError::AlreadyExists {
            what,
            name,
            existing,
        }
    }
}

impl From<CatalogError> for RegistryError {
    fn from(error: CatalogError) -> Self {
        RegistryError::Catalog(error)
    }
}

/// How a call started: it ended at once (an unknown tool, a refusal, an argument error),
/// or it runs, with its work still to be awaited.
pub(crate) enum CallStart {
    Ended(ToolResult),
    Running(PendingCall),
}

/// A started call whose work is still to be awaited; it owns everything it needs, so it can
/// move into a task.
pub(crate) struct PendingCall {
    tool: ToolRef,
    input: Value,
    invocation: crate::call::Invocation,
    /// The tool's own time limit, else the registry's default.
    limit: Option<Duration>,
    watch: CallWatch,
}

impl PendingCall {
    /// Awaits the work and gives the result.
    pub(crate) async fn finish(self, context: &CallContext) -> ToolResult {
        let outcome = crate::call::complete(&self.tool, self.invocation, context, self.limit).await;
        let name = self.tool.name().to_owned();
        let result = ToolResult::new(name, self.input, Some(self.tool), outcome);
        self.watch.finish(&result);
        result
    }

    /// The call as work to run in place, when it is a sync tool proven quick; else the call
    /// as it was.
    pub(crate) fn into_in_place(self, context: &CallContext) -> Result<InPlaceCall, PendingCall> {
        match self.invocation {
            crate::call::Invocation::Blocking(work)
                if self.tool.runnable().pace().runs_in_place() =>
            {
                Ok(InPlaceCall {
                    scope: context.scope().cloned(),
                    limit: self.limit,
                    tool: self.tool,
                    input: self.input,
                    work,
                    watch: self.watch,
                })
            }
            invocation => Err(PendingCall { invocation, ..self }),
        }
    }
}

/// A started call of a sync tool proven quick, which a transport may run in place.
pub(crate) struct InPlaceCall {
    tool: ToolRef,
    input: Value,
    work: crate::call::invoke::BlockingWork,
    limit: Option<Duration>,
    watch: CallWatch,
    /// The call's scope, which says whether the tool asked for pages to be visited.
    scope: Option<std::sync::Arc<crate::call::scope::CallScope>>,
}

impl InPlaceCall {
    /// The time limit of the call, if any.
    pub(crate) fn limit(&self) -> Option<Duration> {
        self.limit
    }

    /// The tool that runs.
    pub(crate) fn tool(&self) -> &ToolRef {
        &self.tool
    }

    /// What records the call's end, for a watchdog that may end it first.
    pub(crate) fn watch(&self) -> &CallWatch {
        &self.watch
    }

    /// Runs the work here and now; `started` is the time it starts at.
    pub(crate) fn run(self, started: std::time::Instant) -> ToolResult {
        let scope = self.scope.as_deref();
        let outcome = crate::call::complete_in_place(&self.tool, self.work, scope, started);
        let name = self.tool.name().to_owned();
        let result = ToolResult::new(name, self.input, Some(self.tool), outcome);
        self.watch.finish(&result);
        result
    }
}

/// Builds a [`Registry`]: the binary's static catalog, plus the state its tools take, a
/// default time limit, and tools, prompts and resources made at run time.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::{tool, DynamicTool, Registry, State};
///
/// struct Prices { apple: u32 }
///
/// /// The price of an apple, in cents.
/// #[tool]
/// fn apple_price(prices: State<Prices>) -> u32 {
///     prices.apple
/// }
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Name { name: String }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let hello = DynamicTool::new("hello", "Say hello.", |args: Name| async move {
///     Ok::<_, String>(format!("hello {}", args.name))
/// })
/// .unwrap();
/// let registry = Registry::builder()
///     .state(Prices { apple: 40 })
///     .default_timeout(Duration::from_secs(30))
///     .group("greetings", [hello])
///     .build()
///     .unwrap();
///
/// let price = registry.call("apple_price", serde_json::json!({})).await;
/// assert_eq!(price.output(), Some(&serde_json::json!({"result": 40})));
/// let hello = registry.call("greetings_hello", serde_json::json!({"name": "Ana"})).await;
/// assert_eq!(hello.output(), Some(&serde_json::json!({"result": "hello Ana"})));
///
/// // A tool whose state is missing stops the build, naming both.
/// let error = Registry::builder().build().unwrap_err().to_string();
/// assert!(error.contains("apple_price") && error.contains("Prices"), "{error}");
/// # });
/// ```
#[derive(Default)]
pub struct RegistryBuilder {
    default_timeout: Option<Duration>,
    observer: Observer,
    /// Rate limits set here, by tool name, over what the tools say themselves.
    rate_limits: Vec<(String, Rate)>,
    client_rate: Option<Rate>,
    budget: Budget,
    state: StateMap,
    tools: Vec<DynamicTool>,
    groups: Vec<(String, Vec<DynamicTool>)>,
    prompts: Vec<DynamicPrompt>,
    resources: Vec<DynamicResource>,
    resource_updates: ResourceUpdates,
}

impl fmt::Debug for RegistryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryBuilder")
            .field("state", &self.state)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl RegistryBuilder {
    /// Registers shared state, handed to every tool with a `State<T>` parameter.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// Stops calls to tools without their own `timeout` after `limit`.
    pub fn default_timeout(mut self, limit: Duration) -> Self {
        self.default_timeout = Some(limit);
        self
    }

    /// Adds a tool made at run time.
    pub fn tool(mut self, tool: DynamicTool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Limits how often the tool `name` may be called, by all its callers together; it
    /// replaces the tool's own `#[tool(rate = "...")]`. Past the limit a call is refused
    /// with an error result that says the limit and when to call again. Building fails when
    /// no tool has that name.
    pub fn rate_limit(mut self, name: impl Into<String>, rate: Rate) -> Self {
        self.rate_limits.push((name.into(), rate));
        self
    }

    /// Limits how often each client may call tools (by its [`Caller::key`](crate::context::Caller::key):
    /// its token's subject, its session, or its address). Over HTTP a client past it gets
    /// `429 Too Many Requests` with `Retry-After` for any request; elsewhere its calls are
    /// refused with an error result that says when to call again.
    pub fn client_rate(mut self, rate: Rate) -> Self {
        self.client_rate = Some(rate);
        self
    }

    /// Limits what each client may spend: calls and tokens of tool output (see
    /// [`Budget`]). Past it, a call is an error result whose status is `budget_exceeded`.
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// Writes the arguments' values into each call's audit event (their size only, by
    /// default: arguments may hold what the audit trail should not keep). Audit events are
    /// `tracing` events of the target [`AUDIT_TARGET`](crate::ops::AUDIT_TARGET).
    pub fn audit_arguments(mut self, on: bool) -> Self {
        self.observer.audit_arguments = on;
        self
    }

    /// Counts calls through the [`metrics`](https://docs.rs/metrics) facade, for whatever
    /// recorder the program installs (see [`Prometheus`](crate::ops::Prometheus)): calls
    /// and errors per tool, calls in flight, and a histogram of their duration. Off by
    /// default.
    pub fn metrics(mut self, on: bool) -> Self {
        self.observer.metrics = on;
        self
    }

    /// Adds tools under a prefix: a tool `list` in group `github` is called `github_list`.
    pub fn group(
        mut self,
        prefix: impl Into<String>,
        tools: impl IntoIterator<Item = DynamicTool>,
    ) -> Self {
        self.groups
            .push((prefix.into(), tools.into_iter().collect()));
        self
    }

    /// Adds a prompt made at run time.
    pub fn prompt(mut self, prompt: DynamicPrompt) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Adds a resource (or resource template) made at run time.
    pub fn resource(mut self, resource: DynamicResource) -> Self {
        self.resources.push(resource);
        self
    }

    /// The handle that tells subscribed clients a resource changed, for the state of the
    /// code that changes resources (the registry built from here uses the same one).
    pub fn resource_updates(&self) -> ResourceUpdates {
        self.resource_updates.clone()
    }

    /// Builds the registry over this binary's static catalog. Fails on a duplicate name, a
    /// clash, or a `State<T>` parameter whose state was not registered.
    pub fn build(self) -> Result<Registry, RegistryError> {
        let statics = StaticTools::global()?;
        self.check_states(statics)?;
        self.assemble(statics)
    }

    /// Builds a registry that describes the tools (lists, checks, exports) but may lack the
    /// state some need to run: a call of one of those answers the missing-state error.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(crate) fn build_for_description(self) -> Result<Registry, RegistryError> {
        self.assemble(StaticTools::global()?)
    }

    /// Refuses a `State<T>` parameter, of a tool, a prompt or a resource, whose state was
    /// not registered.
    fn check_states(&self, statics: &StaticTools) -> Result<(), RegistryError> {
        let catalog = &statics.catalog;
        let tools = catalog.tools().iter().map(|t| (ItemKind::Tool, t));
        let prompts = catalog
            .prompts()
            .iter()
            .map(|p| (ItemKind::Prompt, p.about()));
        let resources = catalog
            .resources()
            .iter()
            .map(|r| (ItemKind::Resource, r.about()));
        let runnables = statics
            .runnables
            .iter()
            .chain(&statics.prompt_runnables)
            .chain(&statics.resource_runnables);
        for ((what, about), runnable) in tools.chain(prompts).chain(resources).zip(runnables) {
            if let Some(requirement) = runnable
                .requirements()
                .find(|requirement| !self.state.contains(requirement.type_id))
            {
                return Err(RegistryError::MissingState {
                    what,
                    tool: about.name().to_owned(),
                    type_name: requirement.type_name,
                });
            }
        }
        Ok(())
    }

    fn assemble(self, statics: &'static StaticTools) -> Result<Registry, RegistryError> {
        let (sender, _) = watch::channel(Versions::default());
        let registry = Registry {
            default_timeout: self.default_timeout,
            observer: self.observer,
            rate_limits: RwLock::default(),
            rate_overrides: self.rate_limits.into_iter().collect(),
            client_limiter: self.client_rate.map(ClientLimiter::new),
            budgets: self
                .budget
                .limits()
                .then(|| Arc::new(Budgets::new(self.budget))),
            statics,
            dynamic: RwLock::new(BTreeMap::new()),
            surfaces: RwLock::new(surfaces::DynamicSurfaces::default()),
            context: CallContext::new(Arc::new(self.state)),
            changes: sender,
            resource_updates: self.resource_updates,
        };
        for tool in statics.catalog.tools() {
            registry.set_rate_limit(tool.name(), registry.rate_for(tool));
        }
        for tool in self.tools {
            registry.add_tool(tool)?;
        }
        for (prefix, tools) in self.groups {
            registry.add_group(&prefix, tools)?;
        }
        for prompt in self.prompts {
            registry.add_prompt(prompt)?;
        }
        for resource in self.resources {
            registry.add_resource(resource)?;
        }
        // Each tool took its limit as it came in; a limit must name a tool.
        let unknown = registry
            .rate_overrides
            .keys()
            .find(|name| registry.get(name).is_none());
        if let Some(name) = unknown {
            return Err(RegistryError::UnknownTool { name: name.clone() });
        }
        Ok(registry)
    }
}

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
/// assert_eq!(result.output(), Some(&serde_json::json!({"result": "2.5 m"})));
/// # });
/// ```
pub struct Registry {
    default_timeout: Option<Duration>,
    /// What is recorded of each call.
    observer: Observer,
    /// The rate limits of tools, by name.
    rate_limits: RwLock<HashMap<String, Arc<Limiter>>>,
    /// The limits the builder set in place of tools' own (`RegistryBuilder::rate_limit`),
    /// kept so a tool removed and added again keeps its.
    rate_overrides: BTreeMap<String, Rate>,
    /// The rate limit of each client, when there is one.
    client_limiter: Option<ClientLimiter>,
    /// What each client may spend, and has spent, when there is a budget.
    budgets: Option<Arc<Budgets>>,
    statics: &'static StaticTools,
    dynamic: RwLock<BTreeMap<String, Arc<(Tool, Runnable)>>>,
    /// Prompts and resources added at run time.
    surfaces: RwLock<surfaces::DynamicSurfaces>,
    context: CallContext,
    changes: watch::Sender<Versions>,
    resource_updates: ResourceUpdates,
}

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
        let dynamic = self
            .dynamic
            .read()
            .unwrap_or_else(|poison| poison.into_inner());
        dynamic
            .get(name)
            .map(|entry| ToolRef::of_dynamic(Arc::clone(entry) as Arc<dyn Entry>))
    }

    /// Every tool, sorted by name.
    pub fn tools(&self) -> Vec<ToolRef> {
        let dynamic = self
            .dynamic
            .read()
            .unwrap_or_else(|poison| poison.into_inner());
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
    pub fn has_dynamic_tools(&self) -> bool {
        !self
            .dynamic
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .is_empty()
    }

    /// Adds a tool made at run time; refused when its name is taken.
    pub fn add_tool(&self, tool: DynamicTool) -> Result<(), RegistryError> {
        self.insert_all(vec![tool])
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
        self.insert_all(renamed)
    }

    fn insert_all(&self, tools: Vec<DynamicTool>) -> Result<(), RegistryError> {
        let mut dynamic = self
            .dynamic
            .write()
            .unwrap_or_else(|poison| poison.into_inner());
        for (index, tool) in tools.iter().enumerate() {
            // A group's prefix can make a name that breaks the rule.
            let name = dynamic::checked_name(ItemKind::Tool, tool.name().to_owned())?;
            let holder = if let Some(existing) = self.statics.catalog.get(&name) {
                Some(Holder::Static(existing.location()))
            } else if dynamic.contains_key(&name) || tools[..index].iter().any(|t| t.name() == name)
            {
                Some(Holder::RunTime)
            } else {
                None
            };
            if let Some(holder) = holder {
                return Err(RegistryError::already_exists(ItemKind::Tool, name, holder));
            }
        }
        for DynamicTool { tool, handler } in tools {
            self.set_rate_limit(tool.name(), self.rate_for(&tool));
            let runnable = Runnable::dynamic(tool.name(), handler);
            dynamic.insert(tool.name().to_owned(), Arc::new((tool, runnable)));
        }
        drop(dynamic);
        self.changes.send_modify(|versions| versions.tools += 1);
        Ok(())
    }

    /// Removes a tool added at run time; `false` when there was none by that name.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self
            .dynamic
            .write()
            .unwrap_or_else(|poison| poison.into_inner())
            .remove(name)
            .is_some();
        if removed {
            self.set_rate_limit(name, None);
            self.changes.send_modify(|versions| versions.tools += 1);
        }
        removed
    }

    /// A number that grows each time the set of tools changes.
    pub fn version(&self) -> u64 {
        self.changes.borrow().tools
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

    /// A tool's rate limit: the one set on the builder, else the tool's own.
    fn rate_for(&self, tool: &Tool) -> Option<Rate> {
        self.rate_overrides
            .get(tool.name())
            .copied()
            .or(tool.rate())
    }

    /// Limits the tool `name` to `rate`, or lifts its limit.
    fn set_rate_limit(&self, name: &str, rate: Option<Rate>) {
        let mut limits = self
            .rate_limits
            .write()
            .unwrap_or_else(|poison| poison.into_inner());
        match rate {
            Some(rate) => limits.insert(name.to_owned(), Arc::new(Limiter::new(rate))),
            None => limits.remove(name),
        };
    }

    /// A call refused before it started (`tool` is `None` when the name is unknown),
    /// recorded as every call is.
    fn refused(
        &self,
        name: &str,
        tool: Option<ToolRef>,
        input: Value,
        caller: &Caller,
        error: CallError,
    ) -> ToolResult {
        let watch = self
            .observer
            .watch(name, tool.is_some(), &input, caller, None);
        let result = ToolResult::new(name.to_owned(), input, tool, Err(error));
        watch.finish(&result);
        result
    }

    /// Refuses a call its caller's token does not permit, or that its client's rate limit,
    /// its tool's, or its client's budget does not let through, checked in that order.
    /// Scopes come first, so a call its token does not permit spends no allowance; one each
    /// limit lets through has spent that limit's allowance even when a later one refuses it.
    /// Admitted, it gives the client's key when a limit or a budget per client needs it
    /// (worked out once: the call's output is charged to it).
    fn admit(&self, tool: &Tool, caller: &Caller) -> Result<Option<String>, CallError> {
        if let Some(refusal) = caller.scope_refusal(tool) {
            return Err(refusal);
        }
        let refused = |client: bool, rate: Rate, retry_after: Duration| CallError::RateLimited {
            tool: tool.name().to_owned(),
            client,
            rate,
            retry_after,
        };
        let client_limiter = self.client_limiter.as_ref();
        let key = (client_limiter.is_some() || self.budgets.is_some()).then(|| caller.key());
        if let (Some(limiter), Some(key)) = (client_limiter, &key) {
            limiter
                .check(key)
                .map_err(|wait| refused(true, limiter.rate(), wait))?;
        }
        let limits = self
            .rate_limits
            .read()
            .unwrap_or_else(|poison| poison.into_inner());
        if let Some(limiter) = limits.get(tool.name()) {
            limiter
                .check()
                .map_err(|wait| refused(false, limiter.rate(), wait))?;
        }
        drop(limits);
        if let (Some(budgets), Some(key)) = (&self.budgets, &key) {
            budgets
                .admit(key)
                .map_err(|(spent, used, limit)| CallError::BudgetExceeded {
                    tool: tool.name().to_owned(),
                    spent,
                    used,
                    limit,
                })?;
        }
        Ok(key)
    }

    /// The context calls run with.
    pub fn context(&self) -> &CallContext {
        &self.context
    }

    /// Calls the tool `name` with `input` (a JSON object of arguments, or `null`).
    ///
    /// Never panics, whatever the input or the tool does: every failure is in the result.
    /// Past its time limit the call answers the timeout error at once and the tool's
    /// [`Cancellation`](crate::Cancellation) fires; a sync tool that keeps running is not
    /// waited for.
    pub async fn call(&self, name: &str, input: Value) -> ToolResult {
        self.call_in(name, input, &self.direct_context()).await
    }

    /// Calls a tool on behalf of `caller`, as a transport of your own would: as
    /// [`Registry::call`], with the caller's permissions (the scopes of its token), rate
    /// limit and budget, and the caller named in the audit trail.
    ///
    /// ```
    /// use tool_runtime::context::Caller;
    /// use tool_runtime::{tool, Registry};
    ///
    /// /// Read the shared notes.
    /// #[tool(scopes = ["notes:read"])]
    /// fn read_notes() -> &'static str {
    ///     "remember the milk"
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::new().unwrap();
    /// let reader = Caller::http(None).with_subject("ada", ["notes:read"]);
    /// let result = registry.call_for(reader, "read_notes", serde_json::json!({})).await;
    /// assert!(result.error().is_none());
    ///
    /// let stranger = Caller::http(None).with_subject("eve", ["profile"]);
    /// let result = registry.call_for(stranger, "read_notes", serde_json::json!({})).await;
    /// assert_eq!(result.error().unwrap().status(), "insufficient_scope");
    /// # });
    /// ```
    pub async fn call_for(
        &self,
        caller: crate::call::caller::Caller,
        name: &str,
        input: Value,
    ) -> ToolResult {
        self.call_in(name, input, &self.direct_context_for(caller))
            .await
    }

    /// The context of one call made directly on the registry (not through a protocol): its
    /// own scope, so a timeout cancels this call and no other.
    pub(crate) fn direct_context(&self) -> CallContext {
        self.direct_context_for(Caller::DIRECT)
    }

    /// [`direct_context`](Registry::direct_context), made on behalf of `caller`.
    fn direct_context_for(&self, caller: Caller) -> CallContext {
        let scope = crate::call::scope::CallScope::detached().called_by(caller);
        self.context.with_scope(Arc::new(scope))
    }

    /// A tool's time limit: its own, else the registry's default.
    pub(crate) fn limit_for(&self, tool: &Tool) -> Option<Duration> {
        tool.timeout().or(self.default_timeout)
    }

    /// Calls a tool with a context of the caller's making (the protocol layer gives each
    /// call its own scope: progress, logging, cancellation).
    pub(crate) async fn call_in(
        &self,
        name: &str,
        input: Value,
        context: &CallContext,
    ) -> ToolResult {
        match self.start_call(name, input, context) {
            CallStart::Ended(result) => result,
            CallStart::Running(pending) => pending.finish(context).await,
        }
    }

    /// The context of a call made through a protocol, which gives it `scope` (its
    /// progress, logging, cancellation and caller).
    pub(crate) fn call_context(&self, scope: Arc<crate::call::scope::CallScope>) -> CallContext {
        self.context.with_scope(scope)
    }

    /// Starts a call: its result when it ended without running (an unknown tool, a
    /// refusal, an argument error), else the work to await.
    pub(crate) fn start_call(&self, name: &str, input: Value, context: &CallContext) -> CallStart {
        let caller = context.caller();
        let Some(tool) = self.get(name) else {
            let unknown = CallError::UnknownTool {
                name: name.to_owned(),
                suggestion: self.closest_name(name),
            };
            return CallStart::Ended(self.refused(name, None, input, caller, unknown));
        };
        let key = match self.admit(&tool, caller) {
            Ok(key) => key,
            Err(refusal) => {
                return CallStart::Ended(self.refused(name, Some(tool), input, caller, refusal))
            }
        };
        let charged = self.budgets.as_ref().zip(key);
        let watch = self.observer.watch(name, true, &input, caller, charged);
        match crate::call::start(&tool, &input, context) {
            crate::call::Started::Finished(outcome) => {
                let result = ToolResult::new(name.to_owned(), input, Some(tool), outcome);
                watch.finish(&result);
                CallStart::Ended(result)
            }
            crate::call::Started::Pending(invocation) => CallStart::Running(PendingCall {
                limit: self.limit_for(&tool),
                tool,
                input,
                invocation,
                watch,
            }),
        }
    }

    fn closest_name(&self, name: &str) -> Option<String> {
        let tools = self.tools();
        tool_rules::closest(name, tools.iter().map(|tool| tool.name()), 0.7).map(str::to_owned)
    }
}
