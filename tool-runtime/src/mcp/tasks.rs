//! The protocol side of tasks: when a `tools/call` becomes a task, how the task runs on
//! after the call is answered, and the `tasks/*` methods of both eras.
//!
//! - 2025-11-25 (handshake era): the client asks for a task (`params.task`); the answer is
//!   `{"task": {...}}`; `tasks/get`, `tasks/result` (which waits for the end), `tasks/list`
//!   and `tasks/cancel` follow it; a tool error ends the task `failed`.
//! - 2026-07-28 (the `io.modelcontextprotocol/tasks` extension): the server decides, for a
//!   client that declared the extension in the request; the answer is the task itself,
//!   flat, with `resultType: "task"`; `tasks/get` inlines the result, the error or the
//!   questions waiting (`inputRequests`); `tasks/update` answers them; `tasks/cancel`
//!   acknowledges; a tool error ends the task `completed` (its result says `isError`).

use super::asking::retry::Verdict;
use super::asking::{missing_capability, missing_message, settle, verdict};
use super::connection::{lock, State};
use super::era::Era;
use super::jsonrpc::{self, code, RequestId};
use super::pages::typed_result;
use super::params::{self, ListParams, Method, TaskParams, UpdateTaskParams};
use super::relay::{next_of, Relayed};
use super::responses::{answer, error_message, result_message, settled_answer};
use super::tools::{self, CallAnswer};
use super::work::CallWork;
use super::{Message, Shared};
use crate::call::caller::Caller;
use crate::call::clock;
use crate::call::error::CallError;
use crate::call::ids::unguessable_id;
use crate::call::result::ToolResult;
use crate::call::scope::Cancellation;
use crate::tasks::{StoreError, Task, TaskOutcome, TaskStatus, TaskStore};
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::sync::mpsc;

/// The extension's name, in capabilities.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// Where a 2025-11-25 message names the task it belongs to.
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How a call runs as a task, decided when it starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TaskPlan {
    /// 2026-07-28, the client declared the extension: a task once the call has run for a
    /// moment (or at once for a `required` tool that ends sooner).
    Extension { required: bool },
    /// 2025-11-25, the client asked for a task: one at once, kept for `ttl`.
    Core { ttl: Duration },
}

impl TaskPlan {
    /// The era whose tasks these are: the 2026-07-28 extension's
    /// (`io.modelcontextprotocol/tasks`), or the 2025-11-25 core's. It decides the shape of
    /// their objects and results.
    fn era(self) -> Era {
        match self {
            TaskPlan::Extension { .. } => Era::PerRequest,
            TaskPlan::Core { .. } => Era::Handshake,
        }
    }
}

/// Whether the request's capabilities (2026-07-28 `_meta`) declare the tasks extension.
pub(crate) fn declares_extension(capabilities: Option<&Map<String, Value>>) -> bool {
    capabilities
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(Value::is_object)
}

/// The -32021 error of a request that needs the tasks extension.
pub(crate) fn extension_required(id: &RequestId, what: &str) -> Message {
    let message = format!(
        "Missing required client capability: {what} needs the tasks extension ({EXTENSION}); \
         declare it in _meta[\"io.modelcontextprotocol/clientCapabilities\"].extensions"
    );
    missing_capability(id, &message, json!({"extensions": {EXTENSION: {}}}))
}

fn timestamp(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

/// The task as its era shows it: the same fields, named `ttlMs` and `pollIntervalMs` at
/// 2026-07-28 and `ttl` and `pollInterval` at 2025-11-25.
fn task_object(task: &Task, era: Era) -> Map<String, Value> {
    let (ttl, poll) = match era {
        Era::PerRequest => ("ttlMs", "pollIntervalMs"),
        Era::Handshake => ("ttl", "pollInterval"),
    };
    let mut object = Map::new();
    object.insert("taskId".to_owned(), task.id.clone().into());
    object.insert("status".to_owned(), task.status.as_str().into());
    if let Some(message) = &task.status_message {
        object.insert("statusMessage".to_owned(), message.clone().into());
    }
    object.insert("createdAt".to_owned(), timestamp(task.created_at).into());
    object.insert(
        "lastUpdatedAt".to_owned(),
        timestamp(task.updated_at).into(),
    );
    object.insert(ttl.to_owned(), super::millis(task.ttl).into());
    object.insert(poll.to_owned(), super::millis(task.poll_interval).into());
    object
}

/// 2026-07-28 `tasks/get`: the task with what its status adds (the questions waiting, the
/// result, or the error).
fn detailed_task(task: &Task) -> Map<String, Value> {
    let mut object = task_object(task, Era::PerRequest);
    match (&task.status, &task.outcome) {
        (TaskStatus::InputRequired, _) => {
            object.insert(
                "inputRequests".to_owned(),
                Value::Object(task.input_requests.clone()),
            );
        }
        (TaskStatus::Completed, Some(TaskOutcome::Result(result))) => {
            object.insert("result".to_owned(), result.clone());
        }
        (
            TaskStatus::Failed,
            Some(TaskOutcome::Error {
                code,
                message,
                data,
            }),
        ) => {
            let mut error = json!({"code": code, "message": message});
            if let Some(data) = data {
                error["data"] = data.clone();
            }
            object.insert("error".to_owned(), error);
        }
        _ => {}
    }
    object
}

/// The answer that creates a task.
fn created(shared: &Shared, id: &RequestId, task: &Task, plan: TaskPlan) -> Message {
    let body = match plan {
        TaskPlan::Extension { .. } => {
            let mut body = task_object(task, plan.era());
            // A `tools/call` answer always has content, so clients that check it against
            // the result schema accept the task too.
            body.insert("content".to_owned(), json!([]));
            typed_result(body, "task", &shared.info)
        }
        TaskPlan::Core { .. } => json!({"task": task_object(task, plan.era())}),
    };
    Message::result(jsonrpc::response(id, &body))
}

/// How a finished call ends its task, from the round's verdict and the call's result:
/// completed with the result the call would have answered (at 2025-11-25 a tool error
/// fails the task, its result kept for `tasks/result`), or failed with a protocol error
/// (at 2026-07-28 a tool that panicked, or lacked its state, fails it with an internal
/// error, which is what `failed` is for there).
fn ending(
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
async fn cancelled_in(store: &dyn TaskStore, id: &str) {
    crate::tasks::wait_for(store, id, |task| match task {
        Some(task) if task.status != TaskStatus::Cancelled => None,
        _ => Some(()),
    })
    .await;
}

/// The answer to a 2025-11-25 call that asked for a task the store has no room for.
fn no_room(id: &RequestId) -> Message {
    error_message(
        Some(id),
        code::INTERNAL_ERROR,
        "Internal error: this server holds as many tasks as it can; try again once some have ended",
        None,
    )
}

/// The answer to a request the task store failed (the reason is logged, not sent).
pub(super) fn store_failed(id: &RequestId, error: &StoreError) -> Message {
    tracing::error!(%error, "a task request failed");
    error_message(
        Some(id),
        code::INTERNAL_ERROR,
        "Internal error: the server could not reach its task store; try again",
        None,
    )
}

/// Records a change of the running task `id`; a store that fails is logged (the tool goes
/// on, and the task shows what the store last kept).
async fn record(
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

/// How many reads of a task in a row may fail before a waiting `tasks/result` is answered
/// that the store failed.
const RESULT_READS: u32 = 3;

/// How long a cancelled call waits for the store to say whether it kept the call's task
/// (to record it cancelled) before it lets go.
const STORE_PATIENCE: Duration = Duration::from_secs(10);

/// Runs a `tools/call` that may become a task, and answers it.
pub(super) async fn run(work: CallWork, plan: TaskPlan) {
    let CallWork {
        shared,
        guard,
        pending,
        context,
        cancellation,
        notifier,
        dialect,
        retry,
        ..
    } = work;
    let options = &shared.tasks;
    let store = Arc::clone(&options.store);
    let retry = retry.as_deref();
    let mut finish = Box::pin(pending.finish(&context));
    // Each answer is made only for a request still in flight: a cancelled one costs nothing
    // (no verdict sealed, no output stored, no task kept).
    let sink = &notifier.sink;
    let (link, mut abandoned) = TaskLink::new(Arc::clone(&store), unguessable_id());
    let new_task = |ttl: Duration| {
        let mut task = Task::new(link.id.clone(), ttl, options.poll_interval);
        task.owner = context.caller().subject().map(str::to_owned);
        task
    };
    let mut to_trim = None;
    // What the tool answered while its task was being kept, if it ended that soon.
    let mut ended_meanwhile = None;

    let task = match plan {
        TaskPlan::Extension { required } => {
            let early = tokio::select! {
                biased;
                () = cancellation.cancelled() => return,
                result = &mut finish => Some(result),
                () = clock::sleep(options.promote_after) => None,
            };
            if let Some(result) = early {
                // Ended before becoming a task: answered as any call, except that a tool
                // that runs only as a task answers with a task already ended (when the
                // store has room for it).
                let verdict = verdict(retry, result.is_error(), result.input());
                if !(required && matches!(verdict, Verdict::Complete)) {
                    guard.answer(sink, || {
                        settle(&guard.id, verdict, || {
                            answer(&shared, &guard.id, result, dialect)
                        })
                    });
                    return;
                }
                if !guard.in_flight() {
                    return;
                }
                let mut task = new_task(options.ttl);
                let (status, outcome) = ending(&shared, verdict, result, plan);
                task.end(status, Some(outcome));
                let kept = kept_or_logged(store.insert(task.clone()).await);
                guard.answer(sink, || match kept {
                    true => created(&shared, &guard.id, &task, plan),
                    false => ended_as_call(&shared, &guard.id, &task),
                });
                return;
            }
            let task = new_task(options.ttl);
            // Whether it becomes a task, with the round's promotion to settle if it has a
            // round: `None` when it asked questions before the moment passed (it returns at
            // once, and its answer asks them).
            let promotion = match retry {
                None => Some(None),
                Some(retry) => retry.promoting().map(Some),
            };
            let promoted = match promotion {
                None => false,
                Some(promotion) => {
                    let kept = keep_running(
                        store.as_ref(),
                        &task,
                        &cancellation,
                        &mut finish,
                        &mut ended_meanwhile,
                    );
                    let Some(kept) = kept.await else {
                        return;
                    };
                    if let Some(promotion) = promotion {
                        promotion.settle(kept.then(|| link.clone()));
                    }
                    kept
                }
            };
            if !promoted {
                // It stays a call.
                let result = match ended_meanwhile {
                    Some(result) => result,
                    None => tokio::select! {
                        biased;
                        () = cancellation.cancelled() => return,
                        result = &mut finish => result,
                    },
                };
                guard.answer(sink, || {
                    settled_answer(&shared, &guard.id, retry, result, dialect)
                });
                return;
            }
            task
        }
        TaskPlan::Core { ttl } => {
            let task = new_task(ttl);
            match store.insert(task.clone()).await {
                Ok(true) => {}
                Ok(false) => {
                    guard.answer(sink, || no_room(&guard.id));
                    return;
                }
                Err(error) => {
                    guard.answer(sink, || store_failed(&guard.id, &error));
                    return;
                }
            }
            // Listed before the client learns of it.
            to_trim = listed(&guard.state, &task.id);
            task
        }
    };
    // 2025-11-25: the call's own stream ends with its answer (over HTTP), so what the task
    // sends from then on (questions, progress, log lines, its status) goes through its
    // relay: on a `tasks/result` stream waiting for it, else where the connection's
    // unsolicited messages go. The relay is there before the client learns of the task, so
    // no `tasks/result` comes too early for it.
    let call_stream = Mutex::new(lock(sink).clone());
    let mut relayed = match plan.era() {
        Era::Handshake => {
            notifier.attach(link.clone());
            Some(Relayed::open(&guard.state, &task.id, &notifier.sink))
        }
        Era::PerRequest => None,
    };
    let answered = guard.answer(&call_stream, || created(&shared, &guard.id, &task, plan));
    let ended = match (answered, ended_meanwhile) {
        // Cancelled before it was answered: the client never learns of the task.
        (false, _) => Ended::Cancelled,
        (true, Some(result)) => Ended::Tool(result),
        // The call is answered; the tool runs on for the task, until it ends or the task
        // is cancelled.
        (true, None) => {
            let cancelled = cancelled_in(store.as_ref(), &task.id);
            tokio::pin!(cancelled);
            loop {
                tokio::select! {
                    biased;
                    () = &mut cancelled => break Ended::Cancelled,
                    result = &mut finish => break Ended::Tool(result),
                    message = next_of(&mut relayed) => {
                        if let Some(relayed) = &relayed {
                            relayed.forward(message);
                        }
                    }
                    Some((key, number)) = abandoned.recv() => {
                        // Awaited here, not beside the tool: while it runs, the tool cannot
                        // ask again under the key, which `forget` checks before writing.
                        link.forget(&key, number).await;
                    }
                }
            }
        }
    };
    let recorded = match ended {
        Ended::Cancelled => {
            cancellation.cancel();
            drop(finish);
            let cancel = &mut |t: &mut Task| t.end(TaskStatus::Cancelled, None);
            record(store.as_ref(), &task.id, cancel).await
        }
        Ended::Tool(result) => {
            // What the tool sent (its last progress, its log lines) goes before its end is
            // recorded, which a waiting `tasks/result` answers at once.
            if let Some(relayed) = &mut relayed {
                relayed.flush();
            }
            let verdict = verdict(retry, result.is_error(), result.input());
            let (status, outcome) = ending(&shared, verdict, result, plan);
            let end = &mut |t: &mut Task| t.end(status, Some(outcome.clone()));
            record(store.as_ref(), &task.id, end).await
        }
    };
    if answered {
        announce(&mut relayed, recorded, plan);
    }
    // Last, so the tool never waited on it.
    if let Some(to_trim) = to_trim {
        forget_gone(&guard.state, store.as_ref(), to_trim).await;
    }
}

/// How the run of a task ended.
enum Ended {
    /// The task was cancelled (or its call, before it was answered).
    Cancelled,
    /// The tool returned.
    Tool(ToolResult),
}

/// Tells a 2025-11-25 task's client its status, once it has ended.
fn announce(relayed: &mut Option<Relayed>, ended: Option<Task>, plan: TaskPlan) {
    if let (Some(relayed), Some(ended)) = (relayed, ended) {
        let status = Value::Object(task_object(&ended, plan.era()));
        let bytes = jsonrpc::notification("notifications/tasks/status", &status);
        relayed.send_last(Message::notification(bytes));
    }
}

/// Keeps `task` while its tool runs on (a slow store does not stall it, and a question
/// it asks meanwhile waits for the promotion); what the tool answered meanwhile, if it
/// ended that soon, goes to `ended`. Whether the store kept it; `None` once the call was
/// cancelled (a task kept all the same is recorded cancelled).
async fn keep_running<F: Future<Output = ToolResult>>(
    store: &dyn TaskStore,
    task: &Task,
    cancellation: &Cancellation,
    finish: &mut Pin<Box<F>>,
    ended: &mut Option<ToolResult>,
) -> Option<bool> {
    let mut keep = store.insert(task.clone());
    loop {
        tokio::select! {
            biased;
            () = cancellation.cancelled() => {
                if let Some(Ok(true)) = clock::within(STORE_PATIENCE, keep).await {
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

/// A connection's 2025-11-25 tasks, oldest first, each numbered in the order it was added.
/// A `tasks/list` cursor is the number of the last task of the page before, so it keeps
/// its place when that task is gone since.
#[derive(Default)]
pub(crate) struct ListedTasks {
    tasks: Vec<(u64, String)>,
    added: u64,
}

impl ListedTasks {
    /// The ids of the tasks listed, oldest first.
    fn ids(&self) -> Vec<String> {
        self.tasks.iter().map(|(_, id)| id.clone()).collect()
    }
}

/// Adds a 2025-11-25 task to its connection's list (`tasks/list`). Now and then (each
/// time the list doubles) it gives the list, whose tasks the store no longer keeps are to
/// be forgotten ([`forget_gone`]), so a long connection's list stays as long as its live
/// tasks, at a constant cost per task.
fn listed(state: &State, task: &str) -> Option<Vec<String>> {
    let mut own = lock(&state.tasks);
    let before = own.tasks.len();
    let number = own.added;
    own.added += 1;
    own.tasks.push((number, task.to_owned()));
    (before >= 64 && before.is_power_of_two()).then(|| own.ids())
}

/// Forgets those of `listed` the store no longer keeps (one it cannot say anything of
/// stays).
async fn forget_gone(state: &State, store: &dyn TaskStore, listed: Vec<String>) {
    let mut gone = HashSet::new();
    for id in listed {
        if let Ok(false) = store.contains(&id).await {
            gone.insert(id);
        }
    }
    unlist(state, &gone);
}

/// Takes the tasks in `gone`, which the store no longer keeps, off the connection's list.
fn unlist(state: &State, gone: &HashSet<String>) {
    if !gone.is_empty() {
        lock(&state.tasks)
            .tasks
            .retain(|(_, task)| !gone.contains(task));
    }
}

/// Says in `message`'s `_meta` (a request's params, or a result) that it belongs to the
/// task `task`: every message of a task does.
pub(super) fn mark_related(message: &mut Value, task: &str) {
    if let Some(object) = message.as_object_mut() {
        let meta = object.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(RELATED_TASK.to_owned(), json!({"taskId": task}));
        }
    }
}

/// A `required` call that ended at once, when the store has no room to keep it as a task:
/// its result, as a call's (the client declared it can take either).
fn ended_as_call(shared: &Shared, id: &RequestId, task: &Task) -> Message {
    match &task.outcome {
        Some(TaskOutcome::Result(Value::Object(body))) => {
            result_message(shared, id, body.clone(), Era::PerRequest)
        }
        Some(TaskOutcome::Error {
            code,
            message,
            data,
        }) => error_message(Some(id), *code, message, data.clone()),
        _ => error_message(Some(id), code::INTERNAL_ERROR, "Internal error", None),
    }
}

fn invalid(id: &RequestId, message: &str) -> Message {
    error_message(Some(id), code::INVALID_PARAMS, message, None)
}

pub(super) fn not_found(id: &RequestId, task: &str) -> Message {
    invalid(
        id,
        &format!("Invalid params: no task {task:?} (it never existed, or it expired)"),
    )
}

/// The task `task` if `caller` may reach it: a task started with an access token belongs
/// to that token's subject, and to anyone else it does not exist.
async fn owned(
    store: &dyn TaskStore,
    task: &str,
    caller: &Caller,
) -> Result<Option<Task>, StoreError> {
    Ok(store
        .get(task)
        .await?
        .filter(|found| found.owner.as_deref() == caller.subject()))
}

/// A `tasks/*` request, as its handler takes it.
pub(super) struct TaskRequest {
    pub(super) shared: Arc<Shared>,
    pub(super) id: RequestId,
    pub(super) method: Method,
    pub(super) params: Option<Map<String, Value>>,
    pub(super) caller: Caller,
}

impl TaskRequest {
    /// The request's params as `T`; else its -32602 answer.
    fn read<T: params::Params>(&self) -> Result<T, Message> {
        let empty = Map::new();
        params::read_ref(self.params.as_ref().unwrap_or(&empty))
            .map_err(|message| invalid(&self.id, &message))
    }

    /// The id of the task the request names; else its answer.
    fn task(&self) -> Result<String, Message> {
        self.read::<TaskParams>().map(|params| params.task_id)
    }

    /// The task the request names and its caller may reach; else its answer.
    async fn reached(&self) -> Result<(String, Task), Message> {
        let task = self.task()?;
        match owned(self.shared.tasks.store.as_ref(), &task, &self.caller).await {
            Ok(Some(found)) => Ok((task, found)),
            Ok(None) => Err(not_found(&self.id, &task)),
            Err(error) => Err(store_failed(&self.id, &error)),
        }
    }

    /// Applies `change` to the task the request names, if its caller may reach it (in the
    /// same store operation, so a change costs one); the task after it, else the answer.
    async fn update(&self, change: &mut (dyn FnMut(&mut Task) + Send)) -> Result<Task, Message> {
        let task = self.task()?;
        let subject = self.caller.subject();
        let mut reached = false;
        let updated = self
            .shared
            .tasks
            .store
            .update(&task, &mut |found| {
                reached = found.owner.as_deref() == subject;
                if reached {
                    change(found);
                }
            })
            .await;
        match updated {
            Ok(Some(updated)) if reached => Ok(updated),
            Ok(_) => Err(not_found(&self.id, &task)),
            Err(error) => Err(store_failed(&self.id, &error)),
        }
    }
}

/// `tasks/get`, `tasks/update` and `tasks/cancel` at 2026-07-28 (the client declared the
/// extension).
pub(super) async fn extension_method(request: TaskRequest) -> Message {
    let id = &request.id;
    let complete =
        |body: Map<String, Value>| result_message(&request.shared, id, body, Era::PerRequest);
    let updated = match request.method {
        Method::GetTask => {
            return match request.reached().await {
                Ok((_, found)) => complete(detailed_task(&found)),
                Err(answer) => answer,
            }
        }
        Method::UpdateTask => {
            let responses = match request.read::<UpdateTaskParams>() {
                Ok(params) => params.input_responses,
                Err(answer) => return answer,
            };
            // Answers to questions the task is not waiting for are ignored.
            request
                .update(&mut |t| {
                    for (key, answer) in &responses {
                        t.answer(key, answer);
                    }
                })
                .await
        }
        // Cancelling an ended task is acknowledged too: it stays as it ended.
        _ => {
            request
                .update(&mut |t| t.end(TaskStatus::Cancelled, None))
                .await
        }
    };
    match updated {
        Ok(_) => complete(Map::new()),
        Err(answer) => answer,
    }
}

/// `tasks/get`, `tasks/list` and `tasks/cancel` of 2025-11-25 (`tasks/result` waits, see
/// [`result_when_ended`]) on the connection whose state is `state`. `tasks/list` lists the
/// tasks of that connection only.
pub(super) async fn core_method(request: TaskRequest, state: Arc<State>) -> Message {
    let id = &request.id;
    if request.method == Method::ListTasks {
        return list(&request, &state).await;
    }
    let shown = |found: &Task| {
        Message::result(jsonrpc::response(
            id,
            &Value::Object(task_object(found, Era::Handshake)),
        ))
    };
    if request.method == Method::GetTask {
        return match request.reached().await {
            Ok((_, found)) => shown(&found),
            Err(answer) => answer,
        };
    }
    let mut ended_before = None;
    let updated = request
        .update(&mut |t| {
            ended_before = t.status.is_terminal().then_some(t.status);
            t.end(TaskStatus::Cancelled, None);
        })
        .await;
    match (updated, ended_before) {
        (Err(answer), _) => answer,
        (Ok(ended), Some(status)) => invalid(
            id,
            &format!(
                "Invalid params: cannot cancel task {:?}: it has already ended ({})",
                ended.id,
                status.as_str()
            ),
        ),
        (Ok(cancelled), None) => shown(&cancelled),
    }
}

/// 2025-11-25 `tasks/list`: the connection's tasks still kept, oldest first.
async fn list(request: &TaskRequest, state: &State) -> Message {
    let id = &request.id;
    let store = &request.shared.tasks.store;
    let listed = lock(&state.tasks).tasks.clone();
    // A cursor is the number of the last task of the page before (kept or not since).
    let cursor = match request.read::<ListParams>() {
        Ok(params) => params.cursor,
        Err(answer) => return answer,
    };
    let start = match cursor {
        None => 0,
        Some(cursor) => match cursor.parse::<u64>() {
            Ok(last) => listed.partition_point(|(number, _)| *number <= last),
            Err(_) => return invalid(id, &format!("Invalid params: unknown cursor {cursor:?}")),
        },
    };
    // Read only as far as the page goes, and one kept task past it (there is a next page).
    let most = request.shared.page_size;
    let mut page = Vec::with_capacity(most);
    let mut more = false;
    let mut gone = HashSet::new();
    for (number, task) in &listed[start..] {
        match store.get(task).await {
            Ok(Some(_)) if page.len() == most => {
                more = true;
                break;
            }
            Ok(Some(found)) => page.push((*number, found)),
            Ok(None) => {
                gone.insert(task.clone());
            }
            Err(error) => return store_failed(id, &error),
        }
    }
    unlist(state, &gone);
    let shown: Vec<Value> = page
        .iter()
        .map(|(_, task)| Value::Object(task_object(task, Era::Handshake)))
        .collect();
    let mut body = json!({"tasks": shown});
    if let (true, Some((last, _))) = (more, page.last()) {
        body["nextCursor"] = last.to_string().into();
    }
    Message::result(jsonrpc::response(id, &body))
}

/// 2025-11-25 `tasks/result`: once the task is found to be the caller's, `attach` is
/// called (the task's messages go to the request's stream from then on); then it waits
/// until the task ends, and answers what the call would have answered, marked as the
/// task's.
pub(super) async fn result_when_ended(request: TaskRequest, attach: impl FnOnce(&str)) -> Message {
    let (task, found) = match request.reached().await {
        Ok(reached) => reached,
        Err(answer) => return answer,
    };
    attach(&task);
    let id = request.id;
    // A task that has ended is answered from the read that found it.
    let ended = if found.status.is_terminal() {
        found
    } else {
        let ended = crate::tasks::wait_within(
            request.shared.tasks.store.as_ref(),
            &task,
            |found| match found {
                None => Some(None),
                Some(found) if found.status.is_terminal() => Some(Some(found)),
                Some(_) => None,
            },
            Some(RESULT_READS),
        )
        .await;
        match ended {
            Ok(Some(ended)) => ended,
            Ok(None) => return not_found(&id, &task),
            Err(error) => return store_failed(&id, &error),
        }
    };
    match ended.outcome {
        Some(TaskOutcome::Result(mut result)) => {
            mark_related(&mut result, &task);
            Message::result(jsonrpc::response(&id, &result))
        }
        Some(TaskOutcome::Error {
            code,
            message,
            data,
        }) => {
            // The error's own data (an object), marked as the task's.
            let mut data = data.filter(Value::is_object).unwrap_or_else(|| json!({}));
            mark_related(&mut data, &task);
            error_message(Some(&id), code, &message, Some(data))
        }
        None => {
            let mut related = json!({});
            mark_related(&mut related, &task);
            error_message(
                Some(&id),
                code::INTERNAL_ERROR,
                "The task was cancelled before it ended; it has no result",
                Some(related),
            )
        }
    }
}

/// A running task as the askers of its call reach it: where the call's questions go once
/// it has become the task.
#[derive(Clone)]
pub(crate) struct TaskLink {
    store: Arc<dyn TaskStore>,
    id: String,
    asked: Arc<Mutex<Asked>>,
    /// Where a question the tool stopped waiting for without closing it (its wait was
    /// dropped) goes, for the task's run to forget it.
    abandoned: mpsc::UnboundedSender<(String, u64)>,
}

/// The questions of a task asked in this process: the number of the latest asked under
/// each key. A question is forgotten only while it is the latest under its key, so one
/// asked again under the same key is never forgotten for the one before. (Questions open
/// at the same time need keys of their own, as the retries of 2026-07-28 need them.)
#[derive(Default)]
struct Asked {
    next: u64,
    latest: std::collections::HashMap<String, u64>,
}

impl TaskLink {
    /// The link to the task `id` in `store`, and where its abandoned questions arrive.
    fn new(
        store: Arc<dyn TaskStore>,
        id: String,
    ) -> (TaskLink, mpsc::UnboundedReceiver<(String, u64)>) {
        let (abandoned, arrive) = mpsc::unbounded_channel();
        let link = TaskLink {
            store,
            id,
            asked: Arc::default(),
            abandoned,
        };
        (link, arrive)
    }

    /// The task's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Numbers a question asked under `key`: the latest under it from now on.
    fn number(&self, key: &str) -> u64 {
        let mut asked = lock(&self.asked);
        asked.next += 1;
        let number = asked.next;
        asked.latest.insert(key.to_owned(), number);
        number
    }

    /// Forgets the question `number` under `key` in the task, unless another was asked
    /// under that key since; false when the store failed (the question stays).
    async fn forget(&self, key: &str, number: u64) -> bool {
        let is_latest = |asked: &Asked| asked.latest.get(key) == Some(&number);
        if !is_latest(&lock(&self.asked)) {
            return true;
        }
        if let Err(error) = self.store.update(&self.id, &mut |t| t.forget(key)).await {
            tracing::error!(task = self.id, %error, "could not forget a task's question");
            return false;
        }
        let mut asked = lock(&self.asked);
        if is_latest(&asked) {
            asked.latest.remove(key);
        }
        true
    }
}

/// A question of a task, open until [`close`](TaskQuestion::close)d: the task waits
/// `input_required` with it. A question dropped without being closed (the tool stopped
/// waiting for it) is forgotten by the task's run, since dropping cannot wait for the store.
pub(crate) struct TaskQuestion {
    link: TaskLink,
    key: String,
    number: u64,
    open: bool,
}

impl TaskQuestion {
    /// Opens the question `key` (`request`, as MCP spells it) in the task; `Err` when the
    /// store failed, so the task does not show the question.
    pub(crate) async fn open(
        link: TaskLink,
        key: String,
        request: &Value,
    ) -> Result<TaskQuestion, StoreError> {
        // Made first, so a wait dropped while the store works still forgets it.
        let question = TaskQuestion {
            number: link.number(&key),
            link,
            key,
            open: true,
        };
        let (store, task, key) = (&question.link.store, &question.link.id, &question.key);
        store.update(task, &mut |t| t.ask(key, request)).await?;
        Ok(question)
    }

    /// 2026-07-28: waits for the client's answer through `tasks/update`; `None` once the
    /// task has ended or is gone.
    pub(crate) async fn answered(&self) -> Option<Value> {
        crate::tasks::wait_for(
            self.link.store.as_ref(),
            &self.link.id,
            |found| match found {
                None => Some(None),
                Some(found) if found.status.is_terminal() => Some(None),
                Some(mut found) => found.input_responses.remove(&self.key).map(Some),
            },
        )
        .await
    }

    /// The tool stopped waiting (answered or not): the task forgets the question. Should
    /// the store fail, or this be dropped before it is done, the task's run tries once more
    /// (a question it cannot forget either stays listed until the task ends, and an answer
    /// left with it answers no later question: asking again under the key clears it).
    pub(crate) async fn close(mut self) {
        if self.link.forget(&self.key, self.number).await {
            self.open = false;
        }
    }
}

impl Drop for TaskQuestion {
    fn drop(&mut self) {
        if self.open {
            // Nobody receives it once the run has ended, and the task with it.
            let key = std::mem::take(&mut self.key);
            let _ = self.link.abandoned.send((key, self.number));
        }
    }
}
