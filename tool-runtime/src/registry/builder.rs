//! Building a registry: the binary's static catalog, the state its tools take, limits, and
//! what is made at run time, checked once (a tool whose state is missing stops the build).

use super::admission::Limits;
use super::changes::Versions;
use super::operations::Operations;
use super::surfaces;
use super::{
    DynamicPrompt, DynamicResource, DynamicTool, Registry, RegistryError, ResourceUpdates,
};
use crate::call::context::{CallContext, StateMap};
use crate::catalog::time::Rate;
use crate::catalog::ItemKind;
use crate::layers::{BoxError, CallRequest, ResultCache, ToolAnswer, Tools};
use crate::ops::budget::{Budget, Budgets};
use crate::ops::rate::ClientLimiter;
use crate::ops::watch::Observer;
use crate::registration::StaticTools;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::watch;

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
/// assert_eq!(price.output(), Some(&serde_json::json!(40)));
/// let hello = registry.call("greetings_hello", serde_json::json!({"name": "Ana"})).await;
/// assert_eq!(hello.output(), Some(&serde_json::json!("hello Ana")));
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
    /// The handle to the registry this builds.
    handle: super::RegistryHandle,
    /// Whether an agent loop keeps a model's almost-JSON arguments as they came (refused)
    /// rather than repairing them.
    no_argument_repair: bool,
    /// What starts once the registry is shared on a runtime: its mounted servers, by the
    /// prefix their tools come under.
    starters: Vec<super::Starter>,
    mounted_prefixes: Vec<String>,
    /// The layers around calls, in the order given.
    layers: crate::layers::Stages,
    /// How much the cache of read-only tools' answers may hold.
    cache_limits: crate::layers::CacheLimits,
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
    /// Whether a model's arguments that are almost JSON (in a code fence, with text
    /// around them, cut off) are repaired before they are checked, when tools are called
    /// from a model's tool calls ([`agent`](crate::agent)). On by default; off, such
    /// arguments are refused with the parser's error.
    pub fn repair_arguments(mut self, on: bool) -> Self {
        self.no_argument_repair = !on;
        self
    }

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
    /// no tool has that name, unless it is under a mounted server's prefix (`docs_search`
    /// for the mount `docs`): that server's tools come once it is reached, and a limit
    /// for a tool it does not bring is logged as a warning then. A mounted tool keeps what
    /// its limit has counted when its server's list is read again.
    pub fn rate_limit(mut self, name: impl Into<String>, rate: Rate) -> Self {
        self.rate_limits.push((name.into(), rate));
        self
    }

    /// Limits how often each client may call tools (by its
    /// [`Caller::key`](crate::context::Caller::key): its token's subject, its session, or its
    /// address). Over HTTP a client past it gets `429 Too Many Requests` with `Retry-After` for any
    /// request; elsewhere its calls are refused with an error result that says when to call again.
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
    /// recorder the program installs (with the feature `prometheus`, `ops::Prometheus`
    /// installs one and serves it at `GET /metrics`): calls and errors per tool, calls in
    /// flight, and a histogram of their duration. Off by default.
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

    /// A handle to the registry this builds, reachable once a server holds it: registered
    /// as state, it lets a tool add or remove tools, prompts and resources (see
    /// [`RegistryHandle`](super::RegistryHandle)).
    pub fn handle(&self) -> super::RegistryHandle {
        self.handle.clone()
    }

    /// Puts `layer` around every call of every tool (those added later included), inside
    /// the layers given before it: the first layer given is the outermost. One service is
    /// made of it for all the tools, so a `tower::limit::ConcurrencyLimitLayer` given here
    /// bounds the calls of all of them together. See [`layers`](crate::layers).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tool_runtime::{tool, Registry};
    ///
    /// /// Wait a while.
    /// #[tool]
    /// async fn nap(millis: u64) -> &'static str {
    ///     tokio::time::sleep(Duration::from_millis(millis)).await;
    ///     "rested"
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::builder()
    ///     .layer(tower::timeout::TimeoutLayer::new(Duration::from_millis(50)))
    ///     .build()
    ///     .unwrap();
    /// let result = registry.call("nap", serde_json::json!({"millis": 10_000})).await;
    /// assert_eq!(result.error().unwrap().status(), "refused");
    /// # });
    /// ```
    pub fn layer<L>(self, layer: L) -> Self
    where
        L: tower::Layer<crate::layers::Next>,
        L::Service: tower::Service<CallRequest, Response = ToolAnswer> + Send + 'static,
        <L::Service as tower::Service<CallRequest>>::Error: Into<BoxError>,
        <L::Service as tower::Service<CallRequest>>::Future: Send + 'static,
    {
        self.layer_for(Tools::all(), layer)
    }

    /// Puts `layer` around every call of `tools`: one tool by name, several
    /// (`["search", "fetch"]`), or those a rule picks ([`Tools::matching`]). One service is
    /// made of it for all of them, so a `ConcurrencyLimitLayer` bounds their calls
    /// together. A tool named that the registry does not have is an error of
    /// [`build`](Self::build); for tools that come later (a mounted server's), pick them
    /// by a rule.
    ///
    /// ```
    /// use tool_runtime::{tool, Registry};
    ///
    /// /// Look a word up.
    /// #[tool(read_only)]
    /// fn define(word: String) -> String { format!("{word}: a word") }
    ///
    /// let registry = Registry::builder()
    ///     .layer_for("define", tower::limit::ConcurrencyLimitLayer::new(4))
    ///     .build()
    ///     .unwrap();
    /// # let _ = registry;
    /// ```
    pub fn layer_for<L>(mut self, tools: impl Into<Tools>, layer: L) -> Self
    where
        L: tower::Layer<crate::layers::Next>,
        L::Service: tower::Service<CallRequest, Response = ToolAnswer> + Send + 'static,
        <L::Service as tower::Service<CallRequest>>::Error: Into<BoxError>,
        <L::Service as tower::Service<CallRequest>>::Future: Send + 'static,
    {
        self.layers.push(tools.into(), layer);
        self
    }

    /// Gives `layer` the name `name`, for the tools that ask for it with
    /// `#[tool(layers = ["name"])]`; one service is made of it for all of them. A tool that
    /// names a layer the registry was not given is an error of [`build`](Self::build).
    ///
    /// ```
    /// use tool_runtime::{tool, Registry};
    ///
    /// /// Read a row of the shared database.
    /// #[tool(read_only, layers = ["database"])]
    /// fn read_row(id: u64) -> String { format!("row {id}") }
    ///
    /// let registry = Registry::builder()
    ///     .named_layer("database", tower::limit::ConcurrencyLimitLayer::new(8))
    ///     .build()
    ///     .unwrap();
    /// # let _ = registry;
    /// ```
    pub fn named_layer<L>(mut self, name: &str, layer: L) -> Self
    where
        L: tower::Layer<crate::layers::Next>,
        L::Service: tower::Service<CallRequest, Response = ToolAnswer> + Send + 'static,
        <L::Service as tower::Service<CallRequest>>::Error: Into<BoxError>,
        <L::Service as tower::Service<CallRequest>>::Future: Send + 'static,
    {
        self.layers.push(Tools::naming_layer(name), layer);
        self
    }

    /// How much the cache of answers of read-only tools (`#[tool(read_only, cache =
    /// "30s")]`) may hold: by default 10,000 answers and 64 MiB, the least recently used
    /// going first.
    pub fn cache_limits(mut self, limits: crate::layers::CacheLimits) -> Self {
        self.cache_limits = limits;
        self
    }

    /// Runs `starter`, a mounted server whose tools come under `prefix`, once the registry
    /// is shared on a runtime (see `Registry::start`). Until then a rate limit or a layer
    /// named for a tool under `prefix` is taken on trust, and held to the server's list
    /// once it comes.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn on_start(mut self, prefix: &str, starter: super::Starter) -> Self {
        self.mounted_prefixes.push(prefix.to_owned());
        self.starters.push(starter);
        self
    }

    /// Builds the registry over this binary's static catalog. Fails on a duplicate name, a
    /// clash, or a `State<T>` parameter whose state was not registered.
    pub fn build(self) -> Result<Registry, RegistryError> {
        let statics = StaticTools::global()?;
        self.check_states(statics)?;
        check_schemas_and_examples(statics)?;
        let registry = self.assemble(statics)?;
        registry.check_layers()?;
        Ok(registry)
    }

    /// Builds a registry that describes the tools (lists, checks, exports) but may lack the
    /// state some need to run: a call of one of those answers the missing-state error.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(crate) fn build_for_description(self) -> Result<Registry, RegistryError> {
        self.assemble(StaticTools::global()?)
    }

    /// Builds a registry without this binary's static tools, prompts and resources: only
    /// what is added at run time (the command line's view of another server).
    #[cfg(all(feature = "client", feature = "cli"))]
    pub(crate) fn build_without_statics(self) -> Result<Registry, RegistryError> {
        self.assemble(crate::registration::StaticTools::none())
    }

    /// Refuses a `State<T>` parameter, of a tool, a prompt or a resource, whose state was
    /// not registered.
    fn check_states(&self, statics: &StaticTools) -> Result<(), RegistryError> {
        for (what, about, runnable) in described_runnables(statics) {
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
        let cache = Arc::new(ResultCache::new(self.cache_limits, self.observer.metrics));
        let limits = Arc::new(Limits::new(
            self.client_rate.map(ClientLimiter::new),
            self.budget.limits().then(|| Budgets::new(self.budget)),
        ));
        let operations = Operations {
            observer: self.observer,
            limits: Arc::clone(&limits),
            cache: Arc::clone(&cache),
            default_timeout: self.default_timeout,
        };
        let layers = operations.around(self.layers);
        let registry = Registry {
            default_timeout: self.default_timeout,
            observer: self.observer,
            limits,
            rate_overrides: self.rate_limits.into_iter().collect(),
            statics,
            dynamic: RwLock::new(BTreeMap::new()),
            surfaces: RwLock::new(surfaces::DynamicSurfaces::default()),
            context: CallContext::new(Arc::new(self.state)),
            changes: Arc::new(sender),
            resource_updates: self.resource_updates,
            shared: std::sync::OnceLock::new(),
            repair_arguments: !self.no_argument_repair,
            handle: self.handle,
            mounted_prefixes: self.mounted_prefixes,
            starters: std::sync::Mutex::new(self.starters),
            background: std::sync::Mutex::default(),
            closers: std::sync::Mutex::default(),
            layers: Arc::new(layers),
            result_cache: cache,
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
        // Each tool took its limit as it came in; a limit must name a tool, or one a
        // mounted server may bring.
        let unknown = registry
            .rate_overrides
            .keys()
            .find(|name| registry.get(name).is_none() && !registry.may_be_mounted(name));
        if let Some(name) = unknown {
            return Err(RegistryError::UnknownTool { name: name.clone() });
        }
        Ok(registry)
    }
}

/// Every tool of `catalog`, then every prompt and resource, as the tool description each
/// is checked and run as: in the order of the static runnables.
pub(crate) fn described(
    catalog: &crate::catalog::Catalog,
) -> impl Iterator<Item = (ItemKind, &crate::catalog::Tool)> {
    let tools = catalog.tools().iter().map(|t| (ItemKind::Tool, t));
    let prompts = catalog
        .prompts()
        .iter()
        .map(|p| (ItemKind::Prompt, p.about()));
    let resources = catalog
        .resources()
        .iter()
        .map(|r| (ItemKind::Resource, r.about()));
    tools.chain(prompts).chain(resources)
}

/// [`described`], each with how it runs (the runnables line up with the catalog's lists).
fn described_runnables(
    statics: &StaticTools,
) -> impl Iterator<
    Item = (
        ItemKind,
        &crate::catalog::Tool,
        &crate::call::runnable::Runnable,
    ),
> {
    let runnables = statics
        .runnables
        .iter()
        .chain(&statics.prompt_runnables)
        .chain(&statics.resource_runnables);
    described(&statics.catalog)
        .zip(runnables)
        .map(|((what, about), runnable)| (what, about, runnable))
}

/// Refuses an input schema the validator cannot check, and a doc example that does not fit
/// its tool's (prompt's, resource's) parameters: the macro checks what it can see, and this
/// the rest (your own types), before anything is served.
fn check_schemas_and_examples(statics: &StaticTools) -> Result<(), RegistryError> {
    // Each runnable keeps the checker compiled here.
    for (what, about, runnable) in described_runnables(statics) {
        runnable
            .compile_checker(about)
            .map_err(|reason| RegistryError::SchemaNotCheckable {
                what,
                name: about.name().to_owned(),
                reason,
            })?;
        let validator = runnable.checker(about);
        for example in about.argument_examples() {
            let problems = validator.problems(about.input_schema(), example);
            if !problems.is_empty() {
                return Err(RegistryError::ExampleDoesNotFit {
                    what,
                    name: about.name().to_owned(),
                    example: crate::export::canonical::to_string(example),
                    problem: crate::schema::validate::join_problems(
                        problems.iter().map(|p| p.message.as_str()),
                    ),
                });
            }
        }
    }
    Ok(())
}
