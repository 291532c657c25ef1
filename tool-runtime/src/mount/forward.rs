//! A mounted server's items as this registry's own: each tool, prompt and resource is a
//! run-time item whose handler passes the call to the server, with the caller's progress,
//! log messages, cancellation (the call's future dropped) and the server's questions
//! (forms, pages, sampling, roots) passed to the caller's client; the answer's content
//! passed back as it came (blocks of a kind MCP does not have left out, and an answer
//! without the structured content its tool's output schema promises made the error it is).

use super::blocks::{one_line, readable};
use super::Mount;
use crate::call::content::AnswerBlocks;
use crate::call::context::CallContext;
use crate::call::dynamic::raw_handler;
use crate::call::output::{Produced, RelayedJson, ToolError};
use crate::catalog::{Annotations, TaskSupport};
use crate::client::listener::Listener;
use crate::client::params::Arguments;
use crate::client::wire::{ResultKind, RoundResult};
use crate::client::{Answer, Client, ClientError, ClientHandler, Notification, RemoteTool, Round};
use crate::registry::{DynamicPrompt, DynamicResource, RegistryError};
use crate::schema::is_json_object;
use crate::sync::lock;
use crate::DynamicTool;
use serde_json::value::RawValue;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The run-time tool standing for `remote`, named `local`, that passes calls to `client`.
pub(super) fn tool(
    mount: &Arc<Mount>,
    client: &Client,
    callers: &Arc<Callers>,
    local: String,
    remote: RemoteTool,
) -> Result<DynamicTool, RegistryError> {
    let relay = Relay::new(mount, client, callers);
    // Shared by every call, not copied into each.
    let remote_name: Arc<str> = Arc::from(remote.name.as_str());
    let promised = remote.output_schema.is_some();
    let handler = raw_handler(move |arguments: &Value, context: CallContext| {
        let (relay, name) = (relay.clone(), Arc::clone(&remote_name));
        // Written once, as they are sent: neither copied nor made a map of params first. (A
        // `Value` always serializes; no arguments stand in should it ever not.)
        let written = serde_json::to_string(arguments).unwrap_or_else(|_| "{}".to_owned());
        let arguments = Arguments::Written(written);
        Box::pin(async move { relay.call(&name, promised, arguments, context).await })
    });
    let annotations = remote
        .annotations
        .as_ref()
        .map_or_else(Annotations::default, |hints| {
            let hint = |key: &str| hints.get(key).and_then(Value::as_bool);
            Annotations {
                read_only: hint("readOnlyHint"),
                destructive: hint("destructiveHint"),
                idempotent: hint("idempotentHint"),
                open_world: hint("openWorldHint"),
            }
        });
    let mut tool = DynamicTool::from_schemas(
        local,
        remote.description.clone().unwrap_or_default(),
        remote.input_schema.clone(),
        remote.output_schema.clone(),
        handler,
    )?
    .described_as(remote.title.clone(), annotations)
    .task(TaskSupport::Optional);
    if let Some(limit) = mount.timeout {
        tool = tool.timeout(limit);
    }
    let scopes = mount.scopes_of(&remote.name);
    if !scopes.is_empty() {
        tool = tool.scopes(scopes)?;
    }
    if mount.approval.contains(&remote.name) {
        tool = tool.approval();
    }
    Ok(tool)
}

/// The run-time prompt standing for the server's prompt `remote` (as listed), under the
/// mount's prefix; `None` (with a warning) for one that cannot be named here.
pub(super) fn prompt(
    mount: &Arc<Mount>,
    client: &Client,
    callers: &Arc<Callers>,
    remote: &Value,
) -> Option<DynamicPrompt> {
    let name = remote["name"].as_str()?.to_owned();
    let arguments: Vec<(String, Option<String>, bool)> = remote["arguments"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|argument| {
            Some((
                argument["name"].as_str()?.to_owned(),
                argument["description"].as_str().map(str::to_owned),
                argument["required"].as_bool().unwrap_or(false),
            ))
        })
        .collect();
    let relay = Relay::new(mount, client, callers);
    let remote_name: Arc<str> = Arc::from(name.as_str());
    let handler = raw_handler(move |arguments: &Value, context: CallContext| {
        let (relay, name) = (relay.clone(), Arc::clone(&remote_name));
        let arguments = arguments.clone();
        Box::pin(async move { relay.prompt(&name, arguments, context).await })
    });
    let description = remote["description"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let made = DynamicPrompt::relayed(mount.prefixed(&name), description, &arguments, handler);
    let made = match made {
        Ok(prompt) => prompt,
        Err(error) => {
            tracing::warn!(mount = %mount.prefix, %error, "a prompt of a mounted MCP server is left out");
            return None;
        }
    };
    Some(match remote["title"].as_str() {
        Some(title) => made.title(title),
        None => made,
    })
}

/// The run-time resource (or template, `key` being `uriTemplate`) standing for the
/// server's `remote`, named under the mount's prefix, its URI kept.
pub(super) fn resource(
    mount: &Arc<Mount>,
    client: &Client,
    callers: &Arc<Callers>,
    remote: &Value,
    key: &str,
) -> Option<DynamicResource> {
    let uri = remote[key].as_str()?;
    let name = remote["name"].as_str().unwrap_or(uri);
    let relay = Relay::new(mount, client, callers);
    let handler = raw_handler(move |arguments: &Value, context: CallContext| {
        // The URI read is its one argument.
        let uri = arguments["uri"].as_str().unwrap_or_default().to_owned();
        let relay = relay.clone();
        Box::pin(async move { relay.read(&uri, context).await })
    });
    let description = remote["description"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let made = DynamicResource::relayed(uri, mount.prefixed(name), description, handler);
    let mut made = match made {
        Ok(resource) => resource,
        Err(error) => {
            tracing::warn!(mount = %mount.prefix, %error, "a resource of a mounted MCP server is left out");
            return None;
        }
    };
    if let Some(mime_type) = remote["mimeType"].as_str() {
        made = made.mime_type(mime_type);
    }
    if let Some(size) = remote["size"].as_u64() {
        made = made.size(size);
    }
    Some(made.titled_as(remote["title"].as_str().map(str::to_owned)))
}

/// What passes one item's requests to the mount's server.
#[derive(Clone)]
struct Relay {
    mount: Arc<Mount>,
    client: Client,
    callers: Arc<Callers>,
}

impl Relay {
    fn new(mount: &Arc<Mount>, client: &Client, callers: &Arc<Callers>) -> Relay {
        Relay {
            mount: Arc::clone(mount),
            client: client.clone(),
            callers: Arc::clone(callers),
        }
    }

    /// Passes one tool call to the server: its progress and log messages to the caller,
    /// the server's questions to the caller's client. `promised`: the tool has an output
    /// schema, so its answers carry structured content.
    async fn call(
        &self,
        name: &str,
        promised: bool,
        arguments: Arguments,
        context: CallContext,
    ) -> Result<Produced, ToolError> {
        let hearing = Hearing::default();
        let _closes = hearing.closes();
        // The server's progress is followed only for a caller that asked for progress:
        // for any other, the request names no progress token and sends the server none.
        let progress_of = crate::Progress::for_scope(context.scope().cloned());
        let progress = progress_of.is_reporting().then(|| {
            let heard = hearing.clone();
            Listener::call(move |step: crate::client::Progress| {
                heard.pass(|| {
                    progress_of.report(step.progress, step.total, step.message.as_deref())
                });
            })
        });
        let _calling = self.callers.enter(&context);
        let caller = Caller(context.clone());
        let round = Round {
            progress,
            // The registry holds the call to the mount's time limit and says so to the
            // caller; a second timer here, due at the same moment, could answer first and
            // tell something else.
            timeout: None,
            asked: Some(&caller),
            logs: Some(pass_logs(&context, &hearing)),
            statuses: Some(pass_statuses(&context, &hearing)),
            ..Round::default()
        };
        // A call cancelled here is given up there at once: dropping it tells the server.
        let cancellation = context.scope().map(|scope| scope.cancellation.clone());
        let call = async {
            // Boxed: the client's call is most of this future's size, which is otherwise
            // copied as this future is made, moved into the call's box and awaited (about
            // 800 instructions a call, against one allocation).
            let call = Box::pin(self.client.call_with(name, arguments, round));
            match &cancellation {
                Some(cancellation) => tokio::select! {
                    biased;
                    () = cancellation.cancelled() => Err(ClientError::Cancelled),
                    outcome = call => outcome,
                },
                None => call.await,
            }
        };
        let parts: CallParts = match call.await {
            Ok(parts) => parts,
            Err(error) => return Err(ToolError::new(self.refusal(&error))),
        };
        // Passed on as they came (a failure's too): blocks and fields this crate does not
        // model (annotations, `_meta`) reach the caller.
        let content = readable(parts.content, &self.mount.prefix);
        let structured = parts.structured;
        if parts.is_error == Some(Value::Bool(true)) {
            let blocks = AnswerBlocks::sent_as_text(content);
            // Failures are few: read as a value, as a tool's own error carries one.
            let structured = structured.and_then(|text| {
                serde_json::from_str(text.get())
                    .inspect_err(|error| tracing::warn!(mount = %self.mount.prefix, %error, "the structured content of a mounted tool's error cannot be read here and is left out"))
                    .ok()
            });
            return Err(ToolError::relayed(blocks, structured));
        }
        if promised && structured.is_none() {
            // Every client that checks answers would refuse this one: it is passed on as
            // the error it is, the model told why before what the server sent.
            let why = format!(
                "the mounted server `{}` ({}) answered `{name}` without the structured \
                 content its output schema promises",
                self.mount.prefix,
                self.mount.shown()
            );
            let blocks = AnswerBlocks::sent_as_text(content).after_text(&why);
            return Err(ToolError::relayed(blocks, None));
        }
        Ok(Produced::Relayed {
            content: RelayedJson(content),
            structured: structured.map(|text| RelayedJson(one_line(text))),
        })
    }

    /// Passes a `prompts/get` to the server: its messages come back as they were.
    async fn prompt(
        &self,
        name: &str,
        arguments: Value,
        context: CallContext,
    ) -> Result<Produced, ToolError> {
        let hearing = Hearing::default();
        let _closes = hearing.closes();
        let _calling = self.callers.enter(&context);
        let caller = Caller(context.clone());
        let round = Round {
            asked: Some(&caller),
            timeout: self.mount.timeout,
            logs: Some(pass_logs(&context, &hearing)),
            ..Round::default()
        };
        let result = self
            .client
            .get_prompt_with(name, arguments, round)
            .await
            .map_err(|error| ToolError::new(self.refusal(&error)))?;
        Ok(Produced::Json(result["messages"].clone()))
    }

    /// Passes a `resources/read` of `uri` to the server.
    async fn read(&self, uri: &str, context: CallContext) -> Result<Produced, ToolError> {
        let hearing = Hearing::default();
        let _closes = hearing.closes();
        let _calling = self.callers.enter(&context);
        let caller = Caller(context.clone());
        let round = Round {
            asked: Some(&caller),
            timeout: self.mount.timeout,
            logs: Some(pass_logs(&context, &hearing)),
            ..Round::default()
        };
        let result = self
            .client
            .read_resource_with(uri, round)
            .await
            .map_err(|error| ToolError::new(self.refusal(&error)))?;
        Ok(Produced::Json(result["contents"].clone()))
    }

    /// What a caller reads when the server did not answer.
    fn refusal(&self, error: &ClientError) -> String {
        let retry = if error.is_retryable() {
            "; retry in a moment"
        } else {
            ""
        };
        format!(
            "the mounted server `{}` ({}) did not answer: {error}{retry}",
            self.mount.prefix,
            self.mount.shown()
        )
    }
}

/// What a mount passes on of a `tools/call` result, and what kind of result it is; the
/// rest (the server's `_meta`) is skipped as it is read, never made into values.
#[derive(serde::Deserialize)]
struct CallParts {
    #[serde(rename = "resultType", default)]
    kind: ResultKind,
    /// As the JSON text it came as: passed on so, not read into values here.
    #[serde(default)]
    content: Option<Box<RawValue>>,
    /// `null` is none. As the JSON text it came as: read into a value only by what reads
    /// it so (an MCP caller is sent the text).
    #[serde(rename = "structuredContent", default)]
    structured: Option<Box<RawValue>>,
    #[serde(rename = "isError", default)]
    is_error: Option<Value>,
}

impl RoundResult for CallParts {
    fn kind(&self) -> ResultKind {
        self.kind
    }

    fn read(result: &str) -> Result<CallParts, String> {
        if !is_json_object(result) {
            return Err("it is not a JSON object".to_owned());
        }
        serde_json::from_str(result).map_err(|error| error.to_string())
    }
}

/// Whether a relayed request's caller still hears of it. The client may read a
/// notification on one stream (an HTTP GET stream) while the request's answer comes on
/// another: closed as the request ends (answered, failed or cancelled), it waits out a
/// notification being passed on, so that none reaches the caller after its answer.
#[derive(Clone, Default)]
struct Hearing(Arc<Mutex<bool>>);

impl Hearing {
    /// Held while a notification is passed on; `None` once the request ended.
    fn open(&self) -> Option<std::sync::MutexGuard<'_, bool>> {
        let closed = lock(&self.0);
        (!*closed).then_some(closed)
    }

    /// Passes a notification on with `pass`, unless the request ended.
    fn pass(&self, pass: impl FnOnce()) {
        if let Some(_open) = self.open() {
            pass();
        }
    }

    /// What closes it when dropped, at the end of the request's relay.
    fn closes(&self) -> ClosesHearing {
        ClosesHearing(self.clone())
    }
}

/// Closes a [`Hearing`] when dropped.
struct ClosesHearing(Hearing);

impl Drop for ClosesHearing {
    fn drop(&mut self) {
        *lock(&(self.0).0) = true;
    }
}

/// What passes the server's log messages about one request to its caller, at their level
/// and under their logger's name, as each comes.
fn pass_logs(context: &CallContext, hearing: &Hearing) -> Listener<Notification> {
    let logger = crate::Logger::for_scope(context.scope().cloned());
    let hearing = hearing.clone();
    Listener::call(move |notification| {
        // Held while it is passed on: the request's end waits for it.
        let Some(_open) = hearing.open() else {
            return;
        };
        if let Notification::Log {
            level,
            logger: name,
            data,
        } = notification
        {
            let level = crate::context::LogLevel::from_name(&level)
                .unwrap_or(crate::context::LogLevel::Info);
            match name {
                Some(name) => logger.named(name).log(level, data),
                None => logger.log(level, data),
            }
        }
    })
}

/// The logger name under which a call's caller hears of the task the mounted server runs
/// it as.
pub(crate) const TASK_LOGGER: &str = "task";

/// Tells the caller of each state of the task the server runs a call as (a log message at
/// `info`, named [`TASK_LOGGER`]: any MCP client can show it, and `call` shows it as the
/// task's status line).
fn pass_statuses(context: &CallContext, hearing: &Hearing) -> Listener<crate::client::RemoteTask> {
    let scope = context.scope().cloned();
    let hearing = hearing.clone();
    Listener::call(move |task: crate::client::RemoteTask| {
        // Held while it is passed on: the request's end waits for it.
        let Some(_open) = hearing.open() else {
            return;
        };
        // Made here: most calls are never run as tasks, and each call makes this listener.
        let logger = crate::Logger::for_scope(scope.clone()).named(TASK_LOGGER);
        let mut said = format!("task {}: {}", task.id, task.status);
        if let Some(message) = &task.message {
            said.push_str(" (");
            said.push_str(message);
            said.push(')');
        }
        logger.info(said);
    })
}

/// The requests of a mount running now, with their contexts: what the server asks outside
/// a request's own rounds (the handshake era's requests to the client) goes to the caller
/// of the latest.
#[derive(Default)]
pub(super) struct Callers {
    running: Mutex<Vec<(u64, CallContext)>>,
    next: AtomicU64,
}

impl Callers {
    fn enter(&self, context: &CallContext) -> Calling<'_> {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.running).push((number, context.clone()));
        Calling(self, number)
    }

    fn latest(&self) -> Option<CallContext> {
        lock(&self.running)
            .last()
            .map(|(_, context)| context.clone())
    }
}

/// One request of a mount, registered while it runs.
struct Calling<'a>(&'a Callers, u64);

impl Drop for Calling<'_> {
    fn drop(&mut self) {
        lock(&self.0.running).retain(|(number, _)| *number != self.1);
    }
}

impl ClientHandler for Callers {
    fn supports(&self, _capability: &str) -> bool {
        // Whatever the server asks is passed to the caller's client, which may or may not
        // answer; so the mount declares all of it.
        true
    }

    fn relay<'a>(&'a self, method: &'a str, params: &'a Value) -> Option<Answer<'a, Value>> {
        let Some(context) = self.latest() else {
            return Some(Box::pin(async move {
                Err(format!(
                    "no request of this server is running to ask {method} for"
                ))
            }));
        };
        relayed(&context, method, params)
    }
}

impl ClientHandler for Arc<Callers> {
    fn supports(&self, capability: &str) -> bool {
        (**self).supports(capability)
    }

    fn relay<'a>(&'a self, method: &'a str, params: &'a Value) -> Option<Answer<'a, Value>> {
        (**self).relay(method, params)
    }
}

/// The caller of one request, to whom the server's questions of that request go.
struct Caller(CallContext);

impl ClientHandler for Caller {
    fn supports(&self, _capability: &str) -> bool {
        true
    }

    fn relay<'a>(&'a self, method: &'a str, params: &'a Value) -> Option<Answer<'a, Value>> {
        relayed(&self.0, method, params)
    }
}

/// The question of `method` with `params` put to the client of the request of `context`.
fn relayed<'a>(
    context: &CallContext,
    method: &'a str,
    params: &Value,
) -> Option<Answer<'a, Value>> {
    let Some(ask) = context.relay(method, params.clone()) else {
        return Some(Box::pin(async move {
            Err(format!("{method} is no question for a client"))
        }));
    };
    Some(Box::pin(async move {
        ask.await.map_err(|error| error.to_string())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::wire::{read_reply, read_result};
    use serde_json::json;

    #[test]
    fn a_call_result_gives_its_parts_and_only_an_object_is_one() {
        let raw = |text: &str| RawValue::from_string(text.to_owned()).unwrap();
        let parts = CallParts::read(
            r#"{"_meta": {"io.modelcontextprotocol/serverInfo": {"name": "up"}},
                "content": [{"type": "text", "text": "no"}], "isError": true,
                "resultType": "complete", "structuredContent": null}"#,
        )
        .unwrap();
        assert_eq!(
            parts.content.as_deref().map(RawValue::get),
            Some(r#"[{"type": "text", "text": "no"}]"#)
        );
        assert!(parts.structured.is_none(), "null is no structured content");
        assert_eq!(parts.is_error, Some(json!(true)));
        assert_eq!(parts.kind(), ResultKind::Complete);
        let task = CallParts::read(r#"{"resultType": "task", "taskId": "t1"}"#).unwrap();
        assert_eq!(task.kind(), ResultKind::Task);
        let parts = CallParts::read(r#"{"structuredContent": [1, 2]}"#).unwrap();
        assert_eq!(
            (
                parts.content.is_none(),
                parts.structured.as_deref().map(RawValue::get)
            ),
            (true, Some("[1, 2]"))
        );
        for broken in ["5", "[]", r#""text""#] {
            let error = read_result::<CallParts>("tools/call", &raw(broken))
                .err()
                .map(|e| e.to_string());
            assert_eq!(
                error.as_deref(),
                Some(
                    "the MCP server broke the protocol: its tools/call result could not be \
                     read: it is not a JSON object"
                ),
                "{broken}"
            );
        }
        // A result type that is no name is none this client knows: the result is complete.
        for odd in [
            r#"{"resultType": null}"#,
            r#"{"resultType": 3}"#,
            r#"{"resultType": {}}"#,
        ] {
            assert_eq!(CallParts::read(odd).unwrap().kind(), ResultKind::Complete);
        }
    }

    /// An answer as our server writes it reaches the mount unread, which reads its result
    /// alone, by the same rules.
    #[test]
    fn a_call_result_in_its_unread_answer_reads_alone_by_the_same_rules() {
        let reply = |message: &str| match crate::client::wire::read(message.as_bytes()) {
            Ok(crate::client::wire::Message::Response {
                outcome: Ok(reply), ..
            }) => reply,
            other => panic!("{message}: {other:?}"),
        };
        let answer = reply(
            r#"{"jsonrpc":"2.0","id":3,"result": {"content":[{"type":"text","text":"}"}],"isError":false,"structuredContent":{"n":1}} }"#,
        );
        let parts: CallParts = read_reply("tools/call", &answer).unwrap();
        assert_eq!(
            parts.content.as_deref().map(RawValue::get),
            Some(r#"[{"type":"text","text":"}"}]"#)
        );
        assert_eq!(
            parts.structured.as_deref().map(RawValue::get),
            Some(r#"{"n":1}"#)
        );
        assert_eq!(parts.is_error, Some(json!(false)));
        for broken in ["5", "[]", r#""text""#] {
            let answer = reply(&format!(r#"{{"jsonrpc":"2.0","id":3,"result":{broken}}}"#));
            let error = read_reply::<CallParts>("tools/call", &answer)
                .err()
                .map(|e| e.to_string());
            assert_eq!(
                error.as_deref(),
                Some(
                    "the MCP server broke the protocol: its tools/call result could not be \
                     read: it is not a JSON object"
                ),
                "{broken}"
            );
        }
    }
}
