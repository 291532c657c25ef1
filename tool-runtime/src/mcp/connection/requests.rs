//! What every request that runs user code goes through (`tools/call`, `prompts/get`,
//! `resources/read`, `completion/complete`, the REST calls): its registration in flight, its
//! scope (progress token, log level, cancellation, the one sink its messages go to), and how
//! it asks its client (live in the handshake era, by rounds at 2026-07-28).

use super::origin::Origin;
use super::Connection;
use crate::call::scope::{CallScope, Cancellation, Notifier};
use crate::mcp::asking::retry::RetryAsker;
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::RequestId;
use crate::mcp::methods::invalid;
use crate::mcp::outbox::Outbox;
use crate::mcp::surfaces;
use crate::mcp::work::RequestSink;
use crate::mcp::ServerMessage;
use serde_json::{Map, Value};
use std::sync::Arc;

/// What the connection keeps for a request that runs user code (see
/// [`Connection::request_scope`]).
pub(in crate::mcp) struct RequestScope {
    pub(in crate::mcp) context: crate::call::context::CallContext,
    pub(in crate::mcp) cancellation: Cancellation,
    pub(in crate::mcp) notifier: Arc<RequestSink>,
    /// At 2026-07-28, the round of asking whose verdict shapes the answer.
    pub(in crate::mcp) retry: Option<Arc<RetryAsker>>,
    pub(in crate::mcp) era: Era,
}

/// How a request asks its client (see [`Connection::asking`]).
pub(in crate::mcp) enum Asking {
    Nobody,
    Live,
    Retry(Arc<RetryAsker>),
}

/// What a request that may ask its client names, for the state of its next round.
pub(in crate::mcp) struct RoundBinding<'a> {
    pub(in crate::mcp) method: &'a str,
    pub(in crate::mcp) target: &'a str,
    pub(in crate::mcp) arguments: &'a Value,
    pub(in crate::mcp) responses: Option<Map<String, Value>>,
    pub(in crate::mcp) sealed: Option<String>,
}

impl Connection {
    /// What a request that runs user code gets: its context (progress token, log level,
    /// cancellation) and the one sink its notifications and answer go to.
    pub(in crate::mcp) fn request_scope(
        &self,
        (id, progress_token): (&RequestId, Option<Value>),
        origin: Origin<'_>,
        asking: Asking,
        sink: &Outbox,
    ) -> RequestScope {
        let notifier = RequestSink::new(&self.state, sink);
        let (asker, retry) = match asking {
            Asking::Nobody => (None, None),
            Asking::Live => {
                let asker = Arc::clone(&notifier) as Arc<dyn crate::call::ask::Asker>;
                (Some(asker), None)
            }
            Asking::Retry(asker) => (
                Some(Arc::clone(&asker) as Arc<dyn crate::call::ask::Asker>),
                Some(asker),
            ),
        };
        let protocol = origin.protocol();
        let scope = CallScope::of_request(
            progress_token,
            Some(Arc::clone(&notifier) as Arc<dyn Notifier>),
            origin.log_level,
            origin.caller.clone(),
            asker,
        );
        let scope = Arc::new(scope.of_request_id(Arc::clone(&id.0), protocol));
        RequestScope {
            cancellation: scope.cancellation.clone(),
            context: self.shared.registry.call_context(scope),
            notifier,
            retry,
            era: origin.era,
        }
    }

    /// How a request that runs user code asks its client: live in the handshake era; at
    /// 2026-07-28 by rounds, reading the answers and the sealed state a retry brings,
    /// refused (-32602, with why) when the state was altered or issued to another token's
    /// subject.
    pub(in crate::mcp) fn asking(
        &self,
        asked: RoundBinding<'_>,
        origin: &Origin<'_>,
    ) -> Result<Asking, String> {
        let Some(capabilities) = &origin.capabilities else {
            return Ok(Asking::Live);
        };
        let request = (asked.method, asked.target, origin.caller.subject());
        RetryAsker::of_request(
            (&self.shared.sealing_key, &self.shared.clock),
            request,
            (asked.responses, asked.sealed),
            asked.arguments,
            Value::Object(capabilities.clone()),
        )
        .map(|asker| Asking::Retry(Arc::new(asker)))
    }

    /// A `prompts/get` or `resources/read` request, checked and registered, ready to run.
    pub(in crate::mcp) fn surface_request(
        &self,
        id: &RequestId,
        asked: RoundBinding<'_>,
        progress_token: Option<Value>,
        origin: Origin<'_>,
        sink: &Outbox,
    ) -> Result<surfaces::Request, ServerMessage> {
        let asking = self
            .asking(asked, &origin)
            .map_err(|why| invalid(id, &why))?;
        let scope = self.request_scope((id, progress_token), origin, asking, sink);
        Ok(self.surface_work(id.clone(), scope))
    }

    /// Registers a request for a prompt, a resource or a completion, to run as work.
    pub(in crate::mcp) fn surface_work(
        &self,
        id: RequestId,
        scope: RequestScope,
    ) -> surfaces::Request {
        let era = scope.era;
        let guard = self.register(id, scope.cancellation.clone());
        surfaces::Request {
            shared: Arc::clone(&self.shared),
            guard,
            context: scope.context,
            cancellation: scope.cancellation,
            notifier: scope.notifier,
            era,
            retry: scope.retry,
        }
    }
}
