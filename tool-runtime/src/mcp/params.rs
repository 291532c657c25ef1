//! What a request asks, read once into types: its method, named by [`Method`], and its
//! `params`, read straight from the request's bytes into one struct per method
//! ([`MethodParams`]), with no JSON tree between. A request whose params do not fit is answered
//! -32602 with the parameter, what was expected and what came.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::value::RawValue;
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

/// What a request asks: its method, with its params read into that method's type, or why
/// they do not fit (answered -32602 once the request's era lets it through).
#[derive(Debug)]
pub(crate) enum MethodParams {
    Initialize(InitializeParams),
    Ping(Bare),
    SetLogLevel(SetLevelParams),
    Discover(Bare),
    Listen(ListenParams),
    /// One of the four lists (its method says which).
    List(Method, ListParams),
    CallTool(CallParams),
    GetPrompt(GetPromptParams),
    ReadResource(ReadResourceParams),
    Complete(CompleteParams),
    Subscribe(SubscribeParams),
    Unsubscribe(SubscribeParams),
    /// `tasks/get`, `tasks/cancel` or `tasks/result` (its method says which).
    Task(Method, TaskParams),
    ListTasks(ListParams),
    UpdateTask(UpdateTaskParams),
    /// A method this server does not know.
    Unknown(Bare),
    /// Params that do not fit the method's type: why, and the `_meta` they carry.
    Unfit(Method, RequestMeta, String),
}

/// The one table of what each method's params are read into: `$deserialize(type)` reads
/// one type, and the arms wrap it in the method's variant.
macro_rules! by_method {
    ($method:expr, $deserialize:ident) => {
        match $method {
            Method::Initialize => $deserialize!(InitializeParams).map(MethodParams::Initialize),
            Method::Ping => $deserialize!(Bare).map(MethodParams::Ping),
            Method::SetLogLevel => $deserialize!(SetLevelParams).map(MethodParams::SetLogLevel),
            Method::Discover => $deserialize!(Bare).map(MethodParams::Discover),
            Method::Listen => $deserialize!(ListenParams).map(MethodParams::Listen),
            method @ (Method::ListTools
            | Method::ListPrompts
            | Method::ListResources
            | Method::ListResourceTemplates) => {
                $deserialize!(ListParams).map(|list| MethodParams::List(method, list))
            }
            Method::CallTool => $deserialize!(CallParams).map(MethodParams::CallTool),
            Method::GetPrompt => $deserialize!(GetPromptParams).map(MethodParams::GetPrompt),
            Method::ReadResource => {
                $deserialize!(ReadResourceParams).map(MethodParams::ReadResource)
            }
            Method::Complete => $deserialize!(CompleteParams).map(MethodParams::Complete),
            Method::Subscribe => $deserialize!(SubscribeParams).map(MethodParams::Subscribe),
            Method::Unsubscribe => $deserialize!(SubscribeParams).map(MethodParams::Unsubscribe),
            method @ (Method::GetTask | Method::CancelTask | Method::TaskResult) => {
                $deserialize!(TaskParams).map(|task| MethodParams::Task(method, task))
            }
            Method::ListTasks => $deserialize!(ListParams).map(MethodParams::ListTasks),
            Method::UpdateTask => $deserialize!(UpdateTaskParams).map(MethodParams::UpdateTask),
            Method::Unknown => $deserialize!(Bare).map(MethodParams::Unknown),
        }
    };
}

impl MethodParams {
    /// Whether the request runs work that outlasts its handling (a call, a prompt, a read,
    /// a completion, a stream of news, a task method): such a request is counted against
    /// the in-flight caps from its arrival until it is answered.
    pub(crate) fn runs_work(&self) -> bool {
        matches!(
            self,
            MethodParams::CallTool(_)
                | MethodParams::GetPrompt(_)
                | MethodParams::ReadResource(_)
                | MethodParams::Complete(_)
                | MethodParams::Listen(_)
                | MethodParams::Task(..)
                | MethodParams::ListTasks(_)
                | MethodParams::UpdateTask(_)
        )
    }

    /// Reads the params of `method` as written (`raw`; none: an empty object); params that
    /// do not fit are `Unfit`, with why.
    pub(crate) fn read(method: Method, raw: Option<&RawValue>) -> MethodParams {
        macro_rules! typed {
            ($type:ty) => {
                read::<$type>(raw)
            };
        }
        let read: Result<MethodParams, String> = by_method!(method, typed);
        read.unwrap_or_else(|why| {
            // The era is decided from `_meta` whatever else does not fit.
            let meta = self::read::<Bare>(raw)
                .map(|bare| bare.meta)
                .unwrap_or_default();
            MethodParams::Unfit(method, meta, why)
        })
    }

    /// Reads the params of `method` from `deserializer` (an object's entries), in the pass
    /// that reads the whole message; an error leaves the message to be read again, params
    /// as written, for the words of the refusal.
    pub(crate) fn deserialize<'de, D: serde::Deserializer<'de>>(
        method: Method,
        deserializer: D,
    ) -> Result<MethodParams, D::Error> {
        macro_rules! typed {
            ($type:ty) => {
                <$type as Deserialize>::deserialize(deserializer)
            };
        }
        by_method!(method, typed)
    }

    /// The method asked.
    pub(crate) fn method(&self) -> Method {
        match self {
            MethodParams::Initialize(_) => Method::Initialize,
            MethodParams::Ping(_) => Method::Ping,
            MethodParams::SetLogLevel(_) => Method::SetLogLevel,
            MethodParams::Discover(_) => Method::Discover,
            MethodParams::Listen(_) => Method::Listen,
            MethodParams::CallTool(_) => Method::CallTool,
            MethodParams::GetPrompt(_) => Method::GetPrompt,
            MethodParams::ReadResource(_) => Method::ReadResource,
            MethodParams::Complete(_) => Method::Complete,
            MethodParams::Subscribe(_) => Method::Subscribe,
            MethodParams::Unsubscribe(_) => Method::Unsubscribe,
            MethodParams::ListTasks(_) => Method::ListTasks,
            MethodParams::UpdateTask(_) => Method::UpdateTask,
            MethodParams::Unknown(_) => Method::Unknown,
            MethodParams::List(method, _)
            | MethodParams::Task(method, _)
            | MethodParams::Unfit(method, _, _) => *method,
        }
    }

    /// The request's `_meta`.
    pub(crate) fn meta(&self) -> &RequestMeta {
        match self {
            MethodParams::Initialize(p) => &p.meta,
            MethodParams::Ping(p) | MethodParams::Discover(p) | MethodParams::Unknown(p) => &p.meta,
            MethodParams::SetLogLevel(p) => &p.meta,
            MethodParams::Listen(p) => &p.meta,
            MethodParams::List(_, p) | MethodParams::ListTasks(p) => &p.meta,
            MethodParams::CallTool(p) => &p.meta,
            MethodParams::GetPrompt(p) => &p.meta,
            MethodParams::ReadResource(p) => &p.meta,
            MethodParams::Complete(p) => &p.meta,
            MethodParams::Subscribe(p) | MethodParams::Unsubscribe(p) => &p.meta,
            MethodParams::Task(_, p) => &p.meta,
            MethodParams::UpdateTask(p) => &p.meta,
            MethodParams::Unfit(_, meta, _) => meta,
        }
    }

    /// What the request names, for the layers around requests: the tool or prompt, the
    /// resource's URI (read, or subscribed to), or the task.
    pub(crate) fn target(&self) -> Option<&str> {
        match self {
            MethodParams::Subscribe(p) | MethodParams::Unsubscribe(p) => Some(&p.uri),
            MethodParams::CallTool(p) => Some(&p.name),
            MethodParams::GetPrompt(p) => Some(&p.name),
            MethodParams::ReadResource(p) => Some(&p.uri),
            MethodParams::Task(_, p) => Some(&p.task_id),
            MethodParams::UpdateTask(p) => Some(&p.task_id),
            _ => None,
        }
    }

    /// What the request names, where a header mirrors it (`Mcp-Name`): the tool or prompt,
    /// the resource's URI, or the task.
    /// A subscription's URI is not mirrored.
    #[cfg(feature = "http")]
    pub(crate) fn named(&self) -> Option<&str> {
        match self {
            MethodParams::Subscribe(_) | MethodParams::Unsubscribe(_) => None,
            _ => self.target(),
        }
    }
}

/// The params of a method that takes none but `_meta`.
#[derive(Deserialize, Default, Debug)]
pub(crate) struct Bare {
    #[serde(rename = "_meta", default)]
    pub(crate) meta: RequestMeta,
}

impl Params for Bare {}

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
    /// Whether the method exists in `era` at all (whatever this server offers): a method
    /// the era removed, or never had, is answered "Method not found" before anything else
    /// of the request (its headers, its `_meta`, its params) is judged.
    pub(crate) fn exists_in(self, era: super::era::Era) -> bool {
        use super::era::Era;
        match self {
            Method::Unknown => false,
            Method::Initialize
            | Method::Ping
            | Method::SetLogLevel
            | Method::Subscribe
            | Method::Unsubscribe
            | Method::ListTasks
            | Method::TaskResult => era == Era::Handshake,
            Method::Discover | Method::Listen | Method::UpdateTask => era == Era::PerRequest,
            Method::ListTools
            | Method::ListPrompts
            | Method::ListResources
            | Method::ListResourceTemplates
            | Method::CallTool
            | Method::GetPrompt
            | Method::ReadResource
            | Method::Complete
            | Method::GetTask
            | Method::CancelTask => true,
        }
    }

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

/// Reads the params as written (`raw`; none: an empty object) as `T`. Params that do not
/// fit are read again with the path of what does not fit tracked, for the -32602 message
/// that says which parameter, what was expected and what came: tracking costs an
/// allocation per field, which only a refusal pays.
pub(crate) fn read<T: Params>(raw: Option<&RawValue>) -> Result<T, String> {
    let text = raw.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(|plain| {
        let mut again = serde_json::Deserializer::from_str(text);
        match serde_path_to_error::deserialize::<_, T>(&mut again) {
            Err(error) => invalid_params::<T>(&error),
            // The same text cannot pass the second time; should it, the plain words stand.
            Ok(_) => format!("Invalid params: {plain}"),
        }
    })
}

/// Reads what a request's `_meta` holds (`meta`; none: nothing) as `T`.
pub(crate) fn read_meta<T: Params>(meta: Option<&Map<String, Value>>) -> Result<T, String> {
    let empty = Map::new();
    let meta = meta.unwrap_or(&empty);
    T::deserialize(meta).map_err(
        |plain| match serde_path_to_error::deserialize::<_, T>(meta) {
            Err(error) => invalid_params::<T>(&error),
            Ok(_) => format!("Invalid params: {plain}"),
        },
    )
}

/// The -32602 message of params that do not fit `T`.
fn invalid_params<T: Params>(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    if error
        .inner()
        .to_string()
        .starts_with("recursion limit exceeded")
    {
        return "Invalid params: values are nested too deeply (the limit is 128 levels)".to_owned();
    }
    // The position means nothing to a client that sent the message on one line.
    let inner = error.inner().to_string();
    let inner = inner.split(" at line ").next().unwrap_or(&inner).to_owned();
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

/// A request's `_meta`: where it says what it is beside what it asks (its progress token;
/// at 2026-07-28 its protocol version, the client's capabilities, the log level). One that
/// is not an object says nothing, and is read as none.
#[derive(Default, Debug)]
pub(crate) struct RequestMeta(Option<Map<String, Value>>);

impl<'de> Deserialize<'de> for RequestMeta {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(deserializer)? {
            Value::Object(meta) => RequestMeta(Some(meta)),
            _ => RequestMeta(None),
        })
    }
}

impl RequestMeta {
    /// What `_meta` holds, if the request has one.
    pub(crate) fn map(&self) -> Option<&Map<String, Value>> {
        self.0.as_ref()
    }

    /// The progress token, when it is one a notification can name (a string or a number;
    /// anything else is ignored, as no notification could name it).
    pub(crate) fn progress_token(&self) -> Option<Value> {
        self.map()?
            .get("progressToken")
            .filter(|token| token.is_string() || token.is_number())
            .cloned()
    }
}

/// What a 2026-07-28 request says of itself in `_meta`: the client's capabilities, and
/// the level of log messages it wants.
#[derive(Deserialize, Debug)]
pub(crate) struct PerRequestMeta {
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub(crate) capabilities: Map<String, Value>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", default)]
    pub(crate) log_level: Option<String>,
}

impl Params for PerRequestMeta {
    fn describe(path: &str) -> Option<&'static str> {
        match path {
            "io.modelcontextprotocol/clientCapabilities" => {
                Some("the client's capabilities in _meta, required at 2026-07-28")
            }
            "io.modelcontextprotocol/logLevel" => {
                Some("the lowest level of logs to send, in _meta")
            }
            _ => None,
        }
    }
}

/// `initialize`.
#[derive(Deserialize, Debug)]
pub(crate) struct InitializeParams {
    #[serde(rename = "protocolVersion")]
    pub(crate) protocol_version: String,
    #[serde(default)]
    pub(crate) capabilities: Option<Map<String, Value>>,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: RequestMeta,
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
#[derive(Deserialize, Debug)]
pub(crate) struct SetLevelParams {
    pub(crate) level: String,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: RequestMeta,
}

impl Params for SetLevelParams {
    fn describe(path: &str) -> Option<&'static str> {
        (path == "level")
            .then_some("one of debug, info, notice, warning, error, critical, alert, emergency")
    }
}

/// The four lists.
#[derive(Deserialize, Debug)]
pub(crate) struct ListParams {
    #[serde(default)]
    pub(crate) cursor: Option<String>,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: RequestMeta,
}

impl Params for ListParams {
    fn describe(path: &str) -> Option<&'static str> {
        (path == "cursor").then_some("where the page starts, as the last page said")
    }
}

/// `tools/call`.
#[derive(Deserialize, Debug)]
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
    pub(crate) meta: RequestMeta,
}

/// What a 2025-11-25 client asks of the task a call becomes.
#[derive(Deserialize, Debug)]
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
#[derive(Deserialize, Debug)]
pub(crate) struct GetPromptParams {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) arguments: Value,
    #[serde(rename = "inputResponses", default)]
    pub(crate) input_responses: Option<Map<String, Value>>,
    #[serde(rename = "requestState", default)]
    pub(crate) request_state: Option<String>,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: RequestMeta,
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
#[derive(Deserialize, Debug)]
pub(crate) struct ReadResourceParams {
    pub(crate) uri: String,
    #[serde(rename = "inputResponses", default)]
    pub(crate) input_responses: Option<Map<String, Value>>,
    #[serde(rename = "requestState", default)]
    pub(crate) request_state: Option<String>,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: RequestMeta,
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
#[derive(Deserialize, Debug)]
pub(crate) struct CompleteParams {
    #[serde(rename = "ref")]
    pub(crate) reference: Reference,
    pub(crate) argument: Typed,
    #[serde(default)]
    pub(crate) context: Option<CompletionArguments>,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: RequestMeta,
}

/// What a completion is for: a prompt's argument, or a resource template's variable.
#[derive(Deserialize, Debug)]
#[serde(tag = "type")]
pub(crate) enum Reference {
    #[serde(rename = "ref/prompt")]
    Prompt { name: String },
    #[serde(rename = "ref/resource")]
    Resource { uri: String },
}

/// The argument being completed, and what the user typed of it so far.
#[derive(Deserialize, Debug)]
pub(crate) struct Typed {
    pub(crate) name: String,
    pub(crate) value: String,
}

/// The arguments already given, which a completion may take into account.
#[derive(Deserialize, Debug)]
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
#[derive(Deserialize, Debug)]
pub(crate) struct SubscribeParams {
    pub(crate) uri: String,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: RequestMeta,
}

impl Params for SubscribeParams {
    fn describe(path: &str) -> Option<&'static str> {
        (path == "uri").then_some("the resource's URI")
    }
}

/// `subscriptions/listen` (2026-07-28): which notifications the stream should carry.
#[derive(Deserialize, Default, Debug)]
pub(crate) struct ListenParams {
    #[serde(default)]
    pub(crate) notifications: Wanted,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: RequestMeta,
}

/// What a `subscriptions/listen` stream is asked to carry.
#[derive(Deserialize, Default, Debug)]
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
#[derive(Deserialize, Debug)]
pub(crate) struct TaskParams {
    #[serde(rename = "taskId")]
    pub(crate) task_id: String,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: RequestMeta,
}

impl Params for TaskParams {
    fn describe(path: &str) -> Option<&'static str> {
        (path == "taskId").then_some("the task's id")
    }
}

/// 2026-07-28 `tasks/update`: answers to the questions a task waits on.
#[derive(Deserialize, Debug)]
pub(crate) struct UpdateTaskParams {
    #[serde(rename = "taskId")]
    pub(crate) task_id: String,
    #[serde(rename = "inputResponses")]
    pub(crate) input_responses: Map<String, Value>,
    #[serde(rename = "_meta", default)]
    pub(crate) meta: RequestMeta,
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
#[derive(Deserialize, Debug)]
pub(crate) struct CancelledParams {
    #[serde(rename = "requestId")]
    pub(crate) request_id: Value,
}

impl Params for CancelledParams {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Reads `value` as a request's params, as the connection reads them.
    fn read_params<T: Params>(value: Value) -> Result<T, String> {
        let raw = RawValue::from_string(value.to_string()).unwrap();
        read(Some(&raw))
    }

    #[test]
    fn a_missing_parameter_is_named_with_what_it_is() {
        let error = read_params::<CallParams>(json!({"arguments": {}})).err();
        assert_eq!(
            error.as_deref(),
            Some("Invalid params: \"name\" (the tool's name) is missing")
        );
        let error = read_params::<CompleteParams>(
            json!({"ref": {"type": "ref/prompt"}, "argument": {"name": "a", "value": ""}}),
        )
        .err();
        assert_eq!(
            error.as_deref(),
            Some("Invalid params: \"ref.name\" (the prompt's name) is missing")
        );
    }

    #[test]
    fn a_parameter_of_the_wrong_type_says_what_came() {
        let error = read_params::<CallParams>(json!({"name": 3})).err();
        assert_eq!(
            error.as_deref(),
            Some("Invalid params: \"name\" (the tool's name) must be a string; got integer `3`")
        );
        let error = read_params::<CallParams>(json!({"name": "a", "inputResponses": [1]})).err();
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
        let call: CallParams = read_params(json!({
            "name": "add", "arguments": {"a": 1}, "extra": true,
            "_meta": {"progressToken": 7, "other": 1}
        }))
        .unwrap();
        assert_eq!(call.name, "add");
        assert_eq!(call.arguments, json!({"a": 1}));
        assert_eq!(call.meta.progress_token(), Some(json!(7)));
        let call: CallParams =
            read_params(json!({"name": "x", "_meta": {"progressToken": {}}})).unwrap();
        assert_eq!(call.arguments, Value::Null);
        assert_eq!(call.meta.progress_token(), None);
        assert_eq!(Method::of("tools/call"), Method::CallTool);
        assert_eq!(Method::of("tools/cal"), Method::Unknown);
    }
}
