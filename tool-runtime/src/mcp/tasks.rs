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
use super::jsonrpc::{self, code, RequestId};
use super::pages::typed_result;
use super::relay::{next_of, Relayed};
use super::session::{error_message, lock, result_message, settled_answer, State};
use super::tools::{self, CallAnswer};
use super::work::CallWork;
use super::{Message, Shared};
use crate::call::caller::Caller;
use crate::call::error::CallError;
use crate::call::result::ToolResult;
use crate::tasks::{Task, TaskOutcome, TaskStatus, TaskStore};
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

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

/// Which protocol's tasks these are: the shape of their objects and results.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TaskEra {
    /// The 2026-07-28 extension (`io.modelcontextprotocol/tasks`).
    Extension,
    /// The 2025-11-25 experimental core.
    Core,
}

impl TaskPlan {
    fn era(self) -> TaskEra {
        match self {
            TaskPlan::Extension { .. } => TaskEra::Extension,
            TaskPlan::Core { .. } => TaskEra::Core,
        }
    }
}

/// Whether the request's capabilities (2026-07-28 `_meta`) declare the tasks extension.
pub(crate) fn declares_extension(capabilities: Option<&Value>) -> bool {
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
fn task_object(task: &Task, era: TaskEra) -> Map<String, Value> {
    let (ttl, poll) = match era {
        TaskEra::Extension => ("ttlMs", "pollIntervalMs"),
        TaskEra::Core => ("ttl", "pollInterval"),
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
    let mut object = task_object(task, TaskEra::Extension);
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
    // 2025-11-25: the task fails as the call would have, with -32042 and its pages.
    if plan.era() == TaskEra::Core {
        if let Some((code, message, data)) = super::asking::url_elicitation_required(&result) {
            return failed_with(code, message, Some(data));
        }
    }
    let broke = matches!(
        result.error(),
        Some(CallError::Panicked { .. } | CallError::Unavailable { .. })
    );
    if broke && plan.era() == TaskEra::Extension {
        return failed(
            code::INTERNAL_ERROR,
            "Internal error: the tool failed unexpectedly".to_owned(),
        );
    }
    match tools::answer(result, shared.max_output_bytes, Some(&shared.outputs)) {
        CallAnswer::Result(body) => {
            let is_error = body.get("isError") == Some(&Value::Bool(true));
            let status = match plan {
                TaskPlan::Core { .. } if is_error => TaskStatus::Failed,
                _ => TaskStatus::Completed,
            };
            (status, TaskOutcome::Result(Value::Object(body)))
        }
        CallAnswer::UnknownTool(message) => failed(code::INVALID_PARAMS, message),
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

/// Runs a `tools/call` that may become a task, and answers it.
pub(super) async fn run(work: CallWork, plan: TaskPlan) {
    let CallWork {
        shared,
        guard,
        pending,
        context,
        cancellation,
        notifier,
        stateless,
        retry,
        live,
        ..
    } = work;
    let options = &shared.tasks;
    let store = Arc::clone(&options.store);
    let retry = retry.as_deref();
    let mut finish = Box::pin(pending.finish(&context));
    // Each answer is made only for a request still in flight: a cancelled one costs nothing
    // (no verdict sealed, no output stored, no task kept).
    let sink = &notifier.sink;
    let new_task = |ttl: Duration| {
        let mut task = Task::new(
            crate::call::ids::unguessable_id(),
            ttl,
            options.poll_interval,
        );
        task.owner = context.caller().subject().map(str::to_owned);
        task
    };

    let task = match plan {
        TaskPlan::Extension { required } => {
            let early = tokio::select! {
                biased;
                () = cancellation.cancelled() => return,
                result = &mut finish => Some(result),
                () = tokio::time::sleep(options.promote_after) => None,
            };
            if let Some(result) = early {
                // Ended before becoming a task: answered as any call, except that a tool
                // that runs only as a task answers with a task already ended (when the
                // store has room for it).
                guard.answer(sink, || {
                    let verdict = verdict(retry, result.is_error(), result.input());
                    if !(required && matches!(verdict, Verdict::Complete)) {
                        return settle(&guard.id, verdict, || {
                            super::session::answer(&shared, &guard.id, result, stateless)
                        });
                    }
                    let mut task = new_task(options.ttl);
                    let (status, outcome) = ending(&shared, verdict, result, plan);
                    task.end(status, Some(outcome));
                    if store.insert(task.clone()) {
                        created(&shared, &guard.id, &task, plan)
                    } else {
                        ended_as_call(&shared, &guard.id, &task)
                    }
                });
                return;
            }
            let task = new_task(options.ttl);
            let insert = || store.insert(task.clone());
            let promoted = match retry {
                Some(retry) => retry.promote(&store, &task.id, insert),
                None => insert(),
            };
            if !promoted {
                // It asked questions before the moment passed (it returns at once, and its
                // answer asks them), or the store has no room: it stays a call.
                let result = tokio::select! {
                    biased;
                    () = cancellation.cancelled() => return,
                    result = &mut finish => result,
                };
                guard.answer(sink, || {
                    settled_answer(&shared, &guard.id, retry, result, stateless)
                });
                return;
            }
            task
        }
        TaskPlan::Core { ttl } => {
            let task = new_task(ttl);
            if !store.insert(task.clone()) {
                guard.answer(sink, || no_room(&guard.id));
                return;
            }
            let mut own = lock(&guard.state.tasks);
            // Forget the connection's tasks the store no longer keeps, now and then (each
            // time the list doubles), so a long connection's list stays as long as its
            // live tasks, at a constant cost per task.
            if own.len() >= 64 && own.len().is_power_of_two() {
                own.retain(|id| store.contains(id));
            }
            own.push(task.id.clone());
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
        TaskEra::Core => {
            if let Some(live) = &live {
                live.attach(Arc::clone(&store), task.id.clone());
            }
            Some(Relayed::open(&guard.state, &task.id, &notifier.sink))
        }
        TaskEra::Extension => None,
    };
    if !guard.answer(&call_stream, || created(&shared, &guard.id, &task, plan)) {
        store.update(&task.id, &mut |t| t.end(TaskStatus::Cancelled, None));
        return;
    }
    let announce = |relayed: &mut Option<Relayed>, ended: Option<Task>| {
        if let (Some(relayed), Some(ended)) = (relayed, ended) {
            let status = Value::Object(task_object(&ended, plan.era()));
            let bytes = jsonrpc::notification("notifications/tasks/status", &status);
            relayed.send_last(Message::notification(bytes));
        }
    };
    // The call is answered; the tool runs on for the task, until it ends or the task is
    // cancelled.
    let result = loop {
        tokio::select! {
            biased;
            () = cancelled_in(store.as_ref(), &task.id) => {
                cancellation.cancel();
                announce(&mut relayed, store.get(&task.id));
                return;
            }
            result = &mut finish => break result,
            message = next_of(&mut relayed) => {
                if let Some(relayed) = &relayed {
                    relayed.forward(message);
                }
            }
        }
    };
    // What the tool sent (its last progress, its log lines) goes before its end is
    // recorded, which a waiting `tasks/result` answers at once.
    if let Some(relayed) = &mut relayed {
        relayed.flush();
    }
    let verdict = verdict(retry, result.is_error(), result.input());
    let (status, outcome) = ending(&shared, verdict, result, plan);
    let ended = store.update(&task.id, &mut |t| t.end(status, Some(outcome.clone())));
    announce(&mut relayed, ended);
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
            result_message(shared, id, body.clone(), true)
        }
        Some(TaskOutcome::Error {
            code,
            message,
            data,
        }) => error_message(Some(id), *code, message, data.clone()),
        _ => error_message(Some(id), code::INTERNAL_ERROR, "Internal error", None),
    }
}

/// The `taskId` of a `tasks/*` request, or its -32602 answer.
pub(super) fn task_id(
    id: &RequestId,
    params: Option<&Map<String, Value>>,
) -> Result<String, Message> {
    match params.and_then(|p| p.get("taskId")) {
        Some(Value::String(task)) => Ok(task.clone()),
        _ => Err(invalid(
            id,
            "Invalid params: \"taskId\" (the task's id, a string) is missing",
        )),
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
fn owned(store: &dyn TaskStore, task: &str, caller: &Caller) -> Option<Task> {
    store
        .get(task)
        .filter(|found| found.owner.as_deref() == caller.subject())
}

/// Whether `caller` may reach the task `task` (see [`owned`]).
pub(super) fn is_owned_by(shared: &Shared, task: &str, caller: &Caller) -> bool {
    owned(shared.tasks.store.as_ref(), task, caller).is_some()
}

/// `tasks/get`, `tasks/update` and `tasks/cancel` at 2026-07-28 (the client declared the
/// extension), for `caller`.
pub(super) fn extension_method(
    shared: &Shared,
    id: &RequestId,
    method: &str,
    params: Option<&Map<String, Value>>,
    caller: &Caller,
) -> Message {
    let store = &shared.tasks.store;
    let task = match task_id(id, params) {
        Ok(task) => task,
        Err(refusal) => return refusal,
    };
    let Some(found) = owned(store.as_ref(), &task, caller) else {
        return not_found(id, &task);
    };
    let complete = |body: Map<String, Value>| result_message(shared, id, body, true);
    match method {
        "tasks/get" => complete(detailed_task(&found)),
        "tasks/update" => {
            let Some(Value::Object(responses)) = params.and_then(|p| p.get("inputResponses"))
            else {
                return invalid(
                    id,
                    "Invalid params: \"inputResponses\" must be an object of answers, keyed as the task's inputRequests",
                );
            };
            // Answers to questions the task is not waiting for are ignored.
            let updated = store.update(&task, &mut |t| {
                for (key, answer) in responses {
                    t.answer(key, answer);
                }
            });
            match updated {
                Some(_) => complete(Map::new()),
                None => not_found(id, &task),
            }
        }
        _ => match store.update(&task, &mut |t| t.end(TaskStatus::Cancelled, None)) {
            // Cancelling an ended task is acknowledged too: it stays as it ended.
            Some(_) => complete(Map::new()),
            None => not_found(id, &task),
        },
    }
}

/// `tasks/get`, `tasks/list` and `tasks/cancel` of 2025-11-25 (`tasks/result` waits, see
/// [`result_when_ended`]), for `caller`. `tasks/list` lists the tasks of the asking
/// connection only.
pub(super) fn core_method(
    shared: &Shared,
    state: &State,
    id: &RequestId,
    method: &str,
    params: Option<&Map<String, Value>>,
    caller: &Caller,
) -> Message {
    let store = &shared.tasks.store;
    if method == "tasks/list" {
        // The connection's tasks still kept, oldest first.
        let own: Vec<Task> = {
            let mut ids = lock(&state.tasks);
            let own: Vec<Task> = ids.iter().filter_map(|task| store.get(task)).collect();
            *ids = own.iter().map(|task| task.id.clone()).collect();
            own
        };
        let start = match params.and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => 0,
            Some(Value::String(cursor)) => match own.iter().position(|task| &task.id == cursor) {
                Some(index) => index + 1,
                None => return invalid(id, &format!("Invalid params: unknown cursor {cursor:?}")),
            },
            Some(_) => return invalid(id, "Invalid params: \"cursor\" must be a string"),
        };
        let page: Vec<&Task> = own.iter().skip(start).take(shared.page_size).collect();
        let shown: Vec<Value> = page
            .iter()
            .map(|task| Value::Object(task_object(task, TaskEra::Core)))
            .collect();
        let mut body = json!({"tasks": shown});
        if start + page.len() < own.len() {
            if let Some(last) = page.last() {
                body["nextCursor"] = last.id.clone().into();
            }
        }
        return Message::result(jsonrpc::response(id, &body));
    }
    let task = match task_id(id, params) {
        Ok(task) => task,
        Err(refusal) => return refusal,
    };
    let shown = |found: &Task| {
        Message::result(jsonrpc::response(
            id,
            &Value::Object(task_object(found, TaskEra::Core)),
        ))
    };
    let Some(found) = owned(store.as_ref(), &task, caller) else {
        return not_found(id, &task);
    };
    match method {
        "tasks/get" => shown(&found),
        _ => {
            let mut ended_before = None;
            let updated = store.update(&task, &mut |t| {
                if t.status.is_terminal() {
                    ended_before = Some(t.status);
                } else {
                    t.end(TaskStatus::Cancelled, None);
                }
            });
            match (updated, ended_before) {
                (None, _) => not_found(id, &task),
                (Some(_), Some(status)) => invalid(
                    id,
                    &format!(
                        "Invalid params: cannot cancel task {task:?}: it has already ended ({})",
                        status.as_str()
                    ),
                ),
                (Some(cancelled), None) => shown(&cancelled),
            }
        }
    }
}

/// 2025-11-25 `tasks/result` (of a task the caller owns, see [`is_owned_by`]): waits until
/// the task ends, then answers what the call would have answered, marked as the task's.
pub(super) async fn result_when_ended(shared: Arc<Shared>, id: RequestId, task: String) -> Message {
    let store = Arc::clone(&shared.tasks.store);
    let ended = crate::tasks::wait_for(store.as_ref(), &task, |found| match found {
        None => Some(None),
        Some(found) if found.status.is_terminal() => Some(Some(found)),
        Some(_) => None,
    })
    .await;
    let Some(ended) = ended else {
        return not_found(&id, &task);
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

/// A question of a task, open while this lives: the task waits `input_required` with it,
/// and forgets it when the tool stops waiting, answered or not.
pub(crate) struct TaskQuestion {
    store: Arc<dyn TaskStore>,
    task: String,
    key: String,
}

impl TaskQuestion {
    /// Opens the question `key` (`request`, as MCP spells it) in `task`.
    pub(crate) fn open(
        store: Arc<dyn TaskStore>,
        task: String,
        key: String,
        request: &Value,
    ) -> TaskQuestion {
        store.update(&task, &mut |t| t.ask(&key, request));
        TaskQuestion { store, task, key }
    }

    /// 2026-07-28: waits for the client's answer through `tasks/update`; `None` once the
    /// task has ended or is gone.
    pub(crate) async fn answered(&self) -> Option<Value> {
        crate::tasks::wait_for(self.store.as_ref(), &self.task, |found| match found {
            None => Some(None),
            Some(found) if found.status.is_terminal() => Some(None),
            Some(mut found) => found.input_responses.remove(&self.key).map(Some),
        })
        .await
    }
}

impl Drop for TaskQuestion {
    fn drop(&mut self) {
        self.store.update(&self.task, &mut |t| t.forget(&self.key));
    }
}
