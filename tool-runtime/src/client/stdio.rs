//! A server started as a child process, spoken to over its stdin and stdout (one JSON
//! message per line). Its stderr is logged; it is stopped when the client is closed or
//! dropped.

use super::child_input::Input as ChildInput;
use super::session::Session;
use super::wire;
use crate::sync::lock;
use std::process::Stdio as Piped;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, ChildStdout};

/// How long a server may take to end once its input is closed, before it is killed.
const END_GRACE: Duration = Duration::from_secs(2);
/// How many of the last lines of its stderr an error about a server that ended quotes.
const QUOTED_LINES: usize = 5;
/// The most of each of those lines it quotes.
const QUOTED_CHARS: usize = 300;
/// How long the end of a server's stderr is awaited once its output ended, for the error to
/// quote it. A process that exited closes both at once, and its last lines are read as soon
/// as they come; the whole wait passes only when something else (a process it started)
/// still holds its stderr open.
const STDERR_GRACE: Duration = Duration::from_secs(2);

/// A child process serving MCP on its stdin and stdout.
pub(crate) struct Stdio {
    /// Its input, a line per message.
    input: ChildInput,
    /// Its output, until the session reads it.
    output: Mutex<Option<ChildStdout>>,
    child: tokio::sync::Mutex<Option<Child>>,
    /// The largest message read.
    limit: usize,
    /// The last lines it wrote on stderr.
    said: Arc<Said>,
}

/// The last lines a server wrote on its stderr, and whether its stderr ended.
#[derive(Default)]
struct Said {
    lines: Mutex<std::collections::VecDeque<String>>,
    ended: tokio::sync::Notify,
    over: std::sync::atomic::AtomicBool,
}

impl Said {
    /// Keeps `line` (its first 300 characters) among the last lines, saying when it was
    /// longer: `cut` bytes of it were never kept.
    fn keep(&self, line: &str, cut: usize) {
        let mut kept: String = line.chars().take(QUOTED_CHARS).collect();
        let cut = cut + (line.len() - kept.len());
        if cut > 0 {
            kept.push_str(&format!(" [{cut} more bytes]"));
        }
        let mut lines = lock(&self.lines);
        if lines.len() == QUOTED_LINES {
            lines.pop_front();
        }
        lines.push_back(kept);
    }

    fn end(&self) {
        self.over.store(true, std::sync::atomic::Ordering::Release);
        self.ended.notify_waiters();
    }

    /// What the server said last, once its stderr ended (or a moment passed), for an
    /// error: empty when it said nothing.
    async fn last_words(&self) -> String {
        let ended = self.ended.notified();
        if !self.over.load(std::sync::atomic::Ordering::Acquire) {
            let _ = tokio::time::timeout(STDERR_GRACE, ended).await;
        }
        let lines = lock(&self.lines);
        if lines.is_empty() {
            return String::new();
        }
        let said: Vec<&str> = lines.iter().map(String::as_str).collect();
        format!("; its last words on stderr: {}", said.join(" | "))
    }
}

impl Stdio {
    /// Starts `command` (a program and its arguments) with `environment` added.
    pub(crate) fn spawn(
        command: &[String],
        environment: &[(String, String)],
        limit: usize,
        server: &str,
    ) -> Result<Stdio, String> {
        let (program, arguments) = command
            .split_first()
            .ok_or_else(|| "an empty command".to_owned())?;
        let mut child = tokio::process::Command::new(program)
            .args(arguments)
            .envs(environment.iter().map(|(name, value)| (name, value)))
            .stdin(Piped::piped())
            .stdout(Piped::piped())
            .stderr(Piped::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| format!("cannot start {program}: {error}"))?;
        let input = child.stdin.take().ok_or("no stdin")?;
        let output = child.stdout.take().ok_or("no stdout")?;
        let said = Arc::new(Said::default());
        match child.stderr.take() {
            Some(errors) => {
                tokio::spawn(log_errors(errors, server.to_owned(), Arc::clone(&said)));
            }
            None => said.end(),
        }
        Ok(Stdio {
            input: ChildInput::start(input),
            output: Mutex::new(Some(output)),
            child: tokio::sync::Mutex::new(Some(child)),
            limit,
            said,
        })
    }

    /// Reads the server's messages into `session`, until its output ends.
    pub(crate) fn start(&self, session: &Arc<Session>) {
        let Some(output) = lock(&self.output).take() else {
            return;
        };
        let session = Arc::downgrade(session);
        let (limit, said) = (self.limit, Arc::clone(&self.said));
        tokio::spawn(async move {
            let mut reader = BufReader::with_capacity(64 * 1024, output);
            let mut line = Vec::new();
            let ended = loop {
                match read_line(&mut reader, &mut line, limit).await {
                    Ok(true) => {}
                    Ok(false) => break "the server's output ended".to_owned(),
                    Err(why) => break why,
                }
                let Some(session) = session.upgrade() else {
                    return;
                };
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match wire::read(&line) {
                    Ok(message) => session.dispatch(message),
                    Err(why) => {
                        session.not_understood(&line);
                        tracing::warn!(server = %session.server, %why, "a message from the server was not understood")
                    }
                }
            };
            let ended = format!("{ended}{}", said.last_words().await);
            if let Some(session) = session.upgrade() {
                session.die(&ended);
            }
        });
    }

    /// Sends one message.
    pub(crate) fn send(&self, bytes: Vec<u8>) -> Result<(), String> {
        self.input.send(bytes)
    }

    /// Closes the server's input and waits a moment for it to end; then stops it.
    pub(crate) async fn close(&self) {
        let Some(mut child) = self.child.lock().await.take() else {
            return;
        };
        // Closing the input (once what was sent is written) tells a stdio server to finish.
        self.input.close();
        if tokio::time::timeout(END_GRACE, child.wait()).await.is_err() {
            let _ = child.kill().await;
        }
    }
}

/// Logs what the server writes to its stderr, line by line, keeping the last lines. It is
/// read to its end whatever comes: a server whose stderr were left unread would stop once
/// the pipe is full. Bytes that are not UTF-8 are shown as U+FFFD, and a line longer than
/// [`STDERR_LINE_BYTES`] is cut there (the rest read and dropped), so an endless line
/// cannot take the client's memory.
async fn log_errors(errors: tokio::process::ChildStderr, server: String, said: Arc<Said>) {
    let mut errors = BufReader::new(errors);
    let mut line = Vec::new();
    while let Ok(Some(cut)) = read_stderr_line(&mut errors, &mut line).await {
        let text = String::from_utf8_lossy(&line);
        if cut > 0 {
            tracing::info!(target: "tool_runtime::client::stderr", server = %server, "{text} [{cut} more bytes not shown]");
        } else {
            tracing::info!(target: "tool_runtime::client::stderr", server = %server, "{text}");
        }
        said.keep(&text, cut);
    }
    said.end();
}

/// The most of one stderr line that is kept and logged.
const STDERR_LINE_BYTES: usize = 8 * 1024;

/// Reads one stderr line into `line` (without its end, `\n` or `\r\n`), keeping at most
/// [`STDERR_LINE_BYTES`]: how many bytes past those were dropped, or `None` at the end.
async fn read_stderr_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
) -> std::io::Result<Option<usize>> {
    line.clear();
    let mut dropped = 0;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok((!line.is_empty() || dropped > 0).then_some(dropped));
        }
        let (chunk, used) = match memchr::memchr(b'\n', available) {
            Some(end) => (&available[..end], Some(end + 1)),
            None => (available, None),
        };
        let room = STDERR_LINE_BYTES - line.len();
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        dropped += chunk.len().saturating_sub(room);
        let consumed = used.unwrap_or(available.len());
        reader.consume(consumed);
        if used.is_some() {
            if dropped == 0 && line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Some(dropped));
        }
    }
}

/// Reads one line into `line` (without its end); `false` at the end of input. A line over
/// `limit` bytes is an error: the server breaks the size limit.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
    limit: usize,
) -> Result<bool, String> {
    line.clear();
    loop {
        let available = reader
            .fill_buf()
            .await
            .map_err(|error| format!("reading the server's output failed: {error}"))?;
        if available.is_empty() {
            return Ok(!line.is_empty());
        }
        let (chunk, ended) = match memchr::memchr(b'\n', available) {
            Some(end) => (&available[..end], Some(end + 1)),
            None => (available, None),
        };
        if line.len() + chunk.len() > limit {
            return Err(format!("the server sent a message over {limit} bytes"));
        }
        line.extend_from_slice(chunk);
        let used = ended.unwrap_or(available.len());
        reader.consume(used);
        if ended.is_some() {
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line `read_stderr_line` gives for `input`: its text (lossy) and what was cut.
    async fn stderr_lines(input: &[u8]) -> Vec<(String, usize)> {
        // A small buffer, so that lines span many reads.
        let mut reader = BufReader::with_capacity(64, input);
        let mut line = Vec::new();
        let mut lines = Vec::new();
        while let Some(cut) = read_stderr_line(&mut reader, &mut line).await.unwrap() {
            lines.push((String::from_utf8_lossy(&line).into_owned(), cut));
        }
        lines
    }

    #[tokio::test]
    async fn stderr_lines_are_cut_at_the_bound_and_read_through_invalid_bytes() {
        let mut input = b"starting\r\n\xff\xfe not utf-8\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', STDERR_LINE_BYTES + 1000));
        input.extend_from_slice(b"\n\nlast words without an end");
        let lines = stderr_lines(&input).await;
        let shown: Vec<(usize, usize)> = lines.iter().map(|(l, cut)| (l.len(), *cut)).collect();
        assert_eq!(lines.len(), 5, "lengths and cuts: {shown:?}");
        assert_eq!(lines[0], ("starting".to_owned(), 0));
        assert_eq!(lines[1], ("\u{FFFD}\u{FFFD} not utf-8".to_owned(), 0));
        assert_eq!(lines[2].0, "x".repeat(STDERR_LINE_BYTES));
        assert_eq!(lines[2].1, 1000);
        assert_eq!(lines[3], (String::new(), 0));
        assert_eq!(lines[4], ("last words without an end".to_owned(), 0));
    }

    #[tokio::test]
    async fn an_endless_line_is_read_through_without_being_kept() {
        let input = vec![b'y'; 4 * 1024 * 1024];
        let lines = stderr_lines(&input).await;
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].0.len(), STDERR_LINE_BYTES);
        assert_eq!(lines[0].1, input.len() - STDERR_LINE_BYTES);
    }
}
