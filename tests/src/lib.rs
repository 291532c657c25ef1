//! Helpers shared by the integration tests. It defines no tools itself, so each test binary
//! holds exactly the tools its own file declares (plus the second crate's, where linked).
//!
//! Every wait of a test ends as soon as what it waits for happens and is bounded by one
//! [`PATIENCE`]; messages are written with [`rpc`], sent with [`http`] and [`stdio`];
//! [`gate`] holds a tool in another process until the test lets it go; child processes log
//! to files ([`logs`]).

pub mod changing;
pub mod cluster;
pub mod gate;
pub mod http;
pub mod layers;
pub mod logs;
pub mod oauth;
pub mod otlp;
mod ports;
pub mod redis;
pub mod rpc;
pub mod stdio;
pub mod tap;
mod wait;

pub use ports::free_port;
pub use wait::{wait_for, wait_for_some, wait_until, wait_until_some, TokioClock, PATIENCE};

use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tool_runtime::mcp::connection::{outbox, Connection, Outbox, OutboxReader};
use tool_runtime::mcp::{McpServer, ServerInfo, ServerOptions};
use tool_runtime::{Registry, ToolResult};

/// A server over this test binary's catalog (its `#[tool]`s, prompts and resources), with
/// `options`.
pub fn server(options: ServerOptions) -> McpServer {
    server_over(
        Registry::new().expect("the test binary's catalog builds"),
        options,
    )
}

/// A server over `registry` (one with state, or tools added at run time), with `options`.
pub fn server_over(registry: Registry, options: ServerOptions) -> McpServer {
    McpServer::with_options(registry, ServerInfo::new("tests", "1"), options)
}

/// Something that happens once in a test (a tool started, a future was dropped, a
/// cancellation was seen): the test waits for it, instead of sleeping for long enough.
/// Usable as a `static`, by async tests and threads alike.
pub struct Signal {
    fired: AtomicBool,
    notify: Notify,
    /// For waiting on a thread (outside a runtime).
    lock: Mutex<()>,
    changed: Condvar,
}

impl Signal {
    /// A signal not fired yet.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Signal {
        Signal {
            fired: AtomicBool::new(false),
            notify: Notify::const_new(),
            lock: Mutex::new(()),
            changed: Condvar::new(),
        }
    }

    /// It happened: every waiter goes on.
    pub fn fire(&self) {
        let _held = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.fired.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
        self.changed.notify_all();
    }

    /// Not happened yet, again (for a test that waits for it more than once).
    pub fn reset(&self) {
        self.fired.store(false, Ordering::SeqCst);
    }

    /// Whether it happened.
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }

    /// Waits until it happens ([`PATIENCE`] at most; past that the test fails, saying
    /// `what` it waited for).
    pub async fn wait(&self, what: &str) {
        let waited = tokio::time::timeout(*PATIENCE, async {
            loop {
                // Registered before the flag is read, so a fire between cannot be missed.
                let notified = self.notify.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if self.fired() {
                    return;
                }
                notified.await;
            }
        });
        waited
            .await
            .unwrap_or_else(|_| panic!("{what} did not happen within {:?}", *PATIENCE));
    }

    /// [`wait`](Signal::wait), on a thread.
    pub fn wait_blocking(&self, what: &str) {
        let held = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let (_held, timed_out) = self
            .changed
            .wait_timeout_while(held, *PATIENCE, |_| !self.fired())
            .unwrap_or_else(|p| p.into_inner());
        assert!(
            !timed_out.timed_out(),
            "{what} did not happen within {:?}",
            *PATIENCE
        );
    }
}

/// Polling for what a client can only learn by asking again (a task's status): between
/// two asks, [`again`](Polling::again) waits 10 ms, and fails the test once [`PATIENCE`]
/// has passed (on tokio's clock, so paused time passes as the test polls).
///
/// ```ignore
/// let mut polling = Polling::new("the task to end");
/// let ended = loop {
///     let task = get_task().await;
///     if task["status"] == "completed" { break task; }
///     polling.again(&task).await;
/// };
/// ```
pub struct Polling {
    what: String,
    deadline: tokio::time::Instant,
}

impl Polling {
    /// Polling for `what`, from now.
    pub fn new(what: impl Into<String>) -> Polling {
        Polling {
            what: what.into(),
            deadline: tokio::time::Instant::now() + *PATIENCE,
        }
    }

    /// Waits before asking again; past [`PATIENCE`], fails the test with `what` and the
    /// `last` answer.
    pub async fn again(&mut self, last: &Value) {
        assert!(
            tokio::time::Instant::now() < self.deadline,
            "{} did not happen within {:?}; last answer: {last}",
            self.what,
            *PATIENCE
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Lets every task that is ready run (on a current-thread runtime, all of them): what a
/// test that must see nothing happen waits for, where nothing should be spawned.
pub async fn settle() {
    for _ in 0..16 {
        tokio::task::yield_now().await;
    }
}

/// Runs one call on a fresh multi-thread runtime.
pub fn call(registry: &Registry, name: &str, input: Value) -> ToolResult {
    runtime().block_on(registry.call(name, input))
}

/// A multi-thread runtime for tests that call tools.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The error text of a result that must have failed.
pub fn error_text(result: &ToolResult) -> String {
    match result.error() {
        Some(error) => error.to_string(),
        None => panic!("expected an error, got output {:?}", result.output()),
    }
}

/// The `field` of each entry of a list answer's `result[key]` (`names(&list, "prompts",
/// "name")`).
pub fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    if !list["result"][key].is_array() {
        panic!("no {key} list in {list}");
    }
    fields(&list["result"][key], field)
}

/// The `field` of each entry of `entries`, a JSON array (a REST or CLI list).
pub fn fields(entries: &Value, field: &str) -> Vec<String> {
    entries
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {entries}"))
        .iter()
        .map(|entry| {
            entry[field]
                .as_str()
                .unwrap_or_else(|| panic!("an entry without a {field} in {entries}"))
                .to_owned()
        })
        .collect()
}

/// A Python script (of the standard library alone) written to a file of its own for a
/// test, run as a server a client starts; the file is removed when this is dropped.
pub struct PythonScript {
    path: std::path::PathBuf,
}

impl PythonScript {
    /// Writes `source` to a new file named after `name` and this process.
    pub fn new(name: &str, source: &str) -> PythonScript {
        let path =
            std::env::temp_dir().join(format!("tool-tests-{name}-{}.py", std::process::id()));
        std::fs::write(&path, source)
            .unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
        PythonScript { path }
    }

    /// The command that runs it with `args`.
    pub fn command(&self, args: &[&str]) -> Vec<String> {
        ["python3".to_owned(), self.path.display().to_string()]
            .into_iter()
            .chain(args.iter().map(|arg| (*arg).to_owned()))
            .collect()
    }

    /// The command that runs it as one command line (the path quoted), as a mount takes it.
    pub fn command_line(&self) -> String {
        format!("python3 '{}'", self.path.display())
    }
}

impl Drop for PythonScript {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The tools of the `upstream-tools` binary (the server the client and mount tests reach),
/// sorted by name.
pub const UPSTREAM_TOOLS: [&str; 15] = [
    "add",
    "ask_model",
    "broken",
    "chatty",
    "client_roots",
    "followed",
    "greet",
    "quit",
    "route",
    "sign_in",
    "task_add",
    "task_greet",
    "touch_motto",
    "weather",
    "work",
];

/// A handshake-era `initialize` request with id 0, as a client's first message.
pub const INITIALIZE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#
);

/// The JSON-RPC messages of an HTTP body: one JSON answer, or the `data:` lines of an SSE
/// stream (each of which must be JSON).
pub fn messages(body: &str) -> Vec<Value> {
    if body.trim().is_empty() {
        return Vec::new();
    }
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return vec![value];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| {
            serde_json::from_str(data)
                .unwrap_or_else(|_| panic!("an SSE event that is not JSON: {data}"))
        })
        .collect()
}

/// The standard headers an HTTP client sends with a message at a per-request protocol
/// version (2026-07-28): `MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` for a call,
/// a prompt or a resource read. Empty for anything else (handshake-era messages, bytes
/// that are not a JSON object).
pub fn standard_headers(body: &[u8]) -> Vec<(&'static str, String)> {
    let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(body) else {
        return Vec::new();
    };
    let params = message.get("params");
    let Some(version) = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str)
    else {
        return Vec::new();
    };
    let mut headers = vec![("mcp-protocol-version", version.to_owned())];
    if let Some(method) = message.get("method").and_then(Value::as_str) {
        headers.push(("mcp-method", method.to_owned()));
        let named = match method {
            "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")),
            "resources/read" => params.and_then(|p| p.get("uri")),
            "tasks/get" | "tasks/update" | "tasks/cancel" => params.and_then(|p| p.get("taskId")),
            _ => None,
        };
        if let Some(Value::String(named)) = named {
            headers.push(("mcp-name", named.clone()));
        }
    }
    headers
}

/// The capabilities of a 2026-07-28 client that answers forms and follows tasks (the
/// `io.modelcontextprotocol/tasks` extension).
pub fn with_tasks() -> Value {
    serde_json::json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// Starts the 2026-07-28 call of `name` that becomes a task (the client declares
/// [`with_tasks`]); the task's id.
pub async fn start_task(client: &mut Client, id: u32, name: &str, arguments: Value) -> String {
    let created = client
        .call(&rpc::per_request(
            id,
            "tools/call",
            serde_json::json!({"name": name, "arguments": arguments}),
            with_tasks(),
        ))
        .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().unwrap().to_owned()
}

/// A 2026-07-28 `tasks/*` request of a client that declares [`with_tasks`]: its answer.
pub async fn task_method(client: &mut Client, id: u32, method: &str, params: Value) -> Value {
    client
        .call(&rpc::per_request(id, method, params, with_tasks()))
        .await
}

/// Polls the 2026-07-28 task `task` (request ids from `first`) until its status is
/// `status`; the task as then seen.
pub async fn until(client: &mut Client, first: u32, task: &str, status: &str) -> Value {
    until_seen(client, first, task, status, |seen| seen["status"] == status).await
}

/// Polls the 2026-07-28 task `task` (request ids from `first`) until `seen` picks it
/// (`what` says what was awaited); the task as then seen.
pub async fn until_seen(
    client: &mut Client,
    first: u32,
    task: &str,
    what: &str,
    seen: impl Fn(&Value) -> bool,
) -> Value {
    let params = serde_json::json!({"taskId": task});
    let mut polling = Polling::new(format!("task {task} becoming {what}"));
    for id in first.. {
        let request = rpc::per_request(id, "tasks/get", params.clone(), with_tasks());
        let got = client.call(&request).await["result"].clone();
        if seen(&got) {
            return got;
        }
        polling.again(&got).await;
    }
    unreachable!("request ids never run out before the polling fails")
}

/// Polls the 2025-11-25 task `task` (request ids from `first`) on a connection past the
/// handshake until `seen` picks it; the task as then seen.
pub async fn until_core(
    client: &mut Client,
    first: u32,
    task: &str,
    what: &str,
    seen: impl Fn(&Value) -> bool,
) -> Value {
    let params = serde_json::json!({"taskId": task});
    let mut polling = Polling::new(format!("task {task} becoming {what}"));
    for id in first.. {
        let got = client
            .call(&rpc::request(id, "tasks/get", params.clone()))
            .await["result"]
            .clone();
        if seen(&got) {
            return got;
        }
        polling.again(&got).await;
    }
    unreachable!("request ids never run out before the polling fails")
}

/// Starts the 2025-11-25 call of `name` as a task; the task's id.
pub async fn start_core_task(client: &mut Client, id: u32, name: &str, arguments: Value) -> String {
    core_task_id(&client.call(&rpc::task_call(id, name, arguments)).await)
}

/// The id of the task a 2025-11-25 call that became one was answered with.
pub fn core_task_id(created: &Value) -> String {
    created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned()
}

/// Starts the driver of `server`'s time on the current tokio runtime, as the built-in
/// transports do with their first connection; nothing when it has one already or when no
/// runtime is current.
pub fn drive(server: &McpServer) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        if let Some(driver) = tool_runtime::transport::maintenance(server) {
            runtime.spawn(driver);
        }
    }
}

/// A client of one connection, driving the protocol layer as a transport does: each
/// message's work is spawned on the current runtime, and answers are read off the outbox.
pub struct Client {
    /// The connection served.
    pub connection: Connection,
    /// Where the connection sends its messages.
    pub sink: Outbox,
    /// What it sent.
    pub messages: OutboxReader,
}

impl Client {
    /// A fresh connection of `server`, whose time is driven as a built-in transport's is
    /// (when called inside a tokio runtime).
    pub fn new(server: &McpServer) -> Self {
        drive(server);
        Client::of(server.connection())
    }

    /// A client of `connection` (one made for a caller, say); the test drives its server's
    /// time with [`drive`] when it waits on any.
    pub fn of(connection: Connection) -> Self {
        let (sink, messages) = outbox();
        // As over stdio, what is sent outside any request comes on the same stream.
        connection.set_unsolicited(sink.clone());
        Client {
            connection,
            sink,
            messages,
        }
    }

    /// A connection past the handshake (`initialize`, then `notifications/initialized`).
    pub fn initialized(server: &McpServer) -> Self {
        Client::new(server).past_handshake()
    }

    /// The same client, past the handshake at 2025-11-25 (`initialize`, its answer read,
    /// then `notifications/initialized`).
    pub fn past_handshake(mut self) -> Self {
        self.send(INITIALIZE);
        self.next_now();
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        self
    }

    /// Sends one message and runs the work it leaves, as a transport does; whether it
    /// was a request.
    pub fn send(&mut self, text: &str) -> bool {
        let handled = self.connection.handle(text.as_bytes(), &self.sink);
        let request = handled.is_request();
        if let Some(work) = handled.into_work() {
            tokio::spawn(work.run());
        }
        request
    }

    /// The next message, which must already be there (a synchronous answer).
    pub fn next_now(&mut self) -> Value {
        let message = self.messages.try_recv().expect("an answer at once");
        serde_json::from_slice(&message.bytes).unwrap()
    }

    /// The next message, waiting for it ([`PATIENCE`] at most).
    pub async fn next(&mut self) -> Value {
        let message = tokio::time::timeout(*PATIENCE, self.messages.recv())
            .await
            .unwrap_or_else(|_| panic!("no message within {:?}", *PATIENCE))
            .expect("the channel is open");
        serde_json::from_slice(&message.bytes).unwrap()
    }

    /// Whether no message is waiting.
    pub fn nothing_yet(&mut self) -> bool {
        self.messages.try_recv().is_none()
    }

    /// Waits until the server lists tool `name` (a mount lists its server's tools in the
    /// background once the server is served), asking with ids from 1001 on.
    pub async fn until_listed(&mut self, name: &str) {
        let mut id = 1000;
        wait_for(&format!("{name} is listed"), async || {
            id += 1;
            let list = self
                .answer(&rpc::request(id, "tools/list", serde_json::json!({})))
                .await;
            names(&list, "tools", "name")
                .iter()
                .any(|listed| listed == name)
        })
        .await;
    }

    /// Sends a request and waits for its answer, passing over the notifications that come
    /// first (a list that changed, say); another request's answer fails the test.
    pub async fn answer(&mut self, text: &str) -> Value {
        let id = serde_json::from_str::<Value>(text).expect("a JSON request")["id"].clone();
        self.send(text);
        loop {
            let message = self.next().await;
            if message.get("id").is_none() && message.get("method").is_some() {
                continue;
            }
            assert_eq!(message["id"], id, "the answer to request {id}: {message}");
            return message;
        }
    }

    /// Sends a request and waits for the next message (its answer, when it sends no
    /// notification first).
    pub async fn call(&mut self, text: &str) -> Value {
        self.send(text);
        self.next().await
    }
}

/// A server child process (`serve --http`), stopped by its own process id when dropped.
/// What it writes on stderr goes to its log file; a test that fails while it runs says
/// where that file is.
pub struct ServerProcess {
    /// The child.
    pub child: std::process::Child,
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
    /// Its log file (its stderr).
    pub log: std::path::PathBuf,
    /// The thread copying its stderr into the log file, while it runs.
    copying: Option<std::thread::JoinHandle<()>>,
}

impl ServerProcess {
    /// Stops the server and gives what it wrote on stderr.
    pub fn stop_and_read_logs(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(copying) = self.copying.take() {
            let _ = copying.join();
        }
        logs::read(&self.log)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("the server's log: {}", self.log.display());
        }
    }
}

/// The environment variables that configure a deployed server: a test's own environment
/// must not change what the binaries under test do.
const DEPLOYMENT_VARIABLES: [&str; 30] = [
    "MCP_MAX_IN_FLIGHT",
    "MCP_MAX_IN_FLIGHT_TOTAL",
    "MCP_MAX_SESSIONS",
    "MCP_MAX_CONNECTIONS",
    "MCP_MAX_CONNECTIONS_PER_CLIENT",
    "MCP_HEAD_TIMEOUT",
    "MCP_BODY_TIMEOUT",
    "MCP_STORE",
    "MCP_STORE_PREFIX",
    "MCP_STATE_KEY_FILE",
    "MCP_WHEN_STORE_UNREACHABLE",
    "MCP_STORE_TIMEOUT",
    "MCP_TRUSTED_PROXIES",
    "MCP_DRAIN_DELAY",
    "MCP_BEARER_TOKEN",
    "MCP_BEARER_TOKEN_FILE",
    "MCP_SERVER_TOKEN",
    "MCP_OAUTH_CLIENT_ID",
    "MCP_OAUTH_CLIENT_SECRET",
    "MCP_OAUTH_CREDENTIALS_FILE",
    "MCP_ALLOWED_HOSTS",
    "MCP_CORS_ORIGINS",
    "MCP_OAUTH_RESOURCE",
    "MCP_OAUTH_ISSUER",
    "MCP_OAUTH_JWKS_FILE",
    "MCP_RATE_LIMIT",
    "MCP_MAX_CALLS",
    "MCP_MAX_OUTPUT_TOKENS",
    "MCP_LOG_FORMAT",
    "RUST_LOG",
];

/// A command running the tool binary `binary`, without the deployment variables of the
/// test's own environment and with nothing on its standard input.
pub fn command(binary: &str) -> std::process::Command {
    let mut command = std::process::Command::new(binary);
    for name in DEPLOYMENT_VARIABLES {
        command.env_remove(name);
    }
    command.stdin(std::process::Stdio::null());
    command
}

/// Starts `binary serve --http host:0` with `args` and `env` (the deployment variables
/// of the test's own environment removed), and waits until it says where it listens: the
/// port is the one the server bound, so no other process can have taken it.
pub fn spawn_http(binary: &str, host: &str, args: &[&str], env: &[(&str, &str)]) -> ServerProcess {
    let mut command = command(binary);
    command
        .args(["serve", "--http", &format!("{host}:0")])
        .args(args)
        .stdout(std::process::Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let name = std::path::Path::new(binary)
        .file_name()
        .map_or("server".into(), |name| name.to_string_lossy());
    ServerProcess::start(command, &name)
}

impl ServerProcess {
    /// Starts `command`, a `serve --http` on a port of 127.0.0.1 (`:0`, so the server picks
    /// one nobody holds), and waits until it says where it serves. Its stdout is left as
    /// `command` sets it; its stderr goes to a log file named after `what`.
    pub fn start(command: std::process::Command, what: &str) -> ServerProcess {
        let (child, log, copying, port) = spawn_serving(command, what);
        ServerProcess {
            child,
            port,
            log,
            copying: Some(copying),
        }
    }
}

/// What a started `serve --http` child gives: the child, its log file, the thread copying
/// its stderr there, and the port it listens on.
pub(crate) type Serving = (
    std::process::Child,
    std::path::PathBuf,
    std::thread::JoinHandle<()>,
    u16,
);

/// Spawns `command` (a `serve --http`), its stderr copied to a new log file named after
/// `what`, and waits for the line in which the server says where it listens (the
/// runtime's own info line, there because [`command`] removes `RUST_LOG`). Fails the test,
/// with the log, if the child ends first or says nothing within [`PATIENCE`].
pub(crate) fn spawn_serving(mut command: std::process::Command, what: &str) -> Serving {
    let log = logs::file(what);
    let mut child = command
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("{what} starts: {error}"));
    let stderr = child.stderr.take().expect("stderr is piped");
    let (copying, served) = logs::tee(stderr, &log, served_port);
    let deadline = std::time::Instant::now() + *PATIENCE;
    loop {
        match served.recv_timeout(Duration::from_millis(50)) {
            Ok(port) => return (child, log, copying, port),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                let status = child.wait();
                let _ = copying.join();
                panic!(
                    "{what} ended ({status:?}) before it served; its log ({}):\n{}",
                    log.display(),
                    logs::tail(&log, 40)
                );
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what} did not say where it serves within {:?}; its log ({}):\n{}",
                *PATIENCE,
                log.display(),
                logs::tail(&log, 40)
            );
        }
    }
}

/// The port in a server's "serving MCP over HTTP at http://ADDRESS/..." log line (plain
/// or JSON).
fn served_port(line: &str) -> Option<u16> {
    let (_, rest) = line.split_once("serving MCP over HTTP at http://")?;
    let address = rest.split(['/', '"', ' ']).next()?;
    address.rsplit_once(':')?.1.parse().ok()
}

/// Compares `actual` with the golden file `tests/golden/<file>`, or writes it when
/// `UPDATE_GOLDEN` is set.
pub fn golden(file: &str, actual: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(file);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing {}: run with UPDATE_GOLDEN=1", path.display()));
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(e, a)| e != a)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "{file} differs from its golden file at line {}:\n  golden: {:?}\n  actual: {:?}\n\
             (UPDATE_GOLDEN=1 rewrites it)",
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line)
        );
    }
}
