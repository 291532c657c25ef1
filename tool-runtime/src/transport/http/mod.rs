//! Streamable HTTP (axum) on one endpoint (`/mcp` by default), plus plain REST and
//! JSON-RPC endpoints (`/api/tools/...`, `/mcp/tools/...`), as a `Router` a service can nest into its own app.
//!
//! - POST carries one JSON-RPC message. A request is answered with JSON or an SSE stream
//!   (progress and log notifications first, then the response) as `Accept` allows; a
//!   notification gets 202.
//! - Handshake era: `initialize` opens a session (`Mcp-Session-Id`); later requests name
//!   it; GET opens a stream for notifications unrelated to a request; DELETE ends it.
//! - 2026-07-28: requests name the protocol version in `_meta` and are served without a
//!   session; the `MCP-Protocol-Version` and `Mcp-Method` headers must agree with the body.
//! - Every request passes the `Host` and `Origin` checks (403 otherwise: a web page must not
//!   reach a local server through DNS rebinding), the optional bearer token or OAuth access
//!   token (401; a tool call the token's scopes do not permit, 403), and the body size limit
//!   (413).

#[cfg(feature = "oauth")]
mod oauth;
mod param_headers;
mod sessions;

#[cfg(feature = "oauth")]
pub use oauth::{Jwks, OAuth, OAuthError};

use crate::call::caller::Caller;
use crate::call::error::CallError;
use crate::catalog::Tool;
use crate::export;
use crate::mcp::era::{self, Era};
use crate::mcp::jsonrpc::{self, code, Incoming, RequestId};
use crate::mcp::tools::{self, CallAnswer};
use crate::mcp::{
    outbox, Connection, McpServer, Message, MessageKind, Messages, HANDSHAKE_VERSIONS,
};
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Extension;
use axum::Router;
use futures_util::stream::{self, Stream};
use serde_json::{json, Map, Value};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
/// Where `HttpOptions::metrics` are served.
const METRICS_PATH: &str = "/metrics";

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
/// assert_eq!(options.endpoint, "/mcp");
/// assert_eq!(options.allowed_hosts, ["tools.example.com"]);
///
/// // Bound to every interface, any Host is accepted unless hosts are named.
/// let public = HttpOptions::for_address("0.0.0.0:8080".parse().unwrap());
/// assert!(public.allowed_hosts.is_empty());
/// ```
///
/// [`router`] turns the options and a server into an axum `Router` to nest in an app;
/// [`serve`] binds and serves it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The MCP endpoint's path.
    pub endpoint: String,
    /// Host names (without port) requests may name in `Host`, and origins may have.
    /// Empty: any host (use only behind a proxy that checks it).
    pub allowed_hosts: Vec<String>,
    /// A token every request must present as `Authorization: Bearer <token>`.
    pub bearer_token: Option<String>,
    /// Access tokens checked as an OAuth 2.1 resource server (see [`OAuth`]); when set, it
    /// decides who may call and `bearer_token` is not used.
    #[cfg(feature = "oauth")]
    pub oauth: Option<OAuth>,
    /// The largest request body accepted, in bytes.
    pub body_limit: usize,
    /// Cross-origin browser access.
    pub cors: Cors,
    /// Whether to serve the REST endpoints too (`GET /api/tools/discover`,
    /// `POST /api/tools/execute`, `GET /mcp/tools/list`, `POST /mcp/tools/call`). Off by
    /// default, so a service that embeds the router exposes only the MCP endpoint unless it
    /// asks; the standard command line's `serve --http` turns them on.
    pub rest: bool,
    /// How long a handshake-era session may go without a request (and with nothing in
    /// flight) before the server ends it; its client then gets 404 and initializes again.
    pub session_idle_timeout: Duration,
    /// The metrics served as Prometheus text at `GET /metrics`; none by default.
    pub metrics: Option<crate::ops::Prometheus>,
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
            metrics: None,
        }
    }
}

fn loopback_hosts() -> Vec<String> {
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

    /// Serves the REST endpoints beside the MCP endpoint (or not).
    pub fn rest(mut self, on: bool) -> Self {
        self.rest = on;
        self
    }

    /// Serves `metrics` as Prometheus text at `GET /metrics`, behind the same host and
    /// token checks as the MCP endpoint.
    pub fn metrics(mut self, metrics: crate::ops::Prometheus) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Sets the hosts requests may name.
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }
}

struct App {
    server: McpServer,
    options: HttpOptions,
    sessions: sessions::Sessions,
}

/// The HTTP side as an axum `Router`, ready to serve or to nest into an existing app.
///
/// The router has no state of its own to share, so it goes next to an app's routes
/// whatever state they use: give the app its state with `with_state`, then `merge` the
/// tools (served at [`HttpOptions::endpoint`], `/mcp` by default) or `nest` them under a
/// path. The Host, Origin, token and size checks apply to the tools' routes only. The REST
/// endpoints are served only when [`HttpOptions::rest`] asks for them.
///
/// ```
/// use axum::{body::Body, extract::State, http::Request, routing::get, Router};
/// use tool_runtime::mcp::{McpServer, ServerInfo};
/// use tool_runtime::transport::http::{router, HttpOptions};
/// use tower::ServiceExt;
///
/// /// The app's own state, which its handlers read.
/// #[derive(Clone)]
/// struct AppState {
///     greeting: &'static str,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let tools = McpServer::new(
///     tool_runtime::Registry::new().unwrap(),
///     ServerInfo::new("my-service", "1.0.0"),
/// );
/// let app = Router::new()
///     .route("/hello", get(|State(state): State<AppState>| async move { state.greeting }))
///     .with_state(AppState { greeting: "hello" })
///     .nest("/tools", router(tools, HttpOptions::default()));
/// // `axum::serve(listener, app)` serves it; here one request of each kind goes through.
///
/// let response = app.clone()
///     .oneshot(Request::get("/hello").body(Body::empty()).unwrap())
///     .await
///     .unwrap();
/// assert_eq!(response.status(), 200);
///
/// let ping = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
///     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
///     "io.modelcontextprotocol/clientInfo":{"name":"doc","version":"1"},
///     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
/// let request = Request::post("/tools/mcp")
///     .header("host", "localhost")
///     .header("content-type", "application/json")
///     .header("accept", "application/json, text/event-stream")
///     .header("mcp-protocol-version", "2026-07-28")
///     .header("mcp-method", "tools/list")
///     .body(Body::from(ping))
///     .unwrap();
/// let response = app.clone().oneshot(request).await.unwrap();
/// assert_eq!(response.status(), 200);
///
/// // No REST endpoints unless asked for.
/// let request = Request::get("/tools/api/tools/discover")
///     .header("host", "localhost")
///     .body(Body::empty())
///     .unwrap();
/// assert_eq!(app.oneshot(request).await.unwrap().status(), 404);
/// # }
/// ```
pub fn router(server: McpServer, options: HttpOptions) -> Router {
    let body_limit = options.body_limit;
    let endpoint = options.endpoint.clone();
    let rest = options.rest;
    let cors = options.cors.clone();
    let session_idle_timeout = options.session_idle_timeout;
    let app = Arc::new(App {
        server,
        options,
        sessions: sessions::Sessions::new(session_idle_timeout),
    });
    let mut router = Router::new().route(&endpoint, post(mcp_post).get(mcp_get).delete(mcp_delete));
    if rest {
        router = router
            .route("/api/tools/discover", get(rest_discover))
            .route("/api/tools/execute", post(rest_execute))
            .route("/mcp/tools/list", get(rpc_tools_list))
            .route("/mcp/tools/call", post(rpc_tools_call));
    }
    #[cfg(feature = "oauth")]
    if let Some(oauth) = &app.options.oauth {
        for path in oauth.metadata_routes() {
            router = router.route(&path, get(resource_metadata));
        }
    }
    if let Some(metrics) = app.options.metrics.clone() {
        router = router.route(
            METRICS_PATH,
            get(move || async move {
                (
                    [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
                    metrics.render(),
                )
            }),
        );
    }
    let mut router = router
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), guard))
        .with_state(app);
    match cors {
        Cors::None => {}
        Cors::Any => router = router.layer(tower_http::cors::CorsLayer::permissive()),
        Cors::Origins(origins) => {
            let origins: Vec<HeaderValue> = origins.iter().filter_map(|o| o.parse().ok()).collect();
            router = router.layer(
                tower_http::cors::CorsLayer::new()
                    .allow_origin(origins)
                    .allow_methods([Method::GET, Method::POST, Method::DELETE])
                    .allow_headers(tower_http::cors::Any)
                    // A browser client reads the session id, and the challenge of a 401
                    // or 403 that says where to get a token and with which scopes.
                    .expose_headers([
                        header::HeaderName::from_static(SESSION_HEADER),
                        header::WWW_AUTHENTICATE,
                    ]),
            );
        }
    }
    router
}

/// Serves `server` on `address` until the process ends.
pub async fn serve(
    server: McpServer,
    address: SocketAddr,
    options: HttpOptions,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(address).await?;
    tracing::info!(address = %listener.local_addr()?, "serving MCP over HTTP");
    // No Nagle delay: an answer is one small write, and waiting to coalesce it with the
    // next (which the client will not send before it has this one) costs tens of ms.
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|stream| {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot turn off Nagle's algorithm on a connection");
        }
    });
    let app = router(server, options).into_make_service_with_connect_info::<SocketAddr>();
    axum::serve(listener, app).await
}

/// Host, Origin and bearer-token checks for every request, which then carries its
/// [`Caller`] for the handlers.
async fn guard(State(app): State<Arc<App>>, mut request: Request, next: Next) -> Response {
    let options = &app.options;
    let headers = request.headers();
    if !options.allowed_hosts.is_empty() {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !host_allowed(host, &options.allowed_hosts) {
            return plain(
                StatusCode::FORBIDDEN,
                "forbidden: this server does not answer for that Host",
            );
        }
        if options.cors != Cors::Any {
            if let Some(origin) = headers.get(header::ORIGIN) {
                let origin = origin.to_str().unwrap_or("");
                let allowed = match &options.cors {
                    Cors::Origins(list) => list.iter().any(|o| o == origin),
                    _ => false,
                } || origin_host(origin)
                    .is_some_and(|host| host_allowed(host, &options.allowed_hosts));
                if !allowed {
                    return plain(
                        StatusCode::FORBIDDEN,
                        "forbidden: requests from that Origin are not accepted",
                    );
                }
            }
        }
    }
    let peer = request
        .extensions()
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
        .map(|info| info.0);
    let mut caller = match authenticate(&app, &request, Caller::http(peer)) {
        Ok(caller) => caller,
        Err(refusal) => return *refusal,
    };
    let headers = request.headers();
    let limiter = app.server.registry().client_limiter();
    if let Some(limiter) = limiter.filter(|_| request.uri().path() != METRICS_PATH) {
        // A session counts as the client only once it exists: a made-up id must not buy
        // a fresh allowance. (Without a limit the handler names the session it resolves.)
        if let Some(session) =
            header_str(headers, SESSION_HEADER).filter(|id| app.sessions.get(id, &caller).is_some())
        {
            caller = caller.with_session(session);
        }
        if let Err(wait) = limiter.check(&caller.key()) {
            return too_many_requests(limiter.rate(), wait);
        }
        caller = caller.with_rate_checked();
    }
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// Who the request is from, once its credentials check out: the OAuth access token when the
/// server is a resource server (its metadata is open to all), else the static bearer token
/// when there is one; the refusal (401) otherwise.
fn authenticate(app: &App, request: &Request, caller: Caller) -> Result<Caller, Box<Response>> {
    let options = &app.options;
    let authorization = header_str(request.headers(), header::AUTHORIZATION.as_str());
    #[cfg(feature = "oauth")]
    if let Some(oauth) = &options.oauth {
        if request.uri().path().starts_with(oauth::METADATA_PATH) {
            return Ok(caller);
        }
        return oauth
            .authenticate(authorization, caller)
            .map_err(|problem| {
                if let Some(problem) = &problem {
                    tracing::debug!(%problem, "refused an access token");
                }
                let text = match &problem {
                    Some(problem) => format!("unauthorized: {problem}"),
                    None => "unauthorized: this server requires an OAuth access token \
                         (Authorization: Bearer <token>); its metadata says where to get one"
                        .to_owned(),
                };
                let challenge = oauth.unauthorized_challenge(problem.as_ref(), || tool_scopes(app));
                let response = (StatusCode::UNAUTHORIZED, text).into_response();
                Box::new(with_challenge(response, &challenge))
            });
    }
    if let Some(token) = &options.bearer_token {
        let given = authorization.and_then(bearer).unwrap_or("");
        if !constant_time_eq(given.as_bytes(), token.as_bytes()) {
            let response = plain(
                StatusCode::UNAUTHORIZED,
                "unauthorized: a valid bearer token is required",
            );
            return Err(Box::new(with_challenge(response, "Bearer")));
        }
    }
    Ok(caller)
}

/// The token of an `Authorization: Bearer <token>` header value; `None` for another scheme
/// (the scheme's name is matched in any case, as HTTP says).
fn bearer(authorization: &str) -> Option<&str> {
    let (scheme, token) = authorization.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// `response` with a `WWW-Authenticate` challenge.
fn with_challenge(mut response: Response, challenge: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// Every scope some tool requires, in order.
#[cfg(feature = "oauth")]
fn tool_scopes(app: &App) -> std::collections::BTreeSet<String> {
    app.server
        .registry()
        .tools()
        .iter()
        .flat_map(|tool| tool.scopes().iter().cloned())
        .collect()
}

/// The protected-resource metadata (RFC 9728), open to every client: it says where to get
/// the token every other request needs.
#[cfg(feature = "oauth")]
async fn resource_metadata(State(app): State<Arc<App>>) -> Response {
    // Routed only when the server is a resource server.
    let Some(oauth) = &app.options.oauth else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let name = app.server.info().name();
    axum::Json(oauth.metadata(|| tool_scopes(&app), name)).into_response()
}

/// A tool call the caller's token does not permit, refused before it is handled (and
/// recorded as a refused call): 403 with the `insufficient_scope` challenge naming every
/// scope the tool requires, and a JSON-RPC error that says the same to the client.
fn refuse_out_of_scope(
    app: &App,
    caller: &Caller,
    method: Option<&str>,
    params: Option<&Map<String, Value>>,
    id: Option<&RequestId>,
) -> Option<Response> {
    if method != Some("tools/call") || caller.scopes().is_none() {
        return None;
    }
    let params = params?;
    let name = params.get("name")?.as_str()?;
    let arguments = params.get("arguments").unwrap_or(&Value::Null);
    let error = app
        .server
        .registry()
        .scope_refusal(name, arguments, caller)?;
    Some(forbidden_rpc(app, id, &error))
}

/// A JSON-RPC request refused for want of scopes: 403, the challenge, and the error's
/// words as a JSON-RPC error.
fn forbidden_rpc(app: &App, id: Option<&RequestId>, error: &CallError) -> Response {
    let message = error.to_string();
    let response = rpc_error(StatusCode::FORBIDDEN, id, code::INVALID_REQUEST, &message);
    forbidden_challenge(app, error, response)
}

/// `response` (a 403) with the `insufficient_scope` challenge of `error`.
fn forbidden_challenge(app: &App, error: &CallError, response: Response) -> Response {
    #[cfg(feature = "oauth")]
    if let (Some(oauth), CallError::InsufficientScope { scopes, .. }) = (&app.options.oauth, error)
    {
        let challenge = oauth.insufficient_scope_challenge(scopes, &error.to_string());
        return with_challenge(response, &challenge);
    }
    let _ = (app, error);
    response
}

/// `Retry-After` for a wait, in whole seconds, rounded up (a client that waits that long
/// passes) and at least one.
fn retry_after_header(wait: Duration) -> HeaderValue {
    HeaderValue::from((wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1))
}

/// 429, with `Retry-After`.
fn too_many_requests(rate: crate::ops::Rate, wait: Duration) -> Response {
    let text = format!(
        "too many requests: this client may make {}; retry in {}",
        rate.of("requests"),
        crate::catalog::time::show_duration(wait)
    );
    let mut response = (StatusCode::TOO_MANY_REQUESTS, text).into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, retry_after_header(wait));
    response
}

/// `Host` is `name` or `name:port`, with IPv6 addresses in brackets.
fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let name = if host.starts_with('[') {
        host.split_inclusive(']').next().unwrap_or(host)
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    allowed.iter().any(|a| a.eq_ignore_ascii_case(name))
}

fn origin_host(origin: &str) -> Option<&str> {
    let rest = origin.split_once("://")?.1;
    Some(rest.split('/').next().unwrap_or(rest))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    (status, text).into_response()
}

fn json_response(status: StatusCode, bytes: Vec<u8>) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

fn rpc_error(status: StatusCode, id: Option<&RequestId>, code: i64, message: &str) -> Response {
    json_response(status, jsonrpc::error_response(id, code, message, None))
}

async fn mcp_post(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    // The body is parsed once, here; the connection is handed the parsed message.
    let parsed = jsonrpc::parse(&body);
    let (method, request_id, params) = match &parsed {
        Ok(Incoming::Request { id, method, params }) => {
            (Some(&**method), Some(id), params.as_ref())
        }
        Ok(Incoming::Notification { method, params }) => (Some(&**method), None, params.as_ref()),
        _ => (None, None, None),
    };
    let claimed = header_str(&headers, VERSION_HEADER);
    let session_id = header_str(&headers, SESSION_HEADER);

    let (connection, stateless, new_session) = match era::of_request(era::meta_of(params), claimed)
    {
        Era::PerRequest(version) => {
            let checked =
                check_standard_headers(&headers, version, method, params).and_then(|()| {
                    if method == Some("tools/call") {
                        param_headers::check(&headers, app.server.registry(), params)
                    } else {
                        Ok(())
                    }
                });
            if let Err(problem) = checked {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    request_id,
                    code::HEADER_MISMATCH,
                    &format!("Header mismatch: {problem}"),
                );
            }
            (Arc::new(app.server.connection()), true, None)
        }
        // The protocol layer answers with the precise error (-32602, so 400).
        Era::MissingMeta => (Arc::new(app.server.connection()), true, None),
        Era::Handshake => {
            if let Some(version) = claimed {
                if !HANDSHAKE_VERSIONS.contains(&version) {
                    return rpc_error(
                        StatusCode::BAD_REQUEST,
                        request_id,
                        code::INVALID_REQUEST,
                        &format!(
                            "Bad Request: unsupported MCP-Protocol-Version {version:?}; this \
                             server speaks {}",
                            crate::mcp::SUPPORTED_VERSIONS.join(", ")
                        ),
                    );
                }
            }
            if method == Some("initialize") {
                (
                    Arc::new(app.server.connection()),
                    false,
                    Some(new_session_id()),
                )
            } else if let Some(session_id) = session_id {
                match app.sessions.get(session_id, &caller) {
                    Some(connection) => (connection, false, None),
                    None => {
                        return rpc_error(
                            StatusCode::NOT_FOUND,
                            request_id,
                            code::INVALID_REQUEST,
                            "Session not found: initialize again",
                        )
                    }
                }
            } else if parsed.is_err() {
                // Not a valid message: the protocol layer gives the precise error.
                (Arc::new(app.server.connection()), true, None)
            } else {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    request_id,
                    code::INVALID_REQUEST,
                    "Bad Request: missing Mcp-Session-Id; send initialize first, or name the \
                     protocol version in the request's _meta (2026-07-28)",
                );
            }
        }
    };
    if let Some(refusal) = refuse_out_of_scope(&app, &caller, method, params, request_id) {
        return refusal;
    }
    let request_id = request_id.cloned();
    let caller = match new_session.as_deref().or(session_id) {
        Some(session) if !stateless && caller.session().is_none() => caller.with_session(session),
        _ => caller,
    };

    let (sink, mut outgoing) = outbox();
    let handled = connection.handle_parsed(parsed, claimed, &caller, &sink);
    // From here only the request's work holds a sender, so however the work ends (answered,
    // cancelled, its session closed) every wait below ends with it.
    drop(sink);
    if !handled.is_request() {
        return StatusCode::ACCEPTED.into_response();
    }
    if let Some(work) = handled.into_work() {
        // On its own task: a client that goes away mid-call (in the handshake era) does not
        // cancel it; `CancelOnDrop` below decides when it does.
        tokio::spawn(work.run());
    }
    // An answer that is ready at once goes back as JSON, with a status the client can act on.
    if let Some(first) = outgoing.try_recv() {
        if first.is_response() {
            let status = status_for(first.kind, stateless);
            let mut response = json_response(status, first.bytes);
            // Only an `initialize` that succeeded opens a session.
            if let (Some(id), MessageKind::Result) = (new_session, first.kind) {
                if let Ok(value) = HeaderValue::from_str(&id) {
                    response.headers_mut().insert(SESSION_HEADER, value);
                    app.sessions.open(id, connection, &caller);
                }
            }
            return response;
        }
        // A notification came first (a subscription's acknowledgement): stream.
        return sse(connection, request_id, stateless, Some(first), outgoing);
    }

    let accept = header_str(&headers, header::ACCEPT.as_str()).unwrap_or("*/*");
    let takes_sse = accept_includes(accept, "text/event-stream");
    let takes_json = accept_includes(accept, "application/json");
    if takes_sse && !takes_json {
        return sse(connection, request_id, stateless, None, outgoing);
    }
    if takes_sse {
        // Either will do: a plain JSON answer unless a notification (progress, a log line)
        // comes before it, which only a stream can carry. A stream costs more on both
        // sides, so it is opened only when needed. A 2026-07-28 client that goes away
        // while waiting cancels the request, as it would by closing a stream.
        let mut waiting = CancelOnDrop {
            connection: Arc::clone(&connection),
            id: if stateless { request_id.clone() } else { None },
        };
        let Some(first) = outgoing.recv().await else {
            waiting.id = None;
            return rpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                request_id.as_ref(),
                code::INTERNAL_ERROR,
                "The request ended without an answer: it was cancelled, or its session was closed while it ran",
            );
        };
        waiting.id = None;
        if first.is_response() {
            return json_response(status_for(first.kind, stateless), first.bytes);
        }
        return sse(connection, request_id, stateless, Some(first), outgoing);
    }
    // JSON only: notifications (progress, logs) cannot be delivered and are dropped.
    while let Some(message) = outgoing.recv().await {
        if message.is_response() {
            let status = status_for(message.kind, stateless);
            return json_response(status, message.bytes);
        }
    }
    rpc_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        request_id.as_ref(),
        code::INTERNAL_ERROR,
        "The request ended without an answer: it was cancelled, or its session was closed while it ran",
    )
}

/// Checks the standard headers of a request at a per-request protocol version (SEP-2243):
/// `MCP-Protocol-Version` must name the version `_meta` names, `Mcp-Method` the method,
/// and `Mcp-Name` the tool, prompt or resource the body names. Header names are matched
/// case-insensitively (the `http` crate does that); values exactly, once the whitespace
/// around them is trimmed, as HTTP requires.
fn check_standard_headers(
    headers: &HeaderMap,
    version: &Value,
    method: Option<&str>,
    params: Option<&Map<String, Value>>,
) -> Result<(), String> {
    // A version that is not even a string is the protocol layer's to refuse (-32022).
    let Some(version) = version.as_str() else {
        return Ok(());
    };
    expect_header(
        headers,
        VERSION_HEADER,
        "MCP-Protocol-Version",
        version,
        "_meta names",
    )?;
    let Some(method) = method else {
        return Ok(());
    };
    expect_header(
        headers,
        METHOD_HEADER,
        "Mcp-Method",
        method,
        "the request's method is",
    )?;
    let named = match method {
        "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")),
        "resources/read" => params.and_then(|p| p.get("uri")),
        "tasks/get" | "tasks/update" | "tasks/cancel" => params.and_then(|p| p.get("taskId")),
        _ => None,
    };
    if let Some(Value::String(named)) = named {
        expect_header(headers, NAME_HEADER, "Mcp-Name", named, "the request names")?;
    }
    Ok(())
}

/// Checks that header `name` (shown as `shown`) is present and says `expected`; the error
/// says what came and what the body says (`body_says` introduces the body's value).
fn expect_header(
    headers: &HeaderMap,
    name: &str,
    shown: &str,
    expected: &str,
    body_says: &str,
) -> Result<(), String> {
    match header_str(headers, name) {
        Some(claimed) if claimed == expected => Ok(()),
        Some(claimed) => Err(format!(
            "{shown} is {claimed:?} but {body_says} {expected:?}"
        )),
        None => Err(format!("{shown} is missing; {body_says} {expected:?}")),
    }
}

/// The HTTP status of a JSON-RPC answer, from its kind: protocol errors are 4xx in the
/// 2026-07-28 era and for malformed messages; everything else is 200.
fn status_for(kind: MessageKind, stateless: bool) -> StatusCode {
    let MessageKind::Error(code) = kind else {
        return StatusCode::OK;
    };
    match code {
        code::PARSE_ERROR | code::INVALID_REQUEST => StatusCode::BAD_REQUEST,
        code::METHOD_NOT_FOUND if stateless => StatusCode::NOT_FOUND,
        code::INVALID_PARAMS
        | code::HEADER_MISMATCH
        | code::MISSING_CAPABILITY
        | code::UNSUPPORTED_PROTOCOL_VERSION
            if stateless =>
        {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

/// Cancels a 2026-07-28 request whose stream the client closed before the answer.
struct CancelOnDrop {
    connection: Arc<Connection>,
    id: Option<crate::mcp::RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.connection.cancel(&id);
        }
    }
}

fn sse(
    connection: Arc<Connection>,
    id: Option<RequestId>,
    stateless: bool,
    first: Option<Message>,
    outgoing: Messages,
) -> Response {
    // In the handshake era a dropped stream is not a cancellation (the client cancels with
    // notifications/cancelled); in 2026-07-28 it is.
    let cancel = CancelOnDrop {
        id: if stateless { id } else { None },
        connection,
    };
    let state = (first, outgoing, cancel, false);
    let events = stream::unfold(
        state,
        |(first, mut outgoing, mut cancel, done)| async move {
            if done {
                return None;
            }
            let message = match first {
                Some(message) => message,
                None => outgoing.recv().await?,
            };
            let finished = message.is_response();
            if finished {
                cancel.id = None;
            }
            let event = Event::default().data(String::from_utf8_lossy(&message.bytes));
            Some((
                Ok::<Event, Infallible>(event),
                (None, outgoing, cancel, finished),
            ))
        },
    );
    sse_response(events)
}

fn sse_response(
    events: impl Stream<Item = Result<Event, Infallible>> + Send + 'static,
) -> Response {
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response();
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

async fn mcp_get(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
) -> Response {
    // GET only ever opens an event stream; a client that cannot take one gets nothing else.
    let accept = header_str(&headers, header::ACCEPT.as_str()).unwrap_or("");
    if !accept_includes(accept, "text/event-stream") {
        return plain(
            StatusCode::NOT_ACCEPTABLE,
            "not acceptable: GET opens a stream of server-sent events; send Accept: text/event-stream",
        );
    }
    let Some(session_id) = header_str(&headers, SESSION_HEADER) else {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: GET needs an Mcp-Session-Id",
        );
    };
    let Some(connection) = app.sessions.get(session_id, &caller) else {
        return plain(StatusCode::NOT_FOUND, "session not found");
    };
    let (sink, outgoing) = outbox();
    connection.set_unsolicited(sink);
    let events = stream::unfold(outgoing, |mut outgoing| async move {
        let message = outgoing.recv().await?;
        let event = Event::default().data(String::from_utf8_lossy(&message.bytes));
        Some((Ok::<Event, Infallible>(event), outgoing))
    });
    sse_response(events)
}

async fn mcp_delete(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
) -> Response {
    let Some(session_id) = header_str(&headers, SESSION_HEADER) else {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: DELETE needs an Mcp-Session-Id",
        );
    };
    if app.sessions.remove(session_id, &caller) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        plain(StatusCode::NOT_FOUND, "session not found")
    }
}

async fn rest_discover(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    let tools: Vec<Value> = app
        .server
        .registry()
        .tools()
        .iter()
        .filter(|tool| app.server.lists_to(&caller, tool))
        .map(|tool| {
            json!({
                "name": tool.name(),
                "description": tool.description(),
                "type": "function",
                "parameters": tool.input_schema(),
            })
        })
        .collect();
    let count = tools.len();
    axum::Json(json!({"tools": tools, "totalCount": count})).into_response()
}

/// The REST execute request: `{"toolName", "parameters"}` (also `{"name", "input"}`).
#[derive(serde::Deserialize)]
struct ExecuteRequest {
    #[serde(alias = "name")]
    #[serde(rename = "toolName")]
    tool_name: String,
    #[serde(alias = "input", alias = "arguments", default)]
    parameters: Value,
}

async fn rest_execute(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Response {
    let request: ExecuteRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(error) => {
            let message = format!(
                "the body must be {{\"toolName\": \"...\", \"parameters\": {{...}}}}: {}",
                error.to_string().split(" at line ").next().unwrap_or("")
            );
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"error": message})),
            )
                .into_response();
        }
    };
    let result = app
        .server
        .registry()
        .call_for(caller, &request.tool_name, request.parameters)
        .await;
    let status = match result.error() {
        // A tool that needs the user at a page first says which in its error.
        None | Some(CallError::Failed { .. } | CallError::UrlElicitationRequired { .. }) => {
            StatusCode::OK
        }
        Some(CallError::UnknownTool { .. }) => StatusCode::NOT_FOUND,
        Some(CallError::InvalidArguments { .. }) => StatusCode::BAD_REQUEST,
        Some(CallError::TimedOut { .. }) => StatusCode::GATEWAY_TIMEOUT,
        Some(error @ CallError::InsufficientScope { .. }) => {
            let response = (StatusCode::FORBIDDEN, axum::Json(&result)).into_response();
            return forbidden_challenge(&app, error, response);
        }
        Some(CallError::RateLimited { retry_after, .. }) => {
            let wait = retry_after_header(*retry_after);
            let mut response = (StatusCode::TOO_MANY_REQUESTS, axum::Json(&result)).into_response();
            response.headers_mut().insert(header::RETRY_AFTER, wait);
            return response;
        }
        Some(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    (status, axum::Json(result)).into_response()
}

/// `GET /mcp/tools/list` answers a JSON-RPC result envelope, with each tool as
/// `tools/list` over MCP shows it.
async fn rpc_tools_list(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    let tools = app.server.registry().tools();
    let tools: Vec<&Tool> = tools
        .iter()
        .map(|tool| &**tool)
        .filter(|tool| app.server.lists_to(&caller, tool))
        .collect();
    let body = format!(
        "{{\"jsonrpc\":\"2.0\",\"result\":{{\"tools\":{}}}}}",
        export::mcp_tools(&tools)
    );
    json_response(StatusCode::OK, body.into_bytes())
}

/// `POST /mcp/tools/call` takes a JSON-RPC `tools/call` request. Invalid arguments and
/// unknown tools are JSON-RPC errors here (-32602), as that endpoint's contract says;
/// every other outcome is the `tools/call` result MCP gives.
async fn rpc_tools_call(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Response {
    let (id, method, params) = match jsonrpc::parse(&body) {
        Ok(jsonrpc::Incoming::Request { id, method, params }) => (id, method, params),
        Ok(_) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                code::INVALID_REQUEST,
                "Invalid Request: expected a tools/call request with an id",
            )
        }
        Err(rejected) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                rejected.id.as_ref(),
                rejected.code,
                &rejected.message,
            );
        }
    };
    if method != "tools/call" {
        return rpc_error(
            StatusCode::OK,
            Some(&id),
            code::METHOD_NOT_FOUND,
            &format!("Method not found: {method}"),
        );
    }
    let mut params = params.unwrap_or_default();
    let Some(Value::String(name)) = params.remove("name") else {
        return rpc_error(
            StatusCode::OK,
            Some(&id),
            code::INVALID_PARAMS,
            "Invalid params: missing required parameter 'name'",
        );
    };
    let arguments = params.remove("arguments").unwrap_or(Value::Null);
    let registry = app.server.registry();
    let result = registry.call_for(caller, &name, arguments).await;
    if let Some(error @ CallError::InsufficientScope { .. }) = result.error() {
        return forbidden_rpc(&app, Some(&id), error);
    }
    if let Some(error @ (CallError::UnknownTool { .. } | CallError::InvalidArguments { .. })) =
        result.error()
    {
        let message = format!("Invalid params: {error}");
        return rpc_error(StatusCode::OK, Some(&id), code::INVALID_PARAMS, &message);
    }
    // A REST caller cannot read resources: its outputs are never links.
    let bytes = match tools::answer(result, app.server.max_output_bytes(), None, false) {
        CallAnswer::Result(body) => jsonrpc::response(&id, &body.framed(None)),
        CallAnswer::Error {
            code,
            message,
            data,
        } => jsonrpc::error_response(Some(&id), code, &message, data),
    };
    json_response(StatusCode::OK, bytes)
}

/// Whether an `Accept` header lists `media_type` (or `*/*`), ignoring parameters.
fn accept_includes(accept: &str, media_type: &str) -> bool {
    accept.split(',').any(|item| {
        let item = item.split(';').next().unwrap_or("").trim();
        item.eq_ignore_ascii_case(media_type) || item == "*/*"
    })
}

/// A header's value, without the whitespace around it (which HTTP says is not part of it).
fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim_matches([' ', '\t']))
}

fn new_session_id() -> String {
    crate::call::ids::unguessable_id()
}
