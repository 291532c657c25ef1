//! MCP over newline-delimited JSON: each line in is one message, each message out is one
//! line; logs go to stderr (through `tracing`), never to the output. Requests run
//! concurrently, so a slow tool never holds up others; responses go out as they are ready.
//! At the end of input the server answers what it is working on (within a grace period;
//! what still runs after it is cancelled) and exits cleanly.
//!
//! - [`serve_stdio`]: the process's own stdin and stdout, with a reader thread that runs
//!   quick sync tools in place (the fastest way, see the `threaded` module).
//! - [`serve`]: any `AsyncRead`/`AsyncWrite` pair (an in-memory pipe in tests, a socket),
//!   on the tokio runtime; quick sync tools run on a lane.

mod framing;
mod threaded;

use crate::mcp::connection::{outbox, Connection};
use crate::mcp::McpServer;
use framing::{append, too_large, Framer, Line};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// Serves one client on `input`/`output` until the input ends.
pub async fn serve<R, W>(server: &McpServer, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let connection = server
        .connection()
        .called_by(crate::call::caller::Caller::stdio());
    let (sink, mut outgoing) = outbox();
    connection.set_unsolicited(sink.clone());
    let writer = tokio::spawn(async move {
        // Everything ready goes out in one write: one system call per batch, not two per
        // message.
        let mut output = output;
        let mut batch: Vec<u8> = Vec::with_capacity(64 * 1024);
        while let Some(message) = outgoing.recv().await {
            append(&mut batch, &message.bytes);
            // No end marker is ever sent here: the channel closing ends the loop.
            let _ = framing::fill_batch(&mut batch, &mut outgoing);
            output.write_all(&batch).await?;
            output.flush().await?;
            batch.clear();
        }
        output.flush().await
    });

    let limit = server.max_message_bytes();
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    loop {
        match read_line(&mut reader, &mut line, limit).await? {
            Line::End => break,
            Line::TooLarge(size) => {
                sink.send(too_large(size, limit));
            }
            Line::Message if line.iter().all(u8::is_ascii_whitespace) => {}
            Line::Message => {
                if let Some(work) = connection.handle(&line, &sink).into_work() {
                    tokio::spawn(work.run());
                }
            }
        }
    }

    wind_down(server, &connection).await;
    drop(connection);
    drop(sink);
    match writer.await {
        Ok(result) => result,
        Err(join_error) => Err(std::io::Error::other(join_error)),
    }
}

/// End of input: the work in flight gets a grace period to answer, then what is left is
/// cancelled (a tool that never returns must not keep the process alive).
async fn wind_down(server: &McpServer, connection: &Connection) {
    if tokio::time::timeout(server.shutdown_grace(), connection.drain())
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

/// Reads one line into `line` (see [`framing`]).
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Line> {
    let mut framer = Framer::start(limit, line);
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(framer.at_end());
        }
        let (used, ended) = framer.feed(available, line);
        reader.consume(used);
        if let Some(ended) = ended {
            return Ok(ended);
        }
    }
}

/// Serves on this process's stdin and stdout, until the input ends.
///
/// A reader thread reads each message and runs a sync tool proven quick right there,
/// writing the answers of everything it read in one write; should such a run take long, a
/// new reader takes over while it finishes (see the `threaded` module). Everything else
/// runs on the current tokio runtime.
pub async fn serve_stdio(server: &McpServer) -> std::io::Result<()> {
    super::start_maintenance(server);
    threaded::serve(
        server,
        Box::new(std::io::stdin()),
        Box::new(std::io::stdout()),
    )
    .await
}
