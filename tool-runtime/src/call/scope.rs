//! What one call can reach while it runs: progress reports, log messages and cancellation.
//! Each is a parameter type the runtime fills in (`Progress`, `Logger`, `Cancellation`),
//! and each is a no-op where the caller gave nothing to report to (a CLI call, a REST call,
//! an MCP request without a `progressToken`).

use futures_util::task::AtomicWaker;
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// Where a call's notifications go: the protocol layer sends them to the client that made
/// the call.
pub(crate) trait Notifier: Send + Sync {
    /// Sends one JSON-RPC notification.
    fn notify(&self, method: &str, params: Value);
}

/// The scope of one running call.
pub(crate) struct CallScope {
    pub(crate) progress_token: Option<Value>,
    pub(crate) notifier: Option<Arc<dyn Notifier>>,
    pub(crate) cancellation: Cancellation,
    /// The least severe level the client wants, shared with its session.
    pub(crate) log_level: Arc<AtomicU8>,
    /// How the call's questions reach its client, if one can be asked.
    pub(crate) asker: Option<Arc<dyn super::ask::Asker>>,
    /// How many questions the call has asked, for their default keys.
    questions: AtomicUsize,
    /// Who made the call.
    pub(crate) caller: super::caller::Caller,
    /// The pages the user must visit before the call can go on, once the tool said so.
    required_pages: std::sync::Mutex<Vec<super::ask::UrlElicitation>>,
    /// The id of the request that made the call, as the client wrote it, when one did.
    pub(crate) request_id: Option<Arc<str>>,
    /// How the call came.
    pub(crate) protocol: Protocol,
}

/// How a call came to the server: over MCP in one of its eras, over the REST endpoints, or
/// made directly on the registry (the command line's `call`, an agent loop, your code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Protocol {
    /// MCP in a session opened with `initialize` (protocol versions up to 2025-11-25).
    McpHandshake,
    /// MCP at 2026-07-28: each request says its version and the client's capabilities.
    McpPerRequest,
    /// The REST endpoints (`POST /tools/{name}`, the JSON-RPC batch endpoint).
    Rest,
    /// A call made directly on the registry.
    Direct,
}

impl CallScope {
    pub(crate) fn new(
        progress_token: Option<Value>,
        notifier: Option<Arc<dyn Notifier>>,
        log_level: Arc<AtomicU8>,
    ) -> Self {
        let caller = super::caller::Caller::default();
        CallScope::of_request(progress_token, notifier, log_level, caller, None)
    }

    /// The scope of a request's call, built whole: a call makes one, and each builder
    /// step would move it again.
    pub(crate) fn of_request(
        progress_token: Option<Value>,
        notifier: Option<Arc<dyn Notifier>>,
        log_level: Arc<AtomicU8>,
        caller: super::caller::Caller,
        asker: Option<Arc<dyn super::ask::Asker>>,
    ) -> Self {
        CallScope {
            progress_token,
            notifier,
            cancellation: Cancellation::new(),
            log_level,
            asker,
            questions: AtomicUsize::new(0),
            caller,
            required_pages: std::sync::Mutex::new(Vec::new()),
            request_id: None,
            protocol: Protocol::Direct,
        }
    }

    /// The same scope, of a call the request `id` made over `protocol`.
    pub(crate) fn of_request_id(mut self, id: Arc<str>, protocol: Protocol) -> Self {
        self.request_id = Some(id);
        self.protocol = protocol;
        self
    }

    /// The same scope, of a call `caller` made.
    pub(crate) fn called_by(mut self, caller: super::caller::Caller) -> Self {
        self.caller = caller;
        self
    }

    /// The scope of a call made directly on a registry (no client): no progress, no log
    /// messages, no questions; its own cancellation, which a timeout fires.
    pub(crate) fn detached() -> Self {
        CallScope::new(None, None, Arc::new(AtomicU8::new(0)))
    }

    /// The same scope, whose questions go through `asker`.
    pub(crate) fn asking(mut self, asker: Arc<dyn super::ask::Asker>) -> Self {
        self.asker = Some(asker);
        self
    }

    /// Records that the call cannot go on until the user has been to `pages`.
    pub(crate) fn require_pages(&self, pages: &[super::ask::UrlElicitation]) {
        let mut required = crate::sync::lock(&self.required_pages);
        required.extend(pages.iter().cloned());
    }

    /// The pages the user must visit before the call can go on, if the tool said so; taken
    /// once the call has ended.
    pub(crate) fn take_required_pages(&self) -> Vec<super::ask::UrlElicitation> {
        std::mem::take(&mut crate::sync::lock(&self.required_pages))
    }

    /// The number of the call's next question, from 1.
    pub(crate) fn next_question(&self) -> usize {
        self.questions.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// Lets a tool tell a waiting client how far along it is. Sends MCP
/// `notifications/progress` when the request asked for progress, and nothing otherwise.
///
/// Reporting never blocks the tool. Notifications wait on the connection until the
/// transport writes them; at most 1024 wait per connection, and past that a new report or
/// log line is dropped (the next report says more anyway, and the answer always goes), so a
/// tool reporting in a loop to a client that reads slowly cannot grow the server's memory.
///
/// ```
/// use tool_runtime::{tool, Progress};
///
/// /// Count slowly.
/// #[tool]
/// async fn count(to: u32, progress: Progress) -> u32 {
///     for step in 1..=to {
///         progress.report(f64::from(step), Some(f64::from(to)), None);
///     }
///     to
/// }
/// ```
#[derive(Clone, Default)]
pub struct Progress {
    scope: Option<Arc<CallScope>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("reporting", &self.is_reporting())
            .finish()
    }
}

impl Progress {
    pub(crate) fn for_scope(scope: Option<Arc<CallScope>>) -> Progress {
        Progress { scope }
    }

    /// Whether reports go anywhere.
    pub fn is_reporting(&self) -> bool {
        self.scope
            .as_ref()
            .is_some_and(|scope| scope.progress_token.is_some() && scope.notifier.is_some())
    }

    /// Reports `progress` (which should grow with each report) out of `total`, if known.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(scope) = &self.scope else { return };
        let (Some(token), Some(notifier)) = (&scope.progress_token, &scope.notifier) else {
            return;
        };
        let mut params = json!({"progressToken": token, "progress": progress});
        if let Some(total) = total {
            params["total"] = total.into();
        }
        if let Some(message) = message {
            params["message"] = message.into();
        }
        notifier.notify("notifications/progress", params);
    }
}

/// Log severities, as MCP (after syslog) names them, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken now.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first, with its MCP name.
    pub const ALL: [(&'static str, LogLevel); 8] = [
        ("debug", LogLevel::Debug),
        ("info", LogLevel::Info),
        ("notice", LogLevel::Notice),
        ("warning", LogLevel::Warning),
        ("error", LogLevel::Error),
        ("critical", LogLevel::Critical),
        ("alert", LogLevel::Alert),
        ("emergency", LogLevel::Emergency),
    ];

    /// The MCP name.
    pub fn name(self) -> &'static str {
        LogLevel::ALL[self as usize].0
    }

    /// The level with this MCP name.
    pub fn from_name(name: &str) -> Option<LogLevel> {
        LogLevel::ALL
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, level)| *level)
    }

    pub(crate) fn from_index(index: u8) -> LogLevel {
        LogLevel::ALL
            .get(usize::from(index))
            .map_or(LogLevel::Emergency, |(_, level)| *level)
    }
}

/// Lets a tool send log messages to the client (MCP `notifications/message`), at or above
/// the level the client asked for with `logging/setLevel`. Any serializable value is a
/// message. Outside MCP (a call through [`Registry::call`](crate::Registry::call), the
/// command line's `call`) there is no client to tell and messages go nowhere; like
/// [`Progress`], logging never blocks the tool.
///
/// ```
/// use tool_runtime::{tool, Logger};
///
/// /// Import rows, telling the client about the ones it skips.
/// #[tool]
/// async fn import(rows: Vec<String>, log: Logger) -> usize {
///     let log = log.named("import");
///     let mut imported = 0;
///     for (line, row) in rows.iter().enumerate() {
///         if row.is_empty() {
///             log.warning(serde_json::json!({"skipped": line, "why": "empty row"}));
///         } else {
///             imported += 1;
///         }
///     }
///     log.info(format!("imported {imported} rows"));
///     imported
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = tool_runtime::Registry::new().unwrap();
/// let result = registry.call("import", serde_json::json!({"rows": ["a", "", "b"]})).await;
/// assert_eq!(result.output(), Some(&serde_json::json!(2)));
/// # });
/// ```
#[derive(Clone, Default)]
pub struct Logger {
    scope: Option<Arc<CallScope>>,
    name: Option<String>,
}

impl std::fmt::Debug for Logger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logger").field("name", &self.name).finish()
    }
}

impl Logger {
    pub(crate) fn for_scope(scope: Option<Arc<CallScope>>) -> Logger {
        Logger { scope, name: None }
    }

    /// A logger that names itself `name` in each message.
    pub fn named(&self, name: impl Into<String>) -> Logger {
        Logger {
            scope: self.scope.clone(),
            name: Some(name.into()),
        }
    }

    /// Sends `data` at `level`, if the client wants that level.
    pub fn log(&self, level: LogLevel, data: impl Serialize) {
        let Some(scope) = &self.scope else { return };
        let Some(notifier) = &scope.notifier else {
            return;
        };
        if level < LogLevel::from_index(scope.log_level.load(Ordering::Relaxed)) {
            return;
        }
        let mut params = json!({
            "level": level.name(),
            "data": serde_json::to_value(data).unwrap_or(Value::Null),
        });
        if let Some(name) = &self.name {
            params["logger"] = name.as_str().into();
        }
        notifier.notify("notifications/message", params);
    }

    /// Sends a debug message.
    pub fn debug(&self, data: impl Serialize) {
        self.log(LogLevel::Debug, data);
    }
    /// Sends an info message.
    pub fn info(&self, data: impl Serialize) {
        self.log(LogLevel::Info, data);
    }
    /// Sends a warning.
    pub fn warning(&self, data: impl Serialize) {
        self.log(LogLevel::Warning, data);
    }
    /// Sends an error message.
    pub fn error(&self, data: impl Serialize) {
        self.log(LogLevel::Error, data);
    }
}

/// Tells a tool that its call was cancelled (by the client, or by a timeout). An async tool
/// is simply dropped; a sync tool, which cannot be, checks this to stop early. The caller
/// has its answer (the timeout error, or nothing after a client's cancellation) without
/// waiting for the tool to notice.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::{tool, Cancellation, Registry};
///
/// /// Count primes below a bound, the slow way.
/// #[tool(timeout = "100ms")]
/// fn count_primes(below: u64, cancel: Cancellation) -> Result<u64, String> {
///     let mut found = 0;
///     for n in 2..below {
///         if n % 1024 == 0 && cancel.is_cancelled() {
///             return Err("stopped".into()); // nobody reads it: the caller has its answer
///         }
///         found += u64::from((2..n).take_while(|d| d * d <= n).all(|d| n % d != 0));
///         std::thread::sleep(Duration::from_micros(5));
///     }
///     Ok(found)
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::new().unwrap();
/// let quick = registry.call("count_primes", serde_json::json!({"below": 20})).await;
/// assert_eq!(quick.output(), Some(&serde_json::json!(8)));
///
/// let slow = registry.call("count_primes", serde_json::json!({"below": 10_000_000})).await;
/// assert_eq!(
///     slow.error().unwrap().to_string(),
///     "tool 'count_primes' did not finish within 100ms and was stopped"
/// );
/// # });
/// ```
#[derive(Clone)]
pub struct Cancellation {
    inner: Arc<CancelInner>,
}

struct CancelInner {
    cancelled: AtomicBool,
    notify: Notify,
    /// The request's own work, which looks at every poll: one waker, no list to join.
    owner: AtomicWaker,
}

impl Default for Cancellation {
    fn default() -> Self {
        Cancellation::new()
    }
}

impl std::fmt::Debug for Cancellation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cancellation")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl Cancellation {
    pub(crate) fn new() -> Self {
        Cancellation {
            inner: Arc::new(CancelInner {
                cancelled: AtomicBool::new(false),
                notify: Notify::new(),
                owner: AtomicWaker::new(),
            }),
        }
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// Waits until the call is cancelled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }

    /// Ready once the call is cancelled; for the one future that runs the request (a
    /// second poller in its place would take its wake-up).
    pub(crate) fn poll_cancelled(&self, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if !self.is_cancelled() {
            self.inner.owner.register(cx.waker());
            if !self.is_cancelled() {
                return std::task::Poll::Pending;
            }
        }
        std::task::Poll::Ready(())
    }

    pub(crate) fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::Release);
        self.inner.owner.wake();
        self.inner.notify.notify_waiters();
    }
}
