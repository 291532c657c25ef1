//! A request through the layers the server was given (`ServerOptions::request_layer`):
//! what the request is, told to them, and the connection's own handling of it once they
//! let it through, as work.

use super::in_flight::{busy, Arrival};
use super::Connection;
use crate::call::caller::Caller;
use crate::layers::{Handling, RequestFacts, RequestStages};
use crate::mcp::era::{Decision, Era};
use crate::mcp::jsonrpc::{code, RequestId};
use crate::mcp::outbox::Outbox;
use crate::mcp::params::MethodParams;
use crate::mcp::responses::error_message;
use crate::mcp::work::Work;
use std::sync::Arc;
use std::time::Duration;

impl Connection {
    /// The request `id` of `method`, already arrived (counted in flight, when it runs
    /// work), through `stages` and then handled as any request is; not at all when the
    /// client cancelled it while a layer held it.
    pub(super) fn layered_request(
        &self,
        stages: &Arc<RequestStages>,
        (id, method, asked): (RequestId, String, MethodParams),
        (decision, arrival): (&Decision, Option<Arrival>),
        caller: &Caller,
        sink: &Outbox,
    ) -> Work {
        let protocol = match decision.era() {
            Era::Handshake => crate::call::scope::Protocol::McpHandshake,
            Era::PerRequest => crate::call::scope::Protocol::McpPerRequest,
        };
        let facts = RequestFacts {
            method: method.as_str().into(),
            id: Arc::clone(&id.0),
            target: asked.target().map(str::to_owned),
            caller: caller.clone(),
            protocol,
        };
        let connection = self.view();
        let (caller, sink, decision) = (caller.clone(), sink.clone(), decision.clone());
        let ticket = arrival.as_ref().map(Arrival::ticket);
        let refused = (id.clone(), sink.clone());
        let stop = arrival.as_ref().and_then(Arrival::stop).cloned();
        let handling: Handling = Box::new(move || {
            // A layer may let through what it kept past its refusal or its cancellation
            // (a buffer's queue): such a request is not handled, nor answered again.
            if arrival
                .as_ref()
                .is_some_and(|arrival| !arrival.is_waiting())
            {
                return Box::pin(std::future::ready(()));
            }
            let work = Arrival::handle(arrival, || {
                connection.request(id, &method, asked, &decision, &caller, &sink)
            });
            Box::pin(async move {
                if let Some(work) = work {
                    work.run().await;
                }
            })
        });
        let refuse = move |message: String, retry_after: Option<Duration>| {
            let (id, sink) = refused;
            // Its id and places are free before the client reads the refusal, even if the
            // layer still holds the request.
            if let Some(ticket) = ticket {
                ticket.let_go();
            }
            sink.send(match retry_after {
                // Load shed, a limit: the same answer as past the server's own caps.
                Some(wait) => busy(&id, &message, wait),
                None => error_message(Some(&id), code::INVALID_REQUEST, &message, None),
            });
        };
        let run = Arc::clone(stages).run(facts, handling, refuse);
        let Some(stop) = stop else {
            return Work::stream(run);
        };
        // A cancellation while a layer holds the request drops it there, from any queue.
        Work::stream(async move {
            tokio::select! {
                biased;
                () = stop.cancelled() => {}
                () = run => {}
            }
        })
    }
}
