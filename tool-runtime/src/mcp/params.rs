//! What a request asks, read once into types: its method, named by [`Method`], and its
//! `params`, deserialized into one struct per method. A request whose params do not fit is
//! answered -32602 with the parameter, what was expected and what came.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

/// Where a 2026-07-28 request declares the client's capabilities.
pub(crate) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// A method a client may call, read from its name once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Initialize,
    Ping,
    SetLogLevel,
    Discover,
    Listen,
    ListTools,
    ListPrompts,
    ListResources,
    ListResourceTemplates,
    CallTool,
    GetPrompt,
    ReadResource,
    Complete,
    Subscribe,
    Unsubscribe,
    GetTask,
    ListTasks,
    CancelTask,
    TaskResult,
    UpdateTask,
    /// A method this server does not know.
    Unknown,
}

/// A capability a server may not offer: its methods are unknown to a server without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Capability {
    Prompts,
    Resources,
    Completions,
}

impl Capability {
    /// What the capability is, as the error for a method of it says.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Capability::Prompts => "prompts",
            Capability::Resources => "resources",
            Capability::Completions => "prompts or resource templates to complete",
        }
    }
}

impl Method {
    /// The method named `name`.
    pub(crate) fn of(name: &str) -> Method {
        match name {
            "initialize" => Method::Initialize,
            "ping" => Method::Ping,
            "logging/setLevel" => Method::SetLogLevel,
            "server/discover" => Method::Discover,
            "subscriptions/listen" => Method::Listen,
            "tools/list" => Method::ListTools,
            "prompts/list" => Method::ListPrompts,
            "resources/list" => Method::ListResources,
            "resources/templates/list" => Method::ListResourceTemplates,
            "tools/call" => Method::CallTool,
            "prompts/get" => Method::GetPrompt,
            "resources/read" => Method::ReadResource,
            "completion/complete" => Method::Complete,
            "resources/subscribe" => Method::Subscribe,
            "resources/unsubscribe" => Method::Unsubscribe,
            "tasks/get" => Method::GetTask,
            "tasks/list" => Method::ListTasks,
            "tasks/cancel" => Method::CancelTask,
            "tasks/result" => Method::TaskResult,
            "tasks/update" => Method::UpdateTask,
            _ => Method::Unknown,
        }
    }

    /// The capability the method belongs to, when a server may not offer it.
    pub(crate) fn capability(self) -> Option<Capability> {
        match self {
            Method::ListPrompts | Method::GetPrompt => Some(Capability::Prompts),
            Method::ListResources
            | Method::ListResourceTemplates
            | Method::ReadResource
            | Method::Subscribe
            | Method::Unsubscribe => Some(Capability::Resources),
            Method::Complete => Some(Capability::Completions),
            _ => None,
        }
    }
}

/// A method's params, as a struct, with words for its fields in errors.
pub(crate) trait Params: DeserializeOwned {
    /// What the field at `path` is, said in an error about it (`"the tool's name"`).
    fn describe(path: &str) -> Option<&'static str> {
        let _ = path;
        None
    }
}

/// Reads `params` (none: an empty object) as `T`; else the -32602 message saying which
/// parameter does not fit, what was expected and what came.
pub(crate) fn read<T: Params>(params: Option<Map<String, Value>>) -> Result<T, String> {
    serde_path_to_error::deserialize(params.unwrap_or_default())
        .map_err(|error| invalid_params::<T>(&error))
}

/// Reads `params` as `T` without taking them (for what is read before the method's own
/// params: `_meta`).
pub(crate) fn read_ref<T: Params>(params: &Map<String, Value>) -> Result<T, String> {
    serde_path_to_error::deserialize(params).map_err(|error| invalid_params::<T>(&error))
}

/// The -32602 message of params that do not fit `T`.
fn invalid_params<T: Params>(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let inner = error.inner().to_string();
    let parent = error.path().to_string();
    let named = |path: &str| match T::describe(path) {
        Some(what) => format!("\"{path}\" ({what})"),
        None => format!("\"{path}\""),
    };
    // serde says which field is missing, at the path of the object missing it.
    if let Some(field) = inner
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        let path = match parent.as_str() {
            "." => field.to_owned(),
            parent => format!("{parent}.{field}"),
        };
        return format!("Invalid params: {} is missing", named(&path));
    }
    // "invalid type: integer `3`, expected a string", as one sentence of ours.
    let worded = match inner
        .strip_prefix("invalid type: ")
        .or_else(|| inner.strip_prefix("invalid value: "))
        .and_then(|rest| rest.split_once(", expected "))
    {
        Some((came, expected)) => format!("must be {}; got {}", in_json(expected), in_json(came)),
        None => inner,
    };
    match parent.as_str() {
        "." => format!("Invalid params: {worded}"),
        path => format!("Invalid params: {} {worded}", named(path)),
    }
}

/// What serde calls a value, in JSON's words.
fn in_json(said: &str) -> String {
    match said {
        "sequence" | "a sequence" => "an array".to_owned(),
        "map" | "a map" => "an object".to_owned(),
        "unit value" => "null".to_owned(),
        other => other.replacen("struct ", "an object ", 1),
    }
}

/// A request's `_meta`, as far as the methods that run user code read it.
#[derive(Deserialize, Default)]
pub(crate) struct CallMeta {
    /// Where progress notifications point (a string or a number; anything else is
    /// ignored, as no notification could name it).
    #[serde(rename = "progressToken", default)]
    progress_token: Option<Value>,
}

impl CallMeta {
    /// The progress token, when it is one a notification can name.
    pub(crate) fn progress_token(&mut self) -> Option<Value> {
        self.progress_token
            .take()
            .filter(|token| token.is_string() || token.is_number())
    }
}

/// What a 2026-07-28 request says of itself in `_meta`: the client's capabilities, and
/// the level of log messages it wants.
#[derive(Deserialize)]
pub(crate) struct PerRequestMeta {
    #[serde(rename = "_meta")]
    pub(crate) meta: PerRequestFields,
}

#[derive(Deserialize)]
pub(crate) struct PerRequestFields {
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub(crate) capabilities: Map<String, Value>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", default)]
    pub(crate) log_level: Option<String>,
}

impl Params for PerRequestMeta {
    fn describe(path: &str) -> Option<&'static str> {
        match path {
            "_meta.io.modelcontextprotocol/clientCapabilities" => {
                Some("the client's capabilities, required at 2026-07-28")
            }
            "_meta.io.modelcontextprotocol/logLevel" => Some("the lowest level of logs to send"),
            _ => None,
        }
    }
}

/// `initialize`.
#[derive(Deserialize)]
pub(crate) struct InitializeParams {
    #[serde(rename = "protocolVersion")]
    pub(crate) protocol_version: String,
    #[serde(default)]
    pub(crate) capabilities: Option<Map<String, Value>>,
}

impl Params for InitializeParams {
    fn describe(path: &str) -> Option<&'static str> {
        match path {
            "protocolVersion" => Some("the version the client speaks"),
            "capabilities" => Some("what the client can do"),
            _ => None,
        }
    }
}

/// `logging/setLevel`.
#[derive(Deserialize)]
pub(crate) struct SetLevelParams {
    pub(crate) level: String,
}

impl Params for SetLevelParams {
    fn describe(path: &str) -> Option<&'static str> {
        (path == "level")
            .then_some("one of debug, info, notice, warning, error, critical, alert, emergency")
    }
}

/// The four lists.
#[derive(Deserialize)]
pub(crate) struct ListParams {
    #[serde(default)]
    pub(crate) cursor: Option<String>,
}

impl Params for ListParams {
    fn describe(path: &str) -> Option<&'static str> {
        (path == "cursor").then_some("where the page starts, as the last page said")
    }
}

/// `tools/call`.
#[derive(Deserialize)]
pub(crate) struct CallParams {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) arguments: Value,
    /// 2025-11-25: the client asks for the call to run as a task.
    #[serde(default)]
    pub(crate) task: Option<TaskAsked>,
    #[serde(rename = "inputResponses", default)]
    pub(crate) input_responses: Option<Map<String, Value>>,
    #[serde(rename = "requestState", default)]
    pub(crate) request_state: Option<String>,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: CallMeta,
}

/// What a 2025-11-25 client asks of the task a call becomes.
#[derive(Deserialize)]
pub(crate) struct TaskAsked {
    /// How long to keep the task once it has ended, in milliseconds.
    #[serde(default)]
    pub(crate) ttl: Option<u64>,
}

/// Words for the fields a 2026-07-28 retry brings: the answers to the questions of the
/// round before, and the state it was sealed with.
fn describe_round(path: &str) -> Option<&'static str> {
    match path {
        "inputResponses" => Some("answers, keyed as the inputRequests they answer"),
        "requestState" => Some("the string the server sent"),
        _ => None,
    }
}

impl Params for CallParams {
    fn describe(path: &str) -> Option<&'static str> {
        match path {
            "name" => Some("the tool's name"),
            "arguments" => Some("the tool's arguments"),
            "task" => Some("how to run the call as a task"),
            "task.ttl" => Some("how long to keep the task, in milliseconds"),
            path => describe_round(path),
        }
    }
}

/// `prompts/get`.
#[derive(Deserialize)]
pub(crate) struct GetPromptParams {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) arguments: Value,
    #[serde(rename = "inputResponses", default)]
    pub(crate) input_responses: Option<Map<String, Value>>,
    #[serde(rename = "requestState", default)]
    pub(crate) request_state: Option<String>,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: CallMeta,
}

impl Params for GetPromptParams {
    fn describe(path: &str) -> Option<&'static str> {
        match path {
            "name" => Some("the prompt's name"),
            "arguments" => Some("the prompt's arguments"),
            path => describe_round(path),
        }
    }
}

/// `resources/read`.
#[derive(Deserialize)]
pub(crate) struct ReadResourceParams {
    pub(crate) uri: String,
    #[serde(rename = "inputResponses", default)]
    pub(crate) input_responses: Option<Map<String, Value>>,
    #[serde(rename = "requestState", default)]
    pub(crate) request_state: Option<String>,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: CallMeta,
}

impl Params for ReadResourceParams {
    fn describe(path: &str) -> Option<&'static str> {
        match path {
            "uri" => Some("the resource's URI"),
            path => describe_round(path),
        }
    }
}

/// `completion/complete`.
#[derive(Deserialize)]
pub(crate) struct CompleteParams {
    #[serde(rename = "ref")]
    pub(crate) reference: Reference,
    pub(crate) argument: Typed,
    #[serde(default)]
    pub(crate) context: Option<CompletionArguments>,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: CallMeta,
}

/// What a completion is for: a prompt's argument, or a resource template's variable.
#[derive(Deserialize)]
#[serde(tag = "type")]
pub(crate) enum Reference {
    #[serde(rename = "ref/prompt")]
    Prompt { name: String },
    #[serde(rename = "ref/resource")]
    Resource { uri: String },
}

/// The argument being completed, and what the user typed of it so far.
#[derive(Deserialize)]
pub(crate) struct Typed {
    pub(crate) name: String,
    pub(crate) value: String,
}

/// The arguments already given, which a completion may take into account.
#[derive(Deserialize)]
pub(crate) struct CompletionArguments {
    #[serde(default)]
    pub(crate) arguments: Option<Map<String, Value>>,
}

impl Params for CompleteParams {
    fn describe(path: &str) -> Option<&'static str> {
        match path {
            "ref" => Some(concat!(
                "{\"type\": \"ref/prompt\", \"name\": ...} or ",
                "{\"type\": \"ref/resource\", \"uri\": ...}"
            )),
            "ref.name" => Some("the prompt's name"),
            "ref.uri" => Some("the resource template"),
            "argument" => Some("{\"name\": <the argument>, \"value\": <the text typed so far>}"),
            "argument.name" => Some("the argument to complete"),
            "argument.value" => Some("the text typed so far"),
            "context.arguments" => Some("the arguments given so far"),
            _ => None,
        }
    }
}

/// `resources/subscribe` and `resources/unsubscribe`.
#[derive(Deserialize)]
pub(crate) struct SubscribeParams {
    pub(crate) uri: String,
}

impl Params for SubscribeParams {
    fn describe(path: &str) -> Option<&'static str> {
        (path == "uri").then_some("the resource's URI")
    }
}

/// `subscriptions/listen` (2026-07-28): which notifications the stream should carry.
#[derive(Deserialize, Default)]
pub(crate) struct ListenParams {
    #[serde(default)]
    pub(crate) notifications: Wanted,
}

/// What a `subscriptions/listen` stream is asked to carry.
#[derive(Deserialize, Default)]
pub(crate) struct Wanted {
    #[serde(rename = "toolsListChanged", default)]
    pub(crate) tools: bool,
    #[serde(rename = "promptsListChanged", default)]
    pub(crate) prompts: bool,
    #[serde(rename = "resourcesListChanged", default)]
    pub(crate) resources: bool,
    #[serde(rename = "resourceSubscriptions", default)]
    pub(crate) resource_uris: Vec<String>,
}

impl Params for ListenParams {
    fn describe(path: &str) -> Option<&'static str> {
        match path {
            "notifications" => Some("the notifications to send"),
            "notifications.resourceSubscriptions" => Some("the URIs of resources to watch"),
            _ => None,
        }
    }
}

/// The task methods that name a task (`tasks/get`, `tasks/result`, `tasks/cancel`).
#[derive(Deserialize)]
pub(crate) struct TaskParams {
    #[serde(rename = "taskId")]
    pub(crate) task_id: String,
}

impl Params for TaskParams {
    fn describe(path: &str) -> Option<&'static str> {
        (path == "taskId").then_some("the task's id")
    }
}

/// 2026-07-28 `tasks/update`: answers to the questions a task waits on.
#[derive(Deserialize)]
pub(crate) struct UpdateTaskParams {
    #[serde(rename = "inputResponses")]
    pub(crate) input_responses: Map<String, Value>,
}

impl Params for UpdateTaskParams {
    fn describe(path: &str) -> Option<&'static str> {
        match path {
            "taskId" => Some("the task's id"),
            "inputResponses" => Some("answers, keyed as the task's inputRequests"),
            _ => None,
        }
    }
}

/// `notifications/cancelled`.
#[derive(Deserialize)]
pub(crate) struct CancelledParams {
    #[serde(rename = "requestId")]
    pub(crate) request_id: Value,
}

impl Params for CancelledParams {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(value: Value) -> Option<Map<String, Value>> {
        value.as_object().cloned()
    }

    #[test]
    fn a_missing_parameter_is_named_with_what_it_is() {
        let error = read::<CallParams>(params(json!({"arguments": {}}))).err();
        assert_eq!(
            error.as_deref(),
            Some("Invalid params: \"name\" (the tool's name) is missing")
        );
        let error = read::<CompleteParams>(params(
            json!({"ref": {"type": "ref/prompt"}, "argument": {"name": "a", "value": ""}}),
        ))
        .err();
        assert_eq!(
            error.as_deref(),
            Some("Invalid params: \"ref.name\" (the prompt's name) is missing")
        );
    }

    #[test]
    fn a_parameter_of_the_wrong_type_says_what_came() {
        let error = read::<CallParams>(params(json!({"name": 3}))).err();
        assert_eq!(
            error.as_deref(),
            Some("Invalid params: \"name\" (the tool's name) must be a string; got integer `3`")
        );
        let error = read::<CallParams>(params(json!({"name": "a", "inputResponses": [1]}))).err();
        assert_eq!(
            error.as_deref(),
            Some(
                "Invalid params: \"inputResponses\" (answers, keyed as the inputRequests they \
                 answer) must be an object; got an array"
            )
        );
    }

    #[test]
    fn what_fits_is_read_and_the_rest_ignored() {
        let mut call: CallParams = read(params(json!({
            "name": "add", "arguments": {"a": 1}, "extra": true,
            "_meta": {"progressToken": 7, "other": 1}
        })))
        .unwrap();
        assert_eq!(call.name, "add");
        assert_eq!(call.arguments, json!({"a": 1}));
        assert_eq!(call.meta.progress_token(), Some(json!(7)));
        let mut call: CallParams =
            read(params(json!({"name": "x", "_meta": {"progressToken": {}}}))).unwrap();
        assert_eq!(call.arguments, Value::Null);
        assert_eq!(call.meta.progress_token(), None);
        assert_eq!(Method::of("tools/call"), Method::CallTool);
        assert_eq!(Method::of("tools/cal"), Method::Unknown);
    }
}
