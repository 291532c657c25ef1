//! A server started as a child process, spoken to over its stdin and stdout (one JSON
//! message per line). Its stderr is logged; it is stopped when the client is closed or
//! dropped.

use super::session::Session;
use super::wire;
use crate::sync::lock;
use std::process::Stdio as Piped;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdout};
use tokio::sync::mpsc;

/// How long a server may take to end once its input is closed, before it is killed.
const END_GRACE: Duration = Duration::from_secs(2);
/// How many of the last lines of its stderr an error about a server that ended quotes.
const QUOTED_LINES: usize = 5;
/// How long the end of a server's stderr is awaited once its output ended (a process that
/// exited closes both at once), for the error to quote it.
const STDERR_GRACE: Duration = Duration::from_millis(300);

/// A child process serving MCP on its stdin and stdout.
pub(crate) struct Stdio {
    /// Lines to write, in order.
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
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
    fn keep(&self, line: &str) {
        let mut lines = lock(&self.lines);
        if lines.len() == QUOTED_LINES {
            lines.pop_front();
        }
        lines.push_back(line.chars().take(300).collect());
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
        let (outgoing, lines) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(input, lines));
        Ok(Stdio {
            outgoing,
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

    /// Queues one message.
    pub(crate) fn send(&self, bytes: Vec<u8>) -> Result<(), String> {
        self.outgoing
            .send(bytes)
            .map_err(|_| "the server's input is closed".to_owned())
    }

    /// Closes the server's input and waits a moment for it to end; then stops it.
    pub(crate) async fn close(&self) {
        let Some(mut child) = self.child.lock().await.take() else {
            return;
        };
        // The writer ends when every sender is gone; closing the input is what tells a
        // stdio server to finish.
        let _ = self.outgoing.send(Vec::new());
        if tokio::time::timeout(END_GRACE, child.wait()).await.is_err() {
            let _ = child.kill().await;
        }
    }
}

/// Writes lines until told to stop (an empty message) or the channel closes.
async fn write_lines(
    mut input: tokio::process::ChildStdin,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(mut bytes) = lines.recv().await {
        if bytes.is_empty() {
            break;
        }
        bytes.push(b'\n');
        // Everything ready goes out in one write.
        while let Ok(more) = lines.try_recv() {
            if more.is_empty() {
                let _ = input.write_all(&bytes).await;
                let _ = input.flush().await;
                return;
            }
            bytes.extend_from_slice(&more);
            bytes.push(b'\n');
        }
        if input.write_all(&bytes).await.is_err() || input.flush().await.is_err() {
            return;
        }
    }
    let _ = input.shutdown().await;
}

/// Logs what the server writes to its stderr, line by line, keeping the last lines.
async fn log_errors(errors: tokio::process::ChildStderr, server: String, said: Arc<Said>) {
    let mut lines = BufReader::new(errors).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::info!(target: "tool_runtime::client::stderr", server = %server, "{line}");
        said.keep(&line);
    }
    said.end();
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
