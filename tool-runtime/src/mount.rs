//! Another MCP server's tools in this registry, under a prefix: a mounted server. Its tools
//! are tools like any other (run-time tools of the registry), so everything that applies
//! to a tool applies to them: argument checks against their schema before anything is
//! sent, OAuth scopes, rate limits, budgets, audit, metrics, time limits, tasks, every
//! transport and export. A call is passed to the server with its progress, its
//! cancellation, and what the server asks of the client (forms, pages, sampling, roots)
//! passed on to the caller.
//!
//! One connection per mounted server is kept and reused. While the server cannot be
//! reached, its tools answer an error that names the mount and says to retry, and every
//! other tool goes on; the connection comes back by itself, and so do the tools of a
//! server that restarted (their list is read again whenever the connection is made anew or
//! the server says it changed).
//!
//! ```no_run
//! use tool_runtime::mount::Mount;
//! use tool_runtime::Registry;
//!
//! let registry = Registry::builder()
//!     .mount(Mount::new("docs", "http://127.0.0.1:9000/mcp").unwrap().exclude(["admin"]))
//!     .mount(Mount::parse("fs=npx -y @modelcontextprotocol/server-filesystem /srv").unwrap())
//!     .build()
//!     .unwrap();
//! // Served, the mounts connect; their tools are `docs_search`, `fs_read_file`, ...
//! # let _ = registry;
//! ```

use crate::call::context::CallContext;
use crate::call::dynamic::raw_handler;
use crate::call::output::{Produced, ToolError};
use crate::catalog::{Annotations, TaskSupport};
use crate::client::{Answer, Client, ClientError, ClientHandler, Notification, RemoteTool, Target};
use crate::registry::{Registry, RegistryBuilder, RegistryError};
use crate::sync::lock;
use crate::DynamicTool;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// How long a call through a mount may take unless the mount says (the registry's default
/// time limit, when set, applies too).
const CALL_LIMIT: Duration = Duration::from_secs(300);
/// How often the tools of a mount whose server could not be reached are asked for again.
const LOOK_AGAIN_EVERY: Duration = Duration::from_secs(5);

/// A server to mount: where it is, the prefix its tools take, and which of them.
#[derive(Debug, Clone)]
pub struct Mount {
    prefix: String,
    target: Target,
    include: Option<HashSet<String>>,
    exclude: HashSet<String>,
    rename: HashMap<String, String>,
    scopes: Vec<String>,
    timeout: Option<Duration>,
}

impl Mount {
    /// The server at `target` (a URL, or a command line to start over stdio), its tools
    /// named `prefix_name`. Fails on a prefix no tool name can start with, or a target
    /// that cannot be read.
    pub fn new(prefix: impl Into<String>, target: &str) -> Result<Mount, String> {
        let prefix = prefix.into();
        tool_rules::check_name(&format!("{prefix}_x")).map_err(|why| {
            format!("the mount prefix {prefix:?} cannot start a tool name: {why}")
        })?;
        let mut mount = Mount::whole(target)?;
        mount.prefix = prefix;
        Ok(mount)
    }

    /// The server at `target` with its tools named as they are (the command line's
    /// `--server`).
    pub(crate) fn whole(target: &str) -> Result<Mount, String> {
        Ok(Mount {
            prefix: String::new(),
            target: Target::parse(target)?,
            include: None,
            exclude: HashSet::new(),
            rename: HashMap::new(),
            scopes: Vec::new(),
            timeout: None,
        })
    }

    /// A mount as the command line writes one: `PREFIX=URL` or `PREFIX=COMMAND ARGS...`.
    pub fn parse(spec: &str) -> Result<Mount, String> {
        let (prefix, target) = spec
            .split_once('=')
            .ok_or_else(|| format!("{spec:?} is not PREFIX=URL or PREFIX=COMMAND"))?;
        Mount::new(prefix.trim(), target)
    }

    /// Only these tools of the server (their names on the server).
    pub fn include(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.include = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// All the server's tools but these.
    pub fn exclude(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.exclude.extend(names.into_iter().map(Into::into));
        self
    }

    /// The server's tool `from` is called `to` here (before the prefix).
    pub fn rename(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.rename.insert(from.into(), to.into());
        self
    }

    /// The OAuth scopes a caller's token must grant to call any tool of the mount.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The time limit of every call through the mount.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// The prefix of the mount's tools.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Keeps the server's tools in `registry` from now on, in a task of the current
    /// runtime: connects (again and again, waiting longer each time, while the server
    /// cannot be reached), adds the tools, and reads them again whenever they may have
    /// changed. What it gives resolves once the first try is over: `Err` says why the
    /// tools are not there yet (the tries go on).
    pub fn start(
        self,
        registry: &Arc<Registry>,
    ) -> impl std::future::Future<Output = Result<(), String>> + Send {
        let registry = Arc::downgrade(registry);
        let (tried, first) = tokio::sync::oneshot::channel();
        tokio::spawn(keep(Arc::new(self), registry, tried));
        async move {
            first
                .await
                .unwrap_or_else(|_| Err("the mount stopped before it tried".to_owned()))
        }
    }

    /// The name a tool of the server takes here, unless the mount leaves it out.
    fn local_name(&self, remote: &str) -> Option<String> {
        let kept = self
            .include
            .as_ref()
            .is_none_or(|only| only.contains(remote))
            && !self.exclude.contains(remote);
        kept.then(|| {
            let name = self.rename.get(remote).map_or(remote, String::as_str);
            if self.prefix.is_empty() {
                name.to_owned()
            } else {
                format!("{}_{name}", self.prefix)
            }
        })
    }

    /// The server, as it was named.
    fn shown(&self) -> String {
        match &self.target {
            Target::Http(url) => url.clone(),
            Target::Command(words) => words.join(" "),
        }
    }
}

impl RegistryBuilder {
    /// Mounts another MCP server: its tools join the registry under the mount's prefix
    /// once the registry is served (or [`Registry::start_mounts`] is called).
    pub fn mount(self, mount: Mount) -> Self {
        self.on_start(Box::new(move |registry: &Arc<Registry>| {
            Box::pin(mount.start(registry)) as crate::registry::Ready
        }))
    }
}

impl Registry {
    /// Starts what the registry keeps running in the background: its mounted servers. A
    /// server does this when it starts serving; an agent loop on a registry of its own calls
    /// it once, inside the runtime the mounts should run on, and may await what it gives:
    /// it resolves once every mount has tried to list its server's tools, with `Err` naming
    /// each mount whose tools are not there yet and why (those keep trying in the
    /// background). Called again, it starts nothing and resolves at once.
    pub fn start_mounts(
        self: &Arc<Self>,
    ) -> impl std::future::Future<Output = Result<(), String>> + Send {
        self.start()
    }
}

/// Keeps the tools of `mount` in the registry for as long as it lives.
async fn keep(
    mount: Arc<Mount>,
    registry: Weak<Registry>,
    tried: tokio::sync::oneshot::Sender<Result<(), String>>,
) {
    let mut tried = Some(tried);
    let asked = Arc::new(Callers::default());
    let mut wait = Duration::from_millis(200);
    let client = loop {
        let connected = Client::builder()
            .named("tool-runtime mount", env!("CARGO_PKG_VERSION"))
            .handler(Arc::clone(&asked))
            .timeout(CALL_LIMIT)
            .connect_to(mount.target.clone())
            .await;
        match connected {
            Ok(client) => break client,
            Err(error) => {
                if let Some(tried) = tried.take() {
                    let _ = tried.send(Err(format!(
                        "the mounted server `{}` ({}) cannot be reached: {error}",
                        mount.prefix,
                        mount.shown()
                    )));
                }
                tracing::warn!(mount = %mount.prefix, %error, "a mounted MCP server cannot be reached; trying again");
                if registry.strong_count() == 0 {
                    return;
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(10));
            }
        }
    };
    let mut events = client.notifications();
    let mut names: Vec<String> = Vec::new();
    loop {
        let Some(registry) = registry.upgrade() else {
            client.close().await;
            return;
        };
        let listed = refresh(&mount, &client, &registry, &asked, &mut names).await;
        drop(registry);
        if let Some(tried) = tried.take() {
            let _ = tried.send(listed.clone());
        }
        let listed = listed.is_ok();
        loop {
            let event = tokio::select! {
                event = events.recv() => event,
                () = tokio::time::sleep(LOOK_AGAIN_EVERY), if !listed => break,
            };
            match event {
                Ok(Notification::ToolsChanged | Notification::Connected) => break,
                Ok(_) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => break,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }
}

/// Reads the server's tools and puts them in the registry in place of the mount's
/// earlier ones (`names`); `Err` says why they could not be read.
async fn refresh(
    mount: &Arc<Mount>,
    client: &Client,
    registry: &Registry,
    asked: &Arc<Callers>,
    names: &mut Vec<String>,
) -> Result<(), String> {
    let listed = match client.list_tools().await {
        Ok(listed) => listed,
        Err(error) => {
            tracing::warn!(mount = %mount.prefix, %error, "the tools of a mounted MCP server cannot be listed");
            return Err(format!(
                "the tools of the mounted server `{}` ({}) cannot be listed: {error}",
                mount.prefix,
                mount.shown()
            ));
        }
    };
    let mut tools = Vec::new();
    for remote in listed {
        let Some(local) = mount.local_name(&remote.name) else {
            continue;
        };
        match mounted_tool(mount, client, asked, local, remote) {
            Ok(tool) => tools.push(tool),
            Err(error) => {
                tracing::warn!(mount = %mount.prefix, %error, "a tool of a mounted MCP server is left out");
            }
        }
    }
    for name in names.drain(..) {
        registry.remove_tool(&name);
    }
    let added: Vec<String> = tools.iter().map(|tool| tool.name().to_owned()).collect();
    match registry.add_group_as_named(tools) {
        Ok(()) => *names = added,
        Err(error) => {
            tracing::error!(mount = %mount.prefix, %error, "the tools of a mounted MCP server cannot join the catalog");
            return Err(format!(
                "the tools of the mounted server `{}` cannot join the catalog: {error}",
                mount.prefix
            ));
        }
    }
    Ok(())
}

/// The run-time tool standing for `remote`, named `local`, that passes calls to `client`.
fn mounted_tool(
    mount: &Arc<Mount>,
    client: &Client,
    asked: &Arc<Callers>,
    local: String,
    remote: RemoteTool,
) -> Result<DynamicTool, RegistryError> {
    let (mount_for_calls, client, asked) = (Arc::clone(mount), client.clone(), Arc::clone(asked));
    let remote_name = remote.name.clone();
    let handler = raw_handler(move |arguments: Value, context: CallContext| {
        let (mount, client, asked) = (
            Arc::clone(&mount_for_calls),
            client.clone(),
            Arc::clone(&asked),
        );
        let name = remote_name.clone();
        Box::pin(async move { forward(&mount, &client, &asked, &name, arguments, context).await })
    });
    let description = remote.description.clone().unwrap_or_default();
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
        description,
        remote.input_schema.clone(),
        remote.output_schema.clone(),
        handler,
    )?
    .described_as(remote.title.clone(), annotations)
    .task(TaskSupport::Optional);
    if let Some(limit) = mount.timeout {
        tool = tool.timeout(limit);
    }
    if !mount.scopes.is_empty() {
        tool = tool.scopes(mount.scopes.clone())?;
    }
    Ok(tool)
}

/// Passes one call to the server: its progress to the caller, what the server asks to the
/// caller's client; the caller's cancellation cancels it on the server (the call's future
/// is dropped).
async fn forward(
    mount: &Mount,
    client: &Client,
    asked: &Callers,
    name: &str,
    arguments: Value,
    context: CallContext,
) -> Result<Produced, ToolError> {
    let (progress, mut reported) =
        tokio::sync::mpsc::unbounded_channel::<crate::client::Progress>();
    let progress_of = crate::Progress::for_scope(context.scope().cloned());
    let relay_progress = async {
        while let Some(step) = reported.recv().await {
            progress_of.report(step.progress, step.total, step.message.as_deref());
        }
    };
    let _calling = asked.enter(&context);
    let caller = Caller(context.clone());
    let call = client.call_asking(
        name,
        arguments,
        Some(progress),
        mount.timeout,
        Some(&caller),
    );
    let (outcome, ()) = tokio::join!(call, relay_progress);
    match outcome {
        Ok(result) if result.is_error => Err(ToolError::new(result.text())),
        Ok(result) => Ok(Produced::Relayed {
            content: result.content,
            structured: result.structured,
        }),
        Err(error) => Err(ToolError::new(refusal(mount, &error))),
    }
}

/// What a caller reads when the server did not answer a call.
fn refusal(mount: &Mount, error: &ClientError) -> String {
    let retry = if error.is_retryable() {
        "; retry in a moment"
    } else {
        ""
    };
    format!(
        "the mounted server `{}` ({}) did not answer: {error}{retry}",
        mount.prefix,
        mount.shown()
    )
}

/// The calls of a mount running now, with their contexts: what the server asks outside a
/// call's own rounds (handshake era) goes to the caller of the latest.
#[derive(Default)]
struct Callers(Mutex<Vec<(u64, CallContext)>>, std::sync::atomic::AtomicU64);

impl Callers {
    fn enter(&self, context: &CallContext) -> Calling<'_> {
        let number = self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock(&self.0).push((number, context.clone()));
        Calling(self, number)
    }

    fn latest(&self) -> Option<CallContext> {
        lock(&self.0).last().map(|(_, context)| context.clone())
    }
}

/// One call of a mount, registered while it runs.
struct Calling<'a>(&'a Callers, u64);

impl Drop for Calling<'_> {
    fn drop(&mut self) {
        lock(&self.0 .0).retain(|(number, _)| *number != self.1);
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
                    "no call of this server is running to ask {method} for"
                ))
            }));
        };
        relayed(&context, method, params)
    }
}

/// The caller of one call, to whom the server's questions of that call go.
struct Caller(CallContext);

impl ClientHandler for Caller {
    fn supports(&self, _capability: &str) -> bool {
        true
    }

    fn relay<'a>(&'a self, method: &'a str, params: &'a Value) -> Option<Answer<'a, Value>> {
        relayed(&self.0, method, params)
    }
}

/// The question of `method` with `params` put to the client of the call of `context`.
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

impl ClientHandler for Arc<Callers> {
    fn supports(&self, capability: &str) -> bool {
        (**self).supports(capability)
    }

    fn relay<'a>(&'a self, method: &'a str, params: &'a Value) -> Option<Answer<'a, Value>> {
        (**self).relay(method, params)
    }
}
