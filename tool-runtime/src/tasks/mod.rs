//! Calls that run as tasks: answered at once with a task the client follows (it polls the
//! task, answers its questions, cancels it) while the tool runs on. A tool opts in with
//! `#[tool(task = "optional")]` or `"required"`.
//!
//! Task state lives in a [`TaskStore`]. The default, [`InMemoryTasks`], keeps tasks in this
//! process, each for its time to live (one hour unless [`TaskOptions::ttl`] says otherwise)
//! and at most 10 000 at once. Servers behind one address that must serve each other's
//! tasks share a store of their own; see [`TaskStore`] for what it must guarantee.

mod memory;

pub use memory::InMemoryTasks;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// The tool is running.
    Working,
    /// The tool waits for answers to the questions in [`Task::input_requests`].
    InputRequired,
    /// The tool ended; [`Task::outcome`] is its result (which may be a tool error).
    Completed,
    /// The call failed at the protocol level; [`Task::outcome`] is the error.
    Failed,
    /// The client cancelled it.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task has ended; an ended task never changes again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The name MCP gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TaskOutcome {
    /// What the call answered (a `tools/call` result, which may say `isError`).
    Result(Value),
    /// The JSON-RPC error the call ended with.
    Error {
        /// Its code.
        code: i64,
        /// Its message.
        message: String,
        /// Its data, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
}

/// One task, as its store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Task {
    /// Its id: unguessable, so knowing a task's id is what lets a client reach it.
    pub id: String,
    /// Where it is in its life.
    pub status: TaskStatus,
    /// Words for people about the status, if any.
    pub status_message: Option<String>,
    /// When it was created.
    pub created_at: SystemTime,
    /// When it last changed.
    pub updated_at: SystemTime,
    /// How long after its creation it is kept.
    pub ttl: Duration,
    /// How often a client should poll it.
    pub poll_interval: Duration,
    /// Questions waiting for the client's answers, by key, as MCP spells them
    /// (`{"method": ..., "params": ...}`).
    pub input_requests: Map<String, Value>,
    /// Answers the client gave that the tool has not taken yet, by key.
    pub input_responses: Map<String, Value>,
    /// How it ended, once it has.
    pub outcome: Option<TaskOutcome>,
    /// The access token subject that started it, when the server checks tokens: only that
    /// subject may read, answer or cancel it (to anyone else it does not exist).
    #[serde(default)]
    pub owner: Option<String>,
    /// The replica running the task's tool, while it runs (servers that share a store).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// When the worker's claim on the task lapses unless it renews it: past it, with the
    /// task not ended, the worker is taken for lost, and the task fails (or runs again,
    /// when its tool is idempotent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_until: Option<SystemTime>,
    /// How many times its tool started: more than once when it ran again after its worker
    /// was lost.
    #[serde(default)]
    pub attempts: u32,
    /// What another replica needs to run the tool again, kept only for idempotent tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rerun: Option<Value>,
}

impl Task {
    /// A new working task.
    pub(crate) fn new(id: String, ttl: Duration, poll_interval: Duration) -> Task {
        let now = SystemTime::now();
        Task {
            id,
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            updated_at: now,
            ttl,
            poll_interval,
            input_requests: Map::new(),
            input_responses: Map::new(),
            outcome: None,
            owner: None,
            worker: None,
            lease_until: None,
            attempts: 0,
            rerun: None,
        }
    }

    /// Whether its worker is lost: it has not ended, and its lease lapsed before `now`.
    pub fn is_orphaned(&self, now: SystemTime) -> bool {
        !self.status.is_terminal() && self.lease_until.is_some_and(|until| until < now)
    }

    /// Whether its time to live has passed.
    pub fn is_expired(&self, now: SystemTime) -> bool {
        now.duration_since(self.created_at)
            .is_ok_and(|age| age > self.ttl)
    }

    /// Ends the task with `status` and `outcome`, unless it has ended already (a task
    /// cancelled while its tool finished stays cancelled).
    pub(crate) fn end(&mut self, status: TaskStatus, outcome: Option<TaskOutcome>) {
        if self.status.is_terminal() {
            return;
        }
        self.status = status;
        // A failure says why in words too.
        if let Some(TaskOutcome::Error { message, .. }) = &outcome {
            self.status_message = Some(message.clone());
        }
        self.outcome = outcome;
        self.input_requests.clear();
        self.worker = None;
        self.lease_until = None;
        self.rerun = None;
        self.touch();
    }

    pub(crate) fn touch(&mut self) {
        self.updated_at = SystemTime::now();
    }

    /// The tool asks `request` under `key`: the task waits for its answer (unless it has
    /// ended).
    pub(crate) fn ask(&mut self, key: &str, request: &Value) {
        if self.status.is_terminal() {
            return;
        }
        // An answer left from an earlier question under the key (one the tool gave up on
        // before it was forgotten) does not answer this one.
        self.input_responses.remove(key);
        self.input_requests.insert(key.to_owned(), request.clone());
        self.status = TaskStatus::InputRequired;
        self.touch();
    }

    /// The client answered the question `key`, if the task still asks it (answers to
    /// anything else are ignored).
    pub(crate) fn answer(&mut self, key: &str, answer: &Value) {
        if self.status.is_terminal() || self.input_requests.remove(key).is_none() {
            return;
        }
        self.input_responses.insert(key.to_owned(), answer.clone());
        self.settle_questions();
    }

    /// The tool stopped waiting for `key` (answered, or given up): the question is gone.
    pub(crate) fn forget(&mut self, key: &str) {
        self.input_responses.remove(key);
        if self.status.is_terminal() || self.input_requests.remove(key).is_none() {
            return;
        }
        self.settle_questions();
    }

    /// Back to working once no question is open.
    fn settle_questions(&mut self) {
        if self.status == TaskStatus::InputRequired && self.input_requests.is_empty() {
            self.status = TaskStatus::Working;
        }
        self.touch();
    }
}

/// A future a [`TaskStore`] returns, borrowing the store and the arguments it was given.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A task store that could not do what it was asked: its database unreachable, a write
/// refused. The request that needed it is answered with an internal error (the reason is
/// logged, never sent to the client), and a running task's tool goes on.
///
/// ```
/// use tool_runtime::tasks::StoreError;
///
/// let error = StoreError::new("connection refused");
/// assert_eq!(error.to_string(), "the task store failed: connection refused");
/// ```
#[derive(Debug)]
pub struct StoreError {
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl StoreError {
    /// The store failed because of `source`.
    pub fn new(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> StoreError {
        StoreError {
            source: source.into(),
        }
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the task store failed: {}", self.source)
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

/// Where tasks are kept. Every method is asynchronous, so a store can live in a database
/// or a cache that several servers share, and every one but
/// [`changed`](TaskStore::changed) can fail with a [`StoreError`].
///
/// Several servers can serve one task (the replica that runs the tool, and any that a
/// client's `tasks/get`, `tasks/update` or `tasks/cancel` reaches) when they share a store
/// that guarantees:
///
/// - **read-your-writes**: a task [`insert`](TaskStore::insert)ed is visible to
///   [`get`](TaskStore::get) on every replica once `insert` has resolved (the client is
///   told of the task only then);
/// - **atomic changes**: [`update`](TaskStore::update) applies its change to the latest
///   version of the task, with no other change in between (answers and cancellations
///   arrive while the tool's replica records its progress). A store that writes with
///   compare-and-swap may call the change again on a newer version after a conflict: the
///   changes the server makes depend only on the task they are given;
/// - **change signals**: [`changed`](TaskStore::changed) resolves on every replica once
///   the task changes after the call (the tool's replica waits on it for answers and for
///   cancellation), or at the latest after a short poll interval;
/// - **retention**: a task is kept at least for its [`ttl`](Task::ttl) from its creation,
///   and may be dropped after.
///
/// A store of your own implements each method as a boxed future. This one counts the
/// tasks it is given and keeps them in memory:
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use tool_runtime::tasks::{InMemoryTasks, StoreError, StoreFuture, Task, TaskOptions, TaskStore};
///
/// #[derive(Default)]
/// struct CountingStore {
///     tasks: InMemoryTasks,
///     inserted: AtomicUsize,
/// }
///
/// impl TaskStore for CountingStore {
///     fn insert(&self, task: Task) -> StoreFuture<'_, Result<bool, StoreError>> {
///         self.inserted.fetch_add(1, Ordering::Relaxed);
///         self.tasks.insert(task)
///     }
///     fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<Option<Task>, StoreError>> {
///         self.tasks.get(id)
///     }
///     fn update<'a>(
///         &'a self,
///         id: &'a str,
///         change: &'a mut (dyn FnMut(&mut Task) + Send),
///     ) -> StoreFuture<'a, Result<Option<Task>, StoreError>> {
///         self.tasks.update(id, change)
///     }
///     fn changed(&self, id: &str) -> StoreFuture<'static, ()> {
///         self.tasks.changed(id)
///     }
/// }
///
/// let options = TaskOptions::default().store(CountingStore::default());
/// # let _ = options;
/// ```
pub trait TaskStore: Send + Sync + 'static {
    /// Keeps a new task; `Ok(false)` when the store has no room for it (the call then
    /// runs without one, or is refused).
    fn insert(&self, task: Task) -> StoreFuture<'_, Result<bool, StoreError>>;
    /// The task `id`, unless unknown or expired.
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<Option<Task>, StoreError>>;
    /// Whether the task `id` is kept (known and not expired); a store can say it without
    /// reading the task.
    fn contains<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move { Ok(self.get(id).await?.is_some()) })
    }
    /// Applies `change` to the task `id` atomically; the task after it, or `None` if
    /// unknown or expired.
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: &'a mut (dyn FnMut(&mut Task) + Send),
    ) -> StoreFuture<'a, Result<Option<Task>, StoreError>>;
    /// Resolves once the task `id` changes after this call (or is dropped). The change is
    /// watched from the call on, not from the first poll of the future.
    fn changed(&self, id: &str) -> StoreFuture<'static, ()>;
    /// Up to `most` tasks whose worker is lost ([`Task::is_orphaned`] at `now`), for a
    /// replica to fail or run again. A store that cannot list them answers none (the
    /// default): such tasks are then found when a client reads them.
    fn orphaned(
        &self,
        now: SystemTime,
        most: usize,
    ) -> StoreFuture<'_, Result<Vec<String>, StoreError>> {
        let _ = (now, most);
        Box::pin(std::future::ready(Ok(Vec::new())))
    }
}

/// One store shared by several servers (replicas in one process, or a test's): each gets
/// a clone of the `Arc`.
impl<S: TaskStore + ?Sized> TaskStore for Arc<S> {
    fn insert(&self, task: Task) -> StoreFuture<'_, Result<bool, StoreError>> {
        (**self).insert(task)
    }
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<Option<Task>, StoreError>> {
        (**self).get(id)
    }
    fn contains<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<bool, StoreError>> {
        (**self).contains(id)
    }
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: &'a mut (dyn FnMut(&mut Task) + Send),
    ) -> StoreFuture<'a, Result<Option<Task>, StoreError>> {
        (**self).update(id, change)
    }
    fn changed(&self, id: &str) -> StoreFuture<'static, ()> {
        (**self).changed(id)
    }
    fn orphaned(
        &self,
        now: SystemTime,
        most: usize,
    ) -> StoreFuture<'_, Result<Vec<String>, StoreError>> {
        (**self).orphaned(now, most)
    }
}

/// How long a waiter whose read failed waits before it reads again.
const RETRY_FAILED_READ: Duration = Duration::from_millis(500);

/// Waits until `decide` makes something of the task `id` as the store holds it (`None`
/// when it is unknown or expired), reading it again each time it changes. A read that
/// fails is logged and tried again after a pause, for as long as it takes: the tool's own
/// waits (its answers, its cancellation) outlast a store that is down for a while.
pub(crate) async fn wait_for<T>(
    store: &dyn TaskStore,
    id: &str,
    decide: impl FnMut(Option<Task>) -> Option<T>,
) -> T {
    match wait_within(store, id, decide, None).await {
        Ok(decided) => decided,
        Err(_) => unreachable!("without a most, a failed read is tried again"),
    }
}

/// As [`wait_for`], giving up with the last error once `most_failures` reads in a row
/// have failed, when given (a client's request is answered rather than left waiting on a
/// store that is down).
pub(crate) async fn wait_within<T>(
    store: &dyn TaskStore,
    id: &str,
    mut decide: impl FnMut(Option<Task>) -> Option<T>,
    most_failures: Option<u32>,
) -> Result<T, StoreError> {
    let mut failures = 0_u32;
    loop {
        // Asked for before reading, so no change between the two is missed.
        let change = store.changed(id);
        match store.get(id).await {
            Ok(found) => {
                failures = 0;
                if let Some(decided) = decide(found) {
                    return Ok(decided);
                }
                change.await;
            }
            Err(error) => {
                failures += 1;
                if most_failures.is_some_and(|most| failures >= most) {
                    return Err(error);
                }
                tracing::warn!(task = id, %error, "could not read a task; trying again");
                tokio::time::sleep(RETRY_FAILED_READ).await;
            }
        }
    }
}

/// How a server runs tasks.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::mcp::ServerOptions;
/// use tool_runtime::tasks::TaskOptions;
///
/// let options = ServerOptions::default()
///     .tasks(
///         TaskOptions::default()
///             .ttl(Duration::from_secs(600))
///             .poll_interval(Duration::from_secs(2)),
///     );
/// # let _ = options;
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct TaskOptions {
    pub(crate) store: Arc<dyn TaskStore>,
    /// Whether `store` was chosen (a server's shared store does not replace it then).
    pub(crate) chosen_store: bool,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) promote_after: Duration,
    pub(crate) max_runs: u32,
}

impl std::fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOptions")
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .field("promote_after", &self.promote_after)
            .field("max_runs", &self.max_runs)
            .finish_non_exhaustive()
    }
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            store: Arc::new(InMemoryTasks::default()),
            chosen_store: false,
            ttl: Duration::from_secs(60 * 60),
            poll_interval: Duration::from_millis(500),
            promote_after: Duration::from_millis(100),
            max_runs: 2,
        }
    }
}

impl TaskOptions {
    /// Keeps tasks in `store` instead of this process's memory.
    pub fn store(mut self, store: impl TaskStore) -> Self {
        self.store = Arc::new(store);
        self.chosen_store = true;
        self
    }

    /// How long a task is kept after its creation (at most; a client may ask for less).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How often clients are asked to poll.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// At protocol 2026-07-28, how long a call that may run as a task runs before it
    /// becomes one (100 ms unless set). A call that ends sooner is answered as any call
    /// (a `required` one as a task already ended), and the questions it asks sooner are
    /// answered before the task exists, by the client's retry; questions asked later go
    /// through the task.
    pub fn promote_after(mut self, after: Duration) -> Self {
        self.promote_after = after;
        self
    }

    /// With replicas sharing a store: how many times in all the tool of a task may run
    /// when the replica running it is lost (2 unless set: it runs once more elsewhere). Only
    /// tools marked `idempotent` or `read_only` run again; any other task whose replica is
    /// lost ends `failed`, saying so.
    pub fn max_runs(mut self, runs: u32) -> Self {
        self.max_runs = runs.max(1);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_question_asked_again_under_its_key_waits_for_a_new_answer() {
        let mut task = Task::new("t".into(), Duration::from_secs(60), Duration::from_secs(1));
        task.ask("confirm", &json!({"message": "first"}));
        task.answer("confirm", &json!({"action": "accept"}));
        assert_eq!(task.input_responses.len(), 1);
        task.ask("confirm", &json!({"message": "second"}));
        assert!(
            task.input_responses.is_empty(),
            "{:?}",
            task.input_responses
        );
        assert_eq!(task.status, TaskStatus::InputRequired);
    }
}
