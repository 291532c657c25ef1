//! The agent loop: ask the model, answer its calls, and again, until it is done or a limit
//! is reached; one [`Outcome`] whatever happened, with a history a provider accepts.

use super::answer::Tools;
use super::dialect::Dialect;
use super::limits::{Limits, Usage};
use super::ToolCall;
use serde_json::Value;
use std::fmt;
use std::future::Future;
use tracing::Instrument;

/// What a model is asked: the conversation so far and the tools it may call, in its
/// dialect.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ModelRequest {
    /// The dialect the history and tools are written in.
    pub dialect: Dialect,
    /// The conversation: messages (OpenAI Responses: input items), oldest first.
    pub history: Vec<Value>,
    /// The tools, in the dialect's `tools` shape.
    pub tools: Value,
}

/// A model: one async call from a request in its dialect to its response (the whole
/// response body, or the message it holds).
///
/// ```
/// use serde_json::{json, Value};
/// use tool_runtime::agent::{Dialect, Model, ModelError, ModelRequest};
///
/// /// A model that always says hello.
/// struct Hello;
///
/// impl Model for Hello {
///     fn dialect(&self) -> Dialect {
///         Dialect::OpenAiChat
///     }
///
///     async fn respond(&self, _request: &ModelRequest) -> Result<Value, ModelError> {
///         Ok(json!({"role": "assistant", "content": "hello"}))
///     }
/// }
/// ```
pub trait Model: Send + Sync {
    /// The dialect it reads and answers.
    fn dialect(&self) -> Dialect;

    /// Its response to `request`.
    fn respond(
        &self,
        request: &ModelRequest,
    ) -> impl Future<Output = Result<Value, ModelError>> + Send;
}

/// Why a model gave no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    message: String,
    status: Option<u16>,
}

impl ModelError {
    /// A failure described by `message`.
    pub fn new(message: impl Into<String>) -> ModelError {
        ModelError {
            message: message.into(),
            status: None,
        }
    }

    /// A server's refusal: its HTTP `status` and what it said.
    pub fn http(status: u16, message: impl Into<String>) -> ModelError {
        ModelError {
            message: message.into(),
            status: Some(status),
        }
    }

    /// The HTTP status the model's server answered, when it answered one.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "the model's server answered {status}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ModelError {}

/// How a loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    /// The model answered without calling a tool.
    Done,
    /// The loop reached its most turns.
    MaxTurns,
    /// The loop spent its tokens.
    BudgetExceeded,
    /// The model called more tools than the loop allows; the calls over the limit were
    /// answered as not run.
    ToolCallLimit,
    /// The model kept making invalid calls (unknown tools, arguments that do not fit)
    /// after being told what was wrong.
    RetriesExhausted,
    /// A call waits for a user's approval: [`AgentLoop::resume`] goes on with the
    /// decision.
    AwaitingApproval,
    /// The model gave no response, or one that could not be read.
    ModelError,
}

impl Status {
    /// The status as one stable word: `done`, `max_turns`, `budget_exceeded`,
    /// `tool_call_limit`, `retries_exhausted`, `awaiting_approval`, `model_error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::MaxTurns => "max_turns",
            Status::BudgetExceeded => "budget_exceeded",
            Status::ToolCallLimit => "tool_call_limit",
            Status::RetriesExhausted => "retries_exhausted",
            Status::AwaitingApproval => "awaiting_approval",
            Status::ModelError => "model_error",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A user's decision on a call that waits for approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run it.
    Approve,
    /// Do not run it; the model is told so, with the reason.
    Decline(String),
}

/// How a loop ended: its status, the whole history, what it spent, and what waits.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Outcome {
    /// Why it ended.
    pub status: Status,
    /// The conversation, as the next request would send it. Every call in it has its
    /// result, except while the loop awaits approval: the last turn's calls are then
    /// answered by [`AgentLoop::resume`].
    pub history: Vec<Value>,
    /// The tokens spent, over every turn.
    pub usage: Usage,
    /// The model's turns.
    pub turns: u32,
    /// The tool calls run.
    pub tool_calls: u32,
    /// What the model said last, when it said anything.
    pub text: Option<String>,
    /// The calls that wait for approval (with [`Status::AwaitingApproval`]).
    pub pending: Vec<ToolCall>,
    /// What went wrong (with [`Status::ModelError`]).
    pub error: Option<String>,
    /// The calls of the turn that waits, all of them (those that need no approval run on
    /// resume with the approved ones, so the turn's results stay one message).
    waiting: Vec<ToolCall>,
    /// Turns in a row whose every call was invalid.
    invalid_streak: u32,
}

/// A loop over a model and the tools it may call, within limits.
///
/// ```
/// use serde_json::{json, Value};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use tool_runtime::agent::{
///     AgentLoop, Dialect, Limits, Model, ModelError, ModelRequest, Status, Tools,
/// };
/// use tool_runtime::{tool, Registry};
///
/// /// Add two integers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// /// Calls `add` once, then says the sum it was given.
/// struct Adder(AtomicU32);
///
/// impl Model for Adder {
///     fn dialect(&self) -> Dialect { Dialect::OpenAiChat }
///
///     async fn respond(&self, request: &ModelRequest) -> Result<Value, ModelError> {
///         Ok(match self.0.fetch_add(1, Ordering::SeqCst) {
///             0 => json!({"role": "assistant", "content": null,
///                   "tool_calls": [{"id": "c1", "type": "function",
///                   "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}]}),
///             _ => {
///                 let sum = request.history.last().unwrap()["content"].as_str().unwrap();
///                 json!({"role": "assistant", "content": format!("It is {sum}.")})
///             }
///         })
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::new().unwrap();
/// let agent = AgentLoop::new(Adder(AtomicU32::new(0)), Tools::new(&registry))
///     .limits(Limits::default().max_turns(4));
/// let outcome = agent.run(vec![Dialect::OpenAiChat.user_message("What is 2 + 3?")]).await;
/// assert_eq!(outcome.status, Status::Done);
/// assert_eq!(outcome.text.as_deref(), Some("It is 5."));
/// assert_eq!((outcome.turns, outcome.tool_calls, outcome.history.len()), (2, 1, 4));
/// # });
/// ```
pub struct AgentLoop<'r, M> {
    model: M,
    tools: Tools<'r>,
    limits: Limits,
}

impl<M> fmt::Debug for AgentLoop<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentLoop")
            .field("tools", &self.tools.names())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl<'r, M: Model> AgentLoop<'r, M> {
    /// A loop of `model` over `tools`, within the default [`Limits`].
    pub fn new(model: M, tools: Tools<'r>) -> AgentLoop<'r, M> {
        AgentLoop {
            model,
            tools,
            limits: Limits::default(),
        }
    }

    /// Within `limits`.
    pub fn limits(mut self, limits: Limits) -> AgentLoop<'r, M> {
        self.limits = limits;
        self
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// Runs the loop from `history` (the conversation so far, in the model's dialect).
    pub async fn run(&self, history: Vec<Value>) -> Outcome {
        let outcome = Outcome {
            status: Status::Done,
            history,
            usage: Usage::default(),
            turns: 0,
            tool_calls: 0,
            text: None,
            pending: Vec::new(),
            error: None,
            waiting: Vec::new(),
            invalid_streak: 0,
        };
        let span = super::traced::invoke_agent(self.model.dialect());
        let outcome = self.go_on(outcome).instrument(span.clone()).await;
        super::traced::ran(&span, &outcome);
        outcome
    }

    /// Goes on from an outcome that awaits approval, with the user's `decision` on each
    /// pending call: approved calls run (with the turn's other calls), declined ones are
    /// answered as declined. An outcome of any other status is given back as it was.
    pub async fn resume(
        &self,
        outcome: Outcome,
        decision: impl Fn(&ToolCall) -> Approval,
    ) -> Outcome {
        if outcome.status != Status::AwaitingApproval {
            return outcome;
        }
        let span = super::traced::invoke_agent(self.model.dialect());
        let outcome = self
            .decided(outcome, decision)
            .instrument(span.clone())
            .await;
        super::traced::ran(&span, &outcome);
        outcome
    }

    /// [`resume`](AgentLoop::resume) of an outcome that awaits approval.
    async fn decided(
        &self,
        mut outcome: Outcome,
        decision: impl Fn(&ToolCall) -> Approval,
    ) -> Outcome {
        let calls = std::mem::take(&mut outcome.waiting);
        let pending = std::mem::take(&mut outcome.pending);
        let declined = |call: &ToolCall| {
            if !pending.contains(call) {
                return None;
            }
            match decision(call) {
                Approval::Approve => None,
                Approval::Decline(reason) => Some(reason),
            }
        };
        let answered = self.tools.run_deciding(&calls, declined).await;
        self.record(&mut outcome, &answered);
        self.go_on(outcome).await
    }

    /// Turns until the loop ends.
    async fn go_on(&self, mut outcome: Outcome) -> Outcome {
        let dialect = self.model.dialect();
        let tools = self.tools.declarations(dialect);
        loop {
            if outcome.invalid_streak > self.limits.invalid_call_retries() {
                return ended(outcome, Status::RetriesExhausted);
            }
            if outcome.turns >= self.limits.turns() {
                return ended(outcome, Status::MaxTurns);
            }
            if self.over_budget(&outcome) {
                return ended(outcome, Status::BudgetExceeded);
            }
            let request = ModelRequest {
                dialect,
                history: outcome.history.clone(),
                tools: tools.clone(),
            };
            let chat = super::traced::chat(dialect);
            let response = match self.model.respond(&request).instrument(chat.clone()).await {
                Ok(response) => response,
                Err(error) => {
                    super::traced::no_turn(&chat);
                    return failed(outcome, error.to_string());
                }
            };
            let turn = match dialect.read_turn(&response) {
                Ok(turn) => turn,
                Err(error) => {
                    super::traced::no_turn(&chat);
                    return failed(outcome, error.to_string());
                }
            };
            super::traced::answered(&chat, turn.usage.as_ref(), turn.calls.len());
            drop(chat);
            outcome.turns += 1;
            outcome.usage.add(turn.usage.unwrap_or_else(|| {
                let asked = serde_json::to_string(&request.history).unwrap_or_default()
                    + &serde_json::to_string(&request.tools).unwrap_or_default();
                Usage::estimated(&asked, &response.to_string())
            }));
            outcome.history.extend(dialect.turn_items(&turn));
            if turn.text.is_some() {
                outcome.text = turn.text.clone();
            }
            if turn.calls.is_empty() {
                return ended(outcome, Status::Done);
            }
            // A limit reached now still answers the turn's calls, as not run, so that the
            // history stays one a provider accepts.
            let limit =
                if self.over_budget(&outcome) {
                    Some((
                        Status::BudgetExceeded,
                        "the conversation's token budget is spent",
                    ))
                } else if self.limits.tool_calls().is_some_and(|most| {
                    outcome.tool_calls as usize + turn.calls.len() > most as usize
                }) {
                    Some((
                        Status::ToolCallLimit,
                        "the conversation's tool-call limit is reached",
                    ))
                } else {
                    None
                };
            if let Some((status, reason)) = limit {
                let answered = self
                    .tools
                    .run_deciding(&turn.calls, |_| Some(format!("not run: {reason}")))
                    .await;
                outcome.history.extend(dialect.results(&answered));
                return ended(outcome, status);
            }
            let pending: Vec<ToolCall> = turn
                .calls
                .iter()
                .filter(|call| self.tools.needs_approval(&call.name))
                .cloned()
                .collect();
            if !pending.is_empty() {
                outcome.pending = pending;
                outcome.waiting = turn.calls;
                return ended(outcome, Status::AwaitingApproval);
            }
            let answered = self.tools.run(&turn.calls).await;
            self.record(&mut outcome, &answered);
        }
    }

    /// Adds the answered calls of a turn to the outcome.
    fn record(&self, outcome: &mut Outcome, answered: &[super::AnsweredCall]) {
        let dialect = self.model.dialect();
        outcome.tool_calls += answered.len() as u32;
        outcome.history.extend(dialect.results(answered));
        if !answered.is_empty() && answered.iter().all(super::AnsweredCall::is_invalid) {
            outcome.invalid_streak += 1;
        } else {
            outcome.invalid_streak = 0;
        }
    }

    fn over_budget(&self, outcome: &Outcome) -> bool {
        self.limits
            .total_tokens()
            .is_some_and(|most| outcome.usage.total_tokens >= most)
    }
}

fn ended(mut outcome: Outcome, status: Status) -> Outcome {
    outcome.status = status;
    outcome
}

fn failed(mut outcome: Outcome, error: String) -> Outcome {
    outcome.error = Some(error);
    ended(outcome, Status::ModelError)
}
