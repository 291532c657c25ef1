//! How the HTTP side behaves: the endpoint's path, who may call it (hosts, tokens, browser
//! origins), request sizes, session lifetimes, and what is served beside MCP.

use std::net::SocketAddr;
use std::time::Duration;

#[cfg(feature = "oauth")]
use super::OAuth;

/// Which cross-origin browser requests are allowed (CORS).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Cors {
    /// No CORS headers: browsers on other origins cannot read responses.
    #[default]
    None,
    /// Any origin (`Access-Control-Allow-Origin: *`), as a public REST API sets it. This also turns
    /// off the `Origin` check; the `Host` check stays.
    Any,
    /// These origins only (for example `https://app.example.com`).
    Origins(Vec<String>),
}

/// How the HTTP side behaves: the endpoint's path, who may call it (hosts, a bearer
/// token, browser origins), how large a request may be, how long idle sessions live, and
/// whether the REST endpoints are served too. Start from [`HttpOptions::default`] (loopback
/// hosts only) or [`HttpOptions::for_address`] and change what differs.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::transport::http::{Cors, HttpOptions};
///
/// let options = HttpOptions::default()
///     .allowed_hosts(["tools.example.com"])
///     .cors(Cors::Origins(vec!["https://app.example.com".into()]))
///     .bearer_token(std::env::var("MCP_BEARER_TOKEN").unwrap_or_else(|_| "dev-token".into()))
///     .body_limit(1024 * 1024)
///     .session_idle_timeout(Duration::from_secs(600))
///     .rest(true);
/// assert_eq!(options.endpoint_path(), "/mcp");
/// assert_eq!(options.hosts(), ["tools.example.com"]);
///
/// // Bound to every interface, any Host is accepted unless hosts are named.
/// let public = HttpOptions::for_address("0.0.0.0:8080".parse().unwrap());
/// assert!(public.hosts().is_empty());
/// ```
///
/// [`router`](super::router) turns the options and a server into an axum `Router` to nest
/// in an app; [`serve`](super::serve) binds and serves it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The MCP endpoint's path.
    pub(crate) endpoint: String,
    /// Host names (without port) requests may name in `Host`, and origins may have.
    /// Empty: any host (use only behind a proxy that checks it).
    pub(crate) allowed_hosts: Vec<String>,
    /// A token every request must present as `Authorization: Bearer <token>`.
    pub(crate) bearer_token: Option<String>,
    /// Access tokens checked as an OAuth 2.1 resource server (see [`OAuth`]); when set, it
    /// decides who may call and `bearer_token` is not used.
    #[cfg(feature = "oauth")]
    pub(crate) oauth: Option<OAuth>,
    /// The largest request body accepted, in bytes.
    pub(crate) body_limit: usize,
    /// Cross-origin browser access.
    pub(crate) cors: Cors,
    /// Whether to serve the REST endpoints too (`GET /api/tools/discover`,
    /// `POST /api/tools/execute`, `GET /mcp/tools/list`, `POST /mcp/tools/call`). Off by
    /// default, so a service that embeds the router exposes only the MCP endpoint unless it
    /// asks; the standard command line's `serve --http` turns them on.
    pub(crate) rest: bool,
    /// How long a handshake-era session may go without a request (and with nothing in
    /// flight) before the server ends it; its client then gets 404 and initializes again.
    pub(crate) session_idle_timeout: Duration,
    /// The metrics served as Prometheus text at `GET /metrics`; none by default.
    #[cfg(feature = "prometheus")]
    pub(crate) metrics: Option<crate::ops::Prometheus>,
    /// How long [`serve`](super::serve) keeps serving after a shutdown signal while
    /// `/readyz` says it is draining, so the load balancer stops sending it requests.
    pub(crate) drain_delay: Duration,
    /// How long requests in flight may still run once the server stops accepting.
    pub(crate) shutdown_grace: Duration,
    /// The proxies whose `Forwarded` / `X-Forwarded-For` name the client.
    pub(crate) trusted_proxies: Vec<ipnet::IpNet>,
    /// How many handshake-era sessions may be open at once.
    pub(crate) max_sessions: usize,
    /// Whether `GET /` serves the catalog page.
    pub(crate) catalog_page: bool,
    /// What [`serve`](super::serve) holds connections to.
    pub(crate) connections: ConnectionLimits,
}

/// What [`serve`](super::serve) holds connections to: how many, from one client and in all,
/// and how long a request head or body may take to arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnectionLimits {
    pub(crate) most: usize,
    pub(crate) per_client: usize,
    pub(crate) head_timeout: Duration,
    pub(crate) body_timeout: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            endpoint: "/mcp".to_owned(),
            allowed_hosts: loopback_hosts(),
            bearer_token: None,
            #[cfg(feature = "oauth")]
            oauth: None,
            body_limit: 4 * 1024 * 1024,
            cors: Cors::None,
            rest: false,
            session_idle_timeout: Duration::from_secs(30 * 60),
            #[cfg(feature = "prometheus")]
            metrics: None,
            drain_delay: Duration::from_secs(2),
            shutdown_grace: Duration::from_secs(10),
            trusted_proxies: Vec::new(),
            max_sessions: 5_000,
            catalog_page: false,
            connections: ConnectionLimits {
                most: 4_096,
                per_client: 256,
                head_timeout: Duration::from_secs(15),
                body_timeout: Duration::from_secs(30),
            },
        }
    }
}

pub(super) fn loopback_hosts() -> Vec<String> {
    ["localhost", "127.0.0.1", "[::1]", "::1"]
        .iter()
        .map(|h| (*h).to_owned())
        .collect()
}

impl HttpOptions {
    /// Options for a server bound to `address`: loopback-only hosts when it is a loopback
    /// address, any host otherwise.
    pub fn for_address(address: SocketAddr) -> Self {
        let mut options = HttpOptions::default();
        if !address.ip().is_loopback() {
            options.allowed_hosts.clear();
        }
        options
    }

    /// Requires `Authorization: Bearer <token>`.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Serves as an OAuth 2.1 resource server: every request must present an access token
    /// `oauth` accepts, and the protected-resource metadata is served at
    /// `/.well-known/oauth-protected-resource` (and that path followed by the resource's
    /// path). Replaces a [`bearer_token`](Self::bearer_token).
    ///
    /// Clients look for the metadata at the root of the resource's host
    /// ([`OAuth::metadata_url`]). A router [nested](axum::Router::nest) under a path serves
    /// it under that path instead, so an app that nests it routes the well-known paths at its
    /// root to the same router, or merges the router at the root.
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, oauth: OAuth) -> Self {
        self.oauth = Some(oauth);
        self.bearer_token = None;
        self
    }

    /// Sets the CORS policy.
    pub fn cors(mut self, cors: Cors) -> Self {
        self.cors = cors;
        self
    }

    /// Sets the largest request body, in bytes.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Ends sessions that go `timeout` without a request (30 minutes by default).
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// Serves the catalog as a page at `GET /` (off unless asked; the standard command line
    /// turns it on for a loopback address): every tool, prompt and resource with its
    /// description, parameters, examples and schemas, and a form per tool that calls it
    /// through `POST /api/tools/{name}/call` (served with the page). Everything comes from
    /// the binary; the page makes no request but to this server.
    pub fn catalog_page(mut self, on: bool) -> Self {
        self.catalog_page = on;
        self
    }

    /// Serves the REST endpoints beside the MCP endpoint (or not).
    pub fn rest(mut self, on: bool) -> Self {
        self.rest = on;
        self
    }

    /// Serves `metrics` as Prometheus text at `GET /metrics` (feature `prometheus`),
    /// behind the same host and token checks as the MCP endpoint.
    #[cfg(feature = "prometheus")]
    pub fn metrics(mut self, metrics: crate::ops::Prometheus) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Serves the MCP endpoint at `path` (`/mcp` by default).
    pub fn endpoint(mut self, path: impl Into<String>) -> Self {
        self.endpoint = path.into();
        self
    }

    /// The MCP endpoint's path.
    pub fn endpoint_path(&self) -> &str {
        &self.endpoint
    }

    /// On a shutdown signal (SIGTERM, or Ctrl-C), how long [`serve`](super::serve) goes on
    /// serving while `GET /readyz` answers 503, so a load balancer checking it stops sending
    /// requests first (2 seconds by default; zero without a balancer).
    pub fn drain_delay(mut self, delay: Duration) -> Self {
        self.drain_delay = delay;
        self
    }

    /// Once [`serve`](super::serve) stops accepting, how long requests in flight (calls,
    /// streams) may still run before the server stops anyway (10 seconds by default). The
    /// tasks still running then are handed back to the other replicas.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Believes the client address that requests coming from these proxies name
    /// (`Forwarded`, else `X-Forwarded-For`), e.g. `10.0.0.0/8` for the load balancer's
    /// network: rate limits, budgets and the audit trail then key on the real client. A
    /// request from anywhere else is from its peer, whatever its headers say.
    ///
    /// ```
    /// use tool_runtime::transport::http::HttpOptions;
    ///
    /// let options = HttpOptions::default().trusted_proxies(["10.0.0.0/8".parse().unwrap()]);
    /// # let _ = options;
    /// ```
    pub fn trusted_proxies(mut self, proxies: impl IntoIterator<Item = ipnet::IpNet>) -> Self {
        self.trusted_proxies = proxies.into_iter().collect();
        self
    }

    /// At most `sessions` handshake-era sessions open at once (5,000 by default). A new
    /// session past it ends the one idle longest (with nothing in flight); when none is
    /// idle, `initialize` is answered 503 with `Retry-After`.
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions.max(1);
        self
    }

    /// [`serve`](super::serve) holds at most `connections` connections at once (4,096 by
    /// default); one more is answered 503 with `Retry-After` and closed.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.connections.most = connections.max(1);
        self
    }

    /// [`serve`](super::serve) holds at most `connections` connections from one client
    /// address at once (256 by default), so one client cannot take them all. A trusted
    /// proxy ([`trusted_proxies`](Self::trusted_proxies)) is held only to the total.
    pub fn max_connections_per_client(mut self, connections: usize) -> Self {
        self.connections.per_client = connections.max(1);
        self
    }

    /// [`serve`](super::serve) closes a connection whose request head has not fully
    /// arrived `timeout` after it was due (15 seconds by default): a client that sends part
    /// of a head and stays silent, or keeps an idle connection open between requests,
    /// holds it no longer.
    pub fn head_timeout(mut self, timeout: Duration) -> Self {
        self.connections.head_timeout = timeout;
        self
    }

    /// A request body that has not fully arrived `timeout` after its head is refused with
    /// 408 (30 seconds by default).
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.connections.body_timeout = timeout;
        self
    }

    /// The host names requests may name in `Host` (and origins may have); empty: any.
    pub fn hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// Sets the hosts requests may name.
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }
}
