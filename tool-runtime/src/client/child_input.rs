//! A server process's input. A message is written in place by whoever sends it when nothing
//! waits to be written before it (one system call, no hand-off to a task); otherwise it is
//! queued, and a task writes the queue in order as the pipe takes it.

use crate::sync::lock;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use tokio::io::AsyncWrite;
use tokio::process::ChildStdin;
use tokio::sync::Notify;

/// What a send that finds the input closed says.
const CLOSED: &str = "the server's input is closed";

/// A child process's stdin, written a line per message, in the order they were sent.
pub(crate) struct Input(Arc<Shared>);

struct Shared {
    pipe: Mutex<Pipe>,
    /// Tells the task there is something to write, or that the input is to close.
    queued: Notify,
}

struct Pipe {
    /// `None` once closed, or once a write failed.
    stdin: Option<ChildStdin>,
    /// What the task is to write next, in order.
    queue: Vec<u8>,
    /// The task has bytes to write (the queue, or what it took of it): a message sent now
    /// goes after them, into the queue.
    busy: bool,
    /// Close once everything queued is written.
    closing: bool,
}

impl Input {
    /// Takes `stdin`, starting its task on the current runtime.
    pub(crate) fn start(stdin: ChildStdin) -> Input {
        let shared = Arc::new(Shared {
            pipe: Mutex::new(Pipe {
                stdin: Some(stdin),
                queue: Vec::new(),
                busy: false,
                closing: false,
            }),
            queued: Notify::new(),
        });
        tokio::spawn(write_queued(Arc::clone(&shared)));
        Input(shared)
    }

    /// Writes `message` and a line end after every message sent before it: now, when the
    /// pipe takes it whole at once; else the rest is queued for the task.
    pub(crate) fn send(&self, mut message: Vec<u8>) -> Result<(), String> {
        message.push(b'\n');
        let mut pipe = lock(&self.0.pipe);
        let pipe = &mut *pipe;
        if pipe.closing {
            return Err(CLOSED.to_owned());
        }
        let Some(stdin) = pipe.stdin.as_mut() else {
            return Err(CLOSED.to_owned());
        };
        if pipe.busy {
            pipe.queue.extend_from_slice(&message);
            return Ok(());
        }
        // Polled with a waker that does nothing: a write that would wait is left to the
        // task, whose own poll then registers its waker. While the task is busy nothing
        // else polls the pipe, so no waker is taken from it. (No flush: a pipe's does
        // nothing on Unix; elsewhere the write handed to tokio's blocking pool completes
        // by itself, and the task flushes what it writes.)
        let mut nothing = Context::from_waker(Waker::noop());
        let written = match Pin::new(stdin).poll_write(&mut nothing, &message) {
            Poll::Ready(Ok(written)) => written,
            Poll::Ready(Err(_)) => {
                pipe.stdin = None;
                return Err(CLOSED.to_owned());
            }
            Poll::Pending => 0,
        };
        if written < message.len() {
            pipe.queue.extend_from_slice(&message[written..]);
            pipe.busy = true;
            self.0.queued.notify_one();
        }
        Ok(())
    }

    /// Closes the input once everything sent is written: what tells a stdio server to
    /// finish.
    pub(crate) fn close(&self) {
        let mut pipe = lock(&self.0.pipe);
        pipe.closing = true;
        if !pipe.busy {
            pipe.stdin = None;
        }
        drop(pipe);
        self.0.queued.notify_one();
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        self.close();
    }
}

/// Writes what is queued, in order, until the input is closed or a write fails.
async fn write_queued(shared: Arc<Shared>) {
    loop {
        shared.queued.notified().await;
        loop {
            let batch = {
                let mut pipe = lock(&shared.pipe);
                if pipe.queue.is_empty() {
                    pipe.busy = false;
                    if pipe.closing {
                        pipe.stdin = None;
                        return;
                    }
                    break;
                }
                std::mem::take(&mut pipe.queue)
            };
            if write_all(&shared, &batch).await.is_err() {
                let mut pipe = lock(&shared.pipe);
                pipe.stdin = None;
                pipe.queue = Vec::new();
                return;
            }
        }
    }
}

/// Writes `batch` whole, then flushes. The lock is held inside each poll only, never while
/// waiting for the pipe.
async fn write_all(shared: &Shared, batch: &[u8]) -> std::io::Result<()> {
    let closed = || std::io::Error::from(std::io::ErrorKind::BrokenPipe);
    let mut at = 0;
    while at < batch.len() {
        let written = std::future::poll_fn(|cx| match lock(&shared.pipe).stdin.as_mut() {
            Some(stdin) => Pin::new(stdin).poll_write(cx, &batch[at..]),
            None => Poll::Ready(Err(closed())),
        })
        .await?;
        if written == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        at += written;
    }
    std::future::poll_fn(|cx| match lock(&shared.pipe).stdin.as_mut() {
        Some(stdin) => Pin::new(stdin).poll_flush(cx),
        None => Poll::Ready(Err(closed())),
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// `cat`, its input taken, and its output.
    fn cat() -> (tokio::process::Child, Input, tokio::process::ChildStdout) {
        let mut child = tokio::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("cat runs");
        let input = Input::start(child.stdin.take().unwrap());
        let output = child.stdout.take().unwrap();
        (child, input, output)
    }

    /// Everything `cat` writes, to its end (which comes once its input is closed).
    async fn all_of(mut output: tokio::process::ChildStdout) -> Vec<u8> {
        let mut read = Vec::new();
        let reading = output.read_to_end(&mut read);
        tokio::time::timeout(std::time::Duration::from_secs(30), reading)
            .await
            .expect("cat ends once its input is closed")
            .unwrap();
        read
    }

    #[tokio::test]
    async fn messages_past_what_the_pipe_holds_are_written_whole_and_in_order_before_it_closes() {
        let (mut child, input, output) = cat();
        // Far more than the two pipes hold while nothing reads the output: most of it is
        // queued, and what is sent while the task writes goes after it.
        let messages: Vec<Vec<u8>> = (0..2_000)
            .map(|n| format!("{n:04}{}", "x".repeat(1_000)).into_bytes())
            .collect();
        for message in &messages {
            input.send(message.clone()).expect("the input is open");
        }
        assert!(lock(&input.0.pipe).busy, "the pipe took everything at once");
        input.close();
        assert_eq!(
            input.send(b"late".to_vec()),
            Err(CLOSED.to_owned()),
            "a message sent after closing"
        );
        let read = all_of(output).await;
        let expected: Vec<u8> = messages
            .iter()
            .flat_map(|message| message.iter().copied().chain([b'\n']))
            .collect();
        assert!(
            read == expected,
            "{} bytes read of {}",
            read.len(),
            expected.len()
        );
        assert!(child.wait().await.unwrap().success());
    }

    #[tokio::test]
    async fn a_message_the_pipe_takes_at_once_is_written_without_the_task() {
        let (_child, input, output) = cat();
        let mut lines = tokio::io::BufReader::new(output);
        let mut echoed = async |line: &mut String| {
            line.clear();
            let read = tokio::io::AsyncBufReadExt::read_line(&mut lines, line);
            tokio::time::timeout(std::time::Duration::from_secs(30), read)
                .await
                .expect("cat echoes the line")
                .unwrap();
        };
        let mut line = String::new();
        // The first goes through the task: tokio learns that a new pipe can be written
        // only from its I/O driver, which the task's wait for the pipe runs.
        input.send(b"one".to_vec()).unwrap();
        echoed(&mut line).await;
        assert_eq!(line, "one\n");
        input.send(b"two".to_vec()).unwrap();
        assert!(!lock(&input.0.pipe).busy, "handed to the task");
        echoed(&mut line).await;
        assert_eq!(line, "two\n");
    }

    #[tokio::test]
    async fn dropped_it_closes_the_input_once_what_was_sent_is_written() {
        let (mut child, input, output) = cat();
        for _ in 0..200 {
            input.send(vec![b'y'; 4_096]).unwrap();
        }
        drop(input);
        let read = all_of(output).await;
        assert_eq!(read.len(), 200 * 4_097);
        assert!(child.wait().await.unwrap().success());
    }
}
