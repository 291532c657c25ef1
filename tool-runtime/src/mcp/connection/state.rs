//! What one connection keeps between its messages: the handshake it made, the requests in
//! flight (registered under one lock, so a duplicate id or a connection at its limit is
//! refused), its questions to the client, its subscriptions and its 2025-11-25 tasks.

use crate::call::scope::{Cancellation, LogLevel};
use crate::mcp::asking::live::ClientAnswer;
use crate::mcp::backlog::Backlog;
use crate::mcp::jsonrpc::{code, RequestId};
use crate::mcp::outbox::Outbox;
use crate::mcp::responses::error_message;
use crate::mcp::work::InFlightGuard;
use crate::mcp::ServerMessage;
use crate::sync::lock;
use serde_json::{Map, Value};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::{oneshot, Notify};

pub(crate) struct State {
    /// The negotiated handshake-era version, once `initialize` is answered.
    pub(crate) handshake: Mutex<Option<&'static str>>,
    /// `logging/setLevel` of the handshake era; everything until a client says otherwise.
    pub(crate) log_level: Arc<AtomicU8>,
    /// Hashed with foldhash, seeded per process: every request is looked up here twice,
    /// which with SipHash was 670 of a quick call's 16,000 instructions. Ids are the
    /// client's, but a connection holds few at once (its limit), which bounds what
    /// colliding ids could cost.
    in_flight: Mutex<HashMap<RequestId, InFlight, foldhash::fast::RandomState>>,
    /// Told when the last request in flight ends, for [`Connection::drain`].
    ///
    /// [`Connection::drain`]: super::Connection::drain
    drained: Notify,
    /// Whether anyone waits for `drained`: until then, the end of the last request in
    /// flight (every call's, on a client that sends one at a time) tells nobody, and saves
    /// the notification's lock.
    drain_wanted: AtomicBool,
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

/// A request being worked on.
pub(crate) struct InFlight {
    cancellation: Cancellation,
    /// Its place among the requests of all connections, given back when it ends.
    _place: InFlightPlace,
}

/// The requests running on all the server's connections, and how many may.
#[derive(Debug)]
pub(crate) struct InFlightTotal {
    running: std::sync::atomic::AtomicUsize,
    most: usize,
}

impl InFlightTotal {
    pub(crate) fn new(most: usize) -> InFlightTotal {
        InFlightTotal {
            running: std::sync::atomic::AtomicUsize::new(0),
            most,
        }
    }

    /// Whether every place is taken: the next request gets the server-busy error.
    pub(crate) fn is_full(&self) -> bool {
        self.running.load(Ordering::Acquire) >= self.most
    }

    /// A place for one more request, unless all are taken.
    fn take(self: &Arc<Self>) -> Option<InFlightPlace> {
        let before = self.running.fetch_add(1, Ordering::AcqRel);
        if before >= self.most {
            self.running.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(InFlightPlace(Arc::clone(self)))
    }
}

/// One request counted in [`InFlightTotal`] while it lives.
pub(crate) struct InFlightPlace(Arc<InFlightTotal>);

impl Drop for InFlightPlace {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::AcqRel);
    }
}

impl InFlight {
    /// Cancels the request's work: its tool sees the cancellation, and its work (a future)
    /// ends the next time it is polled.
    pub(crate) fn stop(self) {
        self.cancellation.cancel();
    }
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

    /// How many requests are in flight.
    pub(crate) fn in_flight(&self) -> usize {
        lock(&self.in_flight).len()
    }

    /// Whether the request `id` is in flight.
    pub(crate) fn is_in_flight(&self, id: &RequestId) -> bool {
        lock(&self.in_flight).contains_key(id)
    }

    /// Ends the request `id`'s registration (it is answered, cancelled or timed out); its
    /// registration, if it was still in flight. The last one to end wakes a drain.
    pub(crate) fn finish(&self, id: &RequestId) -> Option<InFlight> {
        let mut in_flight = lock(&self.in_flight);
        let ended = in_flight.remove(id);
        // Read under the map's lock: see `drained`.
        if ended.is_some() && in_flight.is_empty() && self.drain_wanted.load(Ordering::SeqCst) {
            self.drained.notify_waiters();
        }
        ended
    }

    /// Told when the last request in flight ends: enable it, then read [`State::in_flight`].
    /// The wish is recorded before that count is read under its lock, so a request that
    /// ends after the count sees it and notifies.
    pub(crate) fn drained(&self) -> tokio::sync::futures::Notified<'_> {
        self.drain_wanted.store(true, Ordering::SeqCst);
        self.drained.notified()
    }

    /// Ends every request's registration, for a connection that closes.
    pub(crate) fn finish_all(&self) -> Vec<InFlight> {
        let ended: Vec<InFlight> = lock(&self.in_flight).drain().map(|(_, f)| f).collect();
        self.drained.notify_waiters();
        ended
    }

    /// Records a request as in flight, under one lock so two requests racing with the same
    /// id cannot both pass; refuses a used id and a connection at its limit (`most`
    /// requests). The guard ends the registration with the request's work.
    pub(crate) fn register(
        self: &Arc<Self>,
        id: RequestId,
        cancellation: Cancellation,
        most: usize,
        total: &Arc<InFlightTotal>,
    ) -> Result<InFlightGuard, ServerMessage> {
        let mut in_flight = lock(&self.in_flight);
        if in_flight.len() >= most {
            drop(in_flight);
            let why = format!("{most} requests are already running on this connection");
            return Err(server_busy(&id, &why));
        }
        let Some(counted) = total.take() else {
            drop(in_flight);
            let why = format!("{} requests are already running on this server", total.most);
            return Err(server_busy(&id, &why));
        };
        match in_flight.entry(id.clone()) {
            Entry::Occupied(_) => Err(error_message(
                Some(&id),
                code::INVALID_REQUEST,
                &duplicate_id(&id),
                None,
            )),
            Entry::Vacant(slot) => {
                slot.insert(InFlight {
                    cancellation,
                    _place: counted,
                });
                drop(in_flight);
                Ok(InFlightGuard {
                    state: Arc::clone(self),
                    id,
                    ended: AtomicBool::new(false),
                })
            }
        }
    }
}

/// How long a client told the server is busy waits before it sends again.
const BUSY_RETRY: std::time::Duration = std::time::Duration::from_secs(1);

/// The answer to a request past the connection's bound of requests in flight: the server's
/// busy error (over HTTP, 503 with `Retry-After`), never a queue.
fn server_busy(id: &RequestId, why: &str) -> ServerMessage {
    let message = format!(
        "Server busy: {why} (the limit); this one did not run. Send it again once some are \
         answered"
    );
    let data = serde_json::json!({"retryAfterMs": BUSY_RETRY.as_millis() as u64});
    error_message(Some(id), code::SERVER_BUSY, &message, Some(data)).refused(Some(
        super::Refusal::Unavailable {
            retry_after: BUSY_RETRY,
        },
    ))
}

/// What a request whose id is in use is told.
pub(crate) fn duplicate_id(id: &RequestId) -> String {
    format!(
        "Invalid Request: id {} is already used by a request that has not been answered",
        id.as_json()
    )
}
