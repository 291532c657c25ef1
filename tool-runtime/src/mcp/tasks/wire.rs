//! Tasks as each era writes them: the task object (`ttlMs` at 2026-07-28, `ttl` at
//! 2025-11-25), the answer that creates one, the marks that tie a message to its task, and
//! the errors of task requests.

use super::{TaskPlan, RELATED_TASK};
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::{self, code, RequestId};
use crate::mcp::pages::typed_result;
use crate::mcp::responses::{error_message, result_message};
use crate::mcp::{ServerMessage, Shared};
use crate::tasks::{StoreError, Task, TaskOutcome, TaskStatus};
use serde_json::{json, Map, Value};
use std::time::SystemTime;

fn timestamp(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

/// The task as its era shows it: the same fields, named `ttlMs` and `pollIntervalMs` at
/// 2026-07-28 and `ttl` and `pollInterval` at 2025-11-25.
pub(super) fn task_object(task: &Task, era: Era) -> Map<String, Value> {
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
    object.insert(ttl.to_owned(), crate::mcp::millis(task.ttl).into());
    object.insert(
        poll.to_owned(),
        crate::mcp::millis(task.poll_interval).into(),
    );
    object
}

/// 2026-07-28 `tasks/get`: the task with what its status adds (the questions waiting, the
/// result, or the error).
pub(super) fn detailed_task(task: &Task) -> Map<String, Value> {
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
pub(super) fn created(
    shared: &Shared,
    id: &RequestId,
    task: &Task,
    plan: TaskPlan,
) -> ServerMessage {
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
    ServerMessage::result(jsonrpc::response(id, &body))
}

/// The answer to a 2025-11-25 call that asked for a task the store has no room for.
pub(super) fn no_room(id: &RequestId) -> ServerMessage {
    error_message(
        Some(id),
        code::INTERNAL_ERROR,
        "Internal error: this server holds as many tasks as it can; try again once some have ended",
        None,
    )
}

/// The answer to a request the task store failed (the reason is logged, not sent).
pub(crate) fn store_failed(id: &RequestId, error: &StoreError) -> ServerMessage {
    tracing::error!(%error, "a task request failed");
    error_message(
        Some(id),
        code::INTERNAL_ERROR,
        "Internal error: the server could not reach its task store; retry shortly",
        None,
    )
}

/// Says in `message`'s `_meta` (a request's params, or a result) that it belongs to the
/// task `task`: every message of a task does.
pub(crate) fn mark_related(message: &mut Value, task: &str) {
    if let Some(object) = message.as_object_mut() {
        let meta = object.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(RELATED_TASK.to_owned(), json!({"taskId": task}));
        }
    }
}

/// A `required` call that ended at once, when the store has no room to keep it as a task:
/// its result, as a call's (the client declared it can take either).
pub(super) fn ended_as_call(shared: &Shared, id: &RequestId, task: &Task) -> ServerMessage {
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

pub(super) fn invalid(id: &RequestId, message: &str) -> ServerMessage {
    error_message(Some(id), code::INVALID_PARAMS, message, None)
}

pub(super) fn not_found(id: &RequestId, task: &str) -> ServerMessage {
    invalid(
        id,
        &format!("Invalid params: no task {task:?} (it never existed, or it expired)"),
    )
}
