//! The relay of a 2025-11-25 task across replicas sharing a session: what the task sends
//! (questions, progress, log lines, its status) when the replica running it has no stream
//! of the session open goes into a list in the store, in order; the replica holding a
//! `tasks/result` request waiting for the task takes the messages off the list onto its
//! stream, else the replica holding the session's GET stream does. Taking a message off the
//! list is atomic, so each message goes on exactly one stream; one nobody takes waits in
//! the list (as a question waits for the next `tasks/result` in one process).

use super::connection::State;
use super::outbox::Outbox;
use super::work::RequestSink;
use super::ServerMessage;
use crate::store::Later;
use crate::sync::lock;
use std::sync::{Arc, Weak};
use tokio::sync::Notify;

/// How long the GET stream's replica leaves messages to a `tasks/result` that may be
/// waiting elsewhere before it takes them.
const GET_STREAM_DEFERS: std::time::Duration = std::time::Duration::from_millis(100);

/// A `tasks/result` request of this replica waiting for a task another replica runs.
pub(crate) struct RemoteWait {
    stream: Weak<RequestSink>,
    /// Told when the task's messages arrive in the store.
    arrived: Arc<Notify>,
}

/// Sends `message` of the task `task` through the store, when the connection serves a
/// session replicas share; gives it back otherwise.
pub(crate) fn forward(
    state: &State,
    task: &str,
    message: ServerMessage,
) -> Result<(), ServerMessage> {
    let Some(session) = state.shared_session.get() else {
        return Err(message);
    };
    let question = message.kind == super::connection::ServerMessageKind::Request;
    session.store.backend.later(Later::TaskMessage {
        session: session.id.clone(),
        task: task.to_owned(),
        message: message.bytes,
        question,
    });
    Ok(())
}

/// The work of a `tasks/result` request on `stream` waiting for the task `task`, which
/// another replica runs: it takes the task's messages off the store onto the stream, as
/// they arrive, until dropped (the request answered).
pub(crate) async fn take_onto(state: Arc<State>, task: String, stream: Arc<RequestSink>) {
    let Some(store) = state.shared_session.get().map(|s| s.store.clone()) else {
        return;
    };
    let arrived = Arc::new(Notify::new());
    let wait = RemoteWait {
        stream: Arc::downgrade(&stream),
        arrived: Arc::clone(&arrived),
    };
    lock(&state.remote_waits).insert(task.clone(), wait);
    let _registered = Unregister {
        state: Arc::clone(&state),
        task: task.clone(),
    };
    loop {
        // Registered before the list is read, so a message pushed between is not missed.
        let next = arrived.notified();
        tokio::pin!(next);
        next.as_mut().enable();
        let sink = lock(&stream.sink).clone();
        if !take(&store, &task, &sink).await {
            return;
        }
        next.await;
    }
}

/// Removes a waiting `tasks/result` once its work ends.
struct Unregister {
    state: Arc<State>,
    task: String,
}

impl Drop for Unregister {
    fn drop(&mut self) {
        lock(&self.state.remote_waits).remove(&self.task);
    }
}

/// Moves the task's messages from the store onto `sink`, oldest first; false once `sink`
/// is closed (a message taken then is lost with the stream, as one handed to a stream the
/// client closed is).
async fn take(store: &crate::store::Store, task: &str, sink: &Outbox) -> bool {
    loop {
        match store.backend.task_message_take(task).await {
            Ok(Some((bytes, question))) => {
                let message = match question {
                    true => ServerMessage::request(bytes),
                    false => ServerMessage::notification(bytes),
                };
                if sink.offer(message).is_err() {
                    return false;
                }
            }
            Ok(None) => return true,
            Err(error) => {
                tracing::warn!(task, %error, "could not take a task's messages from the store");
                return true;
            }
        }
    }
}

/// Another replica put messages of the task `task` in the store: a `tasks/result` waiting
/// here takes them; else, when this replica holds the session's GET stream, the work that
/// takes them onto it after a moment (unless a `tasks/result` came meanwhile).
pub(crate) fn arrived(
    state: &Arc<State>,
    timers: &Arc<super::time::Timers>,
    task: &str,
) -> Option<super::work::Work> {
    if let Some(wait) = lock(&state.remote_waits).get(task) {
        if wait.stream.strong_count() > 0 {
            wait.arrived.notify_one();
            return None;
        }
    }
    let sink = lock(&state.unsolicited).clone()?;
    let store = state.shared_session.get()?.store.clone();
    let (state, task) = (Arc::downgrade(state), task.to_owned());
    let deferred = timers.sleep(GET_STREAM_DEFERS);
    let work = async move {
        deferred.await;
        let Some(state) = state.upgrade() else {
            return;
        };
        let waiting = lock(&state.remote_waits)
            .get(&task)
            .is_some_and(|wait| wait.stream.strong_count() > 0);
        if !waiting {
            take(&store, &task, &sink).await;
        }
    };
    Some(super::work::Work::stream(work))
}
