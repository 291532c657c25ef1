//! One connection's protocol state, and what each method does. No I/O: messages come in as
//! bytes and go out on channels.

use super::backlog::Backlog;
use super::era::{self, Era};
use super::jsonrpc::{self, code, Incoming, RequestId};
use super::pages::stateless_result;
use super::tools::{self, CallAnswer};
use super::{
    Message, Outgoing, Shared, HANDSHAKE_VERSIONS, STATELESS_VERSIONS, SUPPORTED_VERSIONS,
};
use crate::call::scope::{CallScope, Cancellation, LogLevel, Notifier};
use serde_json::{json, Map, Value};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use tokio::task::AbortHandle;

const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

/// A log level no message reaches: 2026-07-28 requests without a level get no logs.
const NO_LOGS: u8 = u8::MAX;

/// What became of one incoming message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    /// A notification (or a response): nothing will be sent back for it.
    Notification,
    /// A request: its response is on the channel, or will be once its work is done.
    Request,
}

/// One client's connection: a stdio process, or an HTTP session.
pub struct Connection {
    shared: Arc<Shared>,
    state: Arc<State>,
}

struct State {
    /// The negotiated handshake-era version, once `initialize` is answered.
    handshake: Mutex<Option<&'static str>>,
    /// `logging/setLevel` of the handshake era; everything until a client says otherwise.
    log_level: Arc<AtomicU8>,
    in_flight: Mutex<HashMap<RequestId, InFlight>>,
    /// Where notifications unrelated to a request go (stdio: the output; HTTP: a GET stream).
    unsolicited: Mutex<Option<Outgoing>>,
    watcher: Mutex<Option<AbortHandle>>,
    /// Notifications sent by this connection's calls and not yet written out.
    backlog: Arc<Backlog>,
}

struct InFlight {
    abort: Option<AbortHandle>,
    cancellation: Cancellation,
}

impl InFlight {
    /// Cancels the request's work and aborts its task.
    fn stop(self) {
        self.cancellation.cancel();
        if let Some(abort) = self.abort {
            abort.abort();
        }
    }
}

/// Sends a call's notifications to where its response goes (which a transport may change
/// before the call's work starts: see [`CallWork::redirect`]), within the connection's
/// bounded backlog.
struct SinkNotifier {
    sink: Mutex<Outgoing>,
    backlog: Arc<Backlog>,
}

impl Notifier for SinkNotifier {
    fn notify(&self, method: &str, params: Value) {
        let Some(place) = self.backlog.admit() else {
            return;
        };
        let bytes = jsonrpc::notification(method, &params);
        let _ = lock(&self.sink).send(Message::queued_notification(bytes, place));
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close();
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
                watcher: Mutex::new(None),
                backlog: Arc::new(Backlog::default()),
            }),
        }
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
        if let Some(watcher) = lock(&self.state.watcher).take() {
            watcher.abort();
        }
        lock(&self.state.unsolicited).take();
    }

    /// Handles one incoming message; every message it causes goes to `sink`.
    pub fn handle(&self, bytes: &[u8], sink: &Outgoing) -> Handled {
        self.handle_with(jsonrpc::parse(bytes), None, sink, None)
    }

    /// Handles one message a transport has already parsed, whose protocol version it also
    /// saw claimed outside the body (HTTP's `MCP-Protocol-Version` header; see the `era`
    /// module).
    #[cfg(feature = "http")]
    pub(crate) fn handle_parsed(
        &self,
        parsed: Result<Incoming, jsonrpc::Rejected>,
        claimed: Option<&str>,
        sink: &Outgoing,
    ) -> Handled {
        self.handle_with(parsed, claimed, sink, None)
    }

    /// Handles one message, handing back the work of a `tools/call` that has some (instead
    /// of spawning it): the transport decides where it runs.
    pub(crate) fn handle_taking_work(
        &self,
        bytes: &[u8],
        sink: &Outgoing,
    ) -> (Handled, Option<CallWork>) {
        let mut work = None;
        let handled = self.handle_with(jsonrpc::parse(bytes), None, sink, Some(&mut work));
        (handled, work)
    }

    fn handle_with(
        &self,
        parsed: Result<Incoming, jsonrpc::Rejected>,
        claimed: Option<&str>,
        sink: &Outgoing,
        slot: Option<&mut Option<CallWork>>,
    ) -> Handled {
        match parsed {
            Err(rejected) => {
                send(
                    sink,
                    error_message(rejected.id.as_ref(), rejected.code, &rejected.message, None),
                );
                Handled::Request
            }
            Ok(Incoming::Response) => Handled::Notification,
            Ok(Incoming::Notification { method, params }) => {
                self.notification(&method, params.as_ref());
                Handled::Notification
            }
            Ok(Incoming::Request { id, method, params }) => {
                self.request(id, &method, params, claimed, sink, slot);
                Handled::Request
            }
        }
    }

    fn notification(&self, method: &str, params: Option<&Map<String, Value>>) {
        match method {
            "notifications/cancelled" => {
                if let Some(id) = params
                    .and_then(|p| p.get("requestId"))
                    .filter(|id| id.is_string() || id.is_number())
                {
                    self.cancel(&RequestId(id.to_string()));
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
        sink: &Outgoing,
        slot: Option<&mut Option<CallWork>>,
    ) {
        let error = |code: i64, message: &str, data: Option<Value>| {
            send(sink, error_message(Some(&id), code, message, data));
        };
        if lock(&self.state.in_flight).contains_key(&id) {
            return error(code::INVALID_REQUEST, &duplicate_id(&id), None);
        }
        match era::of_request(era::meta_of(params.as_ref()), claimed) {
            Era::PerRequest(version) => {
                let version = version.clone();
                return self.stateless_request(id, method, params, version, sink, slot);
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
            "ping" => send(sink, Message::result(jsonrpc::response_raw(&id, "{}"))),
            _ if self.negotiated_version().is_none() => error(
                code::INVALID_REQUEST,
                "Invalid Request: the session is not initialized; send \"initialize\" first, or \
                 name the protocol version in each request's _meta (2026-07-28)",
                None,
            ),
            "tools/list" => match self.tools_list(params.as_ref(), false) {
                Ok(page) => send(sink, Message::result(jsonrpc::response_raw(&id, &page))),
                Err(message) => error(code::INVALID_PARAMS, &message, None),
            },
            "tools/call" => {
                let level = Arc::clone(&self.state.log_level);
                self.tools_call(id, params, level, false, sink, slot);
            }
            "logging/setLevel" => {
                match params.as_ref().and_then(|p| p.get("level")).and_then(Value::as_str).and_then(LogLevel::from_name) {
                    Some(level) => {
                        self.state.log_level.store(level as u8, Ordering::Relaxed);
                        send(sink, Message::result(jsonrpc::response_raw(&id, "{}")));
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

    fn initialize(&self, id: &RequestId, params: Option<&Map<String, Value>>, sink: &Outgoing) {
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
            return;
        };
        // Answer the version asked for when served, else the newest handshake version.
        let version = HANDSHAKE_VERSIONS
            .iter()
            .find(|v| **v == requested)
            .copied()
            .unwrap_or(HANDSHAKE_VERSIONS[0]);
        *lock(&self.state.handshake) = Some(version);
        let info = &self.shared.info;
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": self.capabilities(),
            "serverInfo": {"name": info.name, "version": info.version},
        });
        if let Some(instructions) = &info.instructions {
            result["instructions"] = instructions.as_str().into();
        }
        send(sink, Message::result(jsonrpc::response(id, &result)));
        if self.shared.list_changed {
            self.watch_tool_changes();
        }
    }

    fn capabilities(&self) -> Value {
        json!({"tools": {"listChanged": self.shared.list_changed}, "logging": {}})
    }

    /// Handshake era: tells the client when the tool list changes.
    fn watch_tool_changes(&self) {
        let mut watcher = lock(&self.state.watcher);
        if watcher.is_some() || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let mut changes = self.shared.registry.subscribe();
        let state = Arc::clone(&self.state);
        let task = tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                if let Some(sink) = lock(&state.unsolicited).as_ref() {
                    let _ = sink.send(Message::notification(jsonrpc::notification(
                        "notifications/tools/list_changed",
                        &json!({}),
                    )));
                }
            }
        });
        *watcher = Some(task.abort_handle());
    }

    fn tools_list(
        &self,
        params: Option<&Map<String, Value>>,
        stateless: bool,
    ) -> Result<String, String> {
        let cursor = match params.and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => None,
            Some(Value::String(cursor)) => Some(cursor.as_str()),
            Some(_) => return Err("Invalid params: \"cursor\" must be a string".to_owned()),
        };
        self.shared.pages.page(&self.shared, cursor, stateless)
    }

    fn stateless_request(
        &self,
        id: RequestId,
        method: &str,
        params: Option<Map<String, Value>>,
        version: Value,
        sink: &Outgoing,
        slot: Option<&mut Option<CallWork>>,
    ) {
        let error = |code: i64, message: &str, data: Option<Value>| {
            send(sink, error_message(Some(&id), code, message, data));
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
        match method {
            "server/discover" => {
                let info = &self.shared.info;
                let mut body = Map::new();
                body.insert("supportedVersions".to_owned(), json!(SUPPORTED_VERSIONS));
                body.insert("capabilities".to_owned(), self.capabilities());
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
            }
            "tools/list" => match self.tools_list(params.as_ref(), true) {
                Ok(page) => send(sink, Message::result(jsonrpc::response_raw(&id, &page))),
                Err(message) => error(code::INVALID_PARAMS, &message, None),
            },
            "tools/call" => {
                let level = Arc::new(AtomicU8::new(level));
                self.tools_call(id, params, level, true, sink, slot);
            }
            "subscriptions/listen" => self.listen(id, params.as_ref(), sink),
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
        log_level: Arc<AtomicU8>,
        stateless: bool,
        sink: &Outgoing,
        slot: Option<&mut Option<CallWork>>,
    ) {
        let mut params = params.unwrap_or_default();
        let name = match params.remove("name") {
            Some(Value::String(name)) => name,
            _ => {
                send(
                    sink,
                    error_message(
                        Some(&id),
                        code::INVALID_PARAMS,
                        "Invalid params: \"name\" (the tool's name, a string) is missing",
                        None,
                    ),
                );
                return;
            }
        };
        let arguments = params.remove("arguments").unwrap_or(Value::Null);
        let progress_token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_number())
            .cloned();
        let notifier = Arc::new(SinkNotifier {
            sink: Mutex::new(sink.clone()),
            backlog: Arc::clone(&self.state.backlog),
        });
        let scope = Arc::new(CallScope::new(
            progress_token,
            Some(Arc::clone(&notifier) as Arc<dyn Notifier>),
            log_level,
        ));
        let cancellation = scope.cancellation.clone();
        let context = self.shared.registry.context().with_scope(scope);

        // Argument errors and unknown tools are answered here and now.
        let pending = match self.shared.registry.start_call(&name, arguments, &context) {
            Ok(result) => {
                send(sink, answer(&self.shared, &id, result, stateless));
                return;
            }
            Err(pending) => pending,
        };
        // Register before the work starts, so a cancellation that arrives at once finds it.
        if let Err(message) = self.register(&id, cancellation) {
            send(
                sink,
                error_message(Some(&id), code::INVALID_REQUEST, &message, None),
            );
            return;
        }
        let work = CallWork {
            shared: Arc::clone(&self.shared),
            state: Arc::clone(&self.state),
            id,
            pending,
            context,
            sink: sink.clone(),
            notifier,
            stateless,
        };
        match slot {
            // The transport takes the work and decides where it runs.
            Some(slot) => *slot = Some(work),
            None => work.spawn(),
        }
    }

    /// Records a request as in flight, under one lock so two requests racing with the same
    /// id cannot both pass; refuses a used id and a connection at its limit.
    fn register(&self, id: &RequestId, cancellation: Cancellation) -> Result<(), String> {
        let mut in_flight = lock(&self.state.in_flight);
        if in_flight.len() >= self.shared.max_in_flight {
            return Err(format!(
                "Invalid Request: {} requests are already running on this connection (the limit); wait for answers before sending more",
                self.shared.max_in_flight
            ));
        }
        match in_flight.entry(id.clone()) {
            Entry::Occupied(_) => Err(duplicate_id(id)),
            Entry::Vacant(slot) => {
                slot.insert(InFlight {
                    abort: None,
                    cancellation,
                });
                Ok(())
            }
        }
    }

    /// 2026-07-28 `subscriptions/listen`: acknowledges, then sends
    /// `notifications/tools/list_changed` until cancelled.
    fn listen(&self, id: RequestId, params: Option<&Map<String, Value>>, sink: &Outgoing) {
        let wants_tools = params
            .and_then(|p| p.get("notifications"))
            .and_then(|n| n.get("toolsListChanged"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let honored = if wants_tools && self.shared.list_changed {
            json!({"toolsListChanged": true})
        } else {
            json!({})
        };
        // Registered first, so a refused stream is never acknowledged.
        if let Err(message) = self.register(&id, Cancellation::new()) {
            send(
                sink,
                error_message(Some(&id), code::INVALID_REQUEST, &message, None),
            );
            return;
        }
        let subscription = id.to_value();
        let _ = sink.send(Message::notification(jsonrpc::notification(
            "notifications/subscriptions/acknowledged",
            &json!({"_meta": {META_SUBSCRIPTION: subscription}, "notifications": honored}),
        )));
        if !(wants_tools && self.shared.list_changed) {
            return; // Nothing to send; the stream stays open until the client ends it.
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut changes = self.shared.registry.subscribe();
        let sink = sink.clone();
        let task = runtime.spawn(async move {
            while changes.changed().await.is_ok() {
                let sent = sink.send(Message::notification(jsonrpc::notification(
                    "notifications/tools/list_changed",
                    &json!({"_meta": {META_SUBSCRIPTION: subscription}}),
                )));
                if sent.is_err() {
                    break;
                }
            }
        });
        if let Some(in_flight) = lock(&self.state.in_flight).get_mut(&id) {
            in_flight.abort = Some(task.abort_handle());
        }
    }
}

/// The work of a started `tools/call`, registered as in flight: spawned on the runtime, or
/// run in place by a transport that can afford it.
pub(crate) struct CallWork {
    shared: Arc<Shared>,
    state: Arc<State>,
    id: RequestId,
    pending: crate::registry::PendingCall,
    context: crate::call::context::CallContext,
    sink: Outgoing,
    notifier: Arc<SinkNotifier>,
    stateless: bool,
}

impl CallWork {
    /// Sends the call's notifications and answer to `sink` instead of the one it came with.
    pub(crate) fn redirect(&mut self, sink: &Outgoing) {
        *lock(&self.notifier.sink) = sink.clone();
        self.sink = sink.clone();
    }

    /// Where the work can run: in place when it is a sync tool proven quick; else it is
    /// the work as it was, to spawn.
    pub(crate) fn placed(self) -> Placed {
        match self.pending.into_in_place() {
            Ok(call) => Placed::InPlace(InPlaceWork {
                shared: self.shared,
                state: self.state,
                id: self.id,
                call,
                stateless: self.stateless,
            }),
            Err(pending) => Placed::Spawned(CallWork { pending, ..self }),
        }
    }

    /// Runs the work as a task on the current runtime; its answer goes to its sink.
    pub(crate) fn spawn(self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            if lock(&self.state.in_flight).remove(&self.id).is_some() {
                send(
                    &self.sink,
                    error_message(Some(&self.id), code::INTERNAL_ERROR, "Internal error", None),
                );
            }
            return;
        };
        let CallWork {
            shared,
            state,
            id,
            pending,
            context,
            sink,
            stateless,
            ..
        } = self;
        let task_id = id.clone();
        let task_state = Arc::clone(&state);
        let task = runtime.spawn(async move {
            let result = pending.finish(&context).await;
            // Only a request still in flight is answered: a cancelled one gets nothing.
            if lock(&task_state.in_flight).remove(&task_id).is_some() {
                send(&sink, answer(&shared, &task_id, result, stateless));
            }
        });
        let mut in_flight = lock(&state.in_flight);
        if let Some(entry) = in_flight.get_mut(&id) {
            entry.abort = Some(task.abort_handle());
        }
    }
}

/// Where a call's work can run (see [`CallWork::placed`]).
pub(crate) enum Placed {
    /// A sync tool proven quick: run it in place.
    InPlace(InPlaceWork),
    /// Anything else: spawn it.
    Spawned(CallWork),
}

/// The work of a started `tools/call` of a sync tool proven quick, to run in place.
pub(crate) struct InPlaceWork {
    shared: Arc<Shared>,
    state: Arc<State>,
    id: RequestId,
    call: crate::registry::InPlaceCall,
    stateless: bool,
}

impl InPlaceWork {
    /// What a watchdog needs to answer the call when its time is up (through `sink`: the
    /// call's own may be a reader's that nobody drains while it is stuck), and to send the
    /// tool back to the pool.
    pub(crate) fn watch(&self, sink: &Outgoing) -> Watched {
        Watched {
            shared: Arc::clone(&self.shared),
            state: Arc::clone(&self.state),
            id: self.id.clone(),
            tool: self.call.tool().clone(),
            limit: self.call.limit(),
            sink: sink.clone(),
            stateless: self.stateless,
        }
    }

    /// Runs the work here and now; the answer, unless the call was cancelled or answered
    /// (timed out) meanwhile.
    pub(crate) fn run(self) -> Option<Message> {
        let result = self.call.run();
        lock(&self.state.in_flight).remove(&self.id)?;
        Some(answer(&self.shared, &self.id, result, self.stateless))
    }
}

/// A call running in place, as a watchdog sees it.
pub(crate) struct Watched {
    shared: Arc<Shared>,
    state: Arc<State>,
    id: RequestId,
    tool: crate::call::runnable::ToolRef,
    limit: Option<std::time::Duration>,
    sink: Outgoing,
    stateless: bool,
}

impl Watched {
    /// The call's time limit, if any.
    pub(crate) fn limit(&self) -> Option<std::time::Duration> {
        self.limit
    }

    /// Sends the tool back to the pool: a run in place is taking long.
    pub(crate) fn demote(&self) {
        self.tool.runnable().pace().demote();
    }

    /// The call's time is up: it is answered with the timeout error and its cancellation
    /// fires; whatever the tool returns later is dropped.
    pub(crate) fn time_out(&self) {
        let Some(limit) = self.limit else {
            return;
        };
        let Some(in_flight) = lock(&self.state.in_flight).remove(&self.id) else {
            return;
        };
        in_flight.stop();
        let result = crate::call::result::ToolResult::timed_out(self.tool.name().to_owned(), limit);
        send(
            &self.sink,
            answer(&self.shared, &self.id, result, self.stateless),
        );
    }
}

/// The `tools/call` response to a finished call.
fn answer(shared: &Shared, id: &RequestId, result: crate::ToolResult, stateless: bool) -> Message {
    match tools::answer(result, shared.max_output_bytes) {
        CallAnswer::Result(body) => {
            let body = if stateless {
                stateless_result(body, &shared.info)
            } else {
                Value::Object(body)
            };
            Message::result(jsonrpc::response(id, &body))
        }
        CallAnswer::UnknownTool(message) => {
            error_message(Some(id), code::INVALID_PARAMS, &message, None)
        }
    }
}

fn duplicate_id(id: &RequestId) -> String {
    format!(
        "Invalid Request: id {} is already used by a request that has not been answered",
        id.as_json()
    )
}

fn send(sink: &Outgoing, message: Message) {
    let _ = sink.send(message);
}

/// An error response, typed with its code so a transport can choose a status without
/// reading the bytes again.
fn error_message(id: Option<&RequestId>, code: i64, message: &str, data: Option<Value>) -> Message {
    Message::error(code, jsonrpc::error_response(id, code, message, data))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}
