//! One connection's protocol state, and what each method does. No I/O: messages come in as
//! bytes and go out on channels.

use super::asking::live::ClientAnswer;
use super::asking::retry::RetryAsker;
use super::backlog::Backlog;
use super::era::{self, Era};
use super::jsonrpc::{self, code, Incoming, RequestId};
use super::outbox::Outgoing;
use super::pages::{stateless_result, List};
use super::surfaces;
use super::tasks;
use super::tools::{self, CallAnswer};
use super::work::{notify_within, CallWork, Handled, InFlightGuard, RequestSink, Work};
use super::{Message, Shared, HANDSHAKE_VERSIONS, STATELESS_VERSIONS, SUPPORTED_VERSIONS};
use crate::call::caller::Caller;
use crate::call::scope::{CallScope, Cancellation, LogLevel, Notifier};
use crate::registry::{ListsChanged, Update};
use serde_json::{json, Map, Value};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// The one version whose handshake offers tasks as a core capability.
const TASKS_CORE_VERSION: &str = "2025-11-25";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

/// A log level no message reaches: 2026-07-28 requests without a level get no logs.
const NO_LOGS: u8 = u8::MAX;

/// One client's connection: a stdio process, or an HTTP session.
pub struct Connection {
    shared: Arc<Shared>,
    state: Arc<State>,
    /// Who sends the messages [`handle`](Connection::handle) is given.
    caller: Caller,
}

pub(super) struct State {
    /// The negotiated handshake-era version, once `initialize` is answered.
    handshake: Mutex<Option<&'static str>>,
    /// `logging/setLevel` of the handshake era; everything until a client says otherwise.
    log_level: Arc<AtomicU8>,
    pub(super) in_flight: Mutex<HashMap<RequestId, InFlight>>,
    /// Where notifications unrelated to a request go (stdio: the output; HTTP: a GET stream).
    pub(super) unsolicited: Mutex<Option<Outgoing>>,
    /// Whether the handshake-era watcher of tool-list changes was handed out.
    watching: std::sync::atomic::AtomicBool,
    /// Fires when the connection closes: ends the work that lasts as long as it.
    pub(super) closed: Cancellation,
    /// The resources this client subscribed to (handshake era).
    subscribed: Mutex<std::collections::HashSet<String>>,
    /// Whether the watcher of resource updates was handed out.
    watching_resources: std::sync::atomic::AtomicBool,
    /// Notifications sent by this connection's calls and not yet written out.
    pub(super) backlog: Arc<Backlog>,
    /// The capabilities the client declared at `initialize` (handshake era).
    pub(super) client_capabilities: Mutex<Value>,
    /// Questions of calls to the client, waiting for its response, by our request id.
    pub(super) questions: Mutex<HashMap<RequestId, oneshot::Sender<ClientAnswer>>>,
    /// The id of our next question.
    pub(super) next_question: AtomicU64,
    /// The 2025-11-25 tasks this connection asked for, oldest first (what `tasks/list`
    /// shows it).
    pub(super) tasks: Mutex<super::tasks::ListedTasks>,
    /// The relays of this connection's running 2025-11-25 tasks, by task id.
    pub(super) relays: Mutex<HashMap<String, Arc<super::relay::TaskRelay>>>,
}

/// A request being worked on.
pub(super) struct InFlight {
    cancellation: Cancellation,
}

impl InFlight {
    /// Cancels the request's work: its tool sees the cancellation, and its work (a future)
    /// ends the next time it is polled.
    pub(super) fn stop(self) {
        self.cancellation.cancel();
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close();
    }
}

impl State {
    /// Sends `message` on the connection's stream of messages unrelated to a request;
    /// gives it back when there is none open (for a sender with somewhere else to try).
    pub(super) fn offer_unsolicited(&self, message: Message) -> Result<(), Message> {
        match lock(&self.unsolicited).as_ref() {
            Some(sink) => sink.offer(message),
            None => Err(message),
        }
    }
}

impl Connection {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Connection {
            shared,
            state: Arc::new(State {
                handshake: Mutex::new(None),
                log_level: Arc::new(AtomicU8::new(LogLevel::Debug as u8)),
                in_flight: Mutex::new(HashMap::new()),
                unsolicited: Mutex::new(None),
                watching: std::sync::atomic::AtomicBool::new(false),
                closed: Cancellation::new(),
                subscribed: Mutex::new(std::collections::HashSet::new()),
                watching_resources: std::sync::atomic::AtomicBool::new(false),
                backlog: Arc::new(Backlog::default()),
                client_capabilities: Mutex::new(Value::Object(Map::new())),
                questions: Mutex::new(HashMap::new()),
                next_question: AtomicU64::new(1),
                tasks: Mutex::default(),
                relays: Mutex::new(HashMap::new()),
            }),
            caller: Caller::default(),
        }
    }

    /// The same connection, whose messages come from `caller` (a transport says who its
    /// client is: the process's stdio, say).
    pub fn called_by(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }

    /// Sets where notifications unrelated to a request go (`notifications/tools/list_changed`
    /// in the handshake era).
    pub fn set_unsolicited(&self, sink: Outgoing) {
        *lock(&self.state.unsolicited) = Some(sink);
    }

    /// The handshake-era version negotiated on this connection, if any.
    pub fn negotiated_version(&self) -> Option<&'static str> {
        *lock(&self.state.handshake)
    }

    /// How many requests are still being worked on.
    pub fn in_flight(&self) -> usize {
        lock(&self.state.in_flight).len()
    }

    /// Waits until every request in flight is answered.
    pub async fn drain(&self) {
        while self.in_flight() > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    /// Cancels one request: its work is dropped and it gets no response.
    pub fn cancel(&self, id: &RequestId) {
        if let Some(in_flight) = lock(&self.state.in_flight).remove(id) {
            in_flight.stop();
        }
    }

    /// Ends the connection: every request in flight is cancelled.
    pub fn close(&self) {
        let drained: Vec<InFlight> = lock(&self.state.in_flight)
            .drain()
            .map(|(_, f)| f)
            .collect();
        for in_flight in drained {
            in_flight.stop();
        }
        self.state.closed.cancel();
        lock(&self.state.unsolicited).take();
        // Calls waiting for the client's answers learn that none will come.
        lock(&self.state.questions).clear();
    }

    /// Handles one incoming message; every message it causes goes to `sink`, the messages
    /// of the work it leaves too (run that work for the request to be answered).
    pub fn handle(&self, bytes: &[u8], sink: &Outgoing) -> Handled {
        self.handle_with(jsonrpc::parse(bytes), None, &self.caller, sink)
    }

    /// Handles one message a transport has already parsed, whose protocol version it also
    /// saw claimed outside the body (HTTP's `MCP-Protocol-Version` header; see the `era`
    /// module), sent by `caller`.
    #[cfg(feature = "http")]
    pub(crate) fn handle_parsed(
        &self,
        parsed: Result<Incoming, jsonrpc::Rejected>,
        claimed: Option<&str>,
        caller: &Caller,
        sink: &Outgoing,
    ) -> Handled {
        self.handle_with(parsed, claimed, caller, sink)
    }

    fn handle_with(
        &self,
        parsed: Result<Incoming, jsonrpc::Rejected>,
        claimed: Option<&str>,
        caller: &Caller,
        sink: &Outgoing,
    ) -> Handled {
        match parsed {
            Err(rejected) => {
                send(
                    sink,
                    error_message(rejected.id.as_ref(), rejected.code, &rejected.message, None),
                );
                Handled::request(None)
            }
            Ok(Incoming::Response { id, outcome }) => {
                self.answered(id, outcome);
                Handled::notification()
            }
            Ok(Incoming::Notification { method, params }) => {
                self.notification(&method, params.as_ref());
                Handled::notification()
            }
            Ok(Incoming::Request { id, method, params }) => {
                Handled::request(self.request(id, &method, params, claimed, caller, sink))
            }
        }
    }

    /// Routes the client's response to the call that asked; a response nobody waits for
    /// (its call ended, or an id we never sent) is dropped.
    fn answered(&self, id: Option<RequestId>, outcome: ClientAnswer) {
        let waiting = id.and_then(|id| lock(&self.state.questions).remove(&id));
        match waiting {
            Some(waiting) => {
                let _ = waiting.send(outcome);
            }
            None => tracing::debug!("ignored a response nobody waits for"),
        }
    }

    fn notification(&self, method: &str, params: Option<&Map<String, Value>>) {
        match method {
            "notifications/cancelled" => {
                if let Some(id) = params
                    .and_then(|p| p.get("requestId"))
                    .filter(|id| id.is_string() || id.is_number())
                {
                    self.cancel(&RequestId::from_value(id));
                }
            }
            "notifications/initialized" => {}
            other => tracing::debug!(method = other, "ignored a notification"),
        }
    }

    fn request(
        &self,
        id: RequestId,
        method: &str,
        params: Option<Map<String, Value>>,
        claimed: Option<&str>,
        caller: &Caller,
        sink: &Outgoing,
    ) -> Option<Work> {
        let error = |code: i64, message: &str, data: Option<Value>| {
            send(sink, error_message(Some(&id), code, message, data));
            None
        };
        if lock(&self.state.in_flight).contains_key(&id) {
            return error(code::INVALID_REQUEST, &duplicate_id(&id), None);
        }
        match era::of_request(era::meta_of(params.as_ref()), claimed) {
            Era::PerRequest(version) => {
                let version = version.clone();
                return self.stateless_request(id, method, params, version, caller, sink);
            }
            Era::MissingMeta => {
                return error(
                    code::INVALID_PARAMS,
                    &format!(
                        "Invalid params: a request at a per-request protocol version needs \
                         _meta[\"{}\"] and _meta[\"{META_CAPABILITIES}\"]",
                        era::META_VERSION
                    ),
                    None,
                )
            }
            Era::Handshake => {}
        }
        match method {
            "initialize" => self.initialize(&id, params.as_ref(), sink),
            "ping" => {
                send(sink, Message::result(jsonrpc::response_raw(&id, "{}")));
                None
            }
            _ if !self.offers(method) => error(
                code::METHOD_NOT_FOUND,
                &format!(
                    "Method not found: {method} (this server has no {})",
                    offered_kind(method)
                ),
                None,
            ),
            _ if self.negotiated_version().is_none() => error(
                code::INVALID_REQUEST,
                "Invalid Request: the session is not initialized; send \"initialize\" first, or \
                 name the protocol version in each request's _meta (2026-07-28)",
                None,
            ),
            "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
                self.list(&id, method, params.as_ref(), false, caller, sink);
                None
            }
            "tools/call" => {
                let origin = Origin::handshake(&self.state, caller);
                self.tools_call(id, params, origin, sink)
            }
            "prompts/get" | "resources/read" | "completion/complete" => {
                let origin = Origin::handshake(&self.state, caller);
                self.surface_request(id, method, params, origin, sink)
            }
            "resources/subscribe" | "resources/unsubscribe" => {
                self.subscription(&id, method, params.as_ref(), sink)
            }
            "tasks/get" | "tasks/list" | "tasks/cancel" | "tasks/result"
                if self.shared.offered.tasks
                    && self.negotiated_version() == Some(TASKS_CORE_VERSION) =>
            {
                self.core_task_request(id, method, params, caller, sink)
            }
            "logging/setLevel" => {
                match params.as_ref().and_then(|p| p.get("level")).and_then(Value::as_str).and_then(LogLevel::from_name) {
                    Some(level) => {
                        self.state.log_level.store(level as u8, Ordering::Relaxed);
                        send(sink, Message::result(jsonrpc::response_raw(&id, "{}")));
                        None
                    }
                    None => error(
                        code::INVALID_PARAMS,
                        "Invalid params: \"level\" must be one of debug, info, notice, warning, error, critical, alert, emergency",
                        None,
                    ),
                }
            }
            other => error(
                code::METHOD_NOT_FOUND,
                &format!("Method not found: {other}"),
                None,
            ),
        }
    }

    fn initialize(
        &self,
        id: &RequestId,
        params: Option<&Map<String, Value>>,
        sink: &Outgoing,
    ) -> Option<Work> {
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str);
        let Some(requested) = requested else {
            send(
                sink,
                error_message(
                    Some(id),
                    code::INVALID_PARAMS,
                    "Invalid params: \"protocolVersion\" is missing",
                    None,
                ),
            );
            return None;
        };
        // Answer the version asked for when served, else the newest handshake version.
        let version = HANDSHAKE_VERSIONS
            .iter()
            .find(|v| **v == requested)
            .copied()
            .unwrap_or(HANDSHAKE_VERSIONS[0]);
        *lock(&self.state.handshake) = Some(version);
        if let Some(capabilities) = params
            .and_then(|p| p.get("capabilities"))
            .filter(|c| c.is_object())
        {
            *lock(&self.state.client_capabilities) = capabilities.clone();
        }
        let info = &self.shared.info;
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": self.capabilities(version),
            "serverInfo": {"name": info.name, "version": info.version},
        });
        if let Some(instructions) = &info.instructions {
            result["instructions"] = instructions.as_str().into();
        }
        // Watching starts before the answer, so no change after it goes unannounced.
        let watcher = if self.shared.list_changed.any() {
            self.watch_list_changes()
        } else {
            None
        };
        send(sink, Message::result(jsonrpc::response(id, &result)));
        watcher
    }

    /// Whether this server offers the capability `method` belongs to: a server without
    /// prompts answers `prompts/*` as unknown methods, as one that never heard of them.
    fn offers(&self, method: &str) -> bool {
        let offered = self.shared.offered;
        if method.starts_with("prompts/") {
            offered.prompts
        } else if method.starts_with("resources/") {
            offered.resources
        } else if method == "completion/complete" {
            offered.completions
        } else {
            true
        }
    }

    /// What this server offers: tools and logging always; prompts, resources (with
    /// subscriptions: `resources/subscribe` in the handshake era, `resourceSubscriptions`
    /// of `subscriptions/listen` at 2026-07-28) and completion when the registry has any.
    fn capabilities(&self, version: &str) -> Value {
        let offered = self.shared.offered;
        let list_changed = self.shared.list_changed;
        let mut capabilities = Map::new();
        // Tasks: the core capability of 2025-11-25, the extension of 2026-07-28 (never both).
        if offered.tasks && version == TASKS_CORE_VERSION {
            capabilities.insert(
                "tasks".to_owned(),
                json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            );
        } else if offered.tasks && STATELESS_VERSIONS.contains(&version) {
            capabilities.insert(
                "extensions".to_owned(),
                json!({super::tasks::EXTENSION: {}}),
            );
        }
        capabilities.insert(
            "tools".to_owned(),
            json!({"listChanged": list_changed.tools}),
        );
        capabilities.insert("logging".to_owned(), json!({}));
        if offered.prompts {
            capabilities.insert(
                "prompts".to_owned(),
                json!({"listChanged": list_changed.prompts}),
            );
        }
        if offered.resources {
            capabilities.insert(
                "resources".to_owned(),
                json!({"subscribe": true, "listChanged": list_changed.resources}),
            );
        }
        if offered.completions {
            capabilities.insert("completions".to_owned(), json!({}));
        }
        Value::Object(capabilities)
    }

    /// Handshake era: the work that tells the client when a list it was told can change
    /// (tools, prompts, resources) changes, until the connection closes (handed out once
    /// per connection).
    fn watch_list_changes(&self) -> Option<Work> {
        if self.state.watching.swap(true, Ordering::SeqCst) {
            return None;
        }
        let mut changes = self.shared.registry.changes();
        let announced = self.shared.list_changed;
        let state = Arc::clone(&self.state);
        let work = async move {
            loop {
                let changed = tokio::select! {
                    biased;
                    () = state.closed.cancelled() => return,
                    changed = changes.next() => match changed {
                        Some(changed) => changed,
                        None => return,
                    },
                };
                if let Some(sink) = lock(&state.unsolicited).as_ref() {
                    for method in list_changed_methods(changed, announced) {
                        notify_within(&state.backlog, sink, method, &json!({}));
                    }
                }
            }
        };
        // Its notifications go where the connection's unsolicited ones go, set apart.
        Some(Work::stream(work, None))
    }

    /// `resources/subscribe` and `resources/unsubscribe` (handshake era). The first
    /// subscription hands out the work that sends `notifications/resources/updated` for the
    /// subscribed URIs, until the connection closes.
    fn subscription(
        &self,
        id: &RequestId,
        method: &str,
        params: Option<&Map<String, Value>>,
        sink: &Outgoing,
    ) -> Option<Work> {
        let Some(uri) = params.and_then(|p| p.get("uri")).and_then(Value::as_str) else {
            send(
                sink,
                error_message(
                    Some(id),
                    code::INVALID_PARAMS,
                    "Invalid params: \"uri\" (the resource's URI, a string) is missing",
                    None,
                ),
            );
            return None;
        };
        if method == "resources/unsubscribe" {
            lock(&self.state.subscribed).remove(uri);
            send(sink, Message::result(jsonrpc::response_raw(id, "{}")));
            return None;
        }
        if !self.shared.registry.has_resource(uri) {
            send(
                sink,
                error_message(
                    Some(id),
                    code::RESOURCE_NOT_FOUND,
                    &format!("Resource not found: {uri}"),
                    Some(json!({"uri": uri})),
                ),
            );
            return None;
        }
        lock(&self.state.subscribed).insert(uri.to_owned());
        // The first subscription starts watching before it is answered, so no update after
        // the answer is missed.
        let first = !self.state.watching_resources.swap(true, Ordering::SeqCst);
        let updates = first.then(|| self.shared.registry.resource_updates().subscribe());
        send(sink, Message::result(jsonrpc::response_raw(id, "{}")));
        let mut updates = updates?;
        let state = Arc::clone(&self.state);
        Some(Work::stream(
            async move {
                loop {
                    let update = tokio::select! {
                        biased;
                        () = state.closed.cancelled() => return,
                        update = updates.next() => match update {
                            Some(update) => update,
                            None => return,
                        },
                    };
                    let uris: Vec<String> = {
                        let subscribed = lock(&state.subscribed);
                        match update {
                            Update::Of(uri) if subscribed.contains(&*uri) => vec![uri.to_string()],
                            Update::Of(_) => continue,
                            Update::Missed => subscribed.iter().cloned().collect(),
                        }
                    };
                    if let Some(sink) = lock(&state.unsolicited).as_ref() {
                        for uri in uris {
                            let params = json!({"uri": uri});
                            notify_within(&state.backlog, sink, RESOURCE_UPDATED, &params);
                        }
                    }
                }
            },
            None,
        ))
    }

    /// A page of one of the lists: tools, prompts, resources or resource templates.
    fn list(
        &self,
        id: &RequestId,
        method: &str,
        params: Option<&Map<String, Value>>,
        stateless: bool,
        caller: &Caller,
        sink: &Outgoing,
    ) {
        let list = match method {
            "prompts/list" => List::Prompts,
            "resources/list" => List::Resources,
            "resources/templates/list" => List::ResourceTemplates,
            _ => List::Tools,
        };
        let page = match params.and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => {
                self.shared
                    .pages
                    .page(&self.shared, list, None, stateless, caller)
            }
            Some(Value::String(cursor)) => {
                self.shared
                    .pages
                    .page(&self.shared, list, Some(cursor), stateless, caller)
            }
            Some(_) => Err("Invalid params: \"cursor\" must be a string".to_owned()),
        };
        match page {
            Ok(page) => send(sink, Message::result(jsonrpc::response_raw(id, &page))),
            Err(message) => send(
                sink,
                error_message(Some(id), code::INVALID_PARAMS, &message, None),
            ),
        }
    }

    /// `prompts/get`, `resources/read` or `completion/complete`: checked and registered
    /// here, run as work (each runs user code, which never runs on the thread that reads
    /// requests).
    fn surface_request(
        &self,
        id: RequestId,
        method: &str,
        params: Option<Map<String, Value>>,
        origin: Origin<'_>,
        sink: &Outgoing,
    ) -> Option<Work> {
        let stateless = origin.stateless;
        let mut params = params.unwrap_or_default();
        let target = match method {
            "prompts/get" => take_string(&id, &mut params, "name", "the prompt's name")
                .map(surfaces::Target::Prompt),
            "resources/read" => take_string(&id, &mut params, "uri", "the resource's URI")
                .map(surfaces::Target::Resource),
            _ => surfaces::completion_of(&id, &params).map(surfaces::Target::Completion),
        };
        let target = match target {
            Ok(target) => target,
            Err(refusal) => return answered(sink, refusal),
        };
        let asking = match &target {
            surfaces::Target::Prompt(name) => {
                self.asking(&id, "prompts/get", name, &mut params, &origin)
            }
            surfaces::Target::Resource(uri) => {
                self.asking(&id, "resources/read", uri, &mut params, &origin)
            }
            // Completing an argument asks nobody: it runs as the user types.
            surfaces::Target::Completion(_) => Ok(Asking::Nobody),
        };
        let asking = match asking {
            Ok(asking) => asking,
            Err(refusal) => return answered(sink, refusal),
        };
        let scope = self.request_scope(&params, origin, asking, sink);
        let guard = match self.register(id, scope.cancellation.clone()) {
            Ok(guard) => guard,
            Err(refusal) => return answered(sink, refusal),
        };
        let request = surfaces::Request {
            shared: Arc::clone(&self.shared),
            guard,
            context: scope.context,
            cancellation: scope.cancellation,
            notifier: scope.notifier,
            stateless,
            retry: scope.retry,
        };
        let arguments = params.remove("arguments").unwrap_or(Value::Null);
        Some(match target {
            surfaces::Target::Prompt(name) => request.get_prompt(name, arguments),
            surfaces::Target::Resource(uri) => request.read_resource(uri),
            surfaces::Target::Completion(asked) => request.complete(asked),
        })
    }

    fn stateless_request(
        &self,
        id: RequestId,
        method: &str,
        params: Option<Map<String, Value>>,
        version: Value,
        caller: &Caller,
        sink: &Outgoing,
    ) -> Option<Work> {
        let error = |code: i64, message: &str, data: Option<Value>| {
            send(sink, error_message(Some(&id), code, message, data));
            None
        };
        let requested = version.as_str().unwrap_or_default();
        if !STATELESS_VERSIONS.contains(&requested) {
            return error(
                code::UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                Some(json!({"supported": SUPPORTED_VERSIONS, "requested": version})),
            );
        }
        let meta = params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object);
        if !meta
            .and_then(|m| m.get(META_CAPABILITIES))
            .is_some_and(Value::is_object)
        {
            return error(
                code::INVALID_PARAMS,
                &format!("Invalid params: _meta[\"{META_CAPABILITIES}\"] is required and must be an object"),
                None,
            );
        }
        let level = match meta.and_then(|m| m.get(META_LOG_LEVEL)) {
            None => NO_LOGS,
            Some(level) => match level.as_str().and_then(LogLevel::from_name) {
                Some(level) => level as u8,
                None => {
                    return error(
                        code::INVALID_PARAMS,
                        &format!("Invalid params: _meta[\"{META_LOG_LEVEL}\"] is not a log level"),
                        None,
                    )
                }
            },
        };
        if !self.offers(method) {
            return error(
                code::METHOD_NOT_FOUND,
                &format!(
                    "Method not found: {method} (this server has no {})",
                    offered_kind(method)
                ),
                None,
            );
        }
        match method {
            "server/discover" => {
                let info = &self.shared.info;
                let mut body = Map::new();
                body.insert("supportedVersions".to_owned(), json!(SUPPORTED_VERSIONS));
                body.insert("capabilities".to_owned(), self.capabilities(requested));
                body.insert(
                    "serverInfo".to_owned(),
                    json!({"name": info.name, "version": info.version}),
                );
                if let Some(instructions) = &info.instructions {
                    body.insert("instructions".to_owned(), instructions.as_str().into());
                }
                body.insert("ttlMs".to_owned(), 3_600_000.into());
                body.insert("cacheScope".to_owned(), "public".into());
                send(
                    sink,
                    Message::result(jsonrpc::response(&id, &stateless_result(body, info))),
                );
                None
            }
            "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
                self.list(&id, method, params.as_ref(), true, caller, sink);
                None
            }
            "tools/call" => self.tools_call(id, params, Origin::per_request(level, caller), sink),
            "prompts/get" | "resources/read" | "completion/complete" => {
                let origin = Origin::per_request(level, caller);
                self.surface_request(id, method, params, origin, sink)
            }
            "subscriptions/listen" => self.listen(id, params.as_ref(), sink),
            "tasks/get" | "tasks/update" | "tasks/cancel" if self.shared.offered.tasks => {
                // Only a request that declares the extension may use it, whatever it asks.
                let declared =
                    tasks::declares_extension(meta.and_then(|m| m.get(META_CAPABILITIES)));
                if !declared {
                    return answered(sink, tasks::extension_required(&id, method));
                }
                let request = self.task_request(&id, method, params, caller);
                self.answer_from_store(id, |_| tasks::extension_method(request), sink)
            }
            other => error(
                code::METHOD_NOT_FOUND,
                &format!("Method not found: {other}"),
                None,
            ),
        }
    }

    fn tools_call(
        &self,
        id: RequestId,
        params: Option<Map<String, Value>>,
        origin: Origin<'_>,
        sink: &Outgoing,
    ) -> Option<Work> {
        let stateless = origin.stateless;
        let mut params = params.unwrap_or_default();
        let name = match take_string(&id, &mut params, "name", "the tool's name") {
            Ok(name) => name,
            Err(refusal) => return answered(sink, refusal),
        };
        let asking = match self.asking(&id, "tools/call", &name, &mut params, &origin) {
            Ok(asking) => asking,
            Err(refusal) => return answered(sink, refusal),
        };
        let task = match self.task_plan(&id, &name, &params, stateless) {
            Ok(task) => task,
            Err(refusal) => return answered(sink, refusal),
        };
        let arguments = params.remove("arguments").unwrap_or(Value::Null);
        let scope = self.request_scope(&params, origin, asking, sink);

        // Argument errors and unknown tools are answered here and now.
        let pending = match self
            .shared
            .registry
            .start_call(&name, arguments, &scope.context)
        {
            Ok(result) => return answered(sink, answer(&self.shared, &id, result, stateless)),
            Err(pending) => pending,
        };
        // Register before the work starts, so a cancellation that arrives at once finds it.
        let guard = match self.register(id, scope.cancellation.clone()) {
            Ok(guard) => guard,
            Err(refusal) => return answered(sink, refusal),
        };
        // The transport decides where the work runs.
        Some(Work::call(CallWork {
            shared: Arc::clone(&self.shared),
            guard,
            pending,
            context: scope.context,
            cancellation: scope.cancellation,
            notifier: scope.notifier,
            stateless,
            retry: scope.retry,
            task,
        }))
    }

    /// Whether a call of `name` may become a task, and how: at 2026-07-28 when the tool
    /// allows it and the request declares the tasks extension (a tool that runs only as a
    /// task is refused with -32021 otherwise); at 2025-11-25 when the client asks for one
    /// (`params.task`), which a tool that does not allow it refuses with -32601, as one
    /// that runs only as a task refuses a call without it. Unknown tools are left to the
    /// call, which names them.
    fn task_plan(
        &self,
        id: &RequestId,
        name: &str,
        params: &Map<String, Value>,
        stateless: bool,
    ) -> Result<Option<tasks::TaskPlan>, Message> {
        use crate::catalog::TaskSupport;
        // A server that announced no tasks runs none, even for a tool added later that
        // allows them: its clients were never told it could.
        if !self.shared.offered.tasks {
            return Ok(None);
        }
        let Some(tool) = self.shared.registry.get(name) else {
            return Ok(None);
        };
        let support = tool.task_support();
        if stateless {
            let declared = tasks::declares_extension(
                era::meta_of(Some(params)).and_then(|m| m.get(META_CAPABILITIES)),
            );
            return match (support, declared) {
                (TaskSupport::Forbidden, _) => Ok(None),
                (TaskSupport::Required, false) => {
                    Err(tasks::extension_required(id, &format!("tool {name:?}")))
                }
                (TaskSupport::Optional, false) => Ok(None),
                (support, true) => Ok(Some(tasks::TaskPlan::Extension {
                    required: support == TaskSupport::Required,
                })),
            };
        }
        if self.negotiated_version() != Some(TASKS_CORE_VERSION) {
            return Ok(None);
        }
        let asked = params.get("task");
        let method_not_found = |message: String| {
            Err(error_message(
                Some(id),
                code::METHOD_NOT_FOUND,
                &message,
                None,
            ))
        };
        match (support, asked) {
            (TaskSupport::Forbidden, Some(_)) => method_not_found(format!(
                "Method not found: tool {name:?} does not run as a task; call it without \"task\""
            )),
            (TaskSupport::Required, None) => method_not_found(format!(
                "Method not found: tool {name:?} runs only as a task; call it with \"task\": {{}}"
            )),
            (_, None) => Ok(None),
            (_, Some(asked)) => {
                let most = self.shared.tasks.ttl;
                let ttl = asked
                    .get("ttl")
                    .and_then(Value::as_u64)
                    .map_or(most, |ms| most.min(std::time::Duration::from_millis(ms)));
                Ok(Some(tasks::TaskPlan::Core { ttl }))
            }
        }
    }

    /// The task methods of 2025-11-25; `tasks/result` waits for its task to end.
    fn core_task_request(
        &self,
        id: RequestId,
        method: &str,
        params: Option<Map<String, Value>>,
        caller: &Caller,
        sink: &Outgoing,
    ) -> Option<Work> {
        let request = self.task_request(&id, method, params, caller);
        let state = Arc::clone(&self.state);
        if method != "tasks/result" {
            return self.answer_from_store(id, |_| tasks::core_method(request, state), sink);
        }
        // The task's questions and notifications come on this request's stream while it
        // waits: attached once the task is found to be the caller's (to anyone else it
        // does not exist).
        let waiting = |stream: &Arc<RequestSink>| {
            let stream = Arc::clone(stream);
            let attach = move |task: &str| {
                let relay = lock(&state.relays).get(task).cloned();
                if let Some(relay) = relay {
                    relay.wait_on(&stream);
                }
            };
            tasks::result_when_ended(request, attach)
        };
        self.answer_from_store(id, waiting, sink)
    }

    /// A `tasks/*` request, as its handler takes it.
    fn task_request(
        &self,
        id: &RequestId,
        method: &str,
        params: Option<Map<String, Value>>,
        caller: &Caller,
    ) -> tasks::TaskRequest {
        tasks::TaskRequest {
            shared: Arc::clone(&self.shared),
            id: id.clone(),
            method: method.to_owned(),
            params,
            caller: caller.clone(),
        }
    }

    /// Answers a request whose answer comes from the task store (`answer`, given the
    /// request's stream): registered in flight first (so the connection's limits and a
    /// duplicate id refuse it before the store is touched), then here and now when the
    /// store answers at once (the in-memory one always does), else as work, which the
    /// request's cancellation stops.
    fn answer_from_store<F: Future<Output = Message> + Send + 'static>(
        &self,
        id: RequestId,
        answer: impl FnOnce(&Arc<RequestSink>) -> F,
        sink: &Outgoing,
    ) -> Option<Work> {
        let cancellation = Cancellation::new();
        let guard = match self.register(id, cancellation.clone()) {
            Ok(guard) => guard,
            Err(refusal) => return answered(sink, refusal),
        };
        let sink = RequestSink::new(&self.state, sink);
        let mut answer = Box::pin(answer(&sink));
        // Polled here only on a runtime's thread: a store's future may need the runtime's
        // timers or sockets, which a transport's own threads do not have. The work polls
        // it again with its own waker.
        if tokio::runtime::Handle::try_current().is_ok() {
            let mut context = std::task::Context::from_waker(std::task::Waker::noop());
            if let std::task::Poll::Ready(message) = answer.as_mut().poll(&mut context) {
                guard.answer(&sink.sink, || message);
                return None;
            }
        }
        let answer_sink = Arc::clone(&sink);
        Some(Work::stream(
            async move {
                let message = tokio::select! {
                    biased;
                    () = cancellation.cancelled() => return,
                    message = answer => message,
                };
                guard.answer(&answer_sink.sink, || message);
            },
            Some(sink),
        ))
    }

    /// What a request that runs user code gets: its context (progress token, log level,
    /// cancellation) and the one sink its notifications and answer go to.
    fn request_scope(
        &self,
        params: &Map<String, Value>,
        origin: Origin<'_>,
        asking: Asking,
        sink: &Outgoing,
    ) -> RequestScope {
        let progress_token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_number())
            .cloned();
        let notifier = RequestSink::new(&self.state, sink);
        let scope = CallScope::new(
            progress_token,
            Some(Arc::clone(&notifier) as Arc<dyn Notifier>),
            origin.log_level,
        )
        .called_by(origin.caller.clone());
        let (scope, retry) = match asking {
            Asking::Nobody => (scope, None),
            Asking::Live => {
                let asker = Arc::clone(&notifier) as Arc<dyn crate::call::ask::Asker>;
                (scope.asking(asker), None)
            }
            Asking::Retry(asker) => (
                scope.asking(Arc::clone(&asker) as Arc<dyn crate::call::ask::Asker>),
                Some(asker),
            ),
        };
        let scope = Arc::new(scope);
        RequestScope {
            cancellation: scope.cancellation.clone(),
            context: self.shared.registry.context().with_scope(scope),
            notifier,
            retry,
        }
    }

    /// How a request that runs user code asks its client: live in the handshake era; at
    /// 2026-07-28 by rounds, reading the answers and the sealed state a retry brings (taken
    /// out of `params`), refused with -32602 when they are malformed, the state was
    /// altered, or it was issued to another token's subject.
    fn asking(
        &self,
        id: &RequestId,
        method: &str,
        target: &str,
        params: &mut Map<String, Value>,
        origin: &Origin<'_>,
    ) -> Result<Asking, Message> {
        if !origin.stateless {
            return Ok(Asking::Live);
        }
        let capabilities = era::meta_of(Some(params))
            .and_then(|meta| meta.get(META_CAPABILITIES))
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        let request = (method, target, origin.caller.subject());
        RetryAsker::of_request(&self.shared.sealing_key, request, params, capabilities)
            .map(|asker| Asking::Retry(Arc::new(asker)))
            .map_err(|why| error_message(Some(id), code::INVALID_PARAMS, &why, None))
    }

    /// Records a request as in flight, under one lock so two requests racing with the same
    /// id cannot both pass; refuses a used id and a connection at its limit. The guard ends
    /// the registration with the request's work.
    fn register(
        &self,
        id: RequestId,
        cancellation: Cancellation,
    ) -> Result<InFlightGuard, Message> {
        let mut in_flight = lock(&self.state.in_flight);
        let refusal = if in_flight.len() >= self.shared.max_in_flight {
            format!(
                "Invalid Request: {} requests are already running on this connection (the limit); wait for answers before sending more",
                self.shared.max_in_flight
            )
        } else {
            match in_flight.entry(id.clone()) {
                Entry::Occupied(_) => duplicate_id(&id),
                Entry::Vacant(slot) => {
                    slot.insert(InFlight { cancellation });
                    drop(in_flight);
                    return Ok(InFlightGuard {
                        state: Arc::clone(&self.state),
                        id,
                    });
                }
            }
        };
        Err(error_message(
            Some(&id),
            code::INVALID_REQUEST,
            &refusal,
            None,
        ))
    }

    /// 2026-07-28 `subscriptions/listen`: acknowledges what it honors of what the client
    /// asked (list changes of the lists announced as changing, updates of resources when
    /// resources are offered), then sends those notifications until cancelled.
    fn listen(
        &self,
        id: RequestId,
        params: Option<&Map<String, Value>>,
        sink: &Outgoing,
    ) -> Option<Work> {
        let asked = params.and_then(|p| p.get("notifications"));
        let wants = |key: &str| {
            asked
                .and_then(|n| n.get(key))
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        let lists = ListsChanged::from_flags(LISTS.map(|(key, _)| wants(key)))
            .and(self.shared.list_changed);
        let watched: std::collections::HashSet<String> = if self.shared.offered.resources {
            asked
                .and_then(|n| n.get("resourceSubscriptions"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|uri| uri.as_str().map(str::to_owned))
                .collect()
        } else {
            Default::default()
        };
        let mut honored = Map::new();
        for ((key, _), on) in LISTS.into_iter().zip(lists.flags()) {
            if on {
                honored.insert(key.to_owned(), true.into());
            }
        }
        if !watched.is_empty() {
            let mut uris: Vec<&String> = watched.iter().collect();
            uris.sort();
            honored.insert("resourceSubscriptions".to_owned(), json!(uris));
        }
        // Watching starts before the acknowledgement, so nothing after it is missed.
        let mut changes = self.shared.registry.changes();
        let mut updates = self.shared.registry.resource_updates().subscribe();
        // Registered first, so a refused stream is never acknowledged.
        let cancellation = Cancellation::new();
        let subscription = id.to_value();
        let guard = match self.register(id, cancellation.clone()) {
            Ok(guard) => guard,
            Err(refusal) => return answered(sink, refusal),
        };
        send(
            sink,
            Message::notification(jsonrpc::notification(
                "notifications/subscriptions/acknowledged",
                &json!({"_meta": {META_SUBSCRIPTION: subscription}, "notifications": honored}),
            )),
        );
        // The stream stays open (the work holds its sink) until the client ends it, even
        // when there is nothing to send on it.
        let watch_lists = lists.any();
        let watch_updates = !watched.is_empty();
        let sink = RequestSink::new(&self.state, sink);
        let stream_sink = Arc::clone(&sink);
        let work = async move {
            let _registered = guard;
            let meta = json!({META_SUBSCRIPTION: subscription});
            loop {
                let notifications: Vec<(&str, Value)> = tokio::select! {
                    biased;
                    () = cancellation.cancelled() => return,
                    changed = changes.next(), if watch_lists => match changed {
                        Some(changed) => list_changed_methods(changed, lists)
                            .map(|method| (method, json!({"_meta": meta})))
                            .collect(),
                        None => return,
                    },
                    update = updates.next(), if watch_updates => match update {
                        Some(Update::Of(uri)) if watched.contains(&*uri) => {
                            vec![(RESOURCE_UPDATED, json!({"_meta": meta, "uri": &*uri}))]
                        }
                        Some(Update::Of(_)) => continue,
                        Some(Update::Missed) => watched
                            .iter()
                            .map(|uri| (RESOURCE_UPDATED, json!({"_meta": meta, "uri": uri})))
                            .collect(),
                        None => return,
                    },
                };
                for (method, params) in notifications {
                    let backlog = &stream_sink.backlog;
                    if !notify_within(backlog, &lock(&stream_sink.sink), method, &params) {
                        return;
                    }
                }
            }
        };
        Some(Work::stream(work, Some(sink)))
    }
}

/// The notification that a resource changed.
const RESOURCE_UPDATED: &str = "notifications/resources/updated";

/// Each list (in the order of `ListsChanged::flags`): its filter in `subscriptions/listen`,
/// and the notification that says it changed.
const LISTS: [(&str, &str); 3] = [
    ("toolsListChanged", "notifications/tools/list_changed"),
    ("promptsListChanged", "notifications/prompts/list_changed"),
    (
        "resourcesListChanged",
        "notifications/resources/list_changed",
    ),
];

/// The list-changed notifications to send for `changed`, of the lists in `wanted`.
fn list_changed_methods(
    changed: ListsChanged,
    wanted: ListsChanged,
) -> impl Iterator<Item = &'static str> {
    LISTS
        .into_iter()
        .zip(changed.and(wanted).flags())
        .filter_map(|((_, method), send)| send.then_some(method))
}

/// The `tools/call` response to a finished call.
pub(super) fn answer(
    shared: &Shared,
    id: &RequestId,
    result: crate::ToolResult,
    stateless: bool,
) -> Message {
    // In the handshake era the protocol has an error of its own for a call that needs the
    // user at a page first; at 2026-07-28 it is a tool error (the tool's question, had the
    // client declared URL elicitation, would have made it `input_required`).
    let outputs = Some(&shared.outputs);
    match tools::answer(result, shared.max_output_bytes, outputs, !stateless) {
        CallAnswer::Result(body) => {
            let info = stateless.then_some(&shared.info);
            Message::result(jsonrpc::response(id, &body.framed(info)))
        }
        CallAnswer::Error {
            code,
            message,
            data,
        } => error_message(Some(id), code, &message, data),
    }
}

/// The answer to a call once it ended: settled by the round's verdict at 2026-07-28 (an
/// `input_required` result while questions are open), else its result or error.
pub(super) fn settled_answer(
    shared: &Shared,
    id: &RequestId,
    retry: Option<&super::asking::retry::RetryAsker>,
    result: crate::ToolResult,
    stateless: bool,
) -> Message {
    let verdict = super::asking::verdict(retry, result.is_error(), result.input());
    super::asking::settle(id, verdict, || answer(shared, id, result, stateless))
}

/// A result body as the answer to `id`; at 2026-07-28 with the fields every result carries.
pub(super) fn result_message(
    shared: &Shared,
    id: &RequestId,
    body: Map<String, Value>,
    stateless: bool,
) -> Message {
    let body = if stateless {
        stateless_result(body, &shared.info)
    } else {
        Value::Object(body)
    };
    Message::result(jsonrpc::response(id, &body))
}

/// The capability a method belongs to, for the message when it is not offered.
fn offered_kind(method: &str) -> &'static str {
    if method.starts_with("prompts/") {
        "prompts"
    } else if method.starts_with("resources/") {
        "resources"
    } else {
        "prompts or resource templates to complete"
    }
}

/// How a request that runs user code came: from whom, in which era, and the log level its
/// messages are held to.
struct Origin<'a> {
    log_level: Arc<AtomicU8>,
    stateless: bool,
    caller: &'a Caller,
}

impl<'a> Origin<'a> {
    /// A request in a handshake-era session, at the session's log level.
    fn handshake(state: &State, caller: &'a Caller) -> Self {
        Origin {
            log_level: Arc::clone(&state.log_level),
            stateless: false,
            caller,
        }
    }

    /// A 2026-07-28 request, at the level its `_meta` names.
    fn per_request(level: u8, caller: &'a Caller) -> Self {
        Origin {
            log_level: Arc::new(AtomicU8::new(level)),
            stateless: true,
            caller,
        }
    }
}

/// What the connection keeps for a request that runs user code (see
/// [`Connection::request_scope`]).
struct RequestScope {
    context: crate::call::context::CallContext,
    cancellation: Cancellation,
    notifier: Arc<RequestSink>,
    /// At 2026-07-28, the round of asking whose verdict shapes the answer.
    retry: Option<Arc<RetryAsker>>,
}

/// How a request asks its client (see [`Connection::asking`]).
enum Asking {
    Nobody,
    Live,
    Retry(Arc<RetryAsker>),
}

/// A request answered where it was handled: it leaves no work.
fn answered(sink: &Outgoing, message: Message) -> Option<Work> {
    send(sink, message);
    None
}

/// Takes the required string parameter `key` (`what` says what it is) out of `params`;
/// else the -32602 answer naming it.
fn take_string(
    id: &RequestId,
    params: &mut Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<String, Message> {
    match params.remove(key) {
        Some(Value::String(value)) => Ok(value),
        _ => Err(error_message(
            Some(id),
            code::INVALID_PARAMS,
            &format!("Invalid params: \"{key}\" ({what}, a string) is missing"),
            None,
        )),
    }
}

fn duplicate_id(id: &RequestId) -> String {
    format!(
        "Invalid Request: id {} is already used by a request that has not been answered",
        id.as_json()
    )
}

pub(super) fn send(sink: &Outgoing, message: Message) {
    sink.send(message);
}

/// An error response, typed with its code so a transport can choose a status without
/// reading the bytes again.
pub(super) fn error_message(
    id: Option<&RequestId>,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> Message {
    Message::error(code, jsonrpc::error_response(id, code, message, data))
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}
