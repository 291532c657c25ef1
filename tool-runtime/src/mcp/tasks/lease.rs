//! Tasks that outlive the replica running them, when replicas share a store: the replica
//! running a task's tool holds a lease on it, renewed every [`RENEW_EVERY`]; a replica whose
//! lease lapsed is taken for lost. Every replica looks for such tasks every
//! [`SWEEP_EVERY`]: one whose tool is idempotent (or read-only) runs again on the replica
//! that finds it, at most as many times as allowed; any other ends `failed`, saying its
//! worker was lost. A replica that shuts down hands its tasks back (lease released) rather
//! than failing them. The renewals and the looks are work the server's driver runs when
//! they are due (see the `duties` module), not loops of their own.

use super::questions::TaskLink;
use super::run::{ending, record, Ended};
use super::TaskPlan;
use crate::call::ask::{AskError, Asker, ClientCapability, Question};
use crate::call::caller::Caller;
use crate::call::scope::{CallScope, Cancellation};
use crate::mcp::asking::retry::ask_in_task;
use crate::mcp::jsonrpc::code;
use crate::mcp::work::Work;
use crate::mcp::Shared;
use crate::sync::lock;
use crate::tasks::{Task, TaskOutcome, TaskStatus, TaskStore};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// How long a lease lasts unless renewed.
pub(crate) const LEASE: Duration = Duration::from_secs(3);
/// How often a running task's lease is renewed.
pub(crate) const RENEW_EVERY: Duration = Duration::from_secs(1);
/// How often a replica looks for tasks whose worker was lost.
pub(crate) const SWEEP_EVERY: Duration = Duration::from_secs(1);
/// How many lost tasks one look takes at most.
const SWEEP_MOST: usize = 32;

/// What a task failed for lost is told.
const WORKER_LOST: &str = "Internal error: the server replica running this task stopped \
                           before the task ended (its worker was lost); start it again";

/// What another replica needs to run a task's tool again.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Rerun {
    /// The tool and its arguments.
    pub(crate) tool: String,
    pub(crate) arguments: Value,
    /// Who called it: the subject and scopes of its access token, if any.
    pub(crate) subject: Option<String>,
    pub(crate) scopes: Option<Vec<String>>,
    /// What the client declared it can do (for its questions).
    pub(crate) capabilities: Value,
    /// The era whose task it is: `true` for the 2026-07-28 extension.
    pub(crate) extension: bool,
    /// The time to live of a 2025-11-25 task.
    pub(crate) ttl_ms: u64,
    /// The trace context (`traceparent`) of the call that started the task, when traces
    /// are kept: a run elsewhere links to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) trace: Option<String>,
}

impl Rerun {
    fn plan(&self) -> TaskPlan {
        match self.extension {
            true => TaskPlan::Extension { required: false },
            false => TaskPlan::Core {
                ttl: Duration::from_millis(self.ttl_ms),
            },
        }
    }

    fn caller(&self) -> Caller {
        let caller = Caller::http(None);
        match (&self.subject, &self.scopes) {
            (Some(subject), Some(scopes)) => {
                caller.with_subject(subject.as_str(), scopes.iter().cloned())
            }
            (Some(subject), None) => caller.with_subject(subject.as_str(), Vec::<String>::new()),
            _ => caller,
        }
    }
}

/// This replica's name in the shared store, when there is one: the lease holder's name.
pub(crate) fn worker(shared: &Shared) -> Option<&str> {
    shared.store.as_ref().map(|store| store.replica())
}

/// Takes the lease on `task` for `worker`, at `now`.
pub(crate) fn lease(task: &mut Task, worker: &str, now: SystemTime) {
    task.worker = Some(worker.to_owned());
    task.lease_until = Some(now + LEASE);
}

/// What renewing a lease found.
pub(super) enum Renewed {
    /// Still this replica's.
    Kept,
    /// Taken by another replica, or the task ended: this replica's run is over.
    Lost,
    /// The store did not answer: the run goes on, and tries again.
    Unknown,
}

/// Renews `worker`'s lease on the task `id`, at `now`.
async fn renew(store: &dyn TaskStore, id: &str, worker: &str, now: SystemTime) -> Renewed {
    let mut kept = false;
    let renewed = store
        .update(id, &mut |task| {
            kept = !task.status.is_terminal() && task.worker.as_deref() == Some(worker);
            if kept {
                task.lease_until = Some(now + LEASE);
            }
        })
        .await;
    match renewed {
        Ok(Some(_)) if kept => Renewed::Kept,
        Ok(_) => Renewed::Lost,
        Err(error) => {
            tracing::warn!(task = id, %error, "could not renew a task's lease");
            Renewed::Unknown
        }
    }
}

/// Gives the task `id` back: its lease lapses now, so another replica takes it over.
pub(super) async fn hand_back(store: &dyn TaskStore, id: &str, worker: &str) {
    let released = store
        .update(id, &mut |task| {
            if task.worker.as_deref() == Some(worker) {
                task.worker = None;
                task.lease_until = Some(SystemTime::UNIX_EPOCH);
            }
        })
        .await;
    if let Err(error) = released {
        tracing::warn!(task = id, %error, "could not hand a task back");
    }
}

/// One look for tasks whose worker was lost, at `now`: each taken over is ended, or handed
/// to `found` as the work that runs it again here.
pub(crate) async fn look_for_lost(shared: Arc<Shared>, now: SystemTime, found: impl Fn(Work)) {
    let Some(worker) = worker(&shared).map(str::to_owned) else {
        return;
    };
    let store = Arc::clone(&shared.tasks.store);
    let lost = match store.orphaned(now, SWEEP_MOST).await {
        Ok(lost) => lost,
        Err(error) => {
            tracing::warn!(%error, "could not look for tasks whose worker was lost");
            return;
        }
    };
    for id in lost {
        if let Some(rerun) = take_over(&shared, store.as_ref(), &id, &worker, now).await {
            found(run_again(Arc::clone(&shared), id, rerun, worker.clone()));
        }
    }
}

/// Takes over the task `id` if its worker is still lost: for this replica to run again
/// (its tool allows it, and it has runs left), or ended `failed`. What to run, when taken.
async fn take_over(
    shared: &Shared,
    store: &dyn TaskStore,
    id: &str,
    worker: &str,
    now: SystemTime,
) -> Option<Rerun> {
    let most_runs = shared.tasks.max_runs;
    let mut taken = None;
    let changed = store
        .update(id, &mut |task| {
            taken = None;
            if !task.is_orphaned(now) {
                return;
            }
            let rerun = task
                .rerun
                .as_ref()
                .filter(|_| task.attempts < most_runs)
                .and_then(|rerun| serde_json::from_value::<Rerun>(rerun.clone()).ok());
            match rerun {
                Some(rerun) => {
                    task.attempts += 1;
                    task.status = TaskStatus::Working;
                    task.input_requests.clear();
                    lease(task, worker, now);
                    task.touch();
                    taken = Some(rerun);
                }
                None => {
                    let lost = TaskOutcome::Error {
                        code: code::INTERNAL_ERROR,
                        message: WORKER_LOST.to_owned(),
                        data: None,
                    };
                    task.end(TaskStatus::Failed, Some(lost));
                }
            }
        })
        .await;
    match changed {
        Ok(Some(_)) => taken,
        Ok(None) => None,
        Err(error) => {
            tracing::warn!(task = id, %error, "could not take over a task whose worker was lost");
            None
        }
    }
}

/// The work that runs the tool of the task `id` again on this replica, with its lease, and
/// records its end. Its questions wait in the task (2026-07-28); a 2025-11-25 client, whose
/// questions came on a stream of the lost replica, cannot be asked.
fn run_again(shared: Arc<Shared>, id: String, rerun: Rerun, worker: String) -> Work {
    #[cfg(feature = "otel")]
    let (span_id, rerun_tool) = (id.clone(), (rerun.tool.clone(), rerun.trace.clone()));
    let work = async move {
        tracing::info!(task = %id, tool = %rerun.tool, "running a task again: its worker was lost");
        let store = Arc::clone(&shared.tasks.store);
        let (link, _abandoned) = TaskLink::new(Arc::clone(&store), id.clone());
        let asker = Arc::new(TaskAsker {
            link: rerun.extension.then_some(link),
            capabilities: rerun.capabilities.clone(),
        });
        let scope = CallScope::detached()
            .called_by(rerun.caller())
            .asking(asker);
        let scope = Arc::new(scope);
        let cancellation = scope.cancellation.clone();
        let context = shared.registry.call_context(Arc::clone(&scope));
        let call = shared
            .registry
            .call_in(&rerun.tool, rerun.arguments.clone(), &context);
        tokio::pin!(call);
        let cancelled = super::run::cancelled_in(store.as_ref(), &id);
        tokio::pin!(cancelled);
        let running = shared.leased_runs.enter(Some(&id));
        let ended = tokio::select! {
            biased;
            () = &mut cancelled => Ended::Cancelled,
            result = &mut call => Ended::Tool(result),
            () = running.lost() => Ended::Lost,
            () = shared.leased_runs.handing_back() => {
                hand_back(store.as_ref(), &id, &worker).await;
                Ended::Lost
            }
        };
        match ended {
            Ended::Lost => cancellation.cancel(),
            Ended::Cancelled => {
                cancellation.cancel();
                let cancel = &mut |t: &mut Task| t.end(TaskStatus::Cancelled, None);
                record(store.as_ref(), &id, cancel).await;
            }
            Ended::Tool(result) => {
                let verdict = crate::mcp::asking::retry::Verdict::Complete;
                let (status, outcome) = ending(&shared, verdict, result, rerun.plan());
                let end = &mut |t: &mut Task| t.end(status, Some(outcome.clone()));
                record(store.as_ref(), &id, end).await;
            }
        }
    };
    #[cfg(feature = "otel")]
    return Work::stream(work).in_span(&rerun_span(&span_id, &rerun_tool));
    #[cfg(not(feature = "otel"))]
    Work::stream(work)
}

/// The span of a task's run on a replica that took it over: linked to the call that
/// started the task, wherever that ran (a span of the same trace, had its replica lived).
#[cfg(feature = "otel")]
fn rerun_span(id: &str, rerun: &(String, Option<String>)) -> tracing::Span {
    let (tool, trace) = rerun;
    let span = tracing::info_span!(
        target: "tool_runtime::otel",
        "task run",
        "otel.name" = %format_args!("execute_tool {tool}"),
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = tool.as_str(),
        "tool_runtime.task.id" = id,
        "tool_runtime.task.run_again" = true,
    );
    if let Some(traceparent) = trace {
        crate::otel::spans::link(&span, traceparent);
    }
    span
}

/// The asker of a task run again: its questions wait in the task for `tasks/update`.
struct TaskAsker {
    link: Option<TaskLink>,
    capabilities: Value,
}

impl Asker for TaskAsker {
    fn supports(&self, capability: ClientCapability) -> bool {
        self.link.is_some() && capability.declared_in(&self.capabilities)
    }

    fn ask(
        self: Arc<Self>,
        question: Question,
    ) -> Pin<Box<dyn Future<Output = Result<Value, AskError>> + Send>> {
        let Some(link) = self.link.clone() else {
            return Box::pin(std::future::ready(Err(AskError::Closed)));
        };
        let request = serde_json::json!({
            "method": question.capability.method(),
            "params": question.params,
        });
        Box::pin(ask_in_task(link, question.key, request))
    }
}

/// The runs of this replica that hold a lease, renewed together when renewals are due, and
/// the signal that hands them back.
pub(crate) struct LeasedRuns {
    /// Each leased run's task, and what tells the run its lease was lost.
    runs: Mutex<HashMap<String, Cancellation>>,
    /// Fired when the replica shuts down: every leased run hands its task back.
    hand_back: Cancellation,
    /// Told when the last leased run ends.
    none_left: tokio::sync::Notify,
}

/// One leased run, registered while it lasts.
pub(crate) struct Running<'a> {
    runs: &'a LeasedRuns,
    /// The task, and its run's signal of a lost lease; `None` for a run without a lease.
    leased: Option<(String, Cancellation)>,
}

impl Running<'_> {
    /// Resolves once the run's lease was lost (another replica holds it, or the task
    /// ended); never for a run without a lease.
    pub(crate) async fn lost(&self) {
        match &self.leased {
            Some((_, lost)) => lost.cancelled().await,
            None => std::future::pending().await,
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let Some((task, _)) = self.leased.take() else {
            return;
        };
        let mut runs = lock(&self.runs.runs);
        runs.remove(&task);
        if runs.is_empty() {
            self.runs.none_left.notify_waiters();
        }
    }
}

impl Default for LeasedRuns {
    fn default() -> Self {
        LeasedRuns {
            runs: Mutex::new(HashMap::new()),
            hand_back: Cancellation::new(),
            none_left: tokio::sync::Notify::new(),
        }
    }
}

impl LeasedRuns {
    /// Registers a run while the guard lives, when it holds a lease on `task`.
    pub(crate) fn enter(&self, task: Option<&str>) -> Running<'_> {
        let leased = task.map(|task| {
            let lost = Cancellation::new();
            lock(&self.runs).insert(task.to_owned(), lost.clone());
            (task.to_owned(), lost)
        });
        Running { runs: self, leased }
    }

    /// Renews the lease of every run, at `now`; a run whose lease was lost is told so.
    pub(crate) async fn renew_all(&self, store: &dyn TaskStore, worker: &str, now: SystemTime) {
        let runs: Vec<(String, Cancellation)> = lock(&self.runs)
            .iter()
            .map(|(task, lost)| (task.clone(), lost.clone()))
            .collect();
        for (task, lost) in runs {
            if let Renewed::Lost = renew(store, &task, worker, now).await {
                lost.cancel();
            }
        }
    }

    /// Resolves once the replica hands its tasks back.
    pub(crate) async fn handing_back(&self) {
        self.hand_back.cancelled().await;
    }

    /// Hands every leased run's task back, and waits until each has.
    pub(crate) async fn hand_back(&self) {
        loop {
            // Registered before the runs are counted, so the last one cannot slip between.
            let none_left = self.none_left.notified();
            tokio::pin!(none_left);
            none_left.as_mut().enable();
            self.hand_back.cancel();
            if lock(&self.runs).is_empty() {
                return;
            }
            none_left.await;
        }
    }
}
