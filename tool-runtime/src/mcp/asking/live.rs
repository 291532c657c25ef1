//! Asking in the handshake era: the question goes to the client as a JSON-RPC request on
//! the call's own stream (stdio's output, or the call's HTTP response stream), and the
//! call waits for the client's response, which the connection routes back by id.

use super::super::jsonrpc::{self, RequestId};
use super::super::outbox::Outgoing;
use super::super::session::{lock, State};
use super::super::Message;
use crate::call::ask::{AskError, Asker, ClientCapability, Question};
use crate::tasks::{TaskStatus, TaskStore};
use serde_json::{json, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// A client's response to one of our requests: its result, or its error's code and
/// message.
/// Where a 2025-11-25 message names the task it belongs to.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

pub(crate) type ClientAnswer = Result<Value, (i64, String)>;

/// The asker of one call on a handshake-era connection.
pub(crate) struct LiveAsker {
    pub(in crate::mcp) state: Arc<State>,
    /// The call's sink (shared, so a transport's redirect reaches it).
    pub(in crate::mcp) sink: Arc<Mutex<Outgoing>>,
    pub(in crate::mcp) capabilities: Value,
    /// The task the call became (2025-11-25), once it has: its questions then say so, and
    /// the task waits `input_required` while they are open.
    pub(in crate::mcp) task: Mutex<Option<(Arc<dyn TaskStore>, String)>>,
}

impl LiveAsker {
    /// From now on the call is the task `id` in `store`.
    pub(in crate::mcp) fn attach(&self, store: Arc<dyn TaskStore>, id: String) {
        *lock(&self.task) = Some((store, id));
    }
}

/// Marks a question as the task's, and the task as waiting for it, until dropped.
struct TaskQuestion {
    store: Arc<dyn TaskStore>,
    task: String,
    key: String,
}

impl TaskQuestion {
    fn open(store: Arc<dyn TaskStore>, task: String, key: String, request: Value) -> TaskQuestion {
        store.update(&task, &mut |t| {
            if !t.status.is_terminal() {
                t.input_requests.insert(key.clone(), request.clone());
                t.status = TaskStatus::InputRequired;
                t.touch();
            }
        });
        TaskQuestion { store, task, key }
    }
}

impl Drop for TaskQuestion {
    fn drop(&mut self) {
        self.store.update(&self.task, &mut |t| {
            t.input_requests.remove(&self.key);
            if t.status == TaskStatus::InputRequired && t.input_requests.is_empty() {
                t.status = TaskStatus::Working;
            }
            t.touch();
        });
    }
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

impl Asker for LiveAsker {
    fn supports(&self, capability: ClientCapability) -> bool {
        capability.declared_in(&self.capabilities)
    }

    fn ask(
        &self,
        question: Question,
    ) -> Pin<Box<dyn Future<Output = Result<Value, AskError>> + Send>> {
        let number = self.state.next_question.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::from_value(&Value::from(number));
        let (answer, answered) = oneshot::channel();
        lock(&self.state.questions).insert(id.clone(), answer);
        let waiting = Waiting {
            state: Arc::clone(&self.state),
            id,
        };
        let mut params = question.params;
        let in_task = lock(&self.task).clone().map(|(store, task)| {
            // Every message of a task says which task it belongs to.
            if let Some(params) = params.as_object_mut() {
                let meta = params.entry("_meta").or_insert_with(|| json!({}));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(RELATED_TASK.to_owned(), json!({"taskId": task}));
                }
            }
            let request = json!({"method": question.capability.method(), "params": params});
            TaskQuestion::open(store, task, question.key.clone(), request)
        });
        let bytes = jsonrpc::request(number, question.capability.method(), &params);
        let sent = lock(&self.sink).send(Message::request(bytes));
        Box::pin(async move {
            let _waiting = waiting;
            let _in_task = in_task;
            if !sent {
                return Err(AskError::Closed);
            }
            match answered.await {
                Ok(Ok(result)) => Ok(result),
                Ok(Err((code, message))) => Err(AskError::Refused { code, message }),
                Err(_) => Err(AskError::Closed),
            }
        })
    }
}
