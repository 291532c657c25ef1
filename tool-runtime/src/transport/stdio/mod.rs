//! MCP over newline-delimited JSON: each line in is one message, each message out is one
//! line; logs go to stderr (through `tracing`), never to the output. Requests run
//! concurrently, so a slow tool never holds up others; responses go out as they are ready.
//! At the end of input the server answers what it is working on (within a grace period;
//! what still runs after it is cancelled) and exits cleanly.
//!
//! [`serve`] takes any `AsyncRead`/`AsyncWrite` pair (an in-memory pipe in tests, a socket);
//! [`serve_stdio`] is `serve` on the process's own stdin and stdout.

mod framing;
mod writer;

use crate::mcp::connection::{outbox, Connection, Work};
use crate::mcp::McpServer;
use framing::{too_large, Framer, Line};
use futures_util::future::{BoxFuture, CatchUnwind};
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use std::future::{poll_fn, Future, IntoFuture};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, BufReader};
use writer::Writer;

/// Serves one client on `input`/`output` until the input ends. The server's maintenance
/// (taking over the tasks of lost replicas, with a shared store) starts with its first
/// connection.
///
/// The work each request leaves runs inside this future, beside the reading, and the
/// answers are written from it, rather than each in a task of its own: a call costs no task
/// of the runtime (a spawn, a scheduler's queue, a wake-up to write its answer), so await it
/// on the runtime that should run the connection, or spawn it.
pub async fn serve<R, W>(server: &McpServer, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    super::start_maintenance(server);
    let connection = server
        .connection()
        .called_by(crate::call::caller::Caller::stdio());
    let (sink, outgoing) = outbox();
    connection.set_unsolicited(sink.clone());
    let mut writer = Writer::new(outgoing, output);

    let mut lines = LineReader::new(input, server.max_message_bytes());
    let mut running = Running::default();
    let mut read_since_written = 0;
    let read = poll_fn(|cx| {
        writer.in_turn();
        loop {
            running.poll_all(cx);
            // While the client has not taken the answers written last, nothing more is read:
            // what the connection owes stays bounded, and a client that sends faster than it
            // reads is slowed to its own pace.
            if writer.is_behind() {
                ready!(writer.poll_caught_up(cx));
            }
            let line = match lines.poll_line(cx) {
                Poll::Ready(line) => line,
                Poll::Pending => {
                    // Nothing more to read for now: out with what the reading and the work
                    // (run just before) left, every answer in one write.
                    read_since_written = 0;
                    let _ = writer.poll_caught_up(cx);
                    return Poll::Pending;
                }
            };
            // An input that never waits (a burst far larger than the pipe's buffer, or a
            // reader that is always ready) is answered as it is read, in batches of this
            // many messages, so the answers owed stay bounded by the client's pace here too.
            read_since_written += 1;
            if read_since_written == MESSAGES_PER_WRITE {
                read_since_written = 0;
                let _ = writer.poll_caught_up(cx);
            }
            match line {
                Err(error) => return Poll::Ready(Err(error)),
                Ok(Line::End) => return Poll::Ready(Ok(())),
                Ok(Line::TooLarge(size)) => {
                    sink.send(too_large(size, lines.limit));
                }
                Ok(Line::Message) if lines.line.iter().all(u8::is_ascii_whitespace) => {}
                Ok(Line::Message) => {
                    if let Some(work) = connection.handle(&lines.line, &sink).into_work() {
                        running.push(work);
                    }
                }
            }
        }
    })
    .await;

    wind_down(server, &connection, &mut running, &mut writer).await;
    drop(running);
    drop(connection);
    drop(sink);
    // What was sent last is written before the connection ends: its answers, and anything
    // another holder of the outbox still sends before letting it go.
    poll_fn(|cx| {
        ready!(writer.poll_caught_up(cx));
        if writer.is_finished() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    read.and(writer.finish())
}

/// The most messages read before what they were answered is written, while the input has
/// more at once.
const MESSAGES_PER_WRITE: usize = 64;

/// The work of a connection's requests, run where the connection is served.
#[derive(Default)]
struct Running(FuturesUnordered<CatchUnwind<AssertUnwindSafe<BoxFuture<'static, ()>>>>);

impl Running {
    fn push(&mut self, work: Work) {
        self.0
            .push(AssertUnwindSafe(work.into_future()).catch_unwind());
    }

    /// Runs whatever work is ready, until none is.
    fn poll_all(&mut self, cx: &mut Context<'_>) {
        while let Poll::Ready(Some(ran)) = self.0.poll_next_unpin(cx) {
            if let Err(panic) = ran {
                let panic = crate::call::invoke::panic_message(panic.as_ref());
                tracing::error!(%panic, "the work of a request panicked");
            }
        }
    }
}

/// End of input: the work in flight gets a grace period to answer, then what is left is
/// cancelled (a tool that never returns must not keep the process alive).
async fn wind_down<W: AsyncWrite + Unpin>(
    server: &McpServer,
    connection: &Connection,
    running: &mut Running,
    writer: &mut Writer<W>,
) {
    connection.end_of_input();
    let mut drained = std::pin::pin!(connection.drain());
    let answered = poll_fn(|cx| {
        running.poll_all(cx);
        let _ = writer.poll_caught_up(cx);
        drained.as_mut().poll(cx)
    });
    if tokio::time::timeout(server.shutdown_grace(), answered)
        .await
        .is_err()
    {
        tracing::warn!(
            calls = connection.in_flight(),
            "input ended; cancelling the calls still running"
        );
    }
    connection.close();
}

/// Reads lines (see [`framing`]) from a buffered input; what it has read of a line is kept
/// between polls.
struct LineReader<R> {
    reader: BufReader<R>,
    limit: usize,
    /// The line read last, once [`poll_line`](LineReader::poll_line) says a message is there.
    line: Vec<u8>,
    /// The line being read, while it is.
    framer: Option<Framer>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(input: R, limit: usize) -> Self {
        LineReader {
            reader: BufReader::with_capacity(64 * 1024, input),
            limit,
            line: Vec::new(),
            framer: None,
        }
    }

    fn poll_line(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<Line>> {
        let framer = self
            .framer
            .get_or_insert_with(|| Framer::start(self.limit, &mut self.line));
        loop {
            let available = ready!(Pin::new(&mut self.reader).poll_fill_buf(cx))?;
            if available.is_empty() {
                let line = framer.at_end();
                self.framer = None;
                return Poll::Ready(Ok(line));
            }
            let (used, ended) = framer.feed(available, &mut self.line);
            Pin::new(&mut self.reader).consume(used);
            if let Some(ended) = ended {
                self.framer = None;
                return Poll::Ready(Ok(ended));
            }
        }
    }
}

/// Serves on this process's stdin and stdout, until the input ends.
///
/// When they are pipes, as they are when an MCP client starts the server, they are read and
/// written without blocking, on the runtime's own I/O driver (tokio's `pipe`); otherwise (a
/// file, a terminal) through tokio's `stdin` and `stdout`, which hand each read and write to
/// a thread of the blocking pool.
pub async fn serve_stdio(server: &McpServer) -> std::io::Result<()> {
    let input: Box<dyn AsyncRead + Unpin + Send> = match piped::stdin() {
        Some(pipe) => Box::new(pipe),
        None => Box::new(tokio::io::stdin()),
    };
    let output: Box<dyn AsyncWrite + Unpin + Send> = match piped::stdout() {
        Some(pipe) => Box::new(pipe),
        None => Box::new(tokio::io::stdout()),
    };
    serve(server, input, output).await
}

/// The process's stdin and stdout as non-blocking pipes, when they are pipes.
#[cfg(unix)]
mod piped {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe::{Receiver, Sender};

    fn file(fd: std::os::fd::BorrowedFd<'_>) -> Option<std::fs::File> {
        fd.try_clone_to_owned().ok().map(std::fs::File::from)
    }

    pub(super) fn stdin() -> Option<Receiver> {
        Receiver::from_file(file(std::io::stdin().as_fd())?).ok()
    }

    pub(super) fn stdout() -> Option<Sender> {
        Sender::from_file(file(std::io::stdout().as_fd())?).ok()
    }
}

/// Elsewhere stdin and stdout are read and written through tokio's blocking pool.
#[cfg(not(unix))]
mod piped {
    pub(super) fn stdin() -> Option<tokio::io::Stdin> {
        None
    }

    pub(super) fn stdout() -> Option<tokio::io::Stdout> {
        None
    }
}
