//! Calls that run as tasks on the server: started, looked at, waited for, answered, and
//! cancelled. At 2026-07-28 (the tasks extension, which the client always declares) a
//! server may answer any call with a task, and [`Client::call_tool`] waits for it as if it
//! had answered at once; [`Client::start_task`] asks for one outright, in either era (in
//! the handshake era with the call's `task` parameter, which [`Client::call_tool`] also
//! sends for a tool that requires a task, then waits for its result).

use super::handler::{self, ClientHandler};
use super::session::Session;
use super::wire::{ResultKind, RoundResult};
use super::{CallResult, Client, ClientError, Notification};
use crate::mcp::era::Era;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// The extension clients declare to get tasks at 2026-07-28.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// How often a task is looked at when the server names no interval, and at most.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
const LONGEST_POLL: Duration = Duration::from_secs(5);
/// The shortest interval between two looks, whatever the server says.
const SHORTEST_POLL: Duration = Duration::from_millis(20);

/// A task on the server, as it was when last looked at.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RemoteTask {
    /// Its id.
    pub id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// What the server says of where it stands.
    pub message: Option<String>,
    /// How long to wait between two looks, as the server says.
    pub poll_interval: Option<Duration>,
    /// The task as the server sent it.
    pub raw: Value,
}

/// Asks `session`'s server to cancel task `id`, on its own (closing the connection waits for
/// it to be sent): for a task nobody is left to follow.
pub(crate) fn cancel_owed(session: &Arc<Session>, id: String) {
    let asking = Arc::clone(session);
    session.owe(async move {
        let params = json!({"taskId": id});
        let cancelled = asking.request("tasks/cancel", &params, Default::default());
        if let Err(error) = cancelled.await {
            tracing::debug!(%error, task = %id, "a task nobody follows could not be cancelled");
        }
    });
}

impl RemoteTask {
    pub(crate) fn from_value(raw: Value) -> Option<RemoteTask> {
        let poll = raw
            .get("pollIntervalMs")
            .or_else(|| raw.get("pollInterval"))
            .and_then(Value::as_u64)
            .map(Duration::from_millis);
        Some(RemoteTask {
            id: raw["taskId"].as_str()?.to_owned(),
            status: raw["status"].as_str().unwrap_or("working").to_owned(),
            message: raw["statusMessage"].as_str().map(str::to_owned),
            poll_interval: poll,
            raw,
        })
    }

    /// Whether it ended (completed, failed or cancelled).
    pub fn is_over(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "failed" | "cancelled")
    }

    fn wait(&self) -> Duration {
        self.poll_interval
            .unwrap_or(DEFAULT_POLL)
            .clamp(SHORTEST_POLL, LONGEST_POLL)
    }
}

impl Client {
    /// Calls tool `name` as a task: the task, which runs on the server while the client
    /// does other things (a server that answers at once gives a task already completed).
    pub async fn start_task(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<RemoteTask, ClientError> {
        let session = self.session().await?;
        let mut params = json!({"name": name, "arguments": arguments});
        if session.era() == Era::Handshake {
            params["task"] = json!({});
        }
        let result = self.call_once(name, &params).await?;
        let task = match session.era() {
            Era::Handshake => result.get("task").cloned(),
            Era::PerRequest => {
                (RoundResult::kind(&result) == ResultKind::Task).then_some(result.clone())
            }
        };
        match task.and_then(RemoteTask::from_value) {
            Some(task) => Ok(task),
            // Answered at once: a task that is over, its result in it.
            None => Ok(RemoteTask {
                id: String::new(),
                status: "completed".to_owned(),
                message: None,
                poll_interval: None,
                raw: json!({"result": result}),
            }),
        }
    }

    /// The task `id` as it is now.
    pub async fn task(&self, id: &str) -> Result<RemoteTask, ClientError> {
        let result = self.request("tasks/get", json!({"taskId": id})).await?;
        RemoteTask::from_value(result)
            .ok_or_else(|| ClientError::protocol(format!("tasks/get of {id} gave no task")))
    }

    /// Waits for `task` to end and gives its result: at 2026-07-28 looking at it as often
    /// as the server says and answering its questions with the client's handler; in the
    /// handshake era with `tasks/result`.
    pub async fn task_result(&self, task: &RemoteTask) -> Result<CallResult, ClientError> {
        if task.id.is_empty() {
            return Ok(CallResult::from_value(task.raw["result"].clone()));
        }
        let session = self.session().await?;
        if session.era() == Era::Handshake {
            let result = self
                .request("tasks/result", json!({"taskId": task.id}))
                .await?;
            return Ok(CallResult::from_value(result));
        }
        let handler = Arc::clone(&session.handler);
        let result = follow(self, &session, &*handler, task.clone(), None).await?;
        Ok(CallResult::from_value(result))
    }

    /// Asks the server to cancel task `id` (it may still end otherwise).
    pub async fn cancel_task(&self, id: &str) -> Result<(), ClientError> {
        self.request("tasks/cancel", json!({"taskId": id}))
            .await
            .map(drop)
    }
}

/// Follows a 2026-07-28 task until it ends: its result, or its error; each state it is
/// seen in (a status or a message not seen just before) goes to `statuses`. The task is
/// cancelled on the server when the future is dropped before.
pub(crate) async fn follow(
    client: &Client,
    session: &Arc<Session>,
    asked: &dyn ClientHandler,
    task: RemoteTask,
    statuses: Option<&super::listener::Listener<RemoteTask>>,
) -> Result<Value, ClientError> {
    let mut guard = CancelOnDrop {
        client: client.clone(),
        session: Arc::clone(session),
        id: Some(task.id.clone()),
    };
    let mut task = task;
    let mut answered: Vec<String> = Vec::new();
    let mut told: Option<(String, Option<String>)> = None;
    let mut looked_again = false;
    loop {
        let state = (task.status.clone(), task.message.clone());
        if let (Some(statuses), false) = (statuses, told.as_ref() == Some(&state)) {
            statuses.tell(task.clone());
            told = Some(state);
        }
        // The answer that made the task may already say it ended, without what it ended
        // with (only `tasks/get` carries that): looked at once more.
        let told_whole = match task.status.as_str() {
            "completed" => task.raw.get("result").is_some(),
            "failed" => task.raw.get("error").is_some(),
            _ => true,
        };
        if !told_whole && !looked_again {
            looked_again = true;
            task = client.task(&task.id).await?;
            continue;
        }
        match task.status.as_str() {
            "completed" => {
                guard.id = None;
                return Ok(task.raw["result"].clone());
            }
            "failed" => {
                guard.id = None;
                let error = &task.raw["error"];
                return Err(ClientError::Server {
                    method: "tools/call".to_owned(),
                    code: error["code"].as_i64().unwrap_or(-32603),
                    message: error["message"]
                        .as_str()
                        .unwrap_or("the task failed")
                        .to_owned(),
                    data: error.get("data").cloned(),
                });
            }
            "cancelled" => {
                guard.id = None;
                return Err(ClientError::Cancelled);
            }
            "input_required" => {
                let mut responses = Map::new();
                for (key, request) in task.raw["inputRequests"].as_object().into_iter().flatten() {
                    // Keys are the task's for good: each is answered once.
                    if answered.contains(key) {
                        continue;
                    }
                    let question = request["method"].as_str().unwrap_or_default();
                    let answer = handler::answer(asked, question, &request["params"])
                        .await
                        .unwrap_or_else(|_| json!({"action": "decline"}));
                    responses.insert(key.clone(), answer);
                    answered.push(key.clone());
                }
                if !responses.is_empty() {
                    let params = json!({"taskId": task.id, "inputResponses": responses});
                    client.request("tasks/update", params).await?;
                    task = client.task(&task.id).await?;
                    continue;
                }
            }
            _ => {}
        }
        if session.is_dead() {
            return Err(session.down("the connection ended while the task ran"));
        }
        tokio::time::sleep(task.wait()).await;
        task = client.task(&task.id).await?;
    }
}

/// How a handshake-era task is followed: the call's deadline (and its limit, to say so),
/// where the log messages sent while it is waited for go, and where its states go, with
/// what the server says, heard from before the call, in which its status notifications
/// come.
pub(crate) struct Following<'a> {
    pub(crate) deadline: tokio::time::Instant,
    pub(crate) limit: Duration,
    pub(crate) logs: Option<super::listener::Listener<super::Notification>>,
    pub(crate) statuses: Option<(
        &'a super::listener::Listener<RemoteTask>,
        broadcast::Receiver<Notification>,
    )>,
}

/// Follows a handshake-era task the client asked for (a call with its `task` parameter),
/// given the server's answer `created`: the call's result, which `tasks/result` gives once
/// the task ends (waited for until the call's deadline), or its error. A server that
/// answered at once, with no task, gives that answer. The task's states go to the
/// statuses' listener: the first, each the server announces while it runs
/// (`notifications/tasks/status`), and the last; it is cancelled on the server when the
/// future is dropped before. Its progress, which the server reports under the call's
/// progress token, goes where the call's went (the caller keeps that token's listener for
/// as long as this runs).
pub(crate) async fn follow_handshake(
    client: &Client,
    session: &Arc<Session>,
    created: &RawValue,
    following: Following<'_>,
) -> Result<Box<RawValue>, ClientError> {
    let Following {
        deadline,
        limit,
        logs,
        statuses,
    } = following;
    let answer: Value = serde_json::from_str(created.get())
        .map_err(|error| ClientError::protocol(format!("its tools/call result: {error}")))?;
    let Some(task) = answer.get("task").cloned().and_then(RemoteTask::from_value) else {
        return Ok(created.to_owned());
    };
    let mut statuses = statuses.map(|(listener, heard)| Told {
        listener,
        heard,
        last: None,
    });
    if let Some(told) = &mut statuses {
        told.tell(task.clone());
    }
    let mut guard = CancelOnDrop {
        client: client.clone(),
        session: Arc::clone(session),
        id: Some(task.id.clone()),
    };
    let timed_out = || ClientError::TimedOut {
        method: "tools/call".to_owned(),
        after: limit,
    };
    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
    if left.is_zero() {
        return Err(timed_out());
    }
    let options = super::session::RequestOptions {
        timeout: Some(left),
        logs,
        ..Default::default()
    };
    let params = json!({"taskId": task.id});
    let waiting = session.request_raw("tasks/result", &params, options);
    let ended = match &mut statuses {
        Some(told) => told.meanwhile(&task.id, waiting).await,
        None => waiting.await,
    };
    let (status, ended) = match ended {
        Ok(result) => ("completed", Ok(result)),
        // The call's limit, not the request's: the task is cancelled as the guard drops.
        Err(ClientError::TimedOut { .. }) => return Err(timed_out()),
        Err(error @ ClientError::Server { .. }) => ("failed", Err(error)),
        // The connection, not the task: it may run on, so it is still cancelled.
        Err(error) => return Err(error),
    };
    guard.id = None;
    if let Some(told) = &mut statuses {
        told.tell(RemoteTask {
            status: status.to_owned(),
            message: None,
            ..task
        });
    }
    ended
}

/// Where a handshake-era task's states go, and what was last told there.
struct Told<'a> {
    listener: &'a super::listener::Listener<RemoteTask>,
    heard: broadcast::Receiver<Notification>,
    last: Option<(String, Option<String>)>,
}

impl Told<'_> {
    /// Tells `task`'s state, unless it is the one told last.
    fn tell(&mut self, task: RemoteTask) {
        let state = (task.status.clone(), task.message.clone());
        if self.last.as_ref() != Some(&state) {
            self.listener.tell(task);
            self.last = Some(state);
        }
    }

    /// Waits for `waiting` (the task's result), telling each state the server announces
    /// for task `id` meanwhile, but the last: that one is told with the result.
    async fn meanwhile<T>(&mut self, id: &str, waiting: impl Future<Output = T>) -> T {
        tokio::pin!(waiting);
        let mut hearing = true;
        loop {
            tokio::select! {
                biased;
                ended = &mut waiting => {
                    // What the server said before its answer was heard before the answer
                    // came, though not read yet: told first.
                    loop {
                        match self.heard.try_recv() {
                            Ok(heard) => self.heard_of(id, heard),
                            Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                            Err(_) => break,
                        }
                    }
                    return ended;
                }
                heard = self.heard.recv(), if hearing => match heard {
                    Ok(heard) => self.heard_of(id, heard),
                    // Statuses passed unheard in a crowd are not waited for again.
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => hearing = false,
                },
            }
        }
    }

    /// Tells what `heard` says of task `id`, if it is a state of it other than its last.
    fn heard_of(&mut self, id: &str, heard: Notification) {
        if let Notification::TaskStatus(raw) = heard {
            if raw["taskId"] == id {
                if let Some(task) = RemoteTask::from_value(raw).filter(|task| !task.is_over()) {
                    self.tell(task);
                }
            }
        }
    }
}

/// Cancels a task on the server when dropped while it still runs.
struct CancelOnDrop {
    client: Client,
    session: Arc<Session>,
    id: Option<String>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let client = self.client.clone();
        self.session.owe(async move {
            if let Err(error) = client.cancel_task(&id).await {
                tracing::debug!(%error, task = %id, "a task could not be cancelled");
            }
        });
    }
}
