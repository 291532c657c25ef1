//! Asking at 2026-07-28, where the server never holds a call open for its client: the
//! tool runs with the answers the client's retry brought (and those of earlier rounds,
//! from the sealed request state); a question without an answer is noted, and once the
//! tool returns the call is answered `input_required` with every question noted and a new
//! request state. The tool runs again, from the start, on the next retry.

use super::sealed::Bound;
use crate::call::ask::{AskError, Asker, ClientCapability, Question};
use crate::clock::Clock;
use crate::mcp::tasks::{TaskLink, TaskQuestion};
use crate::store::SealingKey;
use crate::sync::lock;
use serde_json::{json, Map, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// The asker of one round of a call.
pub(crate) struct RetryAsker {
    pub(crate) capabilities: Value,
    /// The answers this round can use: earlier rounds' (sealed, so they stand), then the
    /// retry's for questions not answered before.
    answers: Map<String, Value>,
    /// Shared with the questions that wait for the call to become a task.
    round: Arc<Mutex<Round>>,
    key: SealingKey,
    /// What the next round's state is stamped with.
    clock: Arc<dyn Clock>,
    method: String,
    target: String,
    /// The token subject of the request, bound into the state of its next round.
    subject: Option<String>,
}

#[derive(Default)]
struct Round {
    /// Questions without an answer yet, as `inputRequests` spells them.
    asked: Map<String, Value>,
    /// Answers the tool read.
    used: Map<String, Value>,
    /// What the tool keeps for the next round.
    kept: Map<String, Value>,
    /// Capabilities the tool needed and the client did not declare.
    missing: Vec<ClientCapability>,
    /// An answer that does not fit its question: a protocol error of the retry.
    invalid: Option<String>,
    /// Once the call became a task: where its questions go now.
    task: Option<TaskLink>,
    /// While the call is becoming a task (the store keeping it): what tells the questions
    /// asked meanwhile where they go.
    promoting: Option<Arc<Notify>>,
}

/// A call on its way to becoming a task (see [`RetryAsker::promoting`]); once dropped, the
/// questions waiting for it go where the round says.
pub(crate) struct Promotion {
    round: Arc<Mutex<Round>>,
    settled: Arc<Notify>,
}

impl Promotion {
    /// The promotion ended: the call is the task `task` from now on, or stays a call
    /// (`None`: the store had no room, or failed).
    pub(crate) fn settle(self, task: Option<TaskLink>) {
        lock(&self.round).task = task;
    }
}

impl Drop for Promotion {
    fn drop(&mut self) {
        lock(&self.round).promoting = None;
        self.settled.notify_waiters();
    }
}

/// How a round ends.
pub(crate) enum Verdict {
    /// The call is answered as the tool answered it.
    Complete,
    /// The call is answered `input_required`: its result body.
    InputRequired(Map<String, Value>),
    /// The retry is refused (-32602): why.
    Invalid(String),
    /// The call needed capabilities the client did not declare (-32021): them, as a
    /// client capabilities object.
    Missing(Value),
}

impl RetryAsker {
    /// The asker of a request (its method, what it names, and its caller's token subject)
    /// whose retry may bring `responses` (the `inputResponses`) and `sealed` (the
    /// `requestState`), bound to the request's `arguments`; `Err` is why the retry is
    /// refused (-32602).
    pub(crate) fn of_request(
        (key, clock): (&SealingKey, &Arc<dyn Clock>),
        (method, target, subject): (&str, &str, Option<&str>),
        (responses, sealed): (Option<Map<String, Value>>, Option<String>),
        arguments: &Value,
        capabilities: Value,
    ) -> Result<RetryAsker, String> {
        let responses = responses.unwrap_or_default();
        let state = match sealed {
            None => None,
            Some(sealed) => {
                let bound = Bound {
                    method,
                    target,
                    subject,
                    arguments,
                };
                Some(
                    key.open(clock.now(), &sealed, &bound)
                        .map_err(|why| format!("Invalid params: {why}"))?,
                )
            }
        };
        let (mut answers, kept) = state.map(|s| (s.answers, s.kept)).unwrap_or_default();
        // An answer an earlier round sealed stands: the tool may have acted on it.
        for (key, answer) in responses {
            answers.entry(key).or_insert(answer);
        }
        Ok(RetryAsker {
            capabilities,
            answers,
            round: Arc::new(Mutex::new(Round {
                kept,
                ..Round::default()
            })),
            key: key.clone(),
            clock: Arc::clone(clock),
            method: method.to_owned(),
            target: target.to_owned(),
            subject: subject.map(str::to_owned),
        })
    }

    /// Starts making the call a task, unless it has asked questions of this round already
    /// (then it is about to answer them, and stays a call). Questions asked from now on
    /// wait until [`settle`](Promotion::settle) says where they go, so none falls
    /// between the call and its task while the store keeps the task.
    pub(crate) fn promoting(&self) -> Option<Promotion> {
        let mut round = lock(&self.round);
        if !round.asked.is_empty() {
            return None;
        }
        let settled = Arc::new(Notify::new());
        round.promoting = Some(Arc::clone(&settled));
        Some(Promotion {
            round: Arc::clone(&self.round),
            settled,
        })
    }

    /// How the round ends, given whether the tool's own answer is a failure, and the
    /// arguments it was called with (a new request state is bound to them).
    pub(crate) fn verdict(&self, failed: bool, arguments: &Value) -> Verdict {
        let mut round = lock(&self.round);
        if let Some(why) = round.invalid.take() {
            return Verdict::Invalid(why);
        }
        if !round.asked.is_empty() {
            let bound = Bound {
                method: &self.method,
                target: &self.target,
                subject: self.subject.as_deref(),
                arguments,
            };
            let state = self.key.seal(
                self.clock.now(),
                &bound,
                std::mem::take(&mut round.used),
                std::mem::take(&mut round.kept),
            );
            let mut body = Map::new();
            body.insert("resultType".to_owned(), "input_required".into());
            body.insert(
                "inputRequests".to_owned(),
                Value::Object(std::mem::take(&mut round.asked)),
            );
            body.insert("requestState".to_owned(), state.into());
            return Verdict::InputRequired(body);
        }
        if failed && !round.missing.is_empty() {
            let mut required = Map::new();
            for capability in &round.missing {
                merge(&mut required, capability.declaration());
            }
            return Verdict::Missing(Value::Object(required));
        }
        Verdict::Complete
    }
}

/// Merges a capabilities object into `into`, key by key, one level down.
fn merge(into: &mut Map<String, Value>, declaration: Value) {
    let Value::Object(declaration) = declaration else {
        return;
    };
    for (key, value) in declaration {
        match (into.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(more)) => existing.extend(more),
            (_, value) => {
                into.insert(key, value);
            }
        }
    }
}

impl Asker for RetryAsker {
    fn supports(&self, capability: ClientCapability) -> bool {
        capability.declared_in(&self.capabilities)
    }

    fn missing(&self, capability: ClientCapability) {
        let mut round = lock(&self.round);
        if !round.missing.contains(&capability) {
            round.missing.push(capability);
        }
    }

    fn ask(
        self: Arc<Self>,
        question: Question,
    ) -> Pin<Box<dyn Future<Output = Result<Value, AskError>> + Send>> {
        let mut round = lock(&self.round);
        if let Some(answer) = self.answers.get(&question.key) {
            round.used.insert(question.key, answer.clone());
            return Box::pin(std::future::ready(Ok(answer.clone())));
        }
        let request = input_request(question.capability, question.params);
        let key = question.key;
        // The call is a task now: the question waits in the task for `tasks/update`.
        if let Some(task) = round.task.clone() {
            return Box::pin(ask_in_task(task, key, request));
        }
        // The call is becoming a task: the question goes where that ends.
        if let Some(settled) = round.promoting.clone() {
            // Registered now, under the lock: the promotion's end cannot be missed.
            let settled = settled.notified_owned();
            let round = Arc::clone(&self.round);
            return Box::pin(async move {
                settled.await;
                let task = {
                    let mut round = lock(&round);
                    if round.task.is_none() {
                        round.asked.insert(key.clone(), request.clone());
                    }
                    round.task.clone()
                };
                match task {
                    Some(task) => ask_in_task(task, key, request).await,
                    None => Err(AskError::InputRequired),
                }
            });
        }
        round.asked.insert(key, request);
        Box::pin(std::future::ready(Err(AskError::InputRequired)))
    }

    fn ask_on_retry(&self, questions: Vec<Question>) -> bool {
        let mut round = lock(&self.round);
        // A task's questions wait in the task, answered through `tasks/update`, not by a
        // retry of the call (one becoming a task most likely will be one).
        if round.task.is_some() || round.promoting.is_some() {
            return false;
        }
        for question in questions {
            let request = input_request(question.capability, question.params);
            round.asked.insert(question.key, request);
        }
        true
    }

    fn rejected(&self, key: &str, why: &str) {
        let mut round = lock(&self.round);
        round.invalid.get_or_insert_with(|| {
            format!("Invalid params: inputResponses[\"{key}\"] does not answer its question: {why}")
        });
    }

    fn keep(&self, key: &str, value: Value) -> bool {
        lock(&self.round).kept.insert(key.to_owned(), value);
        true
    }

    fn kept(&self, key: &str) -> Option<Value> {
        lock(&self.round).kept.get(key).cloned()
    }
}

/// Asks `request` under `key` through the task: it waits there for the client's answer
/// (through `tasks/update`).
pub(crate) async fn ask_in_task(
    task: TaskLink,
    key: String,
    request: Value,
) -> Result<Value, AskError> {
    let question = TaskQuestion::open(task, key, &request)
        .await
        .map_err(|error| {
            tracing::error!(%error, "could not ask a question through its task");
            AskError::Undelivered
        })?;
    let answer = question.answered().await;
    question.close().await;
    answer.ok_or(AskError::Closed)
}

/// A question as `inputRequests` spells it. At 2026-07-28 a URL elicitation has no
/// `elicitationId` (the request state correlates the rounds).
fn input_request(capability: ClientCapability, mut params: Value) -> Value {
    if let (ClientCapability::ElicitationUrl, Some(params)) = (capability, params.as_object_mut()) {
        params.remove("elicitationId");
    }
    json!({"method": capability.method(), "params": params})
}
