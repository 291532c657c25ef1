//! MCP over newline-delimited JSON on any `AsyncRead`/`AsyncWrite` pair: stdin and stdout
//! for a real server, an in-memory pipe in tests.
//!
//! Each line in is one message; each message out is one line. Requests run concurrently,
//! so a slow tool never holds up others; responses go out as they are ready. At the end of
//! input the server answers what it is working on (within a grace period; what still runs
//! after it is cancelled) and exits cleanly. Logs go to stderr
//! (through `tracing`), never to the output.

use crate::mcp::{McpServer, Message};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Serves one client on `input`/`output` until the input ends.
pub async fn serve<R, W>(server: &McpServer, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let connection = server.connection();
    let (sink, mut outgoing) = mpsc::unbounded_channel::<Message>();
    connection.set_unsolicited(sink.clone());
    let writer = tokio::spawn(async move {
        // Everything ready goes out in one write: one system call per batch, not two per
        // message.
        let mut output = output;
        let mut batch: Vec<u8> = Vec::with_capacity(64 * 1024);
        while let Some(message) = outgoing.recv().await {
            batch.extend_from_slice(&message.bytes);
            batch.push(b'\n');
            while batch.len() < 1024 * 1024 {
                let Ok(message) = outgoing.try_recv() else {
                    break;
                };
                batch.extend_from_slice(&message.bytes);
                batch.push(b'\n');
            }
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
                let message = format!(
                    "Invalid Request: the message is {size} bytes; the limit is {limit} bytes"
                );
                let code = crate::mcp::jsonrpc::code::INVALID_REQUEST;
                let _ = sink.send(Message::error(
                    code,
                    crate::mcp::jsonrpc::error_response(None, code, &message, None),
                ));
            }
            Line::Message if line.iter().all(u8::is_ascii_whitespace) => {}
            Line::Message => {
                connection.handle(&line, &sink);
            }
        }
    }

    // End of input: give the work in flight a grace period to answer, cancel what is left
    // (a tool that never returns must not keep the process alive), then let the writer
    // drain and stop.
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
    drop(connection);
    drop(sink);
    match writer.await {
        Ok(result) => result,
        Err(join_error) => Err(std::io::Error::other(join_error)),
    }
}

enum Line {
    /// A message is in the buffer.
    Message,
    /// A message past the limit was skipped; its size.
    TooLarge(usize),
    /// The input ended.
    End,
}

/// Reads one line into `line`, without ever holding more than `limit` bytes of it: a longer
/// line is read through to its end and dropped, so one huge message neither exhausts
/// memory nor ends the connection.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Line> {
    line.clear();
    let mut total = 0usize;
    let mut too_large = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (total, too_large) {
                (0, _) => Line::End,
                (_, true) => Line::TooLarge(total),
                // Input closed in the middle of a message: what came is still handled.
                (_, false) => Line::Message,
            });
        }
        let (chunk, complete) = match available.iter().position(|&byte| byte == b'\n') {
            Some(end) => (&available[..=end], true),
            None => (available, false),
        };
        let used = chunk.len();
        total += used;
        if !too_large {
            if line.len() + used > limit {
                too_large = true;
                line.clear();
                line.shrink_to(64 * 1024);
            } else {
                line.extend_from_slice(chunk);
            }
        }
        reader.consume(used);
        if complete {
            return Ok(if too_large {
                Line::TooLarge(total)
            } else {
                Line::Message
            });
        }
    }
}

/// Serves on this process's stdin and stdout.
///
/// When they are pipes (as when an MCP client spawns the server), they are reopened through
/// `/proc/self/fd` as non-blocking pipes driven by tokio's reactor: tokio's own `stdin()`
/// and `stdout()` hand every read and write to the blocking pool, which costs thread
/// wake-ups on each message. Reopening gives this process its own file description, so
/// the non-blocking flag does not leak to the client's end. Anything else (a terminal, a
/// file, another OS) uses tokio's `stdin()` and `stdout()`.
pub async fn serve_stdio(server: &McpServer) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use tokio::net::unix::pipe::OpenOptions;
        if let (Ok(input), Ok(output)) = (
            OpenOptions::new().open_receiver("/proc/self/fd/0"),
            OpenOptions::new().open_sender("/proc/self/fd/1"),
        ) {
            return serve(server, input, output).await;
        }
    }
    serve(server, tokio::io::stdin(), tokio::io::stdout()).await
}
