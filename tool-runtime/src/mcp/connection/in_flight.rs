//! The requests in flight on one connection: counted against the in-flight caps from the
//! moment each arrives (the first step of a request, before any layer sees it), kept under
//! its id so that a duplicate is refused and a cancellation finds it, and let go when it is
//! answered.
//!
//! A request that runs work (a call, a prompt, a read, a completion, a stream, a task
//! method, a REST call) *arrives* first: its id taken and its places among the connection's
//! and the server's requests counted, in one step under the map's lock, so a request past a
//! cap is answered busy at once and never waits in a layer. Its [`Arrival`] is then handed
//! to its method ([`Arrival::handle`]), and what runs it *claims* it there
//! ([`Connection::register`]) with its cancellation; a request answered at once lets its
//! arrival go before its answer is sent ([`let_go_before_answering`]), and so does one a
//! request layer refuses ([`Ticket`]), even while the layer still holds it. Each entry has a
//! generation of its own, so an old request's end never removes a newer one of the same id.

use super::state::State;
use super::Connection;
use crate::call::scope::Cancellation;
use crate::mcp::jsonrpc::{code, RequestId};
use crate::mcp::params::MethodParams;
use crate::mcp::responses::error_message;
use crate::mcp::work::InFlightGuard;
use crate::mcp::ServerMessage;
use crate::sync::lock;
use std::cell::RefCell;
use std::collections::hash_map::Entry;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// A connection's requests in flight, by id. Hashed with foldhash, seeded per process:
/// every request is looked up here twice, which with SipHash was 670 of a quick call's
/// 16,000 instructions. Ids are the client's, but a connection holds few at once (its
/// limit), which bounds what colliding ids could cost.
pub(crate) type Requests =
    std::collections::HashMap<RequestId, InFlight, foldhash::fast::RandomState>;

/// A request in flight.
pub(crate) struct InFlight {
    /// Which request of this id it is.
    generation: u64,
    stage: Stage,
    /// Its place among the requests of all connections, given back when it ends.
    _place: InFlightPlace,
}

/// How far a request in flight has come.
enum Stage {
    /// Arrived, not yet running: what tells its holder (a request layer's queue) that the
    /// client cancelled it, when anyone listens.
    Arrived(Option<Cancellation>),
    /// Claimed by what runs it: what cancels its work.
    Running(Cancellation),
}

impl InFlight {
    /// Cancels the request: a running one's tool sees the cancellation, and its work (a
    /// future) ends the next time it is polled; one only arrived is dropped by its holder.
    pub(crate) fn stop(self) {
        match self.stage {
            Stage::Arrived(Some(cancellation)) | Stage::Running(cancellation) => {
                cancellation.cancel();
            }
            Stage::Arrived(None) => {}
        }
    }
}

/// The requests running on all the server's connections, and how many may.
#[derive(Debug)]
pub(crate) struct InFlightTotal {
    running: AtomicUsize,
    most: usize,
}

impl InFlightTotal {
    pub(crate) fn new(most: usize) -> InFlightTotal {
        InFlightTotal {
            running: AtomicUsize::new(0),
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
struct InFlightPlace(Arc<InFlightTotal>);

impl Drop for InFlightPlace {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A request arrived and counted, not yet claimed by what runs it. Dropped unclaimed (a
/// layer refused it, it was answered at once), it lets the request go: its id and places.
pub(crate) struct Arrival {
    /// Which request it is.
    ticket: Ticket,
    /// Fired when the client cancels the request before anything runs it.
    stop: Option<Cancellation>,
    /// Claimed, or found gone: its drop has nothing to let go.
    settled: bool,
}

thread_local! {
    /// The arrival whose method is being handled on this thread now. Its method claims it
    /// many calls down (`register`), or answers at once (`let_go_before_answering`); kept
    /// here rather than passed down every method's signature, and since a method is handled
    /// in one synchronous call, it can only be claimed by its own request.
    static HANDLING: RefCell<Option<Arrival>> = const { RefCell::new(None) };
}

impl Arrival {
    /// What fires when the client cancels the request while it waits to be handled, if the
    /// arrival was made to be told.
    pub(crate) fn stop(&self) -> Option<&Cancellation> {
        self.stop.as_ref()
    }

    /// Runs `handle` (a request's method) with the request's arrival, if it has one, for
    /// it to claim; one it did not claim is let go when it returns. A request with none
    /// (it runs no work) is handled with none too, so that it can never let go of another's.
    pub(crate) fn handle<T>(arrival: Option<Arrival>, handle: impl FnOnce() -> T) -> T {
        /// Puts back what was handled before, also when `handle` panics.
        struct Restore(Option<Arrival>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let unclaimed = HANDLING.with(|slot| slot.replace(self.0.take()));
                drop(unclaimed);
            }
        }
        let before = HANDLING.with(|slot| slot.replace(arrival));
        let _restore = Restore(before);
        handle()
    }

    /// Whether the request still waits to be handled: not cancelled, nor let go by a
    /// layer's refusal, nor ended with its connection.
    pub(crate) fn is_waiting(&self) -> bool {
        let ticket = &self.ticket;
        lock(&ticket.state.in_flight)
            .get(&ticket.id)
            .is_some_and(|request| ticket.names(request))
    }

    /// What lets the request go from elsewhere (a layer's refusal), while a layer holds the
    /// arrival itself.
    pub(crate) fn ticket(&self) -> Ticket {
        self.ticket.clone()
    }
}

/// Names an arrival's request, to let it go while something else holds the arrival.
#[derive(Clone)]
pub(crate) struct Ticket {
    state: Arc<State>,
    id: RequestId,
    generation: u64,
}

impl Ticket {
    /// Whether `request` is the one named, not yet claimed.
    fn names(&self, request: &InFlight) -> bool {
        request.generation == self.generation && matches!(request.stage, Stage::Arrived(_))
    }

    /// Lets the request go (its id and places), unless something claimed it: it was
    /// answered without being handled (at once, or by a layer's refusal).
    pub(crate) fn let_go(&self) {
        let mut in_flight = lock(&self.state.in_flight);
        if in_flight
            .get(&self.id)
            .is_some_and(|request| self.names(request))
        {
            in_flight.remove(&self.id);
            self.state.tell_if_drained(&in_flight);
        }
    }
}

impl Drop for Arrival {
    fn drop(&mut self) {
        if !self.settled {
            self.ticket.let_go();
        }
    }
}

/// Lets go of the arrival being handled on this thread, if any: its request is about to be
/// answered at once, and the client may send another with the same id as soon as it reads
/// the answer.
pub(crate) fn let_go_before_answering() {
    let arrival = HANDLING.with(|slot| slot.borrow_mut().take());
    drop(arrival);
}

impl Connection {
    /// The first step of every request: a duplicate id is refused, and a request that runs
    /// work is counted against the in-flight caps (past one, answered busy at once, never
    /// queued, before anything but its id is checked). `told` makes an arrival that hears of a
    /// cancellation while it waits to be handled (one request layers will hold).
    pub(in crate::mcp) fn arrive(
        &self,
        id: &RequestId,
        asked: &MethodParams,
        told: bool,
    ) -> Result<Option<Arrival>, ServerMessage> {
        if asked.runs_work() {
            return self.arrive_to_work(id, told).map(Some);
        }
        if self.state.is_in_flight(id) {
            return Err(duplicate_id(id));
        }
        Ok(None)
    }

    /// A request that runs work arrives (see [`State::arrive`]).
    pub(in crate::mcp) fn arrive_to_work(
        &self,
        id: &RequestId,
        told: bool,
    ) -> Result<Arrival, ServerMessage> {
        let limits = (self.shared.max_in_flight, &self.shared.in_flight_total);
        self.state.arrive(id, limits, told.then(Cancellation::new))
    }

    /// Claims the request being handled, which runs work cancelled by `cancellation`. The
    /// guard ends the registration with the request's work; when the client cancelled the
    /// request since it arrived, or the connection closed, `cancellation` is fired and the
    /// guard is already ended: the work ends at once, and nothing answers.
    pub(in crate::mcp) fn register(
        &self,
        id: RequestId,
        cancellation: Cancellation,
    ) -> InFlightGuard {
        let arrival = HANDLING.with(|slot| {
            let mut slot = slot.borrow_mut();
            slot.take_if(|arrival| {
                arrival.ticket.id == id && Arc::ptr_eq(&arrival.ticket.state, &self.state)
            })
        });
        debug_assert!(
            arrival.is_some(),
            "a request that runs work is handled with its arrival"
        );
        // Never reached by this crate's methods: a request handed to one without its
        // arrival arrives now, so that it is counted all the same.
        let arrival = arrival.or_else(|| match self.arrive_to_work(&id, false) {
            Ok(arrival) => Some(arrival),
            Err(_) => {
                tracing::error!(id = %id.as_json(), "a request that did not arrive was not run");
                None
            }
        });
        let claimed = arrival.and_then(|arrival| self.state.claim(arrival, &cancellation));
        let (generation, ended) = match claimed {
            Some(generation) => (generation, false),
            None => {
                cancellation.cancel();
                (0, true)
            }
        };
        InFlightGuard {
            state: Arc::clone(&self.state),
            id,
            generation,
            ended: AtomicBool::new(ended),
        }
    }
}

impl State {
    /// How many requests are in flight.
    pub(crate) fn in_flight(&self) -> usize {
        lock(&self.in_flight).len()
    }

    /// Whether a request of id `id` is in flight.
    pub(crate) fn is_in_flight(&self, id: &RequestId) -> bool {
        lock(&self.in_flight).contains_key(id)
    }

    /// Whether the request `id` of `generation` is still in flight.
    pub(crate) fn is_still_in_flight(&self, id: &RequestId, generation: u64) -> bool {
        lock(&self.in_flight)
            .get(id)
            .is_some_and(|request| request.generation == generation)
    }

    /// Takes the id of a request that runs work and counts it, under one lock so two
    /// requests racing with the same id cannot both pass; refuses a used id and a
    /// connection (`most` requests) or server at its limit.
    fn arrive(
        self: &Arc<Self>,
        id: &RequestId,
        (most, total): (usize, &Arc<InFlightTotal>),
        stop: Option<Cancellation>,
    ) -> Result<Arrival, ServerMessage> {
        let generation = self.generations.fetch_add(1, Ordering::Relaxed);
        let mut in_flight = lock(&self.in_flight);
        let running = in_flight.len();
        let Entry::Vacant(slot) = in_flight.entry(id.clone()) else {
            drop(in_flight);
            return Err(duplicate_id(id));
        };
        let place = counted_among(id, running, most, total)?;
        slot.insert(InFlight {
            generation,
            stage: Stage::Arrived(stop.clone()),
            _place: place,
        });
        drop(in_flight);
        Ok(Arrival {
            ticket: Ticket {
                state: Arc::clone(self),
                id: id.clone(),
                generation,
            },
            stop,
            settled: false,
        })
    }

    /// Marks `arrival`'s request as running, cancelled by `cancellation`: its generation,
    /// or `None` when it is no longer in flight (cancelled, or its connection closed).
    fn claim(&self, mut arrival: Arrival, cancellation: &Cancellation) -> Option<u64> {
        let mut in_flight = lock(&self.in_flight);
        arrival.settled = true;
        let generation = arrival.ticket.generation;
        let request = in_flight
            .get_mut(&arrival.ticket.id)
            .filter(|request| request.generation == generation)?;
        request.stage = Stage::Running(cancellation.clone());
        Some(generation)
    }

    /// Ends the registration of the request `id` of `generation` (it is answered,
    /// cancelled or timed out); its registration, if it was still in flight. The last one
    /// to end wakes a drain.
    pub(crate) fn finish(&self, id: &RequestId, generation: u64) -> Option<InFlight> {
        let mut in_flight = lock(&self.in_flight);
        // One lookup on the way every request takes; a newer request of the id goes back.
        let ended = in_flight.remove_entry(id)?;
        if ended.1.generation != generation {
            in_flight.insert(ended.0, ended.1);
            return None;
        }
        self.tell_if_drained(&in_flight);
        Some(ended.1)
    }

    /// The client cancelled the request `id`: it is let go at once (its id and places) and
    /// stopped: a running one's work ends, one a layer holds is dropped there.
    pub(crate) fn cancel(&self, id: &RequestId) {
        let mut in_flight = lock(&self.in_flight);
        let ended = in_flight.remove(id);
        if ended.is_some() {
            self.tell_if_drained(&in_flight);
        }
        drop(in_flight);
        if let Some(request) = ended {
            request.stop();
        }
    }

    /// Wakes a drain when the map (read under its lock, so a request that ends after a
    /// drain read the count sees its wish) is empty.
    fn tell_if_drained(&self, in_flight: &Requests) {
        if in_flight.is_empty() && self.drain_wanted.load(Ordering::SeqCst) {
            self.drained.notify_waiters();
        }
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
}

/// A place for the request `id` on a connection already holding `running` requests, and
/// among the server's.
fn counted_among(
    id: &RequestId,
    running: usize,
    most: usize,
    total: &Arc<InFlightTotal>,
) -> Result<InFlightPlace, ServerMessage> {
    if running >= most {
        let why = format!("{most} requests are already running on this connection");
        return Err(server_busy(id, &why));
    }
    total.take().ok_or_else(|| {
        let why = format!("{} requests are already running on this server", total.most);
        server_busy(id, &why)
    })
}

/// How long a client told the server is busy waits before it sends again.
const BUSY_RETRY: std::time::Duration = std::time::Duration::from_secs(1);

/// The answer to a request past an in-flight cap (`why`): the server-busy error (over
/// HTTP, 503 with `Retry-After`), never a queue.
fn server_busy(id: &RequestId, why: &str) -> ServerMessage {
    let message = format!(
        "Server busy: {why} (the limit); this one did not run. Send it again once some are \
         answered"
    );
    busy(id, &message, BUSY_RETRY)
}

/// The server-busy error (-32000) saying `message`, and when to send the request again
/// (`data.retryAfterMs`; over HTTP, 503 with `Retry-After`).
pub(crate) fn busy(
    id: &RequestId,
    message: &str,
    retry_after: std::time::Duration,
) -> ServerMessage {
    let data = serde_json::json!({"retryAfterMs": retry_after.as_millis() as u64});
    error_message(Some(id), code::SERVER_BUSY, message, Some(data))
        .refused(Some(super::Refusal::Unavailable { retry_after }))
}

/// What a request whose id is in use is told.
fn duplicate_id(id: &RequestId) -> ServerMessage {
    let message = format!(
        "Invalid Request: id {} is already used by a request that has not been answered",
        id.as_json()
    );
    error_message(Some(id), code::INVALID_REQUEST, &message, None)
}
