//! Where the messages of a 2025-11-25 task go once its call is answered: its questions,
//! progress and status have no call stream left to travel on (over HTTP the call's
//! response ended with the task). They go on the stream of a `tasks/result` request
//! waiting for the task, as the specification suggests, else where the connection's
//! unsolicited messages go (stdio's output, or the session's GET stream). A question that
//! finds neither open waits for the next `tasks/result` (which the client sends when it
//! sees the task `input_required`). A question already handed to a stream that the client
//! then closes before reading it is not sent again. In a session replicas share, what finds
//! no stream here goes through the store to a stream another replica holds
//! (`remote_relay`).

use super::connection::State;
use super::connection::{ServerMessage, ServerMessageKind};
use super::outbox::{outbox, Outbox, OutboxReader};
use super::work::RequestSink;
use crate::sync::lock;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};

/// The messages of one task on their way to its client.
#[derive(Default)]
pub(crate) struct TaskRelay {
    inner: Mutex<Relay>,
}

#[derive(Default)]
struct Relay {
    /// The stream of a `tasks/result` request waiting for the task, while there is one.
    /// Held weakly: the request's own work owns its stream, which ends with it.
    waiting: Option<Weak<RequestSink>>,
    /// Questions that found no open stream, oldest first.
    held: VecDeque<ServerMessage>,
}

impl TaskRelay {
    /// Sends `message` to the task's client: on a waiting `tasks/result` stream, else where
    /// unsolicited messages go. A question neither takes is held for the next `tasks/result`;
    /// a notification is dropped (nobody listens, and the task's status says as much).
    pub(crate) fn send(&self, state: &State, task: &str, message: ServerMessage) {
        let mut relay = lock(&self.inner);
        // Order holds: nothing overtakes a held question.
        let undelivered = match relay.held.is_empty() {
            true => relay.deliver(state, message),
            false => Some(message),
        };
        // In a session replicas share, a stream of another replica takes it.
        let undelivered = undelivered
            .and_then(|message| super::remote_relay::forward(state, task, message).err());
        if let Some(message) = undelivered {
            relay.hold(message);
        }
    }

    /// A `tasks/result` request is waiting for the task on `stream`: the task's messages go
    /// there from now on, the held questions first.
    pub(crate) fn wait_on(&self, stream: &Arc<RequestSink>) {
        let mut relay = lock(&self.inner);
        relay.waiting = Some(Arc::downgrade(stream));
        while let Some(message) = relay.held.pop_front() {
            if let Err(message) = lock(&stream.sink).offer(message) {
                relay.waiting = None;
                relay.held.push_front(message);
                return;
            }
        }
    }
}

impl Relay {
    /// Sends `message` where it can go now; gives it back when nowhere is open.
    fn deliver(&mut self, state: &State, mut message: ServerMessage) -> Option<ServerMessage> {
        if let Some(stream) = self.waiting.as_ref().and_then(Weak::upgrade) {
            match lock(&stream.sink).offer(message) {
                Ok(()) => return None,
                Err(refused) => message = refused,
            }
        }
        // No `tasks/result` request waits any more (it was answered or cancelled, or its
        // stream closed).
        self.waiting = None;
        state.offer_unsolicited(message).err()
    }

    fn hold(&mut self, message: ServerMessage) {
        if message.kind == ServerMessageKind::Request {
            self.held.push_back(message);
        }
    }
}

/// A running task's end of its relay: what the task sends arrives here (its call's sink is
/// swapped for this), and goes on through the relay, which the connection keeps under the
/// task's id (for `tasks/result`) while this lives.
pub(crate) struct Relayed {
    state: Arc<State>,
    task: String,
    relay: Arc<TaskRelay>,
    arriving: OutboxReader,
}

impl Relayed {
    /// Relays the task `task` of the connection `state`, whose messages went to `sink`.
    pub(crate) fn open(state: &Arc<State>, task: &str, sink: &Mutex<Outbox>) -> Relayed {
        let relay = Arc::new(TaskRelay::default());
        lock(&state.relays).insert(task.to_owned(), Arc::clone(&relay));
        let (inbound, arriving) = outbox();
        *lock(sink) = inbound;
        Relayed {
            state: Arc::clone(state),
            task: task.to_owned(),
            relay,
            arriving,
        }
    }

    /// The next message the task sends (never, once nothing can send any).
    pub(crate) async fn next(&mut self) -> ServerMessage {
        match self.arriving.recv().await {
            Some(message) => message,
            None => std::future::pending().await,
        }
    }

    /// Sends what the task sent.
    pub(crate) fn forward(&self, message: ServerMessage) {
        self.relay.send(&self.state, &self.task, message);
    }

    /// Sends on everything the task has sent so far.
    pub(crate) fn flush(&mut self) {
        while let Some(earlier) = self.arriving.try_recv() {
            self.forward(earlier);
        }
    }

    /// Sends `message` after everything the task sent before it.
    pub(crate) fn send_last(&mut self, message: ServerMessage) {
        self.flush();
        self.forward(message);
    }
}

impl Drop for Relayed {
    fn drop(&mut self) {
        lock(&self.state.relays).remove(&self.task);
    }
}

/// The next message of a relayed task; never, for a task that is not relayed.
pub(crate) async fn next_of(relayed: &mut Option<Relayed>) -> ServerMessage {
    match relayed {
        Some(relayed) => relayed.next().await,
        None => std::future::pending().await,
    }
}
