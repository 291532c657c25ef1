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
use super::asking::settle as settle_verdict;
use super::jsonrpc::{self, code, RequestId};
use super::session::{lock, send};
use super::work::CallWork;
use super::{Message, Shared};
use crate::call::error::CallError;
use crate::tasks::{Task, TaskOutcome, TaskStatus, TaskStore};
use serde_json::{json, Map, Value};
use std::sync::Arc;
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
    Message::error(
        code::MISSING_CAPABILITY,
        jsonrpc::error_response(
            Some(id),
            code::MISSING_CAPABILITY,
            &message,
            Some(json!({"requiredCapabilities": {"extensions": {EXTENSION: {}}}})),
        ),
    )
}

fn timestamp(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The task as 2026-07-28 shows it (flat, `ttlMs`), with what its status adds when
/// `detailed` (`tasks/get`).
fn flat_task(task: &Task, detailed: bool) -> Map<String, Value> {
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
    object.insert("ttlMs".to_owned(), millis(task.ttl).into());
    object.insert(
        "pollIntervalMs".to_owned(),
        millis(task.poll_interval).into(),
    );
    if detailed {
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
            (TaskStatus::Failed, Some(TaskOutcome::Error { code, message })) => {
                object.insert(
                    "error".to_owned(),
                    json!({"code": code, "message": message}),
                );
            }
            _ => {}
        }
    }
    object
}

/// The task as 2025-11-25 shows it (`ttl`, `pollInterval`).
fn core_task(task: &Task) -> Map<String, Value> {
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
    object.insert("ttl".to_owned(), millis(task.ttl).into());
    object.insert("pollInterval".to_owned(), millis(task.poll_interval).into());
    object
}

/// A 2026-07-28 result body: `resultType` and the server's identity.
fn complete_body(shared: &Shared, body: Map<String, Value>) -> Value {
    super::pages::stateless_result(body, &shared.info)
}

/// The answer that creates a task.
fn created(shared: &Shared, id: &RequestId, task: &Task, plan: TaskPlan) -> Message {
    let body = match plan {
        TaskPlan::Extension { .. } => {
            let mut body = flat_task(task, false);
            // A `tools/call` answer always has content, so clients that check it against
            // the result schema accept the task too.
            body.insert("content".to_owned(), json!([]));
            let mut body = match complete_body(shared, body) {
                Value::Object(body) => body,
                _ => Map::new(),
            };
            body.insert("resultType".to_owned(), "task".into());
            Value::Object(body)
        }
        TaskPlan::Core { .. } => json!({"task": core_task(task)}),
    };
    Message::result(jsonrpc::response(id, &body))
}

/// How a call's answer ends its task: completed with its result, or failed with its error.
/// A tool that panicked (or lacked its state) fails the task with an internal error; at
/// 2025-11-25 a tool error fails it too, with its result kept for `tasks/result`.
fn outcome_of(
    message: &Message,
    error: Option<&CallError>,
    plan: TaskPlan,
) -> (TaskStatus, TaskOutcome) {
    if matches!(
        error,
        Some(CallError::Panicked { .. } | CallError::Unavailable { .. })
    ) {
        return (
            TaskStatus::Failed,
            TaskOutcome::Error {
                code: code::INTERNAL_ERROR,
                message: "Internal error: the tool failed unexpectedly".to_owned(),
            },
        );
    }
    let parsed: Value = serde_json::from_slice(&message.bytes).unwrap_or(Value::Null);
    if let Some(result) = parsed.get("result") {
        let status = match plan {
            TaskPlan::Core { .. } if error.is_some() => TaskStatus::Failed,
            _ => TaskStatus::Completed,
        };
        return (status, TaskOutcome::Result(result.clone()));
    }
    let error = parsed.get("error");
    (
        TaskStatus::Failed,
        TaskOutcome::Error {
            code: error
                .and_then(|e| e.get("code"))
                .and_then(Value::as_i64)
                .unwrap_or(code::INTERNAL_ERROR),
            message: error
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("Internal error")
                .to_owned(),
        },
    )
}

/// Resolves once the task `id` is cancelled (or gone from the store).
async fn cancelled_in(store: &dyn TaskStore, id: &str) {
    loop {
        let change = store.changed(id);
        match store.get(id) {
            Some(task) if task.status != TaskStatus::Cancelled => {}
            _ => return,
        }
        change.await;
    }
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
    let mut finish = Box::pin(pending.finish(&context));
    let answer_now = |message: Message| {
        if lock(&guard.state.in_flight).remove(&guard.id).is_some() {
            send(&lock(&notifier.sink), message);
            true
        } else {
            false
        }
    };
    let new_task = |ttl: Duration| {
        Task::new(
            crate::call::ids::unguessable_id(),
            ttl,
            options.poll_interval,
        )
    };

    let task = match plan {
        TaskPlan::Extension { required } => {
            let retry = retry.as_deref();
            let early = tokio::select! {
                biased;
                () = cancellation.cancelled() => return,
                result = &mut finish => Some(result),
                () = tokio::time::sleep(options.promote_after) => None,
            };
            if let Some(result) = early {
                // Ended before becoming a task: answered as any call, except that a tool
                // that runs only as a task answers with a task already ended.
                let verdict = retry.map_or(Verdict::Complete, |r| {
                    r.verdict(result.is_error(), result.input())
                });
                let error = result.error().cloned();
                let message = settle_verdict(&guard.id, verdict, || {
                    super::session::answer(&shared, &guard.id, result, stateless)
                });
                let complete = matches!(message.kind, super::MessageKind::Result)
                    && !is_input_required(&message);
                if !(required && complete) {
                    answer_now(message);
                    return;
                }
                let mut task = new_task(options.ttl);
                let (status, outcome) = outcome_of(&message, error.as_ref(), plan);
                task.end(status, Some(outcome));
                store.insert(task.clone());
                answer_now(created(&shared, &guard.id, &task, plan));
                return;
            }
            let task = new_task(options.ttl);
            let promoted = match retry {
                Some(retry) => retry.promote(&store, &task.id, || store.insert(task.clone())),
                None => {
                    store.insert(task.clone());
                    true
                }
            };
            if !promoted {
                // It asked questions before the moment passed: it returns at once, and
                // its answer asks them.
                let result = tokio::select! {
                    biased;
                    () = cancellation.cancelled() => return,
                    result = &mut finish => result,
                };
                let verdict = retry.map_or(Verdict::Complete, |r| {
                    r.verdict(result.is_error(), result.input())
                });
                answer_now(settle_verdict(&guard.id, verdict, || {
                    super::session::answer(&shared, &guard.id, result, stateless)
                }));
                return;
            }
            task
        }
        TaskPlan::Core { ttl } => {
            let task = new_task(ttl);
            store.insert(task.clone());
            task
        }
    };
    if !answer_now(created(&shared, &guard.id, &task, plan)) {
        store.update(&task.id, &mut |t| t.end(TaskStatus::Cancelled, None));
        return;
    }
    // 2025-11-25: the call's own stream has ended (over HTTP), so what the task sends from
    // now on (progress, log lines, questions, its status) goes where the connection's
    // unsolicited messages go (stdio's output, or the session's GET stream).
    let core = matches!(plan, TaskPlan::Core { .. });
    if core {
        if let Some(unsolicited) = lock(&guard.state.unsolicited).clone() {
            *lock(&notifier.sink) = unsolicited;
        }
        if let Some(live) = &live {
            live.attach(Arc::clone(&store), task.id.clone());
        }
    }
    let announce = |ended: Option<Task>| {
        if let (true, Some(ended)) = (core, ended) {
            let bytes = jsonrpc::notification(
                "notifications/tasks/status",
                &Value::Object(core_task(&ended)),
            );
            send(&lock(&notifier.sink), Message::notification(bytes));
        }
    };
    // The call is answered; the tool runs on for the task, until it ends or the task is
    // cancelled.
    let result = tokio::select! {
        biased;
        () = cancelled_in(store.as_ref(), &task.id) => {
            cancellation.cancel();
            announce(store.get(&task.id));
            return;
        }
        result = &mut finish => result,
    };
    let error = result.error().cloned();
    let verdict = retry.as_deref().map_or(Verdict::Complete, |r| {
        r.verdict(result.is_error(), result.input())
    });
    let message = settle_verdict(&guard.id, verdict, || {
        super::session::answer(&shared, &guard.id, result, stateless)
    });
    let (status, outcome) = outcome_of(&message, error.as_ref(), plan);
    announce(store.update(&task.id, &mut |t| t.end(status, Some(outcome.clone()))));
}

fn is_input_required(message: &Message) -> bool {
    serde_json::from_slice::<Value>(&message.bytes)
        .ok()
        .and_then(|v| {
            v.get("result")?
                .get("resultType")?
                .as_str()
                .map(|t| t == "input_required")
        })
        .unwrap_or(false)
}

/// The `taskId` of a `tasks/*` request, or its -32602 answer.
fn task_id(id: &RequestId, params: Option<&Map<String, Value>>) -> Result<String, Message> {
    match params.and_then(|p| p.get("taskId")) {
        Some(Value::String(task)) => Ok(task.clone()),
        _ => Err(invalid(
            id,
            "Invalid params: \"taskId\" (the task's id, a string) is missing",
        )),
    }
}

fn invalid(id: &RequestId, message: &str) -> Message {
    Message::error(
        code::INVALID_PARAMS,
        jsonrpc::error_response(Some(id), code::INVALID_PARAMS, message, None),
    )
}

fn not_found(id: &RequestId, task: &str) -> Message {
    invalid(
        id,
        &format!("Invalid params: no task {task:?} (it never existed, or it expired)"),
    )
}

/// `tasks/get`, `tasks/update` and `tasks/cancel` at 2026-07-28 (the client declared the
/// extension).
pub(super) fn extension_method(
    shared: &Shared,
    id: &RequestId,
    method: &str,
    params: Option<&Map<String, Value>>,
) -> Message {
    let store = &shared.tasks.store;
    let task = match task_id(id, params) {
        Ok(task) => task,
        Err(refusal) => return refusal,
    };
    let ack = || Message::result(jsonrpc::response(id, &complete_body(shared, Map::new())));
    match method {
        "tasks/get" => match store.get(&task) {
            Some(found) => Message::result(jsonrpc::response(
                id,
                &complete_body(shared, flat_task(&found, true)),
            )),
            None => not_found(id, &task),
        },
        "tasks/update" => {
            let responses = match params.and_then(|p| p.get("inputResponses")) {
                Some(Value::Object(responses)) => responses.clone(),
                _ => {
                    return invalid(
                        id,
                        "Invalid params: \"inputResponses\" must be an object of answers, keyed as the task's inputRequests",
                    )
                }
            };
            // Answers to questions the task is not waiting for are ignored.
            let updated = store.update(&task, &mut |t| {
                for (key, answer) in &responses {
                    t.answer(key, answer);
                }
            });
            match updated {
                Some(_) => ack(),
                None => not_found(id, &task),
            }
        }
        _ => match store.update(&task, &mut |t| t.end(TaskStatus::Cancelled, None)) {
            // Cancelling an ended task is acknowledged too: it stays as it ended.
            Some(_) => ack(),
            None => not_found(id, &task),
        },
    }
}

/// `tasks/get`, `tasks/list` and `tasks/cancel` of 2025-11-25 (`tasks/result` waits, see
/// [`result_work`]).
pub(super) fn core_method(
    shared: &Shared,
    id: &RequestId,
    method: &str,
    params: Option<&Map<String, Value>>,
) -> Message {
    let store = &shared.tasks.store;
    if method == "tasks/list" {
        let after = match params.and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => None,
            Some(Value::String(cursor)) => match store.get(cursor) {
                Some(_) => Some(cursor.clone()),
                None => return invalid(id, &format!("Invalid params: unknown cursor {cursor:?}")),
            },
            Some(_) => return invalid(id, "Invalid params: \"cursor\" must be a string"),
        };
        let page = store.list(after.as_deref(), shared.page_size + 1);
        let more = page.len() > shared.page_size;
        let shown: Vec<Value> = page
            .iter()
            .take(shared.page_size)
            .map(|task| Value::Object(core_task(task)))
            .collect();
        let mut body = json!({"tasks": shown});
        if more {
            body["nextCursor"] = page[shared.page_size - 1].id.clone().into();
        }
        return Message::result(jsonrpc::response(id, &body));
    }
    let task = match task_id(id, params) {
        Ok(task) => task,
        Err(refusal) => return refusal,
    };
    match method {
        "tasks/get" => match store.get(&task) {
            Some(found) => {
                Message::result(jsonrpc::response(id, &Value::Object(core_task(&found))))
            }
            None => not_found(id, &task),
        },
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
                (Some(cancelled), None) => {
                    Message::result(jsonrpc::response(id, &Value::Object(core_task(&cancelled))))
                }
            }
        }
    }
}

/// 2025-11-25 `tasks/result`: waits until the task ends, then answers what the call would
/// have answered, marked as the task's.
pub(super) async fn result_when_ended(shared: Arc<Shared>, id: RequestId, task: String) -> Message {
    let store = Arc::clone(&shared.tasks.store);
    let ended = loop {
        let change = store.changed(&task);
        match store.get(&task) {
            None => return not_found(&id, &task),
            Some(found) if found.status.is_terminal() => break found,
            Some(_) => change.await,
        }
    };
    let related = json!({RELATED_TASK: {"taskId": task}});
    match ended.outcome {
        Some(TaskOutcome::Result(mut result)) => {
            if let Some(object) = result.as_object_mut() {
                object.insert("_meta".to_owned(), related);
            }
            Message::result(jsonrpc::response(&id, &result))
        }
        Some(TaskOutcome::Error { code, message }) => Message::error(
            code,
            jsonrpc::error_response(Some(&id), code, &message, Some(json!({"_meta": related}))),
        ),
        None => Message::error(
            code::INTERNAL_ERROR,
            jsonrpc::error_response(
                Some(&id),
                code::INTERNAL_ERROR,
                "The task was cancelled before it ended; it has no result",
                Some(json!({"_meta": related})),
            ),
        ),
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
        loop {
            let change = self.store.changed(&self.task);
            let found = self.store.get(&self.task)?;
            if found.status.is_terminal() {
                return None;
            }
            if let Some(answer) = found.input_responses.get(&self.key) {
                return Some(answer.clone());
            }
            change.await;
        }
    }
}

impl Drop for TaskQuestion {
    fn drop(&mut self) {
        self.store.update(&self.task, &mut |t| t.forget(&self.key));
    }
}
