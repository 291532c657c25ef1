//! How a call that may become a task runs: at 2025-11-25 a task at once; at 2026-07-28 a
//! call first, promoted to a task once it has run for a moment. Once its call is answered
//! with the task, the tool runs on until it ends or the task is cancelled, and its end is
//! recorded in the store.

use super::lease;
use super::listed::{forget_gone, listed};
use super::questions::TaskLink;
use super::wire::{created, ended_as_call, no_room, store_failed, task_object};
use super::TaskPlan;
use crate::call::error::CallError;
use crate::call::ids::unguessable_id;
use crate::call::result::ToolResult;
use crate::call::scope::Cancellation;
use crate::mcp::asking::retry::{RetryAsker, Verdict};
use crate::mcp::asking::{missing_message, settle, verdict};
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::{self, code};
use crate::mcp::relay::{next_of, Relayed};
use crate::mcp::responses::{answer, settled_answer, AnswerFormat};
use crate::mcp::time::{self, Timers};
use crate::mcp::tools::{self, CallAnswer};
use crate::mcp::work::{CallWork, InFlightGuard, RequestSink};
use crate::mcp::{ServerMessage, Shared};
use crate::sync::lock;
use crate::tasks::{StoreError, Task, TaskOutcome, TaskStatus, TaskStore};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// The tool's work, to the result it ends with.
type Finish = Pin<Box<dyn Future<Output = ToolResult> + Send>>;

/// A call that may become a task, while it runs.
struct TaskRun {
    shared: Arc<Shared>,
    guard: InFlightGuard,
    finish: Finish,
    cancellation: Cancellation,
    notifier: Arc<RequestSink>,
    format: AnswerFormat,
    retry: Option<Arc<RetryAsker>>,
    /// The token subject the task belongs to.
    owner: Option<String>,
    store: Arc<dyn TaskStore>,
    link: TaskLink,
    /// Questions the tool stopped waiting for without closing, for the run to forget.
    abandoned: mpsc::UnboundedReceiver<(String, u64)>,
    /// This replica's name, when replicas share the store: the task's lease holder.
    worker: Option<String>,
    /// What another replica needs to run the tool again, when it may.
    rerun: Option<Value>,
}

/// A call that became a task, about to be answered with it.
struct Became {
    task: Task,
    /// What the tool answered while its task was being kept, if it ended that soon.
    ended_meanwhile: Option<ToolResult>,
    /// The connection's task list, when it is due to be trimmed.
    to_trim: Option<Vec<String>>,
}

/// Runs a `tools/call` that may become a task, and answers it. Each answer is made only
/// for a request still in flight: a cancelled one costs nothing (no verdict sealed, no
/// output stored, no task kept).
pub(crate) async fn run(work: CallWork, plan: TaskPlan) {
    let CallWork {
        shared,
        guard,
        pending,
        context,
        cancellation,
        notifier,
        format,
        retry,
        ..
    } = work;
    let store = Arc::clone(&shared.tasks.store);
    let (link, abandoned) = TaskLink::new(Arc::clone(&store), unguessable_id());
    let owner = context.caller().subject().map(str::to_owned);
    let worker = lease::worker(&shared).map(str::to_owned);
    let rerun = worker
        .as_ref()
        .and_then(|_| rerun_of(&pending, context.caller(), retry.as_deref(), &guard, plan));
    let mut run = TaskRun {
        finish: Box::pin(async move { pending.finish(&context).await }),
        shared,
        guard,
        cancellation,
        notifier,
        format,
        retry,
        owner,
        store,
        link,
        abandoned,
        worker,
        rerun,
    };
    let became = match plan {
        TaskPlan::Extension { required } => run.promote(required, plan).await,
        TaskPlan::Core { ttl } => run.create(ttl).await,
    };
    if let Some(became) = became {
        run.go_on_as_task(became, plan).await;
    }
}

impl TaskRun {
    /// A new task of this run's, kept for `ttl` once it ends.
    fn new_task(&self, ttl: Duration) -> Task {
        let mut task = Task::new(
            self.link.id().to_owned(),
            ttl,
            self.shared.tasks.poll_interval,
        );
        task.owner = self.owner.clone();
        if let Some(worker) = &self.worker {
            lease::lease(&mut task, worker, self.shared.clock.now());
            task.attempts = 1;
            task.rerun = self.rerun.clone();
        }
        task
    }

    /// 2025-11-25: the task, kept before the call is answered with it; `None` when the
    /// store had no room or failed (the call is answered so).
    async fn create(&mut self, ttl: Duration) -> Option<Became> {
        let task = self.new_task(ttl);
        let refusal = match self.store.insert(task.clone()).await {
            Ok(true) => None,
            Ok(false) => Some(no_room(&self.guard.id)),
            Err(error) => Some(store_failed(&self.guard.id, &error)),
        };
        if let Some(refusal) = refusal {
            self.guard.answer(&self.notifier.sink, || refusal);
            return None;
        }
        // Listed before the client learns of it.
        let to_trim = listed(&self.guard.state, &task.id);
        Some(Became {
            task,
            ended_meanwhile: None,
            to_trim,
        })
    }

    /// 2026-07-28: the call runs for a moment; one that ends by then is answered as any
    /// call (a `required` tool's with a task already ended); else it becomes a task, when
    /// the store keeps one and the call has asked nothing yet. `None` when the call is
    /// answered (or cancelled) without becoming a task.
    async fn promote(&mut self, required: bool, plan: TaskPlan) -> Option<Became> {
        let promote_after = self.shared.tasks.promote_after;
        let early = tokio::select! {
            biased;
            () = self.cancellation.cancelled() => return None,
            result = &mut self.finish => Some(result),
            () = self.shared.timers.sleep(promote_after) => None,
        };
        if let Some(result) = early {
            self.ended_early(result, required, plan).await;
            return None;
        }
        let task = self.new_task(self.shared.tasks.ttl);
        let mut ended_meanwhile = None;
        // Whether it becomes a task, with the round's promotion to settle if it has a
        // round: `None` when it asked questions before the moment passed (it returns at
        // once, and its answer asks them).
        let promotion = match &self.retry {
            None => Some(None),
            Some(retry) => retry.promoting().map(Some),
        };
        let promoted = match promotion {
            None => false,
            Some(promotion) => {
                let store = self.store.as_ref();
                let cancellation = &self.cancellation;
                let meanwhile = &mut ended_meanwhile;
                let timers = &self.shared.timers;
                let kept = keep_running(
                    store,
                    timers,
                    &task,
                    cancellation,
                    &mut self.finish,
                    meanwhile,
                );
                let kept = kept.await?;
                if let Some(promotion) = promotion {
                    promotion.settle(kept.then(|| self.link.clone()));
                }
                kept
            }
        };
        if !promoted {
            self.stay_a_call(ended_meanwhile).await;
            return None;
        }
        Some(Became {
            task,
            ended_meanwhile,
            to_trim: None,
        })
    }

    /// A 2026-07-28 call that ended before it became a task: answered as any call, except
    /// that a tool that runs only as a task answers with a task already ended (when the
    /// store has room for it).
    async fn ended_early(&mut self, result: ToolResult, required: bool, plan: TaskPlan) {
        let (shared, guard, sink) = (&self.shared, &self.guard, &self.notifier.sink);
        let verdict = verdict(self.retry.as_deref(), result.is_error(), result.input());
        if !(required && matches!(verdict, Verdict::Complete)) {
            let format = self.format;
            guard.answer(sink, || {
                settle(&guard.id, verdict, || {
                    answer(shared, &guard.id, result, format)
                })
            });
            return;
        }
        if !guard.in_flight() {
            return;
        }
        let mut task = self.new_task(shared.tasks.ttl);
        let (status, outcome) = ending(shared, verdict, result, plan);
        task.end(status, Some(outcome));
        let kept = kept_or_logged(self.store.insert(task.clone()).await);
        guard.answer(sink, || match kept {
            true => created(shared, &guard.id, &task, plan),
            false => ended_as_call(shared, &guard.id, &task),
        });
    }

    /// A 2026-07-28 call that did not become a task: answered when the tool ends.
    async fn stay_a_call(&mut self, ended_meanwhile: Option<ToolResult>) {
        let result = match ended_meanwhile {
            Some(result) => result,
            None => tokio::select! {
                biased;
                () = self.cancellation.cancelled() => return,
                result = &mut self.finish => result,
            },
        };
        let (shared, guard, retry) = (&self.shared, &self.guard, self.retry.as_deref());
        let format = self.format;
        guard.answer(&self.notifier.sink, || {
            settled_answer(shared, &guard.id, retry, result, format)
        });
    }

    /// The call became `became.task`: it is answered with the task, the tool runs on until
    /// it ends or the task is cancelled, and its end is recorded.
    async fn go_on_as_task(mut self, became: Became, plan: TaskPlan) {
        let Became {
            task,
            ended_meanwhile,
            to_trim,
        } = became;
        // 2025-11-25: the call's own stream ends with its answer (over HTTP), so what the
        // task sends from then on (questions, progress, log lines, its status) goes through
        // its relay: on a `tasks/result` stream waiting for it, else where the connection's
        // unsolicited messages go. The relay is there before the client learns of the task,
        // so no `tasks/result` comes too early for it.
        let sink = &self.notifier.sink;
        let call_stream = Mutex::new(lock(sink).clone());
        let mut relayed = match plan.era() {
            Era::Handshake => {
                self.notifier.attach(self.link.clone());
                Some(Relayed::open(&self.guard.state, &task.id, sink))
            }
            Era::PerRequest => None,
        };
        let (shared, guard) = (&self.shared, &self.guard);
        let answered = guard.answer(&call_stream, || created(shared, &guard.id, &task, plan));
        let ended = match (answered, ended_meanwhile) {
            // Cancelled before it was answered: the client never learns of the task.
            (false, _) => Ended::Cancelled,
            (true, Some(result)) => Ended::Tool(result),
            // The call is answered; the tool runs on for the task.
            (true, None) => self.run_on(&task, &mut relayed).await,
        };
        let recorded = self.record_end(&task, ended, &mut relayed, plan).await;
        if answered {
            announce(&mut relayed, recorded, plan);
        }
        // Last, so the tool never waited on it.
        if let Some(to_trim) = to_trim {
            forget_gone(&self.guard.state, self.store.as_ref(), to_trim).await;
        }
    }

    /// Runs the tool on for its task until it ends or the task is cancelled, relaying what
    /// it sends and forgetting the questions it stopped waiting for.
    async fn run_on(&mut self, task: &Task, relayed: &mut Option<Relayed>) -> Ended {
        let cancelled = cancelled_in(self.store.as_ref(), &task.id);
        tokio::pin!(cancelled);
        let leased = self.worker.clone();
        // Its lease is renewed with the others of this replica, when renewals are due.
        let shared = Arc::clone(&self.shared);
        let running = shared
            .leased_runs
            .enter(leased.is_some().then_some(&*task.id));
        loop {
            tokio::select! {
                biased;
                () = &mut cancelled => return Ended::Cancelled,
                result = &mut self.finish => return Ended::Tool(result),
                () = running.lost() => return Ended::Lost,
                () = self.shared.leased_runs.handing_back(), if leased.is_some() => {
                    let worker = leased.as_deref().unwrap_or_default();
                    lease::hand_back(self.store.as_ref(), &task.id, worker).await;
                    return Ended::Lost;
                }
                message = next_of(relayed) => {
                    if let Some(relayed) = relayed {
                        relayed.forward(message);
                    }
                }
                Some((key, number)) = self.abandoned.recv() => {
                    // Awaited here, not beside the tool: while it runs, the tool cannot
                    // ask again under the key, which `forget` checks before writing.
                    self.link.forget(&key, number).await;
                }
            }
        }
    }

    /// Records how the task ended; the task as the store then holds it.
    async fn record_end(
        &mut self,
        task: &Task,
        ended: Ended,
        relayed: &mut Option<Relayed>,
        plan: TaskPlan,
    ) -> Option<Task> {
        let store = self.store.as_ref();
        match ended {
            // Another replica runs it, or will: its end is not this run's to record.
            Ended::Lost => {
                self.cancellation.cancel();
                self.finish = Box::pin(std::future::pending());
                None
            }
            Ended::Cancelled => {
                self.cancellation.cancel();
                // The tool's work is dropped before the task is recorded cancelled.
                self.finish = Box::pin(std::future::pending());
                let cancel = &mut |t: &mut Task| t.end(TaskStatus::Cancelled, None);
                record(store, &task.id, cancel).await
            }
            Ended::Tool(result) => {
                // What the tool sent (its last progress, its log lines) goes before its end
                // is recorded, which a waiting `tasks/result` answers at once.
                if let Some(relayed) = relayed {
                    relayed.flush();
                }
                let verdict = verdict(self.retry.as_deref(), result.is_error(), result.input());
                let (status, outcome) = ending(&self.shared, verdict, result, plan);
                let end = &mut |t: &mut Task| t.end(status, Some(outcome.clone()));
                record(store, &task.id, end).await
            }
        }
    }
}

/// What another replica needs to run the call's tool again, when it may: the tool is
/// idempotent or read-only.
fn rerun_of(
    pending: &crate::registry::PendingCall,
    caller: &crate::call::caller::Caller,
    retry: Option<&RetryAsker>,
    guard: &InFlightGuard,
    plan: TaskPlan,
) -> Option<Value> {
    let annotations = pending.tool().annotations();
    if annotations.idempotent != Some(true) && annotations.read_only != Some(true) {
        return None;
    }
    let capabilities = match retry {
        Some(retry) => retry.capabilities.clone(),
        None => lock(&guard.state.client_capabilities).clone(),
    };
    let rerun = lease::Rerun {
        tool: pending.tool().name().to_owned(),
        arguments: pending.input().clone(),
        subject: caller.subject().map(str::to_owned),
        scopes: caller.scopes().map(<[String]>::to_vec),
        capabilities,
        extension: matches!(plan, TaskPlan::Extension { .. }),
        ttl_ms: match plan {
            TaskPlan::Core { ttl } => u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            TaskPlan::Extension { .. } => 0,
        },
        #[cfg(feature = "otel")]
        trace: crate::otel::current_traceparent(),
        #[cfg(not(feature = "otel"))]
        trace: None,
    };
    serde_json::to_value(rerun).ok()
}

/// How a finished call ends its task, from the round's verdict and the call's result:
/// completed with the result the call would have answered (at 2025-11-25 a tool error
/// fails the task, its result kept for `tasks/result`), or failed with a protocol error
/// (at 2026-07-28 a tool that panicked, or lacked its state, fails it with an internal
/// error, which is what `failed` is for there).
pub(super) fn ending(
    shared: &Shared,
    verdict: Verdict,
    result: ToolResult,
    plan: TaskPlan,
) -> (TaskStatus, TaskOutcome) {
    let failed_with = |code: i64, message: String, data: Option<Value>| {
        let outcome = TaskOutcome::Error {
            code,
            message,
            data,
        };
        (TaskStatus::Failed, outcome)
    };
    let failed = |code: i64, message: String| failed_with(code, message, None);
    match verdict {
        Verdict::Complete => {}
        Verdict::Invalid(why) => return failed(code::INVALID_PARAMS, why),
        Verdict::Missing(required) => {
            return failed(code::MISSING_CAPABILITY, missing_message(&required))
        }
        // A task's questions wait in the task: none is left for a retry.
        Verdict::InputRequired(_) => {
            return failed(
                code::INTERNAL_ERROR,
                "Internal error: the task asked for a retry".to_owned(),
            )
        }
    }
    let broke = matches!(
        result.error(),
        Some(CallError::Panicked { .. } | CallError::Unavailable { .. })
    );
    if broke && plan.era() == Era::PerRequest {
        return failed(
            code::INTERNAL_ERROR,
            "Internal error: the tool failed unexpectedly".to_owned(),
        );
    }
    // 2025-11-25: a task that needs the user at pages fails as the call would have, with
    // -32042 and its pages.
    let pages_as_error = plan.era().has_url_elicitation_error();
    match tools::answer(
        result,
        shared.max_output_bytes,
        Some(&shared.outputs),
        pages_as_error,
        plan.era() == Era::Handshake,
    ) {
        CallAnswer::Result(body) => {
            let status = match plan {
                TaskPlan::Core { .. } if body.is_error() => TaskStatus::Failed,
                _ => TaskStatus::Completed,
            };
            (status, TaskOutcome::Result(Value::Object(body.into_map())))
        }
        CallAnswer::Error {
            code,
            message,
            data,
        } => failed_with(code, message, data),
    }
}

/// Resolves once the task `id` is cancelled (or gone from the store).
pub(super) async fn cancelled_in(store: &dyn TaskStore, id: &str) {
    crate::tasks::wait_for(store, id, |task| match task {
        Some(task) if task.status != TaskStatus::Cancelled => None,
        _ => Some(()),
    })
    .await;
}

/// Records a change of the running task `id`; a store that fails is logged (the tool goes
/// on, and the task shows what the store last kept).
pub(super) async fn record(
    store: &dyn TaskStore,
    id: &str,
    change: &mut (dyn FnMut(&mut Task) + Send),
) -> Option<Task> {
    match store.update(id, change).await {
        Ok(updated) => updated,
        Err(error) => {
            tracing::error!(task = id, %error, "could not record a task's change");
            None
        }
    }
}

/// How long a cancelled call waits for the store to say whether it kept the call's task
/// (to record it cancelled) before it lets go.
const STORE_PATIENCE: Duration = Duration::from_secs(10);

/// How the run of a task ended.
pub(super) enum Ended {
    /// The task was cancelled (or its call, before it was answered).
    Cancelled,
    /// The tool returned.
    Tool(ToolResult),
    /// Another replica took the task over (this one's lease lapsed), or this replica
    /// handed it back as it shut down.
    Lost,
}

/// Tells a 2025-11-25 task's client its status, once it has ended.
fn announce(relayed: &mut Option<Relayed>, ended: Option<Task>, plan: TaskPlan) {
    if let (Some(relayed), Some(ended)) = (relayed, ended) {
        let status = Value::Object(task_object(&ended, plan.era()));
        let bytes = jsonrpc::notification("notifications/tasks/status", &status);
        relayed.send_last(ServerMessage::notification(bytes));
    }
}

/// Keeps `task` while its tool runs on (a slow store does not stall it, and a question
/// it asks meanwhile waits for the promotion); what the tool answered meanwhile, if it
/// ended that soon, goes to `ended`. Whether the store kept it; `None` once the call was
/// cancelled (a task kept all the same is recorded cancelled).
async fn keep_running(
    store: &dyn TaskStore,
    timers: &Arc<Timers>,
    task: &Task,
    cancellation: &Cancellation,
    finish: &mut Finish,
    ended: &mut Option<ToolResult>,
) -> Option<bool> {
    let mut keep = store.insert(task.clone());
    loop {
        tokio::select! {
            biased;
            () = cancellation.cancelled() => {
                if let Some(Ok(true)) = time::within(timers, STORE_PATIENCE, keep).await {
                    let cancel = &mut |t: &mut Task| t.end(TaskStatus::Cancelled, None);
                    record(store, &task.id, cancel).await;
                }
                return None;
            }
            kept = &mut keep => return Some(kept_or_logged(kept)),
            result = finish.as_mut(), if ended.is_none() => *ended = Some(result),
        }
    }
}

/// Whether a task was kept; a store that failed is logged (the call goes on as a call).
fn kept_or_logged(kept: Result<bool, StoreError>) -> bool {
    kept.unwrap_or_else(|error| {
        tracing::error!(%error, "could not keep a task; the call goes on as a call");
        false
    })
}
