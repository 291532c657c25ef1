//! What one connection keeps between its messages: the handshake it made, the requests in
//! flight (how they are counted and registered is `in_flight`), its questions to the
//! client, its subscriptions and its 2025-11-25 tasks.

use crate::call::scope::{Cancellation, LogLevel};
use crate::mcp::asking::live::ClientAnswer;
use crate::mcp::backlog::Backlog;
use crate::mcp::jsonrpc::RequestId;
use crate::mcp::outbox::Outbox;
use crate::mcp::ServerMessage;
use crate::sync::lock;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::{oneshot, Notify};

pub(crate) struct State {
    /// The negotiated handshake-era version, once `initialize` is answered.
    pub(crate) handshake: Mutex<Option<&'static str>>,
    /// `logging/setLevel` of the handshake era; everything until a client says otherwise.
    pub(crate) log_level: Arc<AtomicU8>,
    /// The requests in flight (see `in_flight`).
    pub(super) in_flight: Mutex<super::in_flight::Requests>,
    /// Told when the last request in flight ends, for [`Connection::drain`].
    ///
    /// [`Connection::drain`]: super::Connection::drain
    pub(super) drained: Notify,
    /// Whether anyone waits for `drained`: until then, the end of the last request in
    /// flight (every call's, on a client that sends one at a time) tells nobody, and saves
    /// the notification's lock.
    pub(super) drain_wanted: AtomicBool,
    /// Where notifications unrelated to a request go (stdio: the output; HTTP: a GET stream).
    pub(crate) unsolicited: Mutex<Option<Outbox>>,
    /// Whether the handshake-era watcher of list changes was handed out.
    pub(crate) watching: AtomicBool,
    /// Fires when the connection closes: ends the work that lasts as long as it.
    pub(crate) closed: Cancellation,
    /// Fires when the client's input ended (stdio): streams that only wait for news
    /// (`subscriptions/listen`) end then, since nobody will ask for more, and do not hold up
    /// the answers still owed.
    pub(crate) input_ended: Cancellation,
    /// The resources this client subscribed to (handshake era).
    pub(crate) subscribed: Mutex<HashSet<String>>,
    /// Whether the watcher of resource updates was handed out.
    pub(crate) watching_resources: AtomicBool,
    /// Notifications sent by this connection's calls and not yet written out.
    pub(crate) backlog: Arc<Backlog>,
    /// The capabilities the client declared at `initialize` (handshake era).
    pub(crate) client_capabilities: Mutex<Value>,
    /// Questions of calls to the client, waiting for its response, by our request id.
    pub(crate) questions: Mutex<HashMap<RequestId, oneshot::Sender<ClientAnswer>>>,
    /// The id of our next question.
    pub(crate) next_question: AtomicU64,
    /// The generation of the next request in flight: which request of an id an entry is.
    pub(super) generations: AtomicU64,
    /// The 2025-11-25 tasks this connection asked for, oldest first (what `tasks/list`
    /// shows it).
    pub(crate) tasks: Mutex<crate::mcp::tasks::ListedTasks>,
    /// The relays of this connection's running 2025-11-25 tasks, by task id.
    pub(crate) relays: Mutex<HashMap<String, Arc<crate::mcp::relay::TaskRelay>>>,
    /// The session this connection serves in a store shared with other replicas, once
    /// known: what the session's requests change is written there before it is answered.
    pub(crate) shared_session: OnceLock<SharedSession>,
    /// This replica's `tasks/result` requests waiting for tasks another replica runs, by
    /// task id.
    pub(crate) remote_waits: Mutex<HashMap<String, crate::mcp::remote_relay::RemoteWait>>,
}

/// A handshake-era session kept in a store shared by replicas.
pub(crate) struct SharedSession {
    pub(crate) id: String,
    pub(crate) store: crate::store::Store,
}

impl Default for State {
    fn default() -> Self {
        State {
            handshake: Mutex::new(None),
            log_level: Arc::new(AtomicU8::new(LogLevel::Debug as u8)),
            in_flight: Mutex::new(HashMap::default()),
            drained: Notify::new(),
            drain_wanted: AtomicBool::new(false),
            unsolicited: Mutex::new(None),
            watching: AtomicBool::new(false),
            closed: Cancellation::new(),
            input_ended: Cancellation::new(),
            subscribed: Mutex::new(HashSet::new()),
            watching_resources: AtomicBool::new(false),
            backlog: Arc::new(Backlog::default()),
            client_capabilities: Mutex::new(Value::Object(Map::new())),
            questions: Mutex::new(HashMap::new()),
            next_question: AtomicU64::new(1),
            // From 1: a registration that never was has generation 0.
            generations: AtomicU64::new(1),
            tasks: Mutex::default(),
            relays: Mutex::new(HashMap::new()),
            shared_session: OnceLock::new(),
            remote_waits: Mutex::new(HashMap::new()),
        }
    }
}

impl State {
    /// Sends `message` on the connection's stream of messages unrelated to a request;
    /// gives it back when there is none open (for a sender with somewhere else to try).
    pub(crate) fn offer_unsolicited(&self, message: ServerMessage) -> Result<(), ServerMessage> {
        match lock(&self.unsolicited).as_ref() {
            Some(sink) => sink.offer(message),
            None => Err(message),
        }
    }
}
