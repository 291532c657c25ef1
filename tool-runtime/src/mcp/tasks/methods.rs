//! The `tasks/*` methods of both eras over the task store. A task is reachable only by
//! the token subject that started it: to anyone else it does not exist.

use super::listed::unlist;
use super::wire::{detailed_task, invalid, mark_related, not_found, store_failed, task_object};
use crate::call::caller::Caller;
use crate::mcp::connection::State;
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::{self, code, RequestId};
use crate::mcp::params::{Method, MethodParams};
use crate::mcp::responses::{error_message, result_message};
use crate::mcp::{ServerMessage, Shared};
use crate::sync::lock;
use crate::tasks::{StoreError, Task, TaskOutcome, TaskStatus, TaskStore};
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::sync::Arc;

/// How many reads of a task in a row may fail before a waiting `tasks/result` is answered
/// that the store failed.
const RESULT_READS: u32 = 3;

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
pub(crate) struct TaskRequest {
    pub(crate) shared: Arc<Shared>,
    pub(crate) id: RequestId,
    /// What it asks: `tasks/get`, `tasks/cancel`, `tasks/result`, `tasks/list` or
    /// `tasks/update`, with its params.
    pub(crate) asked: MethodParams,
    pub(crate) caller: Caller,
}

impl TaskRequest {
    /// The method asked.
    fn method(&self) -> Method {
        self.asked.method()
    }

    /// The id of the task the request names (none for `tasks/list`).
    fn task(&self) -> String {
        match &self.asked {
            MethodParams::Task(_, params) => params.task_id.clone(),
            MethodParams::UpdateTask(params) => params.task_id.clone(),
            _ => String::new(),
        }
    }

    /// The task the request names and its caller may reach; else its answer.
    async fn reached(&self) -> Result<(String, Task), ServerMessage> {
        let task = self.task();
        match owned(self.shared.tasks.store.as_ref(), &task, &self.caller).await {
            Ok(Some(found)) => Ok((task, found)),
            Ok(None) => Err(not_found(&self.id, &task)),
            Err(error) => Err(store_failed(&self.id, &error)),
        }
    }

    /// Applies `change` to the task the request names, if its caller may reach it (in the
    /// same store operation, so a change costs one); the task after it, else the answer.
    async fn update(
        &self,
        change: &mut (dyn FnMut(&mut Task) + Send),
    ) -> Result<Task, ServerMessage> {
        let task = self.task();
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
pub(crate) async fn extension_method(request: TaskRequest) -> ServerMessage {
    let id = &request.id;
    let complete =
        |body: Map<String, Value>| result_message(&request.shared, id, body, Era::PerRequest);
    let updated = match &request.asked {
        MethodParams::Task(Method::GetTask, _) => {
            return match request.reached().await {
                Ok((_, found)) => complete(detailed_task(&found)),
                Err(answer) => answer,
            }
        }
        MethodParams::UpdateTask(params) => {
            let responses = &params.input_responses;
            // Answers to questions the task is not waiting for are ignored.
            request
                .update(&mut |t| {
                    for (key, answer) in responses {
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
pub(crate) async fn core_method(request: TaskRequest, state: Arc<State>) -> ServerMessage {
    let id = &request.id;
    if request.method() == Method::ListTasks {
        return list(&request, &state).await;
    }
    let shown = |found: &Task| {
        ServerMessage::result(jsonrpc::response(
            id,
            &Value::Object(task_object(found, Era::Handshake)),
        ))
    };
    if request.method() == Method::GetTask {
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
async fn list(request: &TaskRequest, state: &State) -> ServerMessage {
    let id = &request.id;
    let store = &request.shared.tasks.store;
    let listed = lock(&state.tasks).tasks.clone();
    // A cursor is the number of the last task of the page before (kept or not since).
    let cursor = match &request.asked {
        MethodParams::ListTasks(params) => params.cursor.clone(),
        _ => None,
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
    ServerMessage::result(jsonrpc::response(id, &body))
}

/// 2025-11-25 `tasks/result`: once the task is found to be the caller's, `attach` is
/// called (the task's messages go to the request's stream from then on); then it waits
/// until the task ends, and answers what the call would have answered, marked as the
/// task's.
pub(crate) async fn result_when_ended(
    request: TaskRequest,
    attach: impl FnOnce(&str),
) -> ServerMessage {
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
            ServerMessage::result(jsonrpc::response(&id, &result))
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
