//! The way out of a stdio connection: its messages written to the output by the
//! connection's own future, everything waiting in one write, rather than by a task of their
//! own (an answer ready is written in the same turn that made it: no wake-up of another
//! task, no hop through the runtime's queue).

use super::framing::{append, fill_batch};
use crate::mcp::connection::OutboxReader;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::AsyncWrite;

/// Writes a connection's outgoing messages to `output`, as lines, in batches.
pub(super) struct Writer<W> {
    /// Where the messages come from; gone once every sender is gone and everything was
    /// written, or once the output failed (what is sent after that is refused at once rather
    /// than kept).
    outgoing: Option<OutboxReader>,
    output: W,
    /// The lines being written, and how much of them the output has taken.
    batch: Vec<u8>,
    taken: usize,
    /// Whether what was written since the last flush still needs one.
    unflushed: bool,
    /// Why the output stopped taking messages, kept for the end of the connection.
    failed: Option<std::io::Error>,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    pub(super) fn new(outgoing: OutboxReader, output: W) -> Writer<W> {
        Writer {
            outgoing: Some(outgoing),
            output,
            batch: Vec::with_capacity(64 * 1024),
            taken: 0,
            unflushed: false,
            failed: None,
        }
    }

    /// Writes what is waiting. Ready once the output has taken everything sent so far (or
    /// has failed: see [`Writer::finish`]), the task of `cx` then woken by the next message
    /// sent; pending while the output holds a batch back (its reader is slower than the
    /// server), the task woken when it can take more.
    pub(super) fn poll_caught_up(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if let Err(error) = ready!(self.poll_write_all(cx)) {
            tracing::debug!(%error, "the output failed; what is sent to it now is dropped");
            self.failed = Some(error);
            self.outgoing = None;
            self.batch = Vec::new();
            self.taken = 0;
        }
        Poll::Ready(())
    }

    /// Stops the connection's own task being woken by what is sent to the outbox until the
    /// next [`Writer::poll_caught_up`]: called when that task starts a turn, in which the
    /// work it runs may answer, and which writes what was sent before it waits.
    pub(super) fn in_turn(&mut self) {
        if let Some(outgoing) = self.outgoing.as_mut() {
            outgoing.forget_waker();
        }
    }

    /// Whether the output holds back part of what was written last.
    pub(super) fn is_behind(&self) -> bool {
        self.taken < self.batch.len()
    }

    /// Whether every sender is gone and everything they sent was written (or the output
    /// failed).
    pub(super) fn is_finished(&self) -> bool {
        self.outgoing.is_none()
    }

    /// How the output fared: the error that stopped it, if one did.
    pub(super) fn finish(self) -> std::io::Result<()> {
        self.failed.map_or(Ok(()), Err)
    }

    fn poll_write_all(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let Some(outgoing) = self.outgoing.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        loop {
            while self.taken < self.batch.len() {
                let taken =
                    ready!(Pin::new(&mut self.output).poll_write(cx, &self.batch[self.taken..]))?;
                if taken == 0 {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                }
                self.taken += taken;
                self.unflushed = true;
            }
            self.batch.clear();
            self.taken = 0;
            match outgoing.poll_recv(cx) {
                Poll::Ready(Some(message)) => {
                    append(&mut self.batch, &message.bytes);
                    fill_batch(&mut self.batch, outgoing);
                }
                ended_or_waiting => {
                    // A flush for outputs that buffer (tokio's `stdout`); a pipe's is free.
                    if self.unflushed {
                        ready!(Pin::new(&mut self.output).poll_flush(cx))?;
                        self.unflushed = false;
                    }
                    if ended_or_waiting.is_ready() {
                        self.outgoing = None;
                    }
                    return Poll::Ready(Ok(()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::connection::{outbox, ServerMessage};
    use std::future::poll_fn;
    use tokio::io::AsyncReadExt;

    fn message(text: &str) -> ServerMessage {
        ServerMessage::notification(text.as_bytes().to_vec())
    }

    #[tokio::test]
    async fn messages_are_written_as_lines_in_order_and_the_end_comes_with_the_last_sender() {
        let (sink, outgoing) = outbox();
        let (output, mut read) = tokio::io::duplex(1 << 16);
        let mut writer = Writer::new(outgoing, output);
        for n in 0..3 {
            sink.send(message(&format!("m{n}")));
        }
        poll_fn(|cx| writer.poll_caught_up(cx)).await;
        assert!(!writer.is_finished(), "a sender is still there");
        sink.send(message("last"));
        drop(sink);
        poll_fn(|cx| writer.poll_caught_up(cx)).await;
        assert!(writer.is_finished());
        writer.finish().unwrap();
        let mut written = String::new();
        read.read_to_string(&mut written).await.unwrap();
        assert_eq!(written, "m0\nm1\nm2\nlast\n");
    }

    #[tokio::test]
    async fn an_output_that_takes_nothing_more_holds_the_writer_back_until_it_does() {
        let (sink, outgoing) = outbox();
        let (output, mut read) = tokio::io::duplex(16);
        let mut writer = Writer::new(outgoing, output);
        let line = "x".repeat(40);
        sink.send(message(&line));
        let held = poll_fn(|cx| Poll::Ready(writer.poll_caught_up(cx))).await;
        assert!(held.is_pending(), "41 bytes do not fit a pipe of 16");
        let mut first = [0; 16];
        read.read_exact(&mut first).await.unwrap();
        // The reader took some: the writer goes on from where it stopped.
        let reading = tokio::spawn(async move {
            let mut rest = Vec::new();
            read.read_to_end(&mut rest).await.unwrap();
            rest
        });
        poll_fn(|cx| writer.poll_caught_up(cx)).await;
        drop(sink);
        poll_fn(|cx| writer.poll_caught_up(cx)).await;
        assert!(writer.is_finished());
        drop(writer);
        let mut written = first.to_vec();
        written.extend(reading.await.unwrap());
        assert_eq!(written, format!("{line}\n").into_bytes());
    }

    #[tokio::test]
    async fn a_failed_output_is_told_at_the_end_and_what_comes_after_is_refused() {
        let (sink, outgoing) = outbox();
        let (output, read) = tokio::io::duplex(16);
        drop(read);
        let mut writer = Writer::new(outgoing, output);
        sink.send(message("to nobody"));
        poll_fn(|cx| writer.poll_caught_up(cx)).await;
        assert!(writer.is_finished());
        assert!(!sink.send(message("after")), "the outbox is closed");
        let error = writer.finish().unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe);
    }
}
