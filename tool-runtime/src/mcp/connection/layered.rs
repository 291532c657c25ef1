//! A request through the layers the server was given (`ServerOptions::request_layer`):
//! what the request is, told to them, and the connection's own handling of it once they
//! let it through, as work.

use super::in_flight::Arrival;
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
        let refused = (id.clone(), sink.clone());
        let handling: Handling = Box::new(move || {
            if arrival.as_ref().is_some_and(Arrival::cancelled) {
                return Box::pin(std::future::ready(()));
            }
            let work = connection.request(id, &method, asked, &decision, &caller, &sink);
            // Claimed by what runs it, or let go now that it is answered.
            drop(arrival);
            Box::pin(async move {
                if let Some(work) = work {
                    work.run().await;
                }
            })
        });
        let refuse = move |message: String| {
            let (id, sink) = refused;
            let refusal = error_message(Some(&id), code::INVALID_REQUEST, &message, None);
            sink.send(refusal);
        };
        Work::stream(Arc::clone(stages).run(facts, handling, refuse))
    }
}
