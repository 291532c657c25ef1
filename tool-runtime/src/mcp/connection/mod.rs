//! Writing a transport of your own: everything a transport needs to serve MCP over any
//! byte stream (a WebSocket, a message queue, a test harness), beside the stdio and HTTP
//! transports this crate has.
//!
//! A [`Connection`] is one client's protocol state (a stdio process, or an HTTP session).
//! The transport hands it each message the client sent ([`Connection::handle`]) with the
//! [`Outbox`] the server's messages for that client go to, and writes out what arrives at
//! the matching [`OutboxReader`] ([`outbox`] makes the pair). Handling a request may leave
//! [`Work`] (a tool call, a stream of notifications): the transport runs it where it
//! chooses (spawned, or awaited), and dropping it cancels the request. Every
//! [`ServerMessage`] says what it is ([`ServerMessageKind`]: a notification, a response
//! that ends its request, or a request of the server's), and a response may carry the
//! [`Refusal`] a transport with statuses of its own answers with.
//!
//! ```
//! use tool_runtime::mcp::connection::outbox;
//! use tool_runtime::mcp::{McpServer, ServerInfo};
//! use tool_runtime::{tool, Registry};
//!
//! /// Add two integers.
//! #[tool]
//! fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let server = McpServer::new(Registry::new().unwrap(), ServerInfo::new("calc", "1.0.0"));
//! let connection = server.connection();
//! let (to_client, mut from_server) = outbox();
//! let request = concat!(
//!     r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","#,
//!     r#""arguments":{"a":2,"b":3},"_meta":{"#,
//!     r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
//!     r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#,
//! );
//! if let Some(work) = connection.handle(request.as_bytes(), &to_client).into_work() {
//!     tokio::spawn(work.run());
//! }
//! let answer = from_server.recv().await.unwrap();
//! assert!(answer.is_response());
//! let answer: serde_json::Value = serde_json::from_slice(&answer.bytes).unwrap();
//! assert_eq!(answer["result"]["structuredContent"], serde_json::json!(5));
//! # });
//! ```

// Inside: `state` (what the connection keeps between messages), `in_flight` (the requests
// in flight: counted when they arrive, claimed by what runs them), `layered` (a request
// through the server's request layers), `origin` (how a request came: its era, caller,
// capabilities), `requests` (the scope of a request that runs user code, and how it asks
// its client), `shared` (a session kept in a store replicas share). Each method's handling
// is in `mcp::methods`.

pub(crate) mod in_flight;
mod layered;
pub(crate) mod origin;
pub(crate) mod requests;
mod shared;
pub(crate) mod state;

use super::asking::live::ClientAnswer;
use super::era::Decision;
pub use super::jsonrpc::RequestId;
use super::jsonrpc::{self, Incoming, Rejected};
pub use super::message::{Refusal, ServerMessage, ServerMessageKind};
pub use super::outbox::{outbox, Outbox, OutboxReader};
use super::params::{self, CancelledParams, MethodParams};
use super::responses::error_message;
pub use super::work::{Handled, Work};
use super::Shared;
use crate::call::caller::Caller;
use crate::sync::lock;
use in_flight::Arrival;
pub(crate) use in_flight::InFlight;
use serde_json::value::RawValue;
pub(crate) use state::State;
use std::borrow::Cow;
use std::sync::Arc;

/// One client's connection: a stdio process, or an HTTP session.
pub struct Connection {
    pub(in crate::mcp) shared: Arc<Shared>,
    pub(in crate::mcp) state: Arc<State>,
    /// Who sends the messages [`handle`](Connection::handle) is given.
    pub(in crate::mcp) caller: Caller,
    /// Whether dropping this value closes the connection: the transport's own does; the
    /// view a request's layers hand its handling to does not.
    closes_on_drop: bool,
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

/// One incoming message, parsed once (a request's params read into its method's type),
/// with the era it belongs to decided once: what a transport reads (to route it: a session
/// to find, headers to check) and then hands to the connection.
pub(crate) struct Read<'a> {
    pub(crate) arrived: Arrived<'a>,
    pub(crate) decision: Decision,
    /// The trace context of the HTTP request that brought it, if it had one.
    #[cfg(feature = "otel")]
    pub(crate) header_trace: Option<crate::otel::TraceCarrier>,
}

/// What came, read.
pub(crate) enum Arrived<'a> {
    /// Not a valid message, and the error to answer with.
    Rejected(Rejected),
    /// A response to a request of ours.
    Response {
        id: Option<RequestId>,
        outcome: ClientAnswer,
    },
    /// A notification, its params as written (only `notifications/cancelled` reads them).
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A request: its id, its method's name, and what it asks.
    Request {
        id: RequestId,
        name: Cow<'a, str>,
        asked: MethodParams,
    },
}

impl<'a> Read<'a> {
    /// Reads `bytes`, whose protocol version the transport saw claimed outside the body
    /// (HTTP's `MCP-Protocol-Version` header), if any.
    pub(crate) fn new(bytes: &'a [u8], claimed: Option<&str>) -> Read<'a> {
        let arrived = match jsonrpc::parse(bytes) {
            Err(rejected) => Arrived::Rejected(rejected),
            Ok(Incoming::Response { id, outcome }) => Arrived::Response { id, outcome },
            Ok(Incoming::Notification { method, params }) => {
                Arrived::Notification { method, params }
            }
            Ok(Incoming::Request { id, method, asked }) => Arrived::Request {
                id,
                name: method,
                asked,
            },
        };
        let meta = match &arrived {
            Arrived::Request { asked, .. } => asked.meta().map(),
            _ => None,
        };
        let decision = Decision::of(meta, claimed);
        Read {
            arrived,
            decision,
            #[cfg(feature = "otel")]
            header_trace: None,
        }
    }

    /// The method of a request or a notification.
    #[cfg(feature = "http")]
    pub(crate) fn method(&self) -> Option<&str> {
        match &self.arrived {
            Arrived::Request { name, .. } => Some(name),
            Arrived::Notification { method, .. } => Some(method),
            _ => None,
        }
    }

    /// What a request asks.
    #[cfg(feature = "http")]
    pub(crate) fn asked(&self) -> Option<&MethodParams> {
        match &self.arrived {
            Arrived::Request { asked, .. } => Some(asked),
            _ => None,
        }
    }

    /// The id of a request (or of a malformed message, when one could be read).
    #[cfg(feature = "http")]
    pub(crate) fn id(&self) -> Option<&RequestId> {
        match &self.arrived {
            Arrived::Request { id, .. } => Some(id),
            Arrived::Rejected(rejected) => rejected.id.as_ref(),
            _ => None,
        }
    }

    /// Whether the message could be read as one.
    #[cfg(feature = "http")]
    pub(crate) fn is_valid(&self) -> bool {
        !matches!(self.arrived, Arrived::Rejected(_))
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if self.closes_on_drop {
            self.close();
        }
    }
}

impl Connection {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Connection {
            shared,
            state: Arc::new(State::default()),
            caller: Caller::default(),
            closes_on_drop: true,
        }
    }

    /// The same connection, to handle a request later (once its layers let it through);
    /// dropping it leaves the connection open.
    pub(in crate::mcp) fn view(&self) -> Connection {
        Connection {
            shared: Arc::clone(&self.shared),
            state: Arc::clone(&self.state),
            caller: self.caller.clone(),
            closes_on_drop: false,
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
    pub fn set_unsolicited(&self, sink: Outbox) {
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
            let drained = self.state.drained();
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
        self.state.cancel(id);
    }

    /// Says the client's input ended (stdio): the streams that only wait for news
    /// (`subscriptions/listen`) end, so that [`drain`](Self::drain) waits only for the
    /// answers still owed.
    pub fn end_of_input(&self) {
        self.state.input_ended.cancel();
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
    pub fn handle(&self, bytes: &[u8], sink: &Outbox) -> Handled {
        self.handle_read(Read::new(bytes, None), &self.caller, sink)
    }

    /// Handles one message a transport has already read, sent by `caller`.
    pub(crate) fn handle_read(&self, read: Read<'_>, caller: &Caller, sink: &Outbox) -> Handled {
        match read.arrived {
            Arrived::Rejected(rejected) => {
                sink.send(error_message(
                    rejected.id.as_ref(),
                    rejected.code,
                    &rejected.message,
                    None,
                ));
                Handled::request(None)
            }
            Arrived::Response { id, outcome } => {
                self.answered(id, outcome);
                Handled::notification()
            }
            Arrived::Notification { method, params } => {
                self.notification(&method, params);
                Handled::notification()
            }
            Arrived::Request { id, name, asked } => {
                // The request's span is current while it is handled here, and while its
                // work runs: its answer, wherever it is made, is recorded on it.
                #[cfg(feature = "otel")]
                let span = self.request_span(
                    (&id, &name, &asked),
                    &read.decision,
                    caller,
                    read.header_trace.as_ref(),
                );
                #[cfg(feature = "otel")]
                let _handling = span.enter();
                // In flight from here, the first step: past a cap it is answered busy at
                // once, before any layer (which hears of its cancellation while it holds it).
                let layers = self.shared.request_layers.as_ref();
                let arrival = match self.arrive(&id, &asked, layers.is_some()) {
                    Ok(arrival) => arrival,
                    Err(refusal) => {
                        sink.send(refusal);
                        return Handled::request(None);
                    }
                };
                let work = if let Some(stages) = layers {
                    let request = (id, name.into_owned(), asked);
                    let read = (&read.decision, arrival);
                    Some(self.layered_request(stages, request, read, caller, sink))
                } else {
                    Arrival::handle(arrival, || {
                        self.request(id, &name, asked, &read.decision, caller, sink)
                    })
                };
                #[cfg(feature = "otel")]
                let work = work.map(|work| work.in_span(&span));
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

    fn notification(&self, method: &str, params: Option<&RawValue>) {
        match method {
            "notifications/cancelled" => match params::read(params) {
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
