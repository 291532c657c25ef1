//! A client of MCP servers, whoever wrote them: a child process over stdio, or a server
//! over Streamable HTTP, in either protocol era, agreed with the server.
//!
//! ```no_run
//! # async fn run() -> Result<(), tool_runtime::client::ClientError> {
//! use tool_runtime::client::Client;
//!
//! // A URL is a server over HTTP; anything else is a command line to start over stdio.
//! let client = Client::connect("npx -y @modelcontextprotocol/server-everything").await?;
//! for tool in client.list_tools().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let result = client.call_tool("echo", serde_json::json!({"message": "hi"})).await?;
//! assert!(!result.is_error);
//! client.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! At 2026-07-28 (what this client asks first) each request carries the client's version,
//! capabilities and identity, and nothing is kept between requests; a server that does not
//! speak it is spoken to in the handshake era (`initialize`, a session), as the
//! specification's negotiation says. What a server asks of the client (a form for the user,
//! a page to visit, a message from the client's model, the client's roots) goes to the
//! [`ClientHandler`] the client was given; at 2026-07-28 the client runs the rounds of a
//! request that needs answers itself (`input_required`, then the retry with them).
//!
//! The client connects again by itself when its connection ends (a process that exited, a
//! session the server ended), waiting longer after each failure.

pub mod auth;
mod child_input;
mod connections;
mod deadlines;
mod error;
mod event_bound;
mod handler;
mod headers;
pub(crate) mod http;
mod link;
mod listen;
pub(crate) mod listener;
mod negotiate;
pub(crate) mod params;
mod plain;
#[cfg(test)]
mod raw_http;
mod reply;
mod session;
mod skills;
mod stdio;
mod tasks;
mod types;
pub(crate) mod wire;

pub use error::ClientError;
pub use handler::{Answer, ClientHandler, Elicitation};
pub use skills::{Skill, SkillFile};
pub use tasks::RemoteTask;
pub use types::{CallResult, Notification, Progress, RemoteTool, ServerDescription};

use crate::mcp::era::Era;
use crate::sync::lock;
use params::{Arguments, RoundParams};
use serde_json::{json, Map, Value};
use session::{RequestOptions, Session};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, mpsc};

/// How many pages of a list are read at most: a server that hands out cursors without end
/// cannot keep the client reading forever.
const MOST_PAGES: usize = 1000;
/// How many rounds a request that needs answers (`input_required`) goes through at most.
const MOST_ROUNDS: usize = 8;
/// The wait after the first failure to connect; it doubles after each, up to
/// [`LONGEST_WAIT`].
const FIRST_WAIT: Duration = Duration::from_millis(200);
const LONGEST_WAIT: Duration = Duration::from_secs(10);

/// A server to connect to: a URL (`http://`, `https://`) is a server over Streamable HTTP;
/// anything else is a command line, started as a child process spoken to over stdio.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Target {
    /// A server over Streamable HTTP, at its MCP endpoint.
    Http(String),
    /// A command (a program and its arguments) started as a child process.
    Command(Vec<String>),
}

impl Target {
    /// Reads a target as people write one: a URL, or a command line split as a shell
    /// splits it (quotes keep an argument whole).
    pub fn parse(text: &str) -> Result<Target, String> {
        let text = text.trim();
        if text.starts_with("http://") || text.starts_with("https://") {
            return Ok(Target::Http(text.to_owned()));
        }
        match shlex::split(text) {
            Some(words) if !words.is_empty() => Ok(Target::Command(words)),
            Some(_) => Err("an empty command line".to_owned()),
            None => Err(format!("the command line {text:?} has an unclosed quote")),
        }
    }

    /// The target as it was written, for messages.
    pub(crate) fn shown(&self) -> String {
        match self {
            Target::Http(url) => url.clone(),
            Target::Command(words) => words.join(" "),
        }
    }

    /// Whether the server is over HTTP (else a process started over stdio).
    #[cfg(feature = "cli")]
    pub(crate) fn is_http(&self) -> bool {
        matches!(self, Target::Http(_))
    }

    /// The host of a server reached over plain `http://` elsewhere than this machine, if
    /// this is one: what is sent to it can be read on the way.
    #[cfg(feature = "cli")]
    pub(crate) fn plain_http_host(&self) -> Option<String> {
        let Target::Http(url) = self else {
            return None;
        };
        let url = oauth2::url::Url::parse(url).ok()?;
        let plain = url.scheme() == "http" && !on_this_machine(&url);
        plain.then(|| url.host_str().unwrap_or_default().to_owned())
    }
}

/// Whether `url` names this machine: a loopback address, or `localhost`.
pub(crate) fn on_this_machine(url: &oauth2::url::Url) -> bool {
    match url.host() {
        Some(oauth2::url::Host::Ipv4(address)) => address.is_loopback(),
        Some(oauth2::url::Host::Ipv6(address)) => address.is_loopback(),
        Some(oauth2::url::Host::Domain(name)) => name == "localhost",
        None => false,
    }
}

/// How a [`Client`] connects and behaves. Build one with [`Client::builder`].
pub struct ClientBuilder {
    name: String,
    version: String,
    handler: Arc<dyn ClientHandler>,
    era: Option<Era>,
    timeout: Duration,
    connect_timeout: Duration,
    max_message_bytes: usize,
    credentials: Option<Arc<dyn auth::Credentials>>,
    environment: Vec<(String, String)>,
    log_level: Option<String>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("name", &self.name)
            .field("era", &self.era)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            name: "tool-runtime".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            handler: Arc::new(handler::Nobody),
            era: None,
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            max_message_bytes: 16 * 1024 * 1024,
            credentials: None,
            environment: Vec::new(),
            log_level: None,
        }
    }
}

impl ClientBuilder {
    /// The client's name and version, as servers are told them.
    pub fn named(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Who answers what servers ask of the client (forms, pages, sampling, roots); what it
    /// supports is declared to servers.
    pub fn handler(mut self, handler: impl ClientHandler + 'static) -> Self {
        self.handler = Arc::new(handler);
        self
    }

    /// Speaks only the handshake era (`true`), never trying 2026-07-28 first; or only
    /// 2026-07-28 (`false`), never falling back.
    pub fn handshake_era(mut self, handshake: bool) -> Self {
        self.era = Some(if handshake {
            Era::Handshake
        } else {
            Era::PerRequest
        });
        self
    }

    /// How long a request may wait for its answer (60 s unless set).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = limit;
        self
    }

    /// The largest message read from a server (16 MiB unless set); a larger one ends the
    /// request with a protocol error.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// What authorizes the client's HTTP requests: a [`auth::BearerToken`], [`auth::OAuth`], or
    /// credentials of one's own.
    pub fn credentials(mut self, credentials: impl auth::Credentials + 'static) -> Self {
        self.credentials = Some(Arc::new(credentials));
        self
    }

    /// [`credentials`](Self::credentials) already shared with others (a mount's, made
    /// anew for each connection).
    pub(crate) fn shared_credentials(mut self, credentials: Arc<dyn auth::Credentials>) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// An environment variable for a server started as a process.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.environment.push((name.into(), value.into()));
        self
    }

    /// The least severe level of log messages wanted from servers (`"info"`, say): at
    /// 2026-07-28 each request says it, in the handshake era `logging/setLevel` does once
    /// connected. Unset, a 2026-07-28 server sends none, a server of the handshake era
    /// what it sends by default.
    pub fn log_level(mut self, level: impl Into<String>) -> Self {
        self.log_level = Some(level.into());
        self
    }

    /// Connects to `target` (see [`Target::parse`]).
    pub async fn connect(self, target: &str) -> Result<Client, ClientError> {
        let parsed = Target::parse(target).map_err(|reason| ClientError::TransportDown {
            server: target.to_owned(),
            reason,
        })?;
        self.connect_to(parsed).await
    }

    /// Connects to `target`.
    pub async fn connect_to(self, target: Target) -> Result<Client, ClientError> {
        let client = Client {
            inner: Arc::new(Inner {
                target,
                options: self,
                session: tokio::sync::Mutex::new(None),
                failures: Mutex::new(Failures::default()),
                tools: Mutex::new(HashMap::new()),
                events: broadcast::channel(256).0,
            }),
            timeout: None,
        };
        client.session().await?;
        Ok(client)
    }
}

/// A client of one MCP server; clones share the connection.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
    /// This handle's time limit for each request, instead of the client's
    /// ([`Client::with_timeout`]).
    timeout: Option<Duration>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("target", &self.inner.target)
            .finish_non_exhaustive()
    }
}

/// What the last list of tools said of how a tool is called.
struct Listed {
    /// The arguments its calls carry in headers too (over HTTP).
    mirrored: Vec<headers::Mirrored>,
    /// Whether its calls must run as tasks (`execution.taskSupport` is `required`).
    needs_task: bool,
}

struct Inner {
    target: Target,
    options: ClientBuilder,
    /// The connection, while there is one.
    session: tokio::sync::Mutex<Option<Arc<Session>>>,
    failures: Mutex<Failures>,
    /// How each tool is called, from the last list of tools.
    tools: Mutex<HashMap<String, Listed>>,
    /// What every connection's notifications go to, so a listener outlives a reconnection.
    events: broadcast::Sender<Notification>,
}

/// Once no handle of the client is left, its connection ends as [`Client::close`] ends it
/// (in a task of the runtime, when there is one): the cancellations it owes are sent, a
/// process's input is closed, an HTTP session deleted. Then what still runs for it (the
/// 2026-07-28 listen stream, the GET stream) gives up its hold, so that nothing keeps a
/// server process or a session alive for a client nobody has.
impl Drop for Inner {
    fn drop(&mut self) {
        let Some(session) = self.session.get_mut().take() else {
            return;
        };
        const DROPPED: &str = "the client was dropped";
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    session.pay_what_is_owed().await;
                    session.link.close(&session).await;
                    session.die(DROPPED);
                });
            }
            Err(_) => session.die(DROPPED),
        }
    }
}

/// Failures to connect in a row, and when the next try may be.
#[derive(Default)]
struct Failures {
    count: u32,
    next_try: Option<Instant>,
    last: Option<ClientError>,
}

impl Client {
    /// Connects to `target` with the default options: a URL is a server over HTTP,
    /// anything else a command line to start.
    pub async fn connect(target: &str) -> Result<Client, ClientError> {
        Client::builder().connect(target).await
    }

    /// Options for a client, then [`connect`](ClientBuilder::connect).
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// This client on the same connection, each of its requests waiting at most `limit`
    /// for its answer instead of the limit the client was built with
    /// ([`ClientBuilder::timeout`]); a call's own `timeout` ([`Client::call`]) still wins.
    /// A request past its limit fails with [`ClientError::TimedOut`] and is cancelled on
    /// the server. Each round of a request that needs answers (2026-07-28) has the limit
    /// anew; connecting (again) and the messages that expect no answer keep the client's
    /// own limits.
    ///
    /// ```no_run
    /// # async fn run(client: tool_runtime::client::Client) -> Result<(), tool_runtime::client::ClientError> {
    /// use std::time::Duration;
    ///
    /// // A quick look that must not wait long, on a client whose calls may take minutes.
    /// let quick = client.with_timeout(Duration::from_secs(2));
    /// let motto = quick.read_resource("notes://motto").await?;
    /// # let _ = motto; Ok(()) }
    /// ```
    pub fn with_timeout(&self, limit: Duration) -> Client {
        Client {
            inner: Arc::clone(&self.inner),
            timeout: Some(limit),
        }
    }

    /// This client with `timeout` as its time limit per request (its own when `None`): for
    /// what a call sends on its way, such as a listing, which the call's limit bounds.
    fn within(&self, timeout: Option<Duration>) -> Client {
        Client {
            inner: Arc::clone(&self.inner),
            timeout: timeout.or(self.timeout),
        }
    }

    /// The server's connection, connecting (again) when there is none; after failures, not
    /// before the wait since the last one has passed.
    async fn session(&self) -> Result<Arc<Session>, ClientError> {
        // Nearly always the connection is there and nobody is connecting: it is taken at
        // once. Connecting is boxed, so that its state is not part of every request's
        // future (several kilobytes, moved and copied with it).
        if let Ok(slot) = self.inner.session.try_lock() {
            if let Some(session) = slot.as_ref().filter(|s| !s.is_dead()) {
                return Ok(Arc::clone(session));
            }
        }
        Box::pin(self.connect_session()).await
    }

    /// [`session`](Client::session) when the connection may have to be made.
    async fn connect_session(&self) -> Result<Arc<Session>, ClientError> {
        let mut slot = self.inner.session.lock().await;
        if let Some(session) = slot.as_ref().filter(|s| !s.is_dead()) {
            return Ok(Arc::clone(session));
        }
        {
            let failures = lock(&self.inner.failures);
            if let (Some(next_try), Some(last)) = (failures.next_try, &failures.last) {
                if Instant::now() < next_try {
                    return Err(last.clone());
                }
            }
        }
        match negotiate::connect(&self.inner.target, &self.inner.options).await {
            Ok(session) => {
                *lock(&self.inner.failures) = Failures::default();
                forward(&session, self.inner.events.clone());
                let again = slot.replace(Arc::clone(&session)).is_some();
                if again {
                    let _ = self.inner.events.send(Notification::Connected);
                }
                Ok(session)
            }
            Err(error) => {
                let mut failures = lock(&self.inner.failures);
                failures.count += 1;
                let wait = FIRST_WAIT
                    .saturating_mul(1 << failures.count.min(16).saturating_sub(1))
                    .min(LONGEST_WAIT);
                failures.next_try = Some(Instant::now() + wait);
                failures.last = Some(error.clone());
                Err(error)
            }
        }
    }

    /// Sends a request of `method` with `params` and gives its result.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.request_with_headers(method, &params, Vec::new()).await
    }

    /// [`request`](Client::request), with `headers` (over HTTP).
    async fn request_with_headers(
        &self,
        method: &str,
        params: &Value,
        headers: Vec<(String, String)>,
    ) -> Result<Value, ClientError> {
        let session = self.session().await?;
        let options = RequestOptions {
            timeout: self.timeout,
            headers,
            ..RequestOptions::default()
        };
        session.request(method, params, options).await
    }

    /// Calls tool `name` once (no rounds, no task followed), with the headers its listing
    /// marks; a call refused for them is sent again, once, as
    /// [`call`](Client::call) says. For [`start_task`](Client::start_task).
    async fn call_once(&self, name: &str, params: &Value) -> Result<Value, ClientError> {
        let arguments = &params["arguments"];
        let headers = lock(&self.inner.tools)
            .get(name)
            .map(|listed| self.param_headers(listed, || Cow::Borrowed(arguments)))
            .unwrap_or_default();
        let first = self
            .request_with_headers("tools/call", params, headers.clone())
            .await;
        let Err(refused) = &first else {
            return first;
        };
        match self
            .headers_for_refused(refused, name, arguments, &headers, self.timeout)
            .await
        {
            Some(again) => self.request_with_headers("tools/call", params, again).await,
            None => first,
        }
    }

    /// Every tool of the server, all pages read. A tool whose schema marks arguments for
    /// headers against the rules is left out, with a warning: it could not be called
    /// correctly.
    pub async fn list_tools(&self) -> Result<Vec<RemoteTool>, ClientError> {
        let listed = self.list_all("tools/list", "tools").await?;
        let mut tools = Vec::new();
        let mut marks = HashMap::new();
        for raw in listed {
            let Some(tool) = RemoteTool::from_value(raw) else {
                continue;
            };
            match headers::marked(&tool.input_schema) {
                Ok(mirrored) => {
                    let needs_task = tool.task_support() == Some("required");
                    let listed = Listed {
                        mirrored,
                        needs_task,
                    };
                    marks.insert(tool.name.clone(), listed);
                    tools.push(tool);
                }
                Err(why) => {
                    tracing::warn!(server = %self.inner.target.shown(), tool = %tool.name, %why, "a tool of an MCP server is left out");
                }
            }
        }
        *lock(&self.inner.tools) = marks;
        Ok(tools)
    }

    /// Calls tool `name` with `arguments` (a JSON object).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallResult, ClientError> {
        self.call(name, arguments, None, None).await
    }

    /// Calls tool `name` with `arguments`, sending its progress to `progress` and waiting
    /// at most `timeout` (the client's limit unless given). Dropping the future cancels the
    /// call on the server.
    ///
    /// Over HTTP, arguments the tool's listing marks for headers (`x-mcp-header`) are
    /// written in them too. When a server refuses the call because its headers do not
    /// match it (the tools were not listed yet, or the tool changed since), its tools are
    /// listed again, within the call's time limit, and if that gives other headers the call
    /// is sent again, once.
    pub async fn call(
        &self,
        name: &str,
        arguments: Value,
        progress: Option<mpsc::UnboundedSender<Progress>>,
        timeout: Option<Duration>,
    ) -> Result<CallResult, ClientError> {
        let round = Round {
            progress: progress.map(listener::Listener::from),
            timeout,
            ..Round::default()
        };
        let result = self
            .call_with(name, Arguments::Value(arguments), round)
            .await?;
        Ok(CallResult::from_value(result))
    }

    /// [`call`](Client::call), with the questions of this call's rounds (2026-07-28) put to
    /// `round.asked` rather than to the client's handler, and its log messages (those the
    /// server sends on its own stream) to `round.logs`; the result read as `T` (a mount
    /// reads only what it passes on).
    pub(crate) async fn call_with<T: wire::RoundResult>(
        &self,
        name: &str,
        arguments: Arguments,
        mut round: Round<'_>,
    ) -> Result<T, ClientError> {
        let listed = lock(&self.inner.tools).get(name).map(|listed| {
            let headers = self.param_headers(listed, || arguments.as_value());
            (headers, listed.needs_task)
        });
        if let Some((headers, needs_task)) = listed {
            round.as_task = needs_task;
            let params = RoundParams::named(name, arguments);
            return self.rounds("tools/call", params, headers, round).await;
        }
        // Boxed: a call of a tool not listed yet is the rarer path (a mount lists its tools
        // first), and the listing it may take would otherwise be part of every call's
        // future.
        Box::pin(self.call_unlisted(name, arguments, round)).await
    }

    /// [`call_with`](Client::call_with) for tool `name`, not listed yet. It may require a
    /// task, which only its listing says; a handshake-era server refuses such a call
    /// without running it, as a method it does not know. Then the tools are listed, and a
    /// tool that requires a task is called again as one. (At 2026-07-28 the server makes
    /// the call a task by itself.)
    async fn call_unlisted<T: wire::RoundResult>(
        &self,
        name: &str,
        arguments: Arguments,
        round: Round<'_>,
    ) -> Result<T, ClientError> {
        let handshake = self.session().await?.era() == Era::Handshake;
        let again = handshake.then(|| {
            let round = Round {
                progress: round.progress.clone(),
                timeout: round.timeout,
                asked: round.asked,
                logs: round.logs.clone(),
                statuses: round.statuses.clone(),
                as_task: true,
            };
            (round, arguments.clone())
        });
        let params = RoundParams::named(name, arguments);
        let first = self.rounds("tools/call", params, Vec::new(), round).await;
        match (first, again) {
            (Err(ClientError::Server { code, .. }), Some((round, arguments)))
                if code == crate::mcp::jsonrpc::code::METHOD_NOT_FOUND
                    && self.requires_task(name, round.timeout).await =>
            {
                let params = RoundParams::named(name, arguments);
                self.rounds("tools/call", params, Vec::new(), round).await
            }
            (first, _) => first,
        }
    }

    /// Whether tool `name` requires a task, its server's tools listed to learn it within
    /// `timeout`, the call's time limit.
    async fn requires_task(&self, name: &str, timeout: Option<Duration>) -> bool {
        self.within(timeout).list_tools().await.is_ok_and(|tools| {
            tools
                .iter()
                .any(|tool| tool.name == name && tool.task_support() == Some("required"))
        })
    }

    /// Every prompt of the server, all pages read.
    pub async fn list_prompts(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("prompts/list", "prompts").await
    }

    /// The messages of prompt `name` with `arguments` (names to string values).
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        self.get_prompt_with(name, arguments, Round::default())
            .await
    }

    /// [`get_prompt`](Client::get_prompt), its questions and log messages as `round` says.
    pub(crate) async fn get_prompt_with(
        &self,
        name: &str,
        arguments: Value,
        round: Round<'_>,
    ) -> Result<Value, ClientError> {
        let params = RoundParams::named(name, Arguments::Value(arguments));
        self.rounds("prompts/get", params, Vec::new(), round).await
    }

    /// Every resource of the server, all pages read.
    pub async fn list_resources(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("resources/list", "resources").await
    }

    /// Every resource template of the server, all pages read.
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("resources/templates/list", "resourceTemplates")
            .await
    }

    /// The contents of the resource at `uri`.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, ClientError> {
        self.read_resource_with(uri, Round::default()).await
    }

    /// [`read_resource`](Client::read_resource), its questions and log messages as `round`
    /// says.
    pub(crate) async fn read_resource_with(
        &self,
        uri: &str,
        round: Round<'_>,
    ) -> Result<Value, ClientError> {
        self.rounds(
            "resources/read",
            json!({"uri": uri}).into(),
            Vec::new(),
            round,
        )
        .await
    }

    /// Asks to be told when the resource at `uri` changes: a
    /// [`Notification::ResourceUpdated`] comes each time. In the handshake era with
    /// `resources/subscribe`; at 2026-07-28 the listen stream names it from now on.
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.set_subscription(uri, true).await
    }

    /// Stops being told of changes of the resource at `uri`.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.set_subscription(uri, false).await
    }

    /// Subscribes to `uri` (`on`) or unsubscribes, as the session's era does it.
    async fn set_subscription(&self, uri: &str, on: bool) -> Result<(), ClientError> {
        let session = self.session().await?;
        match session.era() {
            Era::PerRequest => {
                session.set_subscribed(uri, on);
                Ok(())
            }
            Era::Handshake => {
                let method = if on {
                    "resources/subscribe"
                } else {
                    "resources/unsubscribe"
                };
                self.request(method, json!({"uri": uri})).await.map(drop)
            }
        }
    }

    /// The values the server offers for argument `argument` of `reference` (a prompt,
    /// `{"type": "ref/prompt", "name": ...}`, or a template, `{"type": "ref/resource",
    /// "uri": ...}`), given what is typed so far.
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, ClientError> {
        let params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
        let result = self.request("completion/complete", params).await?;
        Ok(result["completion"]["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|value| value.as_str().map(str::to_owned))
            .collect())
    }

    /// What the server sends on its own (log messages, list changes, resource updates,
    /// task status): a receiver of every notification from now on.
    pub fn notifications(&self) -> broadcast::Receiver<Notification> {
        self.inner.events.subscribe()
    }

    /// The protocol version agreed with the server.
    pub async fn protocol_version(&self) -> Result<String, ClientError> {
        Ok(self.server().await?.protocol_version)
    }

    /// What the server said of itself: its name and version, its capabilities, and its
    /// instructions for the client's model.
    pub async fn server(&self) -> Result<ServerDescription, ClientError> {
        let session = self.session().await?;
        let protocol_version = crate::sync::read(&session.speaker).version().to_owned();
        let side = crate::sync::read(&session.side).clone();
        let text = |key: &str| side.info[key].as_str().unwrap_or_default().to_owned();
        Ok(ServerDescription {
            protocol_version,
            name: text("name"),
            version: text("version"),
            capabilities: side.capabilities,
            instructions: side.instructions,
            info: side.info,
        })
    }

    /// How many HTTP connections to the server are idle now, ready for the next request.
    #[cfg(test)]
    pub(crate) async fn idle_connections(&self) -> usize {
        let session = self.inner.session.lock().await.clone();
        session.map_or(0, |session| session.link.idle_connections())
    }

    /// Ends the connection: a process's input is closed and the process stopped (killed
    /// if it does not end), an HTTP session deleted.
    pub async fn close(&self) {
        // A call given up just before is cancelled on the server, not cut off: what is owed
        // goes out first, on the connection as it is.
        let open = self.inner.session.lock().await.clone();
        if let Some(session) = open {
            session.pay_what_is_owed().await;
        }
        let session = self.inner.session.lock().await.take();
        if let Some(session) = session {
            session.link.close(&session).await;
        }
    }

    /// Every entry under `key` of the pages of `method`.
    async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        let mut entries = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MOST_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let page = self.request(method, params).await?;
            match page.get(key) {
                Some(Value::Array(listed)) => entries.extend(listed.iter().cloned()),
                _ => {
                    return Err(ClientError::protocol(format!(
                        "{method} gave no {key:?} list"
                    )))
                }
            }
            cursor = page["nextCursor"].as_str().map(str::to_owned);
            if cursor.is_none() {
                return Ok(entries);
            }
        }
        Err(ClientError::protocol(format!(
            "{method} gave more than {MOST_PAGES} pages"
        )))
    }

    /// A request that may need answers (2026-07-28): while the server answers
    /// `input_required`, its questions go to the client's handler and the request is sent
    /// again with the answers and the state it gave, a new id each round. The result is
    /// read as `T` in one pass when it is complete, as it nearly always is; a task's
    /// result, followed to its end, is read whole first.
    async fn rounds<T: wire::RoundResult>(
        &self,
        method: &str,
        params: RoundParams<'_>,
        headers: Vec<(String, String)>,
        round: Round<'_>,
    ) -> Result<T, ClientError> {
        let session = self.session().await?;
        let asked = round.asked.unwrap_or(&*session.handler);
        let timeout = round.timeout.or(self.timeout);
        let (mut params, mut headers) = (params, headers);
        let mut listed_again = false;
        // In the handshake era a call asked as a task says so, and its result is waited for
        // (at 2026-07-28 the server makes a call a task by itself).
        let as_task = round.as_task && session.era() == Era::Handshake;
        if as_task {
            params.set("task", json!({}));
        }
        // The task reports its progress under the call's token until it ends, after the
        // call's answer (which only made it).
        let kept_progress = (as_task && round.progress.is_some()).then(|| session.keep_progress());
        // Heard from before the call: a status the server sends as soon as the task is
        // made is not missed.
        let mut heard = (as_task && round.statuses.is_some()).then(|| session.events.subscribe());
        let mut asked_rounds = 0;
        while asked_rounds < MOST_ROUNDS {
            let options = RequestOptions {
                progress: round.progress.clone(),
                headers: headers.clone(),
                timeout,
                logs: round.logs.clone(),
                kept_progress: kept_progress.as_ref().map(|kept| kept.id()),
                ..RequestOptions::default()
            };
            let started = tokio::time::Instant::now();
            let reply = session
                .request_reply(method, params.as_written(), options)
                .await;
            // A call refused for its headers is sent again once, with the headers a new
            // listing gives (not a round of questions). This and following a task are
            // boxed where they are awaited: they are rare, and their state would otherwise
            // be part of every request's future, moved and copied with it.
            let again = match &reply {
                Err(refused)
                    if method == "tools/call" && !std::mem::replace(&mut listed_again, true) =>
                {
                    match (params.as_written().named(method), params.arguments()) {
                        (Some(name), Some(arguments)) => {
                            Box::pin(
                                self.headers_for_refused(
                                    refused, name, &arguments, &headers, timeout,
                                ),
                            )
                            .await
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(again) = again {
                headers = again;
                continue;
            }
            let reply = reply?;
            if as_task {
                // The call's time limit holds for the whole task, from the call on.
                let limit = timeout.unwrap_or(session.timeout);
                let following = tasks::Following {
                    deadline: started + limit,
                    limit,
                    logs: round.logs.clone(),
                    statuses: round.statuses.as_ref().zip(heard.take()),
                };
                let raw = reply
                    .into_result()
                    .map_err(|why| wire::unreadable(method, &why))?;
                let result = Box::pin(tasks::follow_handshake(self, &session, &raw, following));
                return wire::read_result(method, &result.await?);
            }
            let read: T = wire::read_reply(method, &reply)?;
            let kind = read.kind();
            if kind == wire::ResultKind::Complete {
                return Ok(read);
            }
            // A task, or questions: read whole.
            let result: Value = wire::read_reply(method, &reply)?;
            if kind == wire::ResultKind::Task {
                // The server runs the call as a task: it is followed to its end.
                let task = tasks::RemoteTask::from_value(result).ok_or_else(|| {
                    ClientError::protocol(format!("{method} gave a task without an id"))
                })?;
                // The call's time limit holds for the whole task; past it, the follow is
                // dropped, which cancels the task on the server.
                let limit = timeout.unwrap_or(session.timeout);
                let followed = tasks::follow(self, &session, asked, task, round.statuses.as_ref());
                return match tokio::time::timeout(limit, Box::pin(followed)).await {
                    // Read as the answer would have been, had it come at once.
                    Ok(outcome) => serde_json::value::to_raw_value(&outcome?)
                        .map_err(|error| ClientError::protocol(error.to_string()))
                        .and_then(|raw| wire::read_result(method, &raw)),
                    Err(_) => Err(ClientError::TimedOut {
                        method: method.to_owned(),
                        after: limit,
                    }),
                };
            }
            let mut responses = Map::new();
            for (key, request) in result["inputRequests"].as_object().into_iter().flatten() {
                let question = request["method"].as_str().unwrap_or_default();
                let answer = handler::answer(asked, question, &request["params"]).await;
                let answer = match answer {
                    Ok(answer) => answer,
                    // What the handler cannot answer is declined where the protocol lets a
                    // client decline (a form), and refused otherwise.
                    Err(_) if question == "elicitation/create" => json!({"action": "decline"}),
                    Err((_, why)) => {
                        return Err(ClientError::Server {
                            method: method.to_owned(),
                            code: crate::mcp::jsonrpc::code::MISSING_CAPABILITY,
                            message: format!(
                            "the server asked {question}, which this client cannot answer: {why}"
                        ),
                            data: None,
                        })
                    }
                };
                responses.insert(key.clone(), answer);
            }
            params.set("inputResponses", Value::Object(responses));
            match result.get("requestState") {
                Some(state) => params.set("requestState", state.clone()),
                None => params.remove("requestState"),
            }
            asked_rounds += 1;
        }
        Err(ClientError::protocol(format!(
            "{method} still needed answers after {MOST_ROUNDS} rounds"
        )))
    }

    /// The `Mcp-Param-*` headers of a call of tool `listed` with the `arguments` given:
    /// the arguments it marks, over HTTP only (a process's link has no headers). The
    /// arguments are asked for only then (a mount's are read back from their text).
    fn param_headers<'a>(
        &self,
        listed: &Listed,
        arguments: impl FnOnce() -> Cow<'a, Value>,
    ) -> Vec<(String, String)> {
        match self.inner.target {
            Target::Http(_) if !listed.mirrored.is_empty() => {
                headers::for_call(&arguments(), &listed.mirrored)
            }
            _ => Vec::new(),
        }
    }

    /// The headers to send a call of tool `name` with `arguments` again with, after the
    /// server refused it with `refused` when it carried `sent`. The server wants arguments
    /// in headers this client did not know to write (the tool was not listed yet, or its
    /// schema changed): as the protocol asks, the tools are listed again (within `timeout`,
    /// the call's time limit), and the headers that listing gives are the answer when they
    /// differ from those sent. A refusal the
    /// listing does not change (another header that disagrees, a proxy that drops them),
    /// or any other error, gives `None`: it is the caller's.
    async fn headers_for_refused(
        &self,
        refused: &ClientError,
        name: &str,
        arguments: &Value,
        sent: &[(String, String)],
        timeout: Option<Duration>,
    ) -> Option<Vec<(String, String)>> {
        let ClientError::Server { code, .. } = refused else {
            return None;
        };
        if *code != crate::mcp::jsonrpc::code::HEADER_MISMATCH {
            return None;
        }
        // The listing is part of the call: it has the call's time limit, not the client's.
        if let Err(error) = self.within(timeout).list_tools().await {
            tracing::debug!(%error, tool = name, "the tools could not be listed again for a call's headers");
            return None;
        }
        let tools = lock(&self.inner.tools);
        let again = self.param_headers(tools.get(name)?, || Cow::Borrowed(arguments));
        (again != sent).then_some(again)
    }
}

/// What a request's rounds need besides the request: where its progress goes, its time
/// limit, who answers its questions (the client's handler unless given), where its
/// log messages go (the client's listeners unless given), and where the states of the
/// task the server may turn it into go as they change.
#[derive(Default)]
pub(crate) struct Round<'a> {
    pub(crate) progress: Option<listener::Listener<Progress>>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) asked: Option<&'a dyn ClientHandler>,
    pub(crate) logs: Option<listener::Listener<Notification>>,
    pub(crate) statuses: Option<listener::Listener<tasks::RemoteTask>>,
    /// Whether the call is asked as a task (the tool requires one): what the handshake era
    /// needs said.
    pub(crate) as_task: bool,
}

/// Passes what `session` is told on to the client's listeners, for as long as it lasts.
fn forward(session: &Arc<Session>, events: broadcast::Sender<Notification>) {
    let mut own = session.events.subscribe();
    tokio::spawn(async move {
        loop {
            match own.recv().await {
                Ok(notification) => {
                    let _ = events.send(notification);
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
}
