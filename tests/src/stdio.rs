//! A client of the stdio transport, as bytes over a pipe: a server in this process over an
//! in-memory pipe, or a `serve` child process over its real stdin and stdout. Every wait is
//! bounded by [`PATIENCE`].

use crate::{logs, PATIENCE};
use serde_json::Value;
use std::path::PathBuf;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, Lines};
use tool_runtime::mcp::McpServer;

/// The server end of a [`Session`].
enum Server {
    /// `stdio::serve` on this runtime.
    InMemory(tokio::task::JoinHandle<std::io::Result<()>>),
    /// A child process (killed when dropped), its stderr in `log`.
    Process {
        child: Box<tokio::process::Child>,
        log: PathBuf,
    },
}

/// One stdio session: what the client writes, and the lines the server answers with.
pub struct Session {
    /// The server's input; gone once ended.
    input: Option<Box<dyn AsyncWrite + Unpin + Send>>,
    /// The server's output, line by line.
    output: Lines<BufReader<Box<dyn AsyncRead + Unpin + Send>>>,
    server: Server,
}

impl Session {
    /// `server` served over an in-memory pipe (`transport::stdio::serve`, spawned on the
    /// current runtime).
    pub fn in_memory(server: &McpServer) -> Session {
        let (client, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        let server = server.clone();
        let serving = tokio::spawn(async move {
            tool_runtime::transport::stdio::serve(&server, server_read, server_write).await
        });
        let (read, write) = tokio::io::split(client);
        Session::over(write, read, Server::InMemory(serving))
    }

    /// `binary serve` with `args`, over the child's real stdin and stdout (the deployment
    /// variables of the test's own environment removed, as [`crate::command`] does); its
    /// stderr goes to a log file (see [`Session::logs`]).
    pub fn process(binary: &str, args: &[&str]) -> Session {
        let name = std::path::Path::new(binary)
            .file_name()
            .map_or("server".into(), |name| name.to_string_lossy());
        let log = logs::file(&name);
        let mut command = crate::command(binary);
        command
            .arg("serve")
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(logs::stdio_to(&log));
        let mut child = tokio::process::Command::from(command)
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|error| panic!("{binary} starts: {error}"));
        let write = child.stdin.take().expect("stdin is piped");
        let read = child.stdout.take().expect("stdout is piped");
        let child = Box::new(child);
        Session::over(write, read, Server::Process { child, log })
    }

    fn over(
        write: impl AsyncWrite + Unpin + Send + 'static,
        read: impl AsyncRead + Unpin + Send + 'static,
        server: Server,
    ) -> Session {
        let read: Box<dyn AsyncRead + Unpin + Send> = Box::new(read);
        Session {
            input: Some(Box::new(write)),
            output: BufReader::new(read).lines(),
            server,
        }
    }

    /// Sends `line` and its line end.
    pub async fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes()).await;
    }

    /// Sends `bytes` as they are (half a message, bytes that are not text, ...).
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("the input has not been ended");
        input.write_all(bytes).await.expect("the server reads");
        input.flush().await.expect("the server reads");
    }

    /// Ends the server's input, as a client that closes stdin.
    pub async fn end_input(&mut self) {
        if let Some(mut input) = self.input.take() {
            let _ = input.shutdown().await;
        }
    }

    /// The next line the server writes, as written; nothing once its output has ended.
    pub async fn next_text(&mut self) -> Option<String> {
        tokio::time::timeout(*PATIENCE, self.output.next_line())
            .await
            .unwrap_or_else(|_| panic!("no line from the server within {:?}", *PATIENCE))
            .expect("the server's output can be read")
    }

    /// The next message the server sends, which must come.
    pub async fn next(&mut self) -> Value {
        let line = self
            .next_text()
            .await
            .expect("a message before the server's output ended");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}"))
    }

    /// The answer to the request with `id`, and the messages that came before it.
    pub async fn answer_to(&mut self, id: impl Into<Value>) -> (Value, Vec<Value>) {
        let id = id.into();
        let mut before = Vec::new();
        loop {
            let message = self.next().await;
            if message.get("id") == Some(&id) && message.get("method").is_none() {
                return (message, before);
            }
            before.push(message);
        }
    }

    /// Ends the input, reads every message until the server ends its output, and waits for
    /// the server to end; fails the test if it ended badly. The messages.
    pub async fn finish(mut self) -> Vec<Value> {
        self.end_input().await;
        let mut messages = Vec::new();
        while let Some(line) = self.next_text().await {
            messages
                .push(serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}")));
        }
        match &mut self.server {
            Server::InMemory(serving) => {
                tokio::time::timeout(*PATIENCE, serving)
                    .await
                    .unwrap_or_else(|_| panic!("the server did not end within {:?}", *PATIENCE))
                    .expect("the server did not panic")
                    .expect("the server ended without an error");
            }
            Server::Process { child, log } => {
                let status = tokio::time::timeout(*PATIENCE, child.wait())
                    .await
                    .unwrap_or_else(|_| panic!("the server did not end within {:?}", *PATIENCE))
                    .expect("the server's status");
                assert!(
                    status.success(),
                    "the server ended with {status}; its log ({}):\n{}",
                    log.display(),
                    logs::tail(log, 40)
                );
            }
        }
        messages
    }

    /// What a server process wrote on stderr so far (nothing in memory).
    pub fn logs(&self) -> String {
        match &self.server {
            Server::InMemory(_) => String::new(),
            Server::Process { log, .. } => logs::read(log),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let (true, Server::Process { log, .. }) = (std::thread::panicking(), &self.server) {
            eprintln!("the server's log: {}", log.display());
        }
    }
}

/// Runs `command` (one of [`crate::command`]) with `stdin` on its standard input, to its end;
/// what it wrote is captured. Past [`PATIENCE`] it is killed and the test fails with what
/// it wrote so far.
pub fn run(command: &mut std::process::Command, stdin: &str) -> std::process::Output {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("{command:?} runs: {error}"));
    let mut input = child.stdin.take().expect("stdin is piped");
    let stdin = stdin.to_owned();
    // Written (and then closed: the end of input ends a session) while the output is read,
    // so that neither side waits for the other's pipe.
    let writing = std::thread::spawn(move || {
        let _ = input.write_all(stdin.as_bytes());
    });
    let reader = |mut from: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = from.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = reader(Box::new(child.stdout.take().expect("stdout is piped")));
    let stderr = reader(Box::new(child.stderr.take().expect("stderr is piped")));
    let deadline = std::time::Instant::now() + *PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
            panic!(
                "{command:?} did not end within {:?}; stdout: {}; stderr: {}",
                *PATIENCE,
                String::from_utf8_lossy(&stdout),
                String::from_utf8_lossy(&stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let _ = writing.join();
    std::process::Output {
        status,
        stdout: stdout.join().expect("stdout read"),
        stderr: stderr.join().expect("stderr read"),
    }
}
