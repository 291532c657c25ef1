//! Streamable HTTP (axum) on one endpoint (`/mcp` by default), plus plain REST and
//! JSON-RPC endpoints (`/api/tools/...`, `/mcp/tools/...`), as a `Router` a service can
//! nest into its own app.
//!
//! - `options`: what a server owner sets.
//! - `guard`: the `Host`, `Origin` and token checks every request passes (403 otherwise: a
//!   web page must not reach a local server through DNS rebinding; 401 without a valid
//!   token), and who the request is from.
//! - `streamable`: the MCP endpoint (POST, GET, DELETE), sessions of the handshake era,
//!   the standard headers of 2026-07-28.
//! - `rest`: the REST endpoints, answered by the same connection as MCP.
//! - `reply`: statuses and the headers of refusals.
//! - `oauth` (feature `oauth`): the server as an OAuth 2.1 resource server.

mod forwarded;
mod guard;
mod health;
mod listener;
#[cfg(feature = "oauth")]
mod oauth;
mod options;
mod page;
mod param_headers;
mod reply;
mod rest;
mod sessions;
mod streamable;
mod traced;

/// An address block (CIDR), as [`HttpOptions::trusted_proxies`] takes them.
pub use ipnet::IpNet;
#[cfg(feature = "oauth")]
pub use oauth::{Jwks, OAuth, OAuthError};
pub use options::{Cors, HttpOptions};

use crate::mcp::McpServer;
use axum::http::{header, HeaderValue, Method};
use axum::routing::{get, post};
use axum::Router;
#[cfg(feature = "oauth")]
use guard::bearer;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::mcp::header_values::names::{
    METHOD as METHOD_HEADER, NAME as NAME_HEADER, SESSION as SESSION_HEADER,
    VERSION as VERSION_HEADER,
};
/// Where `HttpOptions::metrics` are served.
#[cfg(feature = "prometheus")]
const METRICS_PATH: &str = "/metrics";

struct App {
    server: McpServer,
    options: HttpOptions,
    sessions: Arc<sessions::Sessions>,
    /// Set on shutdown: `/readyz` says so, so the balancer sends nothing new.
    draining: health::Draining,
}

/// The HTTP side as an axum `Router`, ready to serve or to nest into an existing app.
///
/// The router has no state of its own to share, so it goes next to an app's routes
/// whatever state they use: give the app its state with `with_state`, then `merge` the
/// tools (served at [`HttpOptions::endpoint`], `/mcp` by default) or `nest` them under a
/// path. The Host, Origin, token and size checks apply to the tools' routes only. The REST
/// endpoints are served only when [`HttpOptions::rest`] asks for them.
///
/// Two things an embedding service sets itself:
/// - **Hosts.** [`HttpOptions::default`] answers loopback names only (`localhost`,
///   `127.0.0.1`, `[::1]`), against DNS rebinding; a request naming any other `Host` gets
///   403 with a message naming it. A service reached under its own name lists it with
///   [`HttpOptions::allowed_hosts`] (or starts from [`HttpOptions::for_address`], which
///   takes any host for a non-loopback address, for a service behind a proxy that checks).
/// - **Client addresses.** Rate limits, budgets and the audit trail key on the client's
///   address when there is no token or session: serve the app with
///   `app.into_make_service_with_connect_info::<SocketAddr>()` so the router sees it
///   (without it, such clients share one key).
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
    router_and_app(server, options).0
}

/// The router, and the state its handlers share (which `serve` drains on shutdown).
fn router_and_app(server: McpServer, options: HttpOptions) -> (Router, Arc<App>) {
    super::start_maintenance(&server);
    let endpoint = options.endpoint.clone();
    let rest = options.rest;
    let cors = options.cors.clone();
    let session_idle_timeout = options.session_idle_timeout;
    let sessions = sessions::Sessions::new(session_idle_timeout, options.max_sessions, &server);
    let app = Arc::new(App {
        server,
        options,
        sessions,
        draining: health::Draining::default(),
    });
    let mcp = post(streamable::mcp_post)
        .get(streamable::mcp_get)
        .delete(streamable::mcp_delete);
    let mut router = Router::new()
        .route(&endpoint, mcp)
        .route(health::HEALTH_PATH, get(health::healthz))
        .route(health::READY_PATH, get(health::readyz));
    if rest {
        router = router
            .route("/api/tools/discover", get(rest::discover))
            .route("/api/tools/execute", post(rest::execute))
            .route("/openapi.json", get(rest::openapi))
            .route("/mcp/tools/list", get(rest::rpc_list))
            .route("/mcp/tools/call", post(rest::rpc_call));
    }
    let page = app.options.catalog_page;
    if rest || page {
        router = router.route("/api/tools/{name}/call", post(rest::call_tool));
    }
    if page {
        router = router.route("/", get(page::catalog_page));
    }
    #[cfg(feature = "oauth")]
    if let Some(oauth) = &app.options.oauth {
        for path in oauth.metadata_routes() {
            router = router.route(&path, get(guard::resource_metadata));
        }
    }
    #[cfg(feature = "prometheus")]
    if let Some(metrics) = app.options.metrics.clone() {
        router = router.route(
            METRICS_PATH,
            get(move |_: guard::Admitted| async move {
                (
                    [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
                    metrics.render(),
                )
            }),
        );
    }
    // No layer per route: each handler takes `Admitted` (the door's checks) and reads its
    // body within the limit itself, which spares every request the boxed services of a
    // layer.
    let mut router = router.with_state(Arc::clone(&app));
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
                    .expose_headers([SESSION_HEADER.clone(), header::WWW_AUTHENTICATE]),
            );
        }
    }
    (router, app)
}

/// Serves `server` on `address` until the process ends, or until it is told to stop
/// (SIGTERM, or Ctrl-C): it then drains. `GET /readyz` answers 503 at once, so a load
/// balancer stops sending requests; after [`HttpOptions::drain_delay`] the server stops
/// accepting connections and lets the requests in flight finish, for
/// [`HttpOptions::shutdown_grace`] at most; with a store shared by replicas, the tasks it
/// still runs then are handed back to them (see [`McpServer::hand_back_tasks`]).
pub async fn serve(
    server: McpServer,
    address: SocketAddr,
    options: HttpOptions,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(address).await?;
    let bound = listener.local_addr()?;
    tracing::info!(address = %bound, "serving MCP over HTTP at http://{bound}{}", options.endpoint);
    if options.catalog_page {
        tracing::info!("the catalog page is at http://{bound}/");
    }
    let (drain_delay, grace) = (options.drain_delay, options.shutdown_grace);
    let (limits, proxies) = (options.connections, options.trusted_proxies.clone());
    let (router, app) = router_and_app(server.clone(), options);
    let stopping = Arc::new(tokio::sync::Notify::new());
    let told = Arc::clone(&stopping);
    let drained = listener::serve_connections(listener, router, limits, proxies, async move {
        shutdown_signal().await;
        app.draining.start();
        tracing::info!(?drain_delay, "stopping: draining");
        // What was traced so far leaves now, in case the drain is cut short; a slow
        // collector does not make the drain longer.
        #[cfg(feature = "otel")]
        drop(tokio::task::spawn_blocking(crate::otel::flush));
        tokio::time::sleep(drain_delay).await;
        told.notify_one();
    });
    let grace_passed = async {
        stopping.notified().await;
        tokio::time::sleep(grace).await;
    };
    tokio::select! {
        () = drained => {}
        () = grace_passed => tracing::warn!(
            ?grace,
            "requests still in flight after the grace period; stopping anyway"
        ),
    }
    server.hand_back_tasks().await;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on SIGTERM (what orchestrators send) or Ctrl-C.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate = match tokio::signal::unix::signal(
            tokio::signal::unix::SignalKind::terminate(),
        ) {
            Ok(terminate) => terminate,
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM; only Ctrl-C stops the server");
                let _ = interrupt.await;
                return;
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}
