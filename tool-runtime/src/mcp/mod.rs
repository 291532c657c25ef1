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
pub(crate) mod connection;
pub(crate) mod era;
pub(crate) mod jsonrpc;
mod outbox;
mod outputs;
mod pages;
pub(crate) mod params;
mod relay;
pub(crate) mod responses;
#[cfg(feature = "http")]
mod rest;
mod surfaces;
pub(crate) mod tasks;
pub(crate) mod tools;
mod work;

pub use asking::sealed::SealingKey;
pub use connection::Connection;
#[cfg(feature = "http")]
pub(crate) use connection::Read;
pub use jsonrpc::RequestId;
pub use outbox::{outbox, Messages, Outgoing};
pub use outputs::LargeOutputs;
pub use work::{Handled, Work};
pub(crate) use work::{Placed, Watched};

use crate::registry::{ListsChanged, Registry};
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

/// One outgoing message, and what it is: a notification, or the response that ends its
/// request (a result or an error, with its code).
///
/// A notification holds a place in its connection's bounded backlog until the message is
/// dropped: a transport drops it once written.
#[derive(Debug, Clone)]
pub struct Message {
    /// The JSON-RPC message, without a trailing newline.
    pub bytes: Vec<u8>,
    /// What the message is.
    pub kind: MessageKind,
    /// Held only to be dropped with the message, which gives the place back.
    #[allow(dead_code)]
    place: Option<Arc<backlog::Place>>,
    /// Why the request was refused, when a transport may have a status of its own for it.
    refusal: Option<Box<Refusal>>,
}

/// Two messages are equal when they say the same.
impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes && self.kind == other.kind
    }
}

impl Eq for Message {}

/// What an outgoing message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MessageKind {
    /// A notification (progress, a log line); the request it belongs to goes on.
    Notification,
    /// A success response: it ends its request.
    Result,
    /// An error response with this JSON-RPC code: it ends its request.
    Error(i64),
    /// A request of ours to the client (a question while a call runs); the call goes on.
    Request,
}

impl Message {
    pub(crate) fn notification(bytes: Vec<u8>) -> Message {
        Message {
            bytes,
            kind: MessageKind::Notification,
            place: None,
            refusal: None,
        }
    }

    /// A notification that holds `place` in its connection's backlog until dropped.
    pub(crate) fn queued_notification(bytes: Vec<u8>, place: backlog::Place) -> Message {
        Message {
            bytes,
            kind: MessageKind::Notification,
            place: Some(Arc::new(place)),
            refusal: None,
        }
    }

    pub(crate) fn request(bytes: Vec<u8>) -> Message {
        Message {
            bytes,
            kind: MessageKind::Request,
            place: None,
            refusal: None,
        }
    }

    pub(crate) fn result(bytes: Vec<u8>) -> Message {
        Message {
            bytes,
            kind: MessageKind::Result,
            place: None,
            refusal: None,
        }
    }

    pub(crate) fn error(code: i64, bytes: Vec<u8>) -> Message {
        Message {
            bytes,
            kind: MessageKind::Error(code),
            place: None,
            refusal: None,
        }
    }

    /// Whether this message answers (and so ends) a request.
    pub fn is_response(&self) -> bool {
        matches!(self.kind, MessageKind::Result | MessageKind::Error(_))
    }

    /// Why the request this message answers was refused, when the protocol layer knows a
    /// reason a transport may have a status of its own for (HTTP: 403, 429, 404...).
    pub fn refusal(&self) -> Option<&Refusal> {
        self.refusal.as_deref()
    }

    /// The same message, answering a request refused for `refusal`.
    pub(crate) fn refused(mut self, refusal: Option<Refusal>) -> Message {
        self.refusal = refusal.map(Box::new);
        self
    }
}

/// Why a request was refused (or its call did not run to a result of the tool's), where a
/// transport may have a status of its own for it: HTTP answers 403 with an
/// `insufficient_scope` challenge, 429 with `Retry-After`, 404, 400, 504 or 500.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The caller's access token does not grant these scopes, every one the tool needs.
    InsufficientScope {
        /// The scopes to ask for.
        scopes: Vec<String>,
        /// Why, in words (for a challenge's `error_description`).
        description: String,
    },
    /// Past a rate limit or a budget; when a retry would pass, if it ever would.
    RateLimited {
        /// How long until a retry would pass; `None` for a budget spent.
        retry_after: Option<std::time::Duration>,
    },
    /// It names nothing the server has.
    NotFound,
    /// Its arguments do not fit.
    Invalid,
    /// It ran out of time.
    TimedOut,
    /// It failed on the server's side.
    Internal,
}

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
/// use tool_runtime::mcp::{outbox, McpServer, ServerInfo};
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
/// let request = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
/// // A call leaves work: the transport runs it where it chooses.
/// if let Some(work) = connection.handle(request, &sink).into_work() {
///     tokio::spawn(work.run());
/// }
/// let answer = messages.recv().await.unwrap();
/// let answer: serde_json::Value = serde_json::from_slice(&answer.bytes).unwrap();
/// assert_eq!(answer["result"]["structuredContent"], serde_json::json!({"result": 5}));
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
}

/// What the catalog offers besides tools, decided once: the static catalog never changes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Offered {
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    /// Prompt arguments or resource-template variables to complete.
    pub(crate) completions: bool,
    /// Whether any tool may run as a task.
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
            tasks: registry
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
        let offered = Offered::of(&registry, options.list_changed == Some(true));
        let list_changed = announced_lists(&registry, options.list_changed, offered);
        McpServer {
            shared: Arc::new(Shared {
                registry: Arc::new(registry),
                info,
                page_size: options.page_size.max(1),
                list_changed,
                pages: Pages::default(),
                max_message_bytes: options.max_message_bytes,
                max_in_flight: options.max_in_flight.max(1),
                max_output_bytes: options.max_output_bytes,
                shutdown_grace: options.shutdown_grace,
                cache: options.cache,
                offered,
                outputs: OutputStore::new(options.large_outputs),
                sealing_key: options.sealing_key.unwrap_or_else(SealingKey::random),
                tasks: options.tasks,
                list_only_permitted_tools: options.list_only_permitted_tools,
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

/// How a server behaves, whatever its transport: list page sizes, limits on messages,
/// outputs and calls in flight, caching hints, large outputs, tasks, and the key that seals
/// request states. Start from the default and change what differs.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::mcp::{CacheScope, McpServer, ServerInfo, ServerOptions};
/// use tool_runtime::Registry;
///
/// let options = ServerOptions::default()
///     .page_size(50)
///     .max_in_flight(32)
///     .max_output_bytes(256 * 1024)
///     .shutdown_grace(Duration::from_secs(2))
///     .list_cache(Duration::from_secs(300), CacheScope::Public);
/// assert_eq!(options.page_size, 50);
///
/// let server = McpServer::with_options(
///     Registry::new().unwrap(),
///     ServerInfo::new("inventory", "1.4.0"),
///     options,
/// );
/// assert_eq!(server.max_output_bytes(), 256 * 1024);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// Whether to announce `listChanged` for tools, prompts and resources; by default, for
    /// each list, whether the registry has run-time entries in it when the server starts
    /// (the binary's own never change). Set it when entries will be added later; it then
    /// also offers prompts and resources while there are none yet.
    pub list_changed: Option<bool>,
    /// The largest message accepted on stdio, in bytes (HTTP has its own body limit).
    pub max_message_bytes: usize,
    /// How many calls one connection may have running at once.
    pub max_in_flight: usize,
    /// The largest tool output sent back, in bytes; a longer one is cut, with a marker.
    pub max_output_bytes: usize,
    /// How long calls in flight may still run once a stdio client's input has ended.
    pub shutdown_grace: std::time::Duration,
    /// The caching hints of list and read results at 2026-07-28.
    pub cache: CacheHints,
    /// When the output of a tool marked `large_output = "resource"` becomes a link, and
    /// how long it is kept.
    pub large_outputs: LargeOutputs,
    /// What the request states of calls that ask their client (protocol 2026-07-28) are
    /// sealed with; a random key of the server's own when `None`. See
    /// [`sealing_key`](ServerOptions::sealing_key).
    pub sealing_key: Option<SealingKey>,
    /// How calls of tools that allow it run as tasks. See [`tasks`](ServerOptions::tasks).
    pub tasks: crate::tasks::TaskOptions,
    /// Whether `tools/list` shows a caller with an access token only the tools its token's
    /// scopes permit. See [`list_only_permitted_tools`](ServerOptions::list_only_permitted_tools).
    pub list_only_permitted_tools: bool,
}

/// Who may reuse a cached result (`cacheScope` at 2026-07-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheScope {
    /// Any client: the result holds nothing specific to one user.
    Public,
    /// Only the client (the authorization context) that got it.
    Private,
}

impl CacheScope {
    fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// How long clients may reuse list and read results, and who may (SEP-2549's `ttlMs` and
/// `cacheScope`, at 2026-07-28).
///
/// By default, lists that never change (a static catalog) are public for an hour, lists
/// that may change (tools added at run time) are fresh for no time, and resource contents
/// are private and fresh for no time (they may change and may depend on the user).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheHints {
    list: Option<(std::time::Duration, CacheScope)>,
    read: Option<(std::time::Duration, CacheScope)>,
}

impl CacheHints {
    /// The hints of list results, given whether the list can change.
    pub(crate) fn list_hints(&self, can_change: bool) -> (u64, &'static str) {
        match self.list {
            Some((ttl, scope)) => (millis(ttl), scope.as_str()),
            None if can_change => (0, CacheScope::Public.as_str()),
            None => (3_600_000, CacheScope::Public.as_str()),
        }
    }

    /// The hints of `resources/read` results.
    pub(crate) fn read_hints(&self) -> (u64, &'static str) {
        match self.read {
            Some((ttl, scope)) => (millis(ttl), scope.as_str()),
            None => (0, CacheScope::Private.as_str()),
        }
    }
}

fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            page_size: 100,
            list_changed: None,
            max_message_bytes: 4 * 1024 * 1024,
            max_in_flight: 256,
            max_output_bytes: 1024 * 1024,
            shutdown_grace: std::time::Duration::from_secs(5),
            cache: CacheHints::default(),
            large_outputs: LargeOutputs::default(),
            sealing_key: None,
            tasks: crate::tasks::TaskOptions::default(),
            list_only_permitted_tools: false,
        }
    }
}

impl ServerOptions {
    /// Tools per `tools/list` page.
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size;
        self
    }

    /// The largest message accepted on stdio, in bytes.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// How many calls one connection may have running at once.
    pub fn max_in_flight(mut self, calls: usize) -> Self {
        self.max_in_flight = calls;
        self
    }

    /// The largest tool output sent back, in bytes.
    pub fn max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// How long calls in flight may still run once a stdio client's input has ended.
    pub fn shutdown_grace(mut self, grace: std::time::Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// How long clients may reuse list results (tools, prompts, resources, templates), and
    /// who may.
    pub fn list_cache(mut self, ttl: std::time::Duration, scope: CacheScope) -> Self {
        self.cache.list = Some((ttl, scope));
        self
    }

    /// How long clients may reuse what `resources/read` answers, and who may.
    pub fn read_cache(mut self, ttl: std::time::Duration, scope: CacheScope) -> Self {
        self.cache.read = Some((ttl, scope));
        self
    }

    /// When the output of a tool marked `large_output = "resource"` becomes a link to a
    /// stored copy, and how long copies are kept.
    pub fn large_outputs(mut self, large_outputs: LargeOutputs) -> Self {
        self.large_outputs = large_outputs;
        self
    }

    /// Announce (or not) that the lists of tools, prompts and resources can change. `true`
    /// is what a server wants whose registry gets entries after it starts; it also offers
    /// prompts and resources while there are none yet, so they can come.
    pub fn list_changed(mut self, list_changed: bool) -> Self {
        self.list_changed = Some(list_changed);
        self
    }

    /// Lists, to a caller that presents an access token (HTTP with OAuth), only the tools
    /// its scopes permit: a model then never sees a tool it would be refused. Off by
    /// default: every caller sees every tool, and a call its token does not permit is
    /// refused with the scopes it needs, so the client can ask the user to grant them.
    /// A list cut to a caller is marked `cacheScope: private` at 2026-07-28.
    pub fn list_only_permitted_tools(mut self, on: bool) -> Self {
        self.list_only_permitted_tools = on;
        self
    }

    /// How calls of tools marked `#[tool(task = "optional")]` or `"required"` run as tasks,
    /// and where tasks are kept (this process's memory unless said otherwise).
    pub fn tasks(mut self, tasks: crate::tasks::TaskOptions) -> Self {
        self.tasks = tasks;
        self
    }

    /// Seals request states with `key`. At protocol 2026-07-28 a call that asks its client
    /// is answered with its questions and a sealed request state, and continues when the
    /// client retries it; replicas behind one address need the same key to continue each
    /// other's calls. Without one, each server makes its own at start.
    ///
    /// ```
    /// use tool_runtime::mcp::{SealingKey, ServerOptions};
    ///
    /// let secret = [7u8; 32]; // from your secret store
    /// let options = ServerOptions::default().sealing_key(SealingKey::new(secret));
    /// # let _ = options;
    /// ```
    pub fn sealing_key(mut self, key: SealingKey) -> Self {
        self.sealing_key = Some(key);
        self
    }
}
