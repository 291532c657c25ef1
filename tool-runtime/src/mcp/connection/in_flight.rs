//! The requests in flight on one connection: counted against the in-flight caps from the
//! moment each arrives (outermost, before any layer sees it), kept under its id so that a
//! duplicate is refused and a cancellation finds it, and let go when it is answered.
//!
//! A request that runs work (a call, a prompt, a read, a completion, a stream, a task
//! method) is *arrived* first: its id taken and its places among the connection's and the
//! server's requests counted, in one step under the map's lock, so a request past a cap is
//! answered busy at once and never waits in a layer. What then runs it *claims* the entry
//! with its cancellation; an arrival nothing claimed (a layer refused it, or it was
//! answered at once) is let go when its handling returns.

use super::state::State;
use super::Connection;
use crate::call::scope::Cancellation;
use crate::mcp::jsonrpc::{code, RequestId};
use crate::mcp::params::MethodParams;
use crate::mcp::responses::error_message;
use crate::mcp::work::InFlightGuard;
use crate::mcp::ServerMessage;
use crate::sync::lock;
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
    /// What cancels its work, once something runs it; `None` while it is only arrived.
    running: Option<Cancellation>,
    /// Whether the client cancelled it before anything ran it: what claims it then starts
    /// cancelled, and its work ends without an answer.
    cancelled_early: bool,
    /// Its place among the requests of all connections, given back when it ends.
    _place: InFlightPlace,
}

impl InFlight {
    /// Cancels the request's work: its tool sees the cancellation, and its work (a future)
    /// ends the next time it is polled.
    pub(crate) fn stop(self) {
        if let Some(cancellation) = self.running {
            cancellation.cancel();
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

/// A request arrived and counted, until its handling returns: dropped with nothing having
/// claimed the request, it lets the request go (its id and places).
pub(crate) struct Arrival {
    state: Arc<State>,
    id: RequestId,
}

impl Arrival {
    /// Whether the client cancelled the request since it arrived (while a layer held it):
    /// it is then not handled at all, and never answered.
    pub(crate) fn cancelled(&self) -> bool {
        lock(&self.state.in_flight)
            .get(&self.id)
            .is_some_and(|request| request.cancelled_early)
    }
}

impl Drop for Arrival {
    fn drop(&mut self) {
        let mut in_flight = lock(&self.state.in_flight);
        if in_flight
            .get(&self.id)
            .is_some_and(|request| request.running.is_none())
        {
            in_flight.remove(&self.id);
            self.state.tell_if_drained(&in_flight);
        }
    }
}

impl Connection {
    /// The first step of every request: a duplicate id is refused, and a request that runs
    /// work is counted against the in-flight caps (past one, answered busy at once, never
    /// queued), whatever layers come after.
    pub(in crate::mcp) fn arrive(
        &self,
        id: &RequestId,
        asked: &MethodParams,
    ) -> Result<Option<Arrival>, ServerMessage> {
        if asked.runs_work() {
            return self
                .state
                .arrive(id, self.shared.max_in_flight, &self.shared.in_flight_total)
                .map(Some);
        }
        if self.state.is_in_flight(id) {
            let message = duplicate_id(id);
            return Err(error_message(
                Some(id),
                code::INVALID_REQUEST,
                &message,
                None,
            ));
        }
        Ok(None)
    }

    /// Records a request as running, with what cancels it (see [`State::register`]).
    pub(in crate::mcp) fn register(
        &self,
        id: RequestId,
        cancellation: Cancellation,
    ) -> Result<InFlightGuard, ServerMessage> {
        self.state.register(
            id,
            cancellation,
            self.shared.max_in_flight,
            &self.shared.in_flight_total,
        )
    }
}

impl State {
    /// How many requests are in flight.
    pub(crate) fn in_flight(&self) -> usize {
        lock(&self.in_flight).len()
    }

    /// Whether the request `id` is in flight.
    pub(crate) fn is_in_flight(&self, id: &RequestId) -> bool {
        lock(&self.in_flight).contains_key(id)
    }

    /// Takes the id of a request that runs work and counts it, under one lock so two
    /// requests racing with the same id cannot both pass; refuses a used id and a
    /// connection (`most` requests) or server at its limit.
    fn arrive(
        self: &Arc<Self>,
        id: &RequestId,
        most: usize,
        total: &Arc<InFlightTotal>,
    ) -> Result<Arrival, ServerMessage> {
        let mut in_flight = lock(&self.in_flight);
        let running = in_flight.len();
        let Entry::Vacant(slot) = in_flight.entry(id.clone()) else {
            drop(in_flight);
            let message = duplicate_id(id);
            return Err(error_message(
                Some(id),
                code::INVALID_REQUEST,
                &message,
                None,
            ));
        };
        let place = counted_among(id, running, most, total)?;
        slot.insert(InFlight {
            running: None,
            cancelled_early: false,
            _place: place,
        });
        drop(in_flight);
        Ok(Arrival {
            state: Arc::clone(self),
            id: id.clone(),
        })
    }

    /// Records a request as running: the one arrived under `id` is claimed with
    /// `cancellation` (cancelled at once if the client cancelled it meanwhile); a request
    /// that did not arrive here (a REST call) is counted and registered now, refused as
    /// [`arrive`](Self::arrive) refuses. The guard ends the registration with the request's
    /// work.
    pub(crate) fn register(
        self: &Arc<Self>,
        id: RequestId,
        cancellation: Cancellation,
        most: usize,
        total: &Arc<InFlightTotal>,
    ) -> Result<InFlightGuard, ServerMessage> {
        let mut in_flight = lock(&self.in_flight);
        let len = in_flight.len();
        match in_flight.entry(id.clone()) {
            Entry::Occupied(mut arrived) if arrived.get().running.is_none() => {
                let request = arrived.get_mut();
                if request.cancelled_early {
                    cancellation.cancel();
                }
                request.running = Some(cancellation);
            }
            Entry::Occupied(_) => {
                drop(in_flight);
                let message = duplicate_id(&id);
                return Err(error_message(
                    Some(&id),
                    code::INVALID_REQUEST,
                    &message,
                    None,
                ));
            }
            Entry::Vacant(slot) => {
                let place = counted_among(&id, len, most, total)?;
                slot.insert(InFlight {
                    running: Some(cancellation),
                    cancelled_early: false,
                    _place: place,
                });
            }
        }
        drop(in_flight);
        Ok(InFlightGuard {
            state: Arc::clone(self),
            id,
            ended: AtomicBool::new(false),
        })
    }

    /// Ends the request `id`'s registration (it is answered, cancelled or timed out); its
    /// registration, if it was still in flight. The last one to end wakes a drain.
    pub(crate) fn finish(&self, id: &RequestId) -> Option<InFlight> {
        let mut in_flight = lock(&self.in_flight);
        let ended = in_flight.remove(id);
        if ended.is_some() {
            self.tell_if_drained(&in_flight);
        }
        ended
    }

    /// The client cancelled the request `id`: a running one ends (its registration is
    /// given back with its work stopped); one only arrived is marked, so that it starts
    /// cancelled and is never answered.
    pub(crate) fn cancel(&self, id: &RequestId) {
        let mut in_flight = lock(&self.in_flight);
        match in_flight.get_mut(id) {
            Some(request) if request.running.is_none() => request.cancelled_early = true,
            Some(_) => {
                let ended = in_flight.remove(id);
                self.tell_if_drained(&in_flight);
                drop(in_flight);
                if let Some(request) = ended {
                    request.stop();
                }
            }
            None => {}
        }
    }

    /// Wakes a drain when the map (under its lock, so a request that ends after a drain read
    /// the count sees its wish) is empty.
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
