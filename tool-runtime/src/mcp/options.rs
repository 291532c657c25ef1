//! How a server behaves, whatever its transport: page sizes, limits, caching hints, large
//! outputs, tasks, and the key that seals request states.

use super::{millis, LargeOutputs};
use crate::store::SealingKey;

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
    pub(crate) page_size: usize,
    /// Whether to announce `listChanged` for tools, prompts and resources; by default, for
    /// each list, whether the registry has run-time entries in it when the server starts
    /// (the binary's own never change). Set it when entries will be added later; it then
    /// also offers prompts and resources while there are none yet.
    pub(crate) list_changed: Option<bool>,
    /// The largest message accepted on stdio, in bytes (HTTP has its own body limit).
    pub(crate) max_message_bytes: usize,
    /// How many calls one connection may have running at once.
    pub(crate) max_in_flight: usize,
    /// How many requests all connections together may have running at once.
    pub(crate) max_in_flight_total: usize,
    /// The largest tool output sent back, in bytes; a longer one is cut, with a marker.
    pub(crate) max_output_bytes: usize,
    /// How long calls in flight may still run once a stdio client's input has ended.
    pub(crate) shutdown_grace: std::time::Duration,
    /// The caching hints of list and read results at 2026-07-28.
    pub(crate) cache: CacheHints,
    /// When the output of a tool marked `large_output = "resource"` becomes a link, and
    /// how long it is kept.
    pub(crate) large_outputs: LargeOutputs,
    /// What the request states of calls that ask their client (protocol 2026-07-28) are
    /// sealed with; a random key of the server's own when `None`. See
    /// [`sealing_key`](ServerOptions::sealing_key).
    pub(crate) sealing_key: Option<SealingKey>,
    /// How calls of tools that allow it run as tasks. See [`tasks`](ServerOptions::tasks).
    pub(crate) tasks: crate::tasks::TaskOptions,
    /// Whether `tools/list` shows a caller with an access token only the tools its token's
    /// scopes permit. See [`list_only_permitted_tools`](ServerOptions::list_only_permitted_tools).
    pub(crate) list_only_permitted_tools: bool,
    /// The state shared with the other replicas of this service, if any. See
    /// [`store`](ServerOptions::store).
    pub(crate) store: Option<crate::store::Store>,
    /// What stamps records with the wall clock's time. See [`clock`](ServerOptions::clock).
    pub(crate) clock: std::sync::Arc<dyn crate::clock::Clock>,
    /// The layers around every request, the first given outermost. See
    /// [`request_layer`](ServerOptions::request_layer).
    pub(crate) request_layers: Vec<std::sync::Arc<crate::layers::RequestStage>>,
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
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// How long clients may reuse list and read results, and who may (`ttlMs` and `cacheScope`, at
/// 2026-07-28).
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

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            page_size: 100,
            list_changed: None,
            max_message_bytes: 4 * 1024 * 1024,
            max_in_flight: 256,
            max_in_flight_total: 1024,
            max_output_bytes: 1024 * 1024,
            shutdown_grace: std::time::Duration::from_secs(5),
            cache: CacheHints::default(),
            large_outputs: LargeOutputs::default(),
            sealing_key: None,
            tasks: crate::tasks::TaskOptions::default(),
            list_only_permitted_tools: false,
            store: None,
            clock: std::sync::Arc::new(crate::clock::SystemClock),
            request_layers: Vec::new(),
        }
    }
}

impl ServerOptions {
    /// Puts `layer` around every request the server is sent (`tools/list`,
    /// `resources/read`, `prompts/get`, `tools/call`, ...), inside those given before it.
    /// A layer sees the method, what it names ([`McpRequest::target`]), its id and its
    /// caller, and lets it through, refuses it (its error is the request's JSON-RPC error,
    /// `-32600`, with its message), or times it. Tool calls have layers of their own, which
    /// see and may change arguments and answers
    /// ([`RegistryBuilder::layer`](crate::registry::RegistryBuilder::layer)). A server
    /// given no request layer answers requests as before, with nothing in between.
    ///
    /// The in-flight caps ([`max_in_flight`](Self::max_in_flight)) come first, outside
    /// every request layer: a request past them is answered busy before any layer sees it,
    /// and one a layer holds counts while it waits.
    ///
    /// [`McpRequest::target`]: crate::layers::McpRequest::target
    ///
    /// ```
    /// use tool_runtime::layers::{McpRequest, NextRequest};
    /// use tool_runtime::mcp::ServerOptions;
    /// use tool_runtime::CallError;
    ///
    /// // Only those signed in may read resources.
    /// let options = ServerOptions::default().request_layer(tower::layer::layer_fn(
    ///     |mut next: NextRequest| {
    ///         tower::service_fn(move |request: McpRequest| {
    ///             let refused = request.method() == "resources/read"
    ///                 && request.caller().subject().is_none();
    ///             let answer = (!refused).then(|| tower::Service::call(&mut next, request));
    ///             async move {
    ///                 match answer {
    ///                     Some(answer) => answer.await,
    ///                     None => Err(CallError::refused("resources/read", "sign in first")),
    ///                 }
    ///             }
    ///         })
    ///     },
    /// ));
    /// # let _ = options;
    /// ```
    pub fn request_layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<crate::layers::NextRequest>,
        L::Service: tower::Service<crate::layers::McpRequest, Response = ()> + Send + 'static,
        <L::Service as tower::Service<crate::layers::McpRequest>>::Error:
            Into<crate::layers::BoxError>,
        <L::Service as tower::Service<crate::layers::McpRequest>>::Future: Send + 'static,
    {
        let stage = crate::layers::RequestStage::new(layer);
        self.request_layers.push(std::sync::Arc::new(stage));
        self
    }

    /// The wall clock the server stamps its records with: when a lease on a task ends, when
    /// a request state it issues expires, when a stored output is forgotten. The system's
    /// unless set; a test where such times are the subject sets its own.
    pub fn clock(mut self, clock: std::sync::Arc<dyn crate::clock::Clock>) -> Self {
        self.clock = clock;
        self
    }

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

    /// How many requests that run work (calls, prompts, reads, completions, streams, task
    /// methods) one connection may have in flight at once (256 by default), each counted
    /// from its arrival, before any request layer, until it is answered. Past it a request
    /// is not queued: it is answered the server-busy error (-32000, with
    /// `data.retryAfterMs`; over HTTP, 503 with `Retry-After`).
    pub fn max_in_flight(mut self, calls: usize) -> Self {
        self.max_in_flight = calls;
        self
    }

    /// How many such requests all connections together may have running at once (1,024
    /// by default), answered as past [`max_in_flight`](Self::max_in_flight) beyond it: a
    /// flood over many connections cannot queue without bound either.
    pub fn max_in_flight_total(mut self, calls: usize) -> Self {
        self.max_in_flight_total = calls;
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
    /// prompts, resources and tasks while there are none yet, so they can come.
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
    /// use tool_runtime::mcp::ServerOptions;
    /// use tool_runtime::store::SealingKey;
    ///
    /// let secret = [7u8; 32]; // from your secret store
    /// let options = ServerOptions::default().sealing_key(SealingKey::new(secret));
    /// # let _ = options;
    /// ```
    pub fn sealing_key(mut self, key: SealingKey) -> Self {
        self.sealing_key = Some(key);
        self
    }

    /// Shares state with the other replicas of this service through `store`, so that any
    /// replica can serve any request behind a load balancer with no sticky routing:
    /// sessions, tasks (unless [`tasks`](ServerOptions::tasks) names a store of its own),
    /// the keys that seal request states (unless
    /// [`sealing_key`](ServerOptions::sealing_key) gives one), large outputs, rate limits
    /// and budgets, and the notifications that must reach the replica holding a client's
    /// stream. See [`store`](crate::store).
    pub fn store(mut self, store: crate::store::Store) -> Self {
        self.store = Some(store);
        self
    }
}
