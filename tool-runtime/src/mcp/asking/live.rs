//! Asking in the handshake era: the question goes to the client as a JSON-RPC request on
//! the call's own stream (stdio's output, or the call's HTTP response stream), and the
//! call waits for the client's response, which the connection routes back by id.

use crate::call::ask::{Announcer, AskError, Asker, ClientCapability, Question};
use crate::mcp::connection::State;
use crate::mcp::jsonrpc::{self, RequestId};
use crate::mcp::tasks::TaskQuestion;
use crate::mcp::work::RequestSink;
use crate::mcp::ServerMessage;
use crate::sync::lock;
use serde_json::{json, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use tokio::sync::oneshot;

/// A client's response to one of our requests: its result, or its error's code and
/// message.
pub(crate) type ClientAnswer = Result<Value, (i64, String)>;

/// The id of question `number` asked by `replica`, in a session replicas share.
pub(crate) fn question_id(replica: &str, number: u64) -> String {
    format!("{replica}.{number}")
}

/// The replica that asked the question `id`, when the id names one.
#[cfg(feature = "http")]
pub(crate) fn asking_replica(id: &Value) -> Option<&str> {
    id.as_str()?.split_once('.').map(|(replica, _)| replica)
}

/// Forgets a question whose call stopped waiting.
struct Waiting {
    state: Arc<State>,
    id: RequestId,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        lock(&self.state.questions).remove(&self.id);
    }
}

/// The asker of one call on a handshake-era connection is the call's own sink.
impl Asker for RequestSink {
    fn supports(&self, capability: ClientCapability) -> bool {
        // A connection that is gone takes no questions.
        self.state
            .upgrade()
            .is_some_and(|state| capability.declared_in(&lock(&state.client_capabilities)))
    }

    fn announcer(self: Arc<Self>) -> Option<Arc<dyn Announcer>> {
        Some(Arc::new(ConnectionAnnouncer {
            state: Weak::clone(&self.state),
            call: Arc::downgrade(&self),
        }))
    }

    fn ask(
        self: Arc<Self>,
        question: Question,
    ) -> Pin<Box<dyn Future<Output = Result<Value, AskError>> + Send>> {
        let Some(state) = self.state.upgrade() else {
            return Box::pin(std::future::ready(Err(AskError::Closed)));
        };
        let number = state.next_question.fetch_add(1, Ordering::Relaxed);
        // In a session replicas share, the id names this replica: the client's answer may
        // reach another one, which hands it over.
        let id_value = match state.shared_session.get() {
            Some(session) => Value::String(question_id(session.store.replica(), number)),
            None => Value::from(number),
        };
        let id = RequestId::from_value(&id_value);
        let (answer, answered) = oneshot::channel();
        lock(&state.questions).insert(id.clone(), answer);
        let waiting = Waiting { state, id };
        // A URL elicitation carries its `elicitationId`, which the server may name later in
        // `notifications/elicitation/complete`.
        let mut params = question.params;
        let method = question.capability.method();
        let task = lock(&self.task).clone();
        let key = question.key;
        Box::pin(async move {
            let _waiting = waiting;
            // A task's question is marked as the task's, and the task waits
            // `input_required` while it is open (when the store could record it).
            let mut in_task = None;
            if let Some(task) = task {
                crate::mcp::tasks::mark_related(&mut params, task.id());
                let request = json!({"method": method, "params": params});
                match TaskQuestion::open(task, key, &request).await {
                    Ok(question) => in_task = Some(question),
                    Err(error) => tracing::error!(%error, "could not record a task's question"),
                }
            }
            let bytes = jsonrpc::request(&id_value, method, &params);
            let sent = lock(&self.sink).send(ServerMessage::request(bytes));
            let answer = match sent {
                false => Err(AskError::Closed),
                true => match answered.await {
                    Ok(Ok(result)) => Ok(result),
                    Ok(Err((code, message))) => Err(AskError::Refused { code, message }),
                    Err(_) => Err(AskError::Closed),
                },
            };
            if let Some(question) = in_task {
                question.close().await;
            }
            answer
        })
    }
}

/// Reaches the client of a call for as long as its connection lasts (it keeps neither
/// alive): through where the connection's unsolicited messages go (stdio's output, or the
/// session's GET stream), else through the call's own stream while it is open.
struct ConnectionAnnouncer {
    state: Weak<State>,
    call: Weak<RequestSink>,
}

impl Announcer for ConnectionAnnouncer {
    fn announce(&self, method: &str, params: Value) -> bool {
        let Some(state) = self.state.upgrade() else {
            return false;
        };
        if state.closed.is_cancelled() {
            return false;
        }
        // A single notification, not a stream of them: it skips the connection's backlog.
        let message = ServerMessage::notification(jsonrpc::notification(method, &params));
        match state.offer_unsolicited(message) {
            Ok(()) => true,
            Err(message) => self
                .call
                .upgrade()
                .is_some_and(|call| lock(&call.sink).send(message)),
        }
    }
}
