//! Where a connection's outgoing messages go: a sending end handed to
//! [`Connection::handle`](super::Connection::handle) and a receiving end the transport
//! writes from.
//!
//! The channel is unbounded on purpose, and still bounded in what it can hold: answers are
//! bounded by the calls a connection may have in flight, notifications by the connection's
//! backlog (see the `backlog` module). Bounding the channel itself would make a protocol
//! step wait on the transport, which the protocol layer never does.
//!
//! It is a queue under a lock rather than tokio's `mpsc`: an HTTP request makes an outbox
//! for the one or few messages it causes, and `mpsc` allocates a block of 32 slots (about
//! 2 KB) for each channel, where this allocates what the messages need.

use super::ServerMessage;
use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

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
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            waker: None,
            reader_gone: false,
        }),
        senders: AtomicUsize::new(1),
    });
    (
        Outbox {
            shared: Arc::clone(&shared),
        },
        OutboxReader { shared },
    )
}

struct Shared {
    state: Mutex<State>,
    /// How many [`Outbox`] clones live; none left ends the reader's stream. Counted outside
    /// the lock, as `Arc` counts, because every request clones the connection's outbox: the
    /// last one to go takes the lock to tell the reader.
    senders: AtomicUsize,
}

struct State {
    queue: VecDeque<ServerMessage>,
    /// The reader's task, while it waits.
    waker: Option<Waker>,
    reader_gone: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.state)
    }

    /// Whether every sender is gone. Read under the lock: the last sender decrements, then
    /// takes the lock to wake the reader, so a reader that saw one left and waits is woken.
    fn senders_gone(&self) -> bool {
        self.senders.load(Ordering::Acquire) == 0
    }

    /// Tells the reader that the queue or the senders changed.
    fn notify(&self, mut state: MutexGuard<'_, State>) {
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// Where a connection sends the messages a request causes (its answer, its notifications).
/// Cheap to clone; the [`OutboxReader`] end ends once every clone is dropped.
pub struct Outbox {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox").finish_non_exhaustive()
    }
}

impl Clone for Outbox {
    fn clone(&self) -> Self {
        // A clone is made from a live sender, so the count cannot reach zero meanwhile.
        self.shared.senders.fetch_add(1, Ordering::Relaxed);
        Outbox {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.notify(self.shared.lock());
        }
    }
}

impl Outbox {
    /// Sends `message`; false when the receiving end is gone.
    pub(crate) fn send(&self, message: ServerMessage) -> bool {
        self.offer(message).is_ok()
    }

    /// Sends `message`, or hands it back when the receiving end is gone (for a sender
    /// with somewhere else to try).
    pub(crate) fn offer(&self, message: ServerMessage) -> Result<(), ServerMessage> {
        let mut state = self.shared.lock();
        if state.reader_gone {
            return Err(message);
        }
        state.queue.push_back(message);
        self.shared.notify(state);
        Ok(())
    }
}

/// The receiving end of an outbox: the messages to write out, in the order they were sent.
pub struct OutboxReader {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for OutboxReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutboxReader").finish_non_exhaustive()
    }
}

impl Drop for OutboxReader {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.reader_gone = true;
        // Dropped here, they give back their places in the connection's backlog.
        let left = std::mem::take(&mut state.queue);
        drop(state);
        drop(left);
    }
}

impl OutboxReader {
    /// The next message; `None` once every [`Outbox`] is dropped and nothing is left.
    pub async fn recv(&mut self) -> Option<ServerMessage> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// The next message if one is ready, `None` once every [`Outbox`] is dropped and
    /// nothing is left; otherwise the task of `cx` is woken when a message comes. For a
    /// transport that writes from inside a future of its own rather than awaiting
    /// [`recv`](OutboxReader::recv).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<ServerMessage>> {
        let mut state = self.shared.lock();
        if let Some(message) = state.queue.pop_front() {
            return Poll::Ready(Some(message));
        }
        if self.shared.senders_gone() {
            return Poll::Ready(None);
        }
        if !state
            .waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            state.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Forgets the task [`poll_recv`](OutboxReader::poll_recv) last left to be woken, until
    /// it is polled again. For a reader that runs the senders itself: what they send while
    /// it runs it reads before it waits, and a wake-up of its own task would only poll it
    /// once more for nothing.
    pub fn forget_waker(&mut self) {
        self.shared.lock().waker = None;
    }

    /// The next message if one is ready, without waiting.
    pub fn try_recv(&mut self) -> Option<ServerMessage> {
        self.shared.lock().queue.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str) -> ServerMessage {
        ServerMessage::notification(text.as_bytes().to_vec())
    }

    #[test]
    fn messages_come_in_order_and_the_stream_ends_with_the_last_sender() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (sink, mut reader) = outbox();
            let second = sink.clone();
            let sent = std::thread::spawn(move || {
                for n in 0..100 {
                    assert!(second.send(message(&n.to_string())));
                }
            });
            drop(sink);
            for n in 0..100 {
                assert_eq!(reader.recv().await.unwrap().bytes, n.to_string().as_bytes());
            }
            sent.join().unwrap();
            assert!(reader.recv().await.is_none());
        });
    }

    #[test]
    fn a_gone_reader_refuses() {
        let (sink, reader) = outbox();
        drop(reader);
        assert!(sink.offer(message("nobody")).is_err());
    }
}
