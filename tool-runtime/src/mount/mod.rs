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

mod blocks;
mod forward;
#[cfg(feature = "cli")]
pub(crate) use forward::TASK_LOGGER;
mod keep;

use crate::client::auth::Credentials;
use crate::client::Target;
use crate::registry::{Registry, RegistryBuilder};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

/// A server to mount: where it is, the prefix its tools take, and which of them.
#[derive(Debug, Clone)]
pub struct Mount {
    prefix: String,
    target: Target,
    include: Option<HashSet<String>>,
    exclude: HashSet<String>,
    rename: HashMap<String, String>,
    scopes: Vec<String>,
    /// Scopes one tool requires beyond the mount's, by its name on the server.
    tool_scopes: HashMap<String, Vec<String>>,
    /// The tools whose calls wait for a user's approval in an agent loop.
    approval: HashSet<String>,
    timeout: Option<Duration>,
    credentials: Option<Authorization>,
    environment: Environment,
    /// The one era the server is spoken to in, when chosen.
    handshake_era: Option<bool>,
}

/// Adds each of `scopes` to `to` unless it is there: a scope named twice (by a flag and the
/// mounts file, say) is one requirement, not a list a tool's scopes are refused for.
fn add_once(to: &mut Vec<String>, scopes: impl IntoIterator<Item = impl Into<String>>) {
    for scope in scopes {
        let scope = scope.into();
        if !to.contains(&scope) {
            to.push(scope);
        }
    }
}

/// The variables a process the mount starts is given; debug output names them only (their
/// values are secrets, as often as not).
#[derive(Clone, Default)]
struct Environment(Vec<(String, String)>);

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(name, _)| name))
            .finish()
    }
}

/// What authorizes the mount's requests to its server, kept behind its trait object.
#[derive(Clone)]
struct Authorization(Arc<dyn Credentials>);

impl std::fmt::Debug for Authorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Credentials hold secrets: debug output ends up in logs.
        f.write_str("Credentials(..)")
    }
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
            tool_scopes: HashMap::new(),
            approval: HashSet::new(),
            timeout: None,
            credentials: None,
            environment: Environment::default(),
            handshake_era: None,
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

    /// The OAuth scopes a caller's token must grant to call any tool of the mount (a scope
    /// named twice counts once).
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = Vec::new();
        add_once(&mut self.scopes, scopes);
        self
    }

    /// The OAuth scopes a caller's token must grant to call the server's tool `name`,
    /// beyond those of the whole mount ([`scopes`](Self::scopes)): a gateway can let every
    /// reader search and only some callers write.
    ///
    /// ```
    /// use tool_runtime::mount::Mount;
    ///
    /// let docs = Mount::new("docs", "https://docs.example.com/mcp")
    ///     .unwrap()
    ///     .scopes(["docs:read"])
    ///     .tool_scopes("update_page", ["docs:write"]);
    /// # let _ = docs;
    /// ```
    pub fn tool_scopes(
        mut self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        add_once(self.tool_scopes.entry(name.into()).or_default(), scopes);
        self
    }

    /// In an agent loop, calls of these tools of the server (their names on the server)
    /// wait for a user's approval before they run, as `#[tool(approval)]` makes a tool's.
    pub fn approval(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.approval.extend(names.into_iter().map(Into::into));
        self
    }

    /// The server's tools named by [`tool_scopes`](Self::tool_scopes) or
    /// [`approval`](Self::approval), each once.
    fn tools_named(&self) -> std::collections::BTreeSet<&str> {
        let scoped = self.tool_scopes.keys().map(String::as_str);
        scoped
            .chain(self.approval.iter().map(String::as_str))
            .collect()
    }

    /// The scopes a caller must hold to call the server's tool `name`: the mount's, then
    /// the tool's own, each once.
    fn scopes_of(&self, name: &str) -> Vec<String> {
        let mut scopes = self.scopes.clone();
        for scope in self.tool_scopes.get(name).into_iter().flatten() {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        scopes
    }

    /// The time limit of every call through the mount.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// What authorizes the mount's requests to a server over HTTP: a
    /// [`BearerToken`](crate::client::auth::BearerToken), [`OAuth`](crate::client::auth::OAuth)
    /// (a service's client credentials, say), or credentials of your own. Every connection
    /// the mount makes, and makes again, uses them. A server started over stdio is given
    /// its secrets in its environment instead; see [`Mount::env`].
    ///
    /// ```no_run
    /// use tool_runtime::client::auth::BearerToken;
    /// use tool_runtime::mount::Mount;
    ///
    /// let token = std::fs::read_to_string("/run/secrets/docs-token").unwrap();
    /// let docs = Mount::new("docs", "https://mcp.example.com/mcp")
    ///     .unwrap()
    ///     .credentials(BearerToken::new(token.trim()));
    /// # let _ = docs;
    /// ```
    pub fn credentials(mut self, credentials: impl Credentials + 'static) -> Self {
        self.credentials = Some(Authorization(Arc::new(credentials)));
        self
    }

    /// An environment variable for a server the mount starts as a process (beside those
    /// of this process, which it inherits): how such a server is given its secrets.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.environment.0.push((name.into(), value.into()));
        self
    }

    /// Speaks only the handshake era (`true`: 2025-11-25, `initialize` and a session) to
    /// the server even when it offers 2026-07-28, for a server whose newer protocol
    /// misbehaves; or only 2026-07-28 (`false`), never falling back. Unless chosen, the
    /// mount tries 2026-07-28 first and falls back to what the server takes.
    pub fn handshake_era(mut self, handshake: bool) -> Self {
        self.handshake_era = Some(handshake);
        self
    }

    /// The server, where it is.
    #[cfg(feature = "cli")]
    pub(crate) fn target(&self) -> &Target {
        &self.target
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
        let (tried, first) = tokio::sync::oneshot::channel();
        let running = tokio::spawn(keep::keep(Arc::new(self), Arc::downgrade(registry), tried));
        registry.keep_running(running.abort_handle());
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
        kept.then(|| self.prefixed(self.rename.get(remote).map_or(remote, String::as_str)))
    }

    /// `name` under the mount's prefix.
    fn prefixed(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{}_{name}", self.prefix)
        }
    }

    /// The server, as it was named.
    fn shown(&self) -> String {
        self.target.shown()
    }
}

impl RegistryBuilder {
    /// Mounts another MCP server: its tools join the registry under the mount's prefix
    /// once the registry is served (or [`Registry::start_mounts`] is called).
    pub fn mount(self, mount: Mount) -> Self {
        let prefix = mount.prefix.clone();
        self.on_start(
            &prefix,
            Box::new(move |registry: &Arc<Registry>| {
                Box::pin(mount.start(registry)) as crate::registry::Ready
            }),
        )
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

    /// Ends the connections to the mounted servers: what a call given up just before owes
    /// a server (its cancellation) is sent first, then a process's input is closed (and
    /// the process stopped if it does not end in a moment) and an HTTP session deleted.
    /// Call it before the runtime ends, as the command line does when a call is done or
    /// interrupted: a mount dropped without it is cut off (its process killed).
    pub async fn close_mounts(&self) {
        self.close_connections().await;
    }
}
