//! One client's connection (a stdio process, or an HTTP session): it takes the client's
//! messages and sends the messages they cause to an [`Outgoing`]. No I/O: a transport
//! moves the bytes, and runs the [`Work`] a request leaves where it chooses.
//!
//! - `state`: what the connection keeps between messages.
//! - `route`: the one router, from a request's method (in either era) to what does it.
//! - `handshake`: `initialize` and what only the handshake era has (log levels,
//!   resource subscriptions, the list-changed watcher).
//! - `per_request`: what a 2026-07-28 request says of itself, `server/discover` and
//!   `subscriptions/listen`.
//! - `calls`: the requests that run user code (`tools/call`, `prompts/get`,
//!   `resources/read`, `completion/complete`), the REST endpoints' calls too.
//! - `task_requests`: the `tasks/*` methods, answered from the task store.

mod calls;
mod handshake;
mod per_request;
mod route;
pub(crate) mod state;
mod task_requests;
mod watch;

use super::asking::live::ClientAnswer;
use super::era::{self, Decision};
use super::jsonrpc::{self, Incoming, Rejected, RequestId};
use super::outbox::Outgoing;
use super::params::{self, CancelledParams};
use super::responses::error_message;
use super::work::Handled;
use super::Shared;
use crate::call::caller::Caller;
use serde_json::{Map, Value};
pub(crate) use state::{lock, State};
use std::sync::Arc;

/// One client's connection: a stdio process, or an HTTP session.
pub struct Connection {
    pub(super) shared: Arc<Shared>,
    state: Arc<State>,
    /// Who sends the messages [`handle`](Connection::handle) is given.
    pub(super) caller: Caller,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("caller", &self.caller)
            .field("negotiated_version", &self.negotiated_version())
            .field("in_flight", &self.in_flight())
            .finish_non_exhaustive()
    }
}

/// One incoming message, parsed once, with the era it belongs to decided once: what a
/// transport reads (to route it: a session to find, headers to check) and then hands to
/// the connection.
pub(crate) struct Read<'a> {
    pub(crate) message: Result<Incoming<'a>, Rejected>,
    pub(crate) decision: Decision,
}

impl<'a> Read<'a> {
    /// Reads `bytes`, whose protocol version the transport saw claimed outside the body
    /// (HTTP's `MCP-Protocol-Version` header), if any.
    pub(crate) fn new(bytes: &'a [u8], claimed: Option<&str>) -> Read<'a> {
        let message = jsonrpc::parse(bytes);
        let params = match &message {
            Ok(Incoming::Request { params, .. } | Incoming::Notification { params, .. }) => {
                params.as_ref()
            }
            _ => None,
        };
        let decision = Decision::of(era::meta_of(params), claimed);
        Read { message, decision }
    }

    /// The method of a request or a notification.
    #[cfg(feature = "http")]
    pub(crate) fn method(&self) -> Option<&str> {
        match &self.message {
            Ok(Incoming::Request { method, .. } | Incoming::Notification { method, .. }) => {
                Some(method)
            }
            _ => None,
        }
    }

    /// The params of a request or a notification.
    #[cfg(feature = "http")]
    pub(crate) fn params(&self) -> Option<&Map<String, Value>> {
        match &self.message {
            Ok(Incoming::Request { params, .. } | Incoming::Notification { params, .. }) => {
                params.as_ref()
            }
            _ => None,
        }
    }

    /// The id of a request (or of a malformed message, when one could be read).
    #[cfg(feature = "http")]
    pub(crate) fn id(&self) -> Option<&RequestId> {
        match &self.message {
            Ok(Incoming::Request { id, .. }) => Some(id),
            Err(rejected) => rejected.id.as_ref(),
            _ => None,
        }
    }

    /// Whether the message could be read as one.
    #[cfg(feature = "http")]
    pub(crate) fn is_valid(&self) -> bool {
        self.message.is_ok()
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
            state: Arc::new(State::default()),
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
        self.state.in_flight()
    }

    /// Waits until every request in flight is answered.
    pub async fn drain(&self) {
        loop {
            // Registered before the count is read, so the last answer cannot slip between.
            let drained = self.state.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if self.in_flight() == 0 {
                return;
            }
            drained.await;
        }
    }

    /// Cancels one request: its work is dropped and it gets no response.
    pub fn cancel(&self, id: &RequestId) {
        if let Some(in_flight) = self.state.finish(id) {
            in_flight.stop();
        }
    }

    /// Ends the connection: every request in flight is cancelled.
    pub fn close(&self) {
        for in_flight in self.state.finish_all() {
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
        self.handle_read(Read::new(bytes, None), &self.caller, sink)
    }

    /// Handles one message a transport has already read, sent by `caller`.
    pub(crate) fn handle_read(&self, read: Read<'_>, caller: &Caller, sink: &Outgoing) -> Handled {
        match read.message {
            Err(rejected) => {
                sink.send(error_message(
                    rejected.id.as_ref(),
                    rejected.code,
                    &rejected.message,
                    None,
                ));
                Handled::request(None)
            }
            Ok(Incoming::Response { id, outcome }) => {
                self.answered(id, outcome);
                Handled::notification()
            }
            Ok(Incoming::Notification { method, params }) => {
                self.notification(&method, params);
                Handled::notification()
            }
            Ok(Incoming::Request { id, method, params }) => {
                let work = self.request(id, &method, params, &read.decision, caller, sink);
                Handled::request(work)
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

    fn notification(&self, method: &str, params: Option<Map<String, Value>>) {
        match method {
            "notifications/cancelled" => match params::read::<CancelledParams>(params) {
                Ok(CancelledParams { request_id })
                    if request_id.is_string() || request_id.is_number() =>
                {
                    self.cancel(&RequestId::from_value(&request_id));
                }
                _ => tracing::debug!("ignored a cancellation that names no request"),
            },
            "notifications/initialized" => {}
            other => tracing::debug!(method = other, "ignored a notification"),
        }
    }
}
