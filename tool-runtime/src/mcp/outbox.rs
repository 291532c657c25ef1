//! Where a connection's outgoing messages go: a sending end handed to
//! [`Connection::handle`](super::Connection::handle) and a receiving end the transport
//! writes from.
//!
//! The channel is unbounded on purpose, and still bounded in what it can hold: answers are
//! bounded by the calls a connection may have in flight, notifications by the connection's
//! backlog (see the `backlog` module). Bounding the channel itself would make a protocol
//! step wait on the transport, which the protocol layer never does.

use super::ServerMessage;
use tokio::sync::mpsc;

/// A new outbox: the [`Outbox`] end a connection sends to, and the [`OutboxReader`] a
/// transport writes out.
///
/// ```
/// use tool_runtime::mcp::connection::outbox;
///
/// let (sink, mut messages) = outbox();
/// drop(sink);
/// assert!(messages.try_recv().is_none());
/// ```
pub fn outbox() -> (Outbox, OutboxReader) {
    let (sender, receiver) = mpsc::unbounded_channel();
    (Outbox { sender }, OutboxReader { receiver })
}

/// Where a connection sends the messages a request causes (its answer, its notifications).
/// Cheap to clone; the [`OutboxReader`] end ends once every clone is dropped.
#[derive(Debug, Clone)]
pub struct Outbox {
    sender: mpsc::UnboundedSender<ServerMessage>,
}

impl Outbox {
    /// Sends `message`; false when the receiving end is gone.
    pub(crate) fn send(&self, message: ServerMessage) -> bool {
        self.sender.send(message).is_ok()
    }

    /// Sends `message`, or hands it back when the receiving end is gone (for a sender
    /// with somewhere else to try).
    pub(crate) fn offer(&self, message: ServerMessage) -> Result<(), ServerMessage> {
        self.sender.send(message).map_err(|refused| refused.0)
    }
}

/// The receiving end of an outbox: the messages to write out, in the order they were sent.
#[derive(Debug)]
pub struct OutboxReader {
    receiver: mpsc::UnboundedReceiver<ServerMessage>,
}

impl OutboxReader {
    /// The next message; `None` once every [`Outbox`] is dropped and nothing is left.
    pub async fn recv(&mut self) -> Option<ServerMessage> {
        self.receiver.recv().await
    }

    /// The next message if one is ready, without waiting.
    pub fn try_recv(&mut self) -> Option<ServerMessage> {
        self.receiver.try_recv().ok()
    }

    /// The next message, blocking this thread (for a transport's own writer thread; never
    /// call it on an async runtime's thread).
    pub(crate) fn blocking_recv(&mut self) -> Option<ServerMessage> {
        self.receiver.blocking_recv()
    }
}
