//! Running a model's tool calls through the registry: the arguments read (and repaired
//! when almost JSON), each call checked and run like any other, concurrently up to a
//! bound, and one result per call in the model's order, whatever failed.

use super::dialect::Dialect;
use super::repair::{self, Repair};
use super::reply::Reply;
use super::{ModelArguments, ModelTurn, ToolCall};
use crate::context::Caller;
use crate::result::ArgumentProblem;
use crate::Registry;
use crate::{CallError, ToolResult};
use futures_util::{FutureExt, StreamExt};
use serde_json::{Map, Value};
use tracing::Instrument;

/// The tools a model may call: a registry, or the part of it named with
/// [`only`](Tools::only), and how their calls run.
///
/// Every call goes through the registry's one dispatcher, as a call over MCP does: its
/// arguments checked against the schema, its time limit, cancellation, panics caught, and
/// the caller's rate limit, budget and scopes. A call of a tool the model may not see is
/// an unknown tool, answered with the names it may call.
#[derive(Debug, Clone)]
pub struct Tools<'r> {
    registry: &'r Registry,
    only: Option<Vec<String>>,
    concurrency: usize,
    caller: Caller,
    max_output_bytes: usize,
}

/// What a model's turn was answered with: each call with its result, and what the next
/// request's history gets in the turn's dialect.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Answer {
    /// Each call and its result, in the model's order.
    pub calls: Vec<AnsweredCall>,
    /// What the history gets: one message (OpenAI Chat: one per call; Responses: one item
    /// per call).
    pub messages: Vec<Value>,
}

/// One call and its result.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AnsweredCall {
    /// The call as the model made it.
    pub call: ToolCall,
    /// Its result.
    pub result: ToolResult,
    /// What was repaired in its arguments, when they were almost JSON.
    pub repair: Option<Repair>,
    pub(crate) reply: Reply,
}

impl AnsweredCall {
    /// Whether the model made the call wrongly (an unknown tool, arguments that do not
    /// fit), as opposed to a call that ran and failed.
    pub fn is_invalid(&self) -> bool {
        self.result
            .error()
            .is_some_and(|error| error.is_caller_error())
    }
}

/// A call read and resolved, ready to run or already ended.
enum Prepared {
    Run { input: Value, alone: bool },
    Ended(ToolResult),
}

impl<'r> Tools<'r> {
    /// Every tool of `registry`, four calls at a time, on behalf of no one in particular.
    pub fn new(registry: &'r Registry) -> Tools<'r> {
        Tools {
            registry,
            only: None,
            concurrency: 4,
            caller: Caller::DIRECT,
            max_output_bytes: 256 * 1024,
        }
    }

    /// Only the tools named: the model sees and may call these, and no other.
    pub fn only<I, S>(mut self, names: I) -> Tools<'r>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut names: Vec<String> = names.into_iter().map(Into::into).collect();
        names.sort();
        names.dedup();
        self.only = Some(names);
        self
    }

    /// At most `calls` calls of one turn run at once (at least one).
    pub fn concurrency(mut self, calls: usize) -> Tools<'r> {
        self.concurrency = calls.max(1);
        self
    }

    /// Calls are made on behalf of `caller`: its scopes, rate limit and budget apply, and
    /// the audit trail names it.
    pub fn caller(mut self, caller: Caller) -> Tools<'r> {
        self.caller = caller;
        self
    }

    /// A result's text longer than `bytes` is cut, and the model told so (256 KiB unless
    /// set).
    pub fn max_output_bytes(mut self, bytes: usize) -> Tools<'r> {
        self.max_output_bytes = bytes;
        self
    }

    /// The registry underneath.
    pub fn registry(&self) -> &'r Registry {
        self.registry
    }

    /// The tools the model may call, sorted by name.
    pub fn tools(&self) -> Vec<crate::call::runnable::ToolRef> {
        self.registry
            .tools()
            .into_iter()
            .filter(|tool| self.allows(tool.name()))
            .collect()
    }

    /// The names of the tools the model may call, sorted.
    pub fn names(&self) -> Vec<String> {
        self.tools()
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect()
    }

    /// The request's `tools` in `dialect`.
    pub fn declarations(&self, dialect: Dialect) -> Value {
        let tools = self.tools();
        let tools: Vec<&crate::catalog::Tool> = tools.iter().map(|tool| &**tool).collect();
        dialect.tools(&tools)
    }

    fn allows(&self, name: &str) -> bool {
        match &self.only {
            Some(names) => names.binary_search_by(|n| n.as_str().cmp(name)).is_ok(),
            None => true,
        }
    }

    /// Whether a call of `name` waits for a user's approval (`#[tool(approval)]`).
    pub fn needs_approval(&self, name: &str) -> bool {
        self.allows(name)
            && self
                .registry
                .get(name)
                .is_some_and(|tool| tool.needs_approval())
    }

    /// Runs the calls of a model's turn and writes their results in `dialect`.
    pub async fn answer(&self, dialect: Dialect, turn: &ModelTurn) -> Answer {
        let calls = self.run(&turn.calls).await;
        Answer {
            messages: dialect.results(&calls),
            calls,
        }
    }

    /// Runs `calls`: one result each, in the order given. Calls run concurrently up to the
    /// bound, except that a tool marked `#[tool(exclusive)]` runs alone: the calls before
    /// it finish first, and those after it wait for it.
    pub async fn run(&self, calls: &[ToolCall]) -> Vec<AnsweredCall> {
        self.run_deciding(calls, |_| None).await
    }

    /// [`run`](Tools::run), where `declined` says which calls the user declined (and why):
    /// those do not run and are answered so.
    pub(crate) async fn run_deciding(
        &self,
        calls: &[ToolCall],
        declined: impl Fn(&ToolCall) -> Option<String>,
    ) -> Vec<AnsweredCall> {
        let known = self.names();
        let mut repairs = Vec::with_capacity(calls.len());
        let mut prepared: Vec<Option<Prepared>> = Vec::with_capacity(calls.len());
        for call in calls {
            let (ready, repair) = match declined(call) {
                Some(reason) => (Prepared::Ended(declined_result(call, &reason)), None),
                None => self.prepare(call, &known),
            };
            prepared.push(Some(ready));
            repairs.push(repair);
        }
        let runs_alone =
            |ready: &Option<Prepared>| matches!(ready, Some(Prepared::Run { alone: true, .. }));
        let mut finished: Vec<(usize, ToolResult)> = Vec::with_capacity(calls.len());
        let mut at = 0;
        while at < calls.len() {
            // A group: the calls up to the next one that must run alone, or that one.
            let end = if runs_alone(&prepared[at]) {
                at + 1
            } else {
                (at..calls.len())
                    .find(|&i| runs_alone(&prepared[i]))
                    .unwrap_or(calls.len())
            };
            let group: Vec<(usize, Prepared)> = (at..end)
                .filter_map(|i| prepared[i].take().map(|ready| (i, ready)))
                .collect();
            let mut done: Vec<(usize, ToolResult)> = futures_util::stream::iter(group)
                .map(|(index, ready)| {
                    let span = super::traced::execute_tool(&calls[index]);
                    self.execute(&calls[index], ready, index)
                        .instrument(span.clone())
                        .map(move |(index, result)| {
                            super::traced::executed(&span, &result);
                            (index, result)
                        })
                })
                .buffer_unordered(self.concurrency)
                .collect()
                .await;
            finished.append(&mut done);
            at = end;
        }
        finished.sort_by_key(|(index, _)| *index);
        finished
            .into_iter()
            .zip(repairs)
            .map(|((index, result), repair)| {
                let reply = Reply::new(&result, repair.as_ref(), &known, self.max_output_bytes);
                AnsweredCall {
                    call: calls[index].clone(),
                    result,
                    repair,
                    reply,
                }
            })
            .collect()
    }

    async fn execute(
        &self,
        call: &ToolCall,
        prepared: Prepared,
        index: usize,
    ) -> (usize, ToolResult) {
        match prepared {
            Prepared::Ended(result) => (index, result),
            Prepared::Run { input, .. } => {
                let result = self
                    .registry
                    .call_for(self.caller.clone(), &call.name, input)
                    .await;
                (index, result)
            }
        }
    }

    /// Reads a call's arguments and resolves its tool: ready to run, or its error result.
    fn prepare(&self, call: &ToolCall, known: &[String]) -> (Prepared, Option<Repair>) {
        let tool = self
            .registry
            .get(&call.name)
            .filter(|_| self.allows(&call.name));
        let Some(tool) = tool else {
            let error = CallError::UnknownTool {
                name: call.name.clone(),
                suggestion: tool_rules::closest(&call.name, known.iter().map(String::as_str), 0.7)
                    .map(str::to_owned),
            };
            let input = match &call.arguments {
                ModelArguments::Object(object) => Value::Object(object.clone()),
                ModelArguments::Text(text) => Value::String(text.clone()),
            };
            return (
                Prepared::Ended(ToolResult::new(call.name.clone(), input, None, Err(error))),
                None,
            );
        };
        let (input, repair) = match &call.arguments {
            ModelArguments::Object(object) => (Ok(Value::Object(object.clone())), None),
            ModelArguments::Text(text) => read_arguments(text, self.registry.repairs_arguments()),
        };
        // A value cut off mid-way is not what the model meant: closing it would run the
        // tool with an invented value (`"Par"` for `"Paris"`, `10` for `10000`). Only a
        // read-only tool, which changes nothing, runs with it.
        if let Some(parameter) = repair.as_ref().and_then(|done| done.cut_value.as_ref()) {
            if tool.annotations().read_only != Some(true) {
                let place = match parameter.as_str() {
                    "" => "the arguments were cut off in the middle of a value".to_owned(),
                    name => format!("the arguments were cut off in the middle of '{name}'"),
                };
                let problem = format!(
                    "{place}, and this tool is not read-only, so it does not run with a value \
                     that may be incomplete; send the whole JSON object of the parameters ({})",
                    parameter_names(&tool)
                );
                let error = invalid_at(&call.name, parameter, problem);
                let came = match &call.arguments {
                    ModelArguments::Text(text) => Value::String(text.clone()),
                    ModelArguments::Object(object) => Value::Object(object.clone()),
                };
                let result = ToolResult::new(call.name.clone(), came, None, Err(error));
                return (Prepared::Ended(result), repair);
            }
        }
        let input = match input {
            Ok(Value::Object(object)) => Value::Object(object),
            // No arguments at all: an empty object, which the schema then judges.
            Ok(Value::Null) => Value::Object(Map::new()),
            Ok(other) => {
                let came = other.to_string();
                let problem = format!(
                    "the arguments should be one JSON object of the parameters ({}), not {}",
                    parameter_names(&tool),
                    crate::schema::describe::compact(&other)
                );
                let error = invalid(&call.name, problem);
                let result =
                    ToolResult::new(call.name.clone(), Value::String(came), None, Err(error));
                return (Prepared::Ended(result), repair);
            }
            Err(problem) => {
                let problem = format!(
                    "{problem}; send one JSON object of the parameters ({})",
                    parameter_names(&tool)
                );
                let error = invalid(&call.name, problem);
                let came = match &call.arguments {
                    ModelArguments::Text(text) => Value::String(text.clone()),
                    ModelArguments::Object(object) => Value::Object(object.clone()),
                };
                let result = ToolResult::new(call.name.clone(), came, None, Err(error));
                return (Prepared::Ended(result), repair);
            }
        };
        let alone = tool.runs_alone();
        (Prepared::Run { input, alone }, repair)
    }
}

/// The arguments' text as JSON: strictly, else repaired when allowed.
fn read_arguments(text: &str, repair: bool) -> (Result<Value, String>, Option<Repair>) {
    if text.trim().is_empty() {
        return (Ok(Value::Null), None);
    }
    if !repair {
        return (
            serde_json::from_str(text)
                .map_err(|error| format!("the arguments are not JSON ({error})")),
            None,
        );
    }
    match repair::parse(text) {
        Ok((value, repair)) => (Ok(value), repair),
        Err(problem) => (Err(problem), None),
    }
}

fn invalid(tool: &str, problem: String) -> CallError {
    invalid_at(tool, "", problem)
}

/// An argument error at `path` (a parameter, or `""` for the arguments as a whole).
fn invalid_at(tool: &str, path: &str, problem: String) -> CallError {
    CallError::InvalidArguments {
        tool: tool.to_owned(),
        problems: vec![ArgumentProblem::new(path, problem)],
    }
}

/// The parameters a model writes, for a message: `city, days` or `none`.
fn parameter_names(tool: &crate::catalog::Tool) -> String {
    let names: Vec<&str> = tool.arguments().map(|param| param.name()).collect();
    if names.is_empty() {
        "it takes none: send {}".to_owned()
    } else {
        names.join(", ")
    }
}

/// The result of a call the user declined.
fn declined_result(call: &ToolCall, reason: &str) -> ToolResult {
    let error = CallError::Failed {
        tool: call.name.clone(),
        message: format!("the user declined this call of '{}': {reason}", call.name),
        answer: None,
    };
    ToolResult::new(call.name.clone(), Value::Null, None, Err(error))
}
