//! The MCP protocol, without I/O: a [`Connection`] takes the bytes of
//! one incoming JSON-RPC message and sends the bytes of every message it causes to a
//! channel. Transports (stdio, HTTP) only frame and move bytes.
//!
//! Both protocol eras are served; which one a request belongs to is decided in one place,
//! the `era` module: a request whose `params._meta` names a protocol version
//! (`io.modelcontextprotocol/protocolVersion`) is served statelessly under 2026-07-28;
//! anything else follows the handshake era (`initialize`, then requests), with the
//! negotiated version kept per connection.

pub(crate) mod asking;
mod backlog;
pub mod connection;
mod duties;
pub(crate) mod era;
pub(crate) mod header_values;
pub(crate) mod jsonrpc;
mod message;
mod methods;
mod options;
mod outbox;
mod outputs;
mod pages;
#[cfg(feature = "client")]
pub(crate) use pages::SERVER_INFO_META;
pub(crate) mod params;
mod relay;
mod remote_relay;
pub(crate) mod responses;
#[cfg(feature = "http")]
mod rest;
mod surfaces;
pub(crate) mod tasks;
pub(crate) mod time;
pub(crate) mod tools;
#[cfg(feature = "otel")]
mod traced;
mod work;

#[cfg(feature = "http")]
pub(crate) use asking::live::asking_replica;

pub use crate::clock::{Clock, SystemClock};
#[cfg(feature = "http")]
pub(crate) use connection::Read;
pub(crate) use connection::{Connection, ServerMessage};
pub use options::{CacheHints, CacheScope, ServerOptions};
pub use outputs::LargeOutputs;
pub(crate) use work::Work;

use crate::registry::{ListsChanged, Registry};
use crate::store::SealingKey;
use outputs::OutputStore;
use pages::Pages;
use std::sync::Arc;

/// Protocol versions of the handshake era, newest first.
pub(crate) const HANDSHAKE_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// Protocol versions served per request, without a handshake.
pub(crate) const STATELESS_VERSIONS: [&str; 1] = ["2026-07-28"];
/// Every protocol version served, newest first: the stateless ones, then the handshake's.
pub(crate) const SUPPORTED_VERSIONS: [&str; 5] = {
    let mut all = [""; 5];
    let mut index = 0;
    while index < all.len() {
        all[index] = if index < STATELESS_VERSIONS.len() {
            STATELESS_VERSIONS[index]
        } else {
            HANDSHAKE_VERSIONS[index - STATELESS_VERSIONS.len()]
        };
        index += 1;
    }
    all
};

/// Who the server says it is, to clients: its name, its version, and instructions for
/// the client's model if any.
///
/// ```
/// use tool_runtime::mcp::ServerInfo;
///
/// let info = ServerInfo::new("files", "1.2.0")
///     .with_instructions("Read files before you edit them.");
/// assert_eq!(info.name(), "files");
/// assert_eq!(info.instructions(), Some("Read files before you edit them."));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerInfo {
    name: String,
    version: String,
    instructions: Option<String>,
}

impl ServerInfo {
    /// A program called `name` (its own name, not the framework's) at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerInfo {
            name: name.into(),
            version: version.into(),
            instructions: None,
        }
    }

    /// Instructions for the client's model: how to use this server's tools together.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The program's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The program's version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The instructions for the client's model, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }
}

/// An MCP server over a registry of tools: share it between connections.
///
/// ```
/// use tool_runtime::mcp::connection::outbox;
/// use tool_runtime::mcp::{McpServer, ServerInfo};
/// use tool_runtime::{tool, Registry};
///
/// /// Add two integers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let server = McpServer::new(Registry::new().unwrap(), ServerInfo::new("calc", "1.0.0"));
/// let connection = server.connection();
/// let (sink, mut messages) = outbox();
/// let request = concat!(
///     r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","#,
///     r#""arguments":{"a":2,"b":3},"_meta":{"#,
///     r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
///     r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#,
/// );
/// // A call leaves work: the transport runs it where it chooses.
/// if let Some(work) = connection.handle(request.as_bytes(), &sink).into_work() {
///     tokio::spawn(work.run());
/// }
/// let answer = messages.recv().await.unwrap();
/// let answer: serde_json::Value = serde_json::from_slice(&answer.bytes).unwrap();
/// assert_eq!(answer["result"]["structuredContent"], serde_json::json!(5));
/// # });
/// ```
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    pub(crate) registry: Arc<Registry>,
    pub(crate) info: ServerInfo,
    pub(crate) page_size: usize,
    pub(crate) list_changed: ListsChanged,
    pub(crate) pages: Pages,
    pub(crate) max_message_bytes: usize,
    pub(crate) max_in_flight: usize,
    /// The requests running on all connections, and how many may.
    pub(crate) in_flight_total: Arc<connection::in_flight::InFlightTotal>,
    pub(crate) max_output_bytes: usize,
    pub(crate) shutdown_grace: std::time::Duration,
    pub(crate) cache: CacheHints,
    pub(crate) offered: Offered,
    /// Large outputs of the tools that allow it, kept to be read as resources.
    pub(crate) outputs: OutputStore,
    /// What request states of calls that ask their client are sealed with.
    pub(crate) sealing_key: SealingKey,
    /// How calls run as tasks, and where tasks are kept.
    pub(crate) tasks: crate::tasks::TaskOptions,
    /// Whether a caller with a token is listed only the tools it may call.
    pub(crate) list_only_permitted_tools: bool,
    /// The state shared with the other replicas, if any.
    pub(crate) store: Option<crate::store::Store>,
    /// This replica's runs of tasks that hold a lease (with a shared store).
    pub(crate) leased_runs: tasks::lease::LeasedRuns,
    /// What stamps records with the wall clock's time.
    pub(crate) clock: Arc<dyn crate::clock::Clock>,
    /// The sleeps of the server's work, ended as its driver tells it the time.
    pub(crate) timers: Arc<time::Timers>,
    /// The work due now and then (with a shared store), and what it found to run.
    duties: duties::Duties,
    /// The layers around every request, when it was given any.
    pub(crate) request_layers: Option<Arc<crate::layers::RequestStages>>,
}

/// What the catalog offers besides tools, decided once: the static catalog never changes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Offered {
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    /// Prompt arguments or resource-template variables to complete.
    pub(crate) completions: bool,
    /// Whether any tool may run as a task (or may come: the tool list may change).
    pub(crate) tasks: bool,
}

impl Offered {
    /// What the registry holds when the server starts (its own and run-time ones): a
    /// server offers prompts or resources when it has some to offer, or when it was told
    /// its lists can change (`ServerOptions::list_changed(true)`: they may come later).
    fn of(registry: &Registry, may_change: bool) -> Offered {
        let prompts = may_change || !registry.prompts().is_empty();
        let resources = registry.resources();
        // A tool whose large outputs become links needs clients to read them.
        let links_outputs = registry
            .tools()
            .iter()
            .any(|tool| tool.large_output_as_resource());
        Offered {
            prompts,
            resources: may_change || !resources.is_empty() || links_outputs,
            completions: prompts || resources.iter().any(|r| r.is_template()),
            // A mounted server's tools, which come once it starts, may all run as tasks.
            tasks: registry.grows_when_started()
                || registry
                    .tools()
                    .iter()
                    .any(|tool| tool.task_support() != crate::catalog::TaskSupport::Forbidden),
        }
    }
}

/// Which lists the server tells clients about when they change (`listChanged`). By default a
/// list is announced as changing when run-time entries were added to it (a list of the
/// binary's own never changes); an option sets all three.
fn announced_lists(registry: &Registry, option: Option<bool>, offered: Offered) -> ListsChanged {
    ListsChanged::from_flags([
        option.unwrap_or_else(|| registry.has_dynamic_tools()),
        offered.prompts && option.unwrap_or_else(|| registry.has_dynamic_prompts()),
        offered.resources && option.unwrap_or_else(|| registry.has_dynamic_resources()),
    ])
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("info", &self.shared.info)
            .field("page_size", &self.shared.page_size)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server over `registry`, introducing itself with `info`.
    pub fn new(registry: Registry, info: ServerInfo) -> Self {
        McpServer::with_options(registry, info, ServerOptions::default())
    }

    /// A server with options.
    pub fn with_options(registry: Registry, info: ServerInfo, options: ServerOptions) -> Self {
        // A registry that mounts other servers gets their items once it starts.
        let may_change = options
            .list_changed
            .or(registry.grows_when_started().then_some(true));
        let mut offered = Offered::of(&registry, may_change == Some(true));
        let list_changed = announced_lists(&registry, may_change, offered);
        // A tool list that may change may gain a tool that runs as a task.
        offered.tasks |= list_changed.tools;
        let mut tasks = options.tasks;
        let mut sealing_key = options.sealing_key;
        if let Some(store) = &options.store {
            if !tasks.chosen_store {
                tasks.store = store.tasks();
            }
            sealing_key.get_or_insert_with(|| store.backend.sealing_key());
            registry.share_with(store.clone());
        }
        let registry = Arc::new(registry);
        registry.attach_handle();
        let timers = Arc::new(time::Timers::default());
        McpServer {
            shared: Arc::new(Shared {
                registry,
                info,
                page_size: options.page_size.max(1),
                list_changed,
                pages: Pages::default(),
                max_message_bytes: options.max_message_bytes,
                max_in_flight: options.max_in_flight.max(1),
                in_flight_total: Arc::new(connection::in_flight::InFlightTotal::new(
                    options.max_in_flight_total.max(1),
                )),
                max_output_bytes: options.max_output_bytes,
                shutdown_grace: options.shutdown_grace,
                cache: options.cache,
                offered,
                outputs: OutputStore::new(
                    options.large_outputs,
                    options.store.clone(),
                    Arc::clone(&options.clock),
                    Arc::clone(&timers),
                ),
                sealing_key: sealing_key.unwrap_or_else(SealingKey::random),
                tasks,
                list_only_permitted_tools: options.list_only_permitted_tools,
                store: options.store,
                leased_runs: tasks::lease::LeasedRuns::default(),
                clock: options.clock,
                timers,
                duties: duties::Duties::default(),
                request_layers: crate::layers::RequestStages::new(options.request_layers),
            }),
        }
    }

    /// A new connection: a stdio process, or an HTTP session.
    pub fn connection(&self) -> Connection {
        Connection::new(Arc::clone(&self.shared))
    }

    /// The registry served.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// Who the server says it is.
    pub fn info(&self) -> &ServerInfo {
        &self.shared.info
    }

    /// How long calls in flight may still run once the input has ended.
    pub fn shutdown_grace(&self) -> std::time::Duration {
        self.shared.shutdown_grace
    }

    /// The largest message a stream transport (stdio) accepts, in bytes.
    pub fn max_message_bytes(&self) -> usize {
        self.shared.max_message_bytes
    }

    /// The largest tool output sent back, in bytes.
    pub fn max_output_bytes(&self) -> usize {
        self.shared.max_output_bytes
    }

    /// This server's copy of the shared session `id`, from its record in `store`, and the
    /// work that sends its notifications.
    #[cfg(feature = "http")]
    pub(crate) fn restored_connection(
        &self,
        id: String,
        store: crate::store::Store,
        record: &crate::store::SessionRecord,
    ) -> (Connection, Vec<Work>) {
        Connection::restored(Arc::clone(&self.shared), id, store, record)
    }

    /// Tells the server the time, `now`, as its driver's monotonic clock reads it (tokio's,
    /// for a server on tokio, so that a test's paused clock drives it): the server's waits
    /// whose time has come end. Gives the work due now, for the driver to run (spawn each):
    /// with a store replicas share, the renewal of this replica's leases on tasks, the look
    /// for tasks whose worker was lost, and those found to run again here.
    ///
    /// The protocol layer never reads a clock or waits on the runtime's timers: it is told
    /// the time. [`transport::maintenance`](crate::transport::maintenance) is the driver the
    /// built-in transports run; a transport of one's own runs it too (see there), or its
    /// own driver: call this when [`next_wake`](McpServer::next_wake) comes or
    /// [`wake_changed`](McpServer::wake_changed) resolves.
    pub fn on_time(&self, now: std::time::Instant) -> Vec<Work> {
        self.shared.timers.tell(now);
        self.shared.duties.at(&self.shared, now)
    }

    /// When the server must next be told the time ([`on_time`](McpServer::on_time)), if it
    /// waits for nothing timed.
    pub fn next_wake(&self) -> Option<std::time::Instant> {
        let timers = self.shared.timers.next_deadline();
        let duties = self.shared.duties.next_due(&self.shared);
        timers.into_iter().chain(duties).min()
    }

    /// Resolves once the server must be told the time again sooner than
    /// [`next_wake`](McpServer::next_wake) said: its work began to wait for a while, or
    /// found work for the driver to run. At once when that is the case already.
    pub async fn wake_changed(&self) {
        if self.shared.duties.pending(&self.shared) {
            return;
        }
        tokio::select! {
            () = self.shared.timers.changed() => {}
            () = self.shared.duties.changed() => {}
        }
    }

    /// Starts what the registry runs in the background (its mounted servers), on the
    /// current runtime; once.
    pub(crate) fn start_registry(&self) {
        drop(self.shared.registry.start());
    }

    /// Starts the registry's mounted servers now (once), for a caller that waits until they
    /// listed their items before it serves.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    pub(crate) fn start_mounts(&self) -> crate::registry::Ready {
        self.shared.registry.start()
    }

    /// Whether this is the first driver of the server to ask: one is enough.
    pub(crate) fn claim_driver(&self) -> bool {
        self.shared.timers.claim_driver()
    }

    /// Hands the tasks this replica runs back to its replicas (it is shutting down): each
    /// task's lease is released, so another replica runs it again or ends it; resolves
    /// once every one has been handed back. Without a shared store there is nobody to hand
    /// them to, and nothing happens.
    pub async fn hand_back_tasks(&self) {
        if self.shared.store.is_some() {
            self.shared.leased_runs.hand_back().await;
        }
    }

    /// Whether the server holds as many requests as it takes on all connections together:
    /// the next one gets the server-busy error, so a balancer should send it elsewhere.
    pub fn is_at_capacity(&self) -> bool {
        self.shared.in_flight_total.is_full()
    }

    /// The store this server shares state through with its replicas, if any.
    pub fn store(&self) -> Option<&crate::store::Store> {
        self.shared.store.as_ref()
    }
}

impl Shared {
    /// Whether lists show `tool` to `caller`: every tool, unless the server lists a caller
    /// with a token only the tools it may call.
    #[cfg(feature = "http")]
    pub(crate) fn lists_to(
        &self,
        caller: &crate::call::caller::Caller,
        tool: &crate::catalog::Tool,
    ) -> bool {
        !self.list_only_permitted_tools || caller.may_call(tool)
    }
}

/// A duration in whole milliseconds, as the protocol writes them (saturating).
pub(crate) fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
