//! rmcp_tuned: the same four tools as rmcp_example, set up the way a careful
//! rmcp 3.9.0 user would:
//!
//! * ONE `ToolRouter` for the whole process, built lazily in a `static LazyLock`
//!   and wired in with `#[tool_handler(router = ROUTER)]`. (A bare
//!   `#[tool_handler]` expands to `Self::tool_router()`, which rebuilds the
//!   router (HashMap + Tool clones) on EVERY tools/call, tools/list and
//!   get_tool lookup.)
//! * The handler is a zero-sized `Copy` struct, so the per-connection /
//!   per-HTTP-session / per-stateless-request factory `|| Ok(Tuned)` costs nothing.
//! * Sync `#[tool]` fns (no `async`): the macro then does not box an extra
//!   future per call (one `Box::pin(ready(..))` in rmcp's adapter instead of two boxes).
//! * stdio over `rmcp::transport::stdio_pipes()` (added in rmcp 3.6.0): when
//!   stdin/stdout are FIFOs on Linux they are reopened O_NONBLOCK through
//!   /proc/self/fd and driven by tokio's reactor instead of the blocking pool;
//!   elsewhere it falls back to `stdio()`.
//! * current_thread runtime for stdio (one connection, no cross-thread
//!   wakeups); multi_thread runtime for HTTP (many connections).
//!
//! Usage:
//!   rmcp_tuned                         # MCP over stdio
//!   rmcp_tuned --http 127.0.0.1:8000 [--stateless] [--json-response] [--worker-threads N]
//!                                      # Streamable HTTP at http://ADDR/mcp

use std::sync::{Arc, LazyLock};

use rmcp::{
    ErrorData as McpError, ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig},
    schemars, tool, tool_handler, tool_router,
    transport::{
        stdio_pipes,
        streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
            session::{local::LocalSessionManager, never::NeverSessionManager},
        },
    },
};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------
// Tool arguments / outputs (identical in rmcp_example and rmcp_tuned)
// ---------------------------------------------------------------------------

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    pub a: i64,
    pub b: i64,
}

/// Declared as the `outputSchema` of `add` (structuredContent = {"result": <sum>}).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AddOutput {
    pub result: i64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    Metric,
    Imperial,
}

impl Default for Units {
    fn default() -> Self {
        Units::Metric
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct GetWeatherArgs {
    pub city: String,
    #[serde(default)]
    pub units: Units,
    #[serde(default)]
    pub include_forecast: bool,
}

#[derive(Debug, Serialize)]
struct Weather<'a> {
    city: &'a str,
    temperature: f64,
    units: Units,
    #[serde(skip_serializing_if = "Option::is_none")]
    forecast: Option<[f64; 5]>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    pub query: String,
    pub limit: Option<u32>,
    pub tags: Vec<String>,
}

const DEFAULT_SEARCH_LIMIT: u32 = 3;
/// Hard cap so a huge `limit` cannot make the server allocate without bound.
const MAX_SEARCH_RESULTS: u32 = 1000;

fn weather(city: &str, units: Units, include_forecast: bool) -> Weather<'_> {
    let (temperature, forecast) = match units {
        Units::Metric => (19.5, [19.5, 20.0, 18.5, 21.0, 17.5]),
        Units::Imperial => (67.1, [67.1, 68.0, 65.3, 69.8, 63.5]),
    };
    Weather {
        city,
        temperature,
        units,
        forecast: include_forecast.then_some(forecast),
    }
}

fn search_results(query: &str, limit: Option<u32>, tags: &[String]) -> Vec<String> {
    let limit = limit.unwrap_or(DEFAULT_SEARCH_LIMIT).min(MAX_SEARCH_RESULTS);
    let suffix = tags.join(",");
    (0..limit).map(|i| format!("{query}-{i}{suffix}")).collect()
}

// ---------------------------------------------------------------------------
// Server, tuned
// ---------------------------------------------------------------------------

/// Stateless, zero-sized handler: cloning / constructing it is free.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tuned;

// UNSURE (minor): relies on `ToolRouter<Tuned>: Send + Sync` (true in 3.9.0 without
// the `local` feature: routes are `Arc<dyn Fn(..) + Send + Sync>`, notifier is
// `Option<Arc<dyn Fn() + Send + Sync>>`).
/// The one router for the life of the process. `ToolRouter<Tuned>` is
/// Send + Sync (routes are `Arc<dyn Fn .. + Send + Sync>`), so it can live in a static.
static ROUTER: LazyLock<ToolRouter<Tuned>> = LazyLock::new(|| Tuned::tool_router());

/// Plain `&'static` accessor used as the `#[tool_handler(router = ..)]` expression
/// (avoids any method-name ambiguity between `LazyLock` and `ToolRouter`).
fn tools() -> &'static ToolRouter<Tuned> {
    &ROUTER
}

#[tool_router]
impl Tuned {
    #[tool(
        description = "Add two integers",
        output_schema = rmcp::handler::server::tool::schema_for_output::<AddOutput>()
    )]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> CallToolResult {
        let sum = a.wrapping_add(b);
        let mut result = CallToolResult::success(vec![ContentBlock::text(sum.to_string())]);
        result.structured_content = Some(serde_json::json!({ "result": sum }));
        result
    }

    #[tool(description = "Echo the message back")]
    fn echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> String {
        // `String: IntoContents` -> CallToolResult::success([text]) (same wire output as
        // rmcp_example's explicit CallToolResult).
        message
    }

    #[tool(description = "Get the (fake) weather for a city")]
    fn get_weather(
        &self,
        Parameters(args): Parameters<GetWeatherArgs>,
    ) -> Result<CallToolResult, McpError> {
        let w = weather(&args.city, args.units, args.include_forecast);
        Ok(CallToolResult::success(vec![ContentBlock::json(&w)?]))
    }

    #[tool(description = "Search (fake): returns up to `limit` (default 3) results")]
    fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, McpError> {
        let results = search_results(&args.query, args.limit, &args.tags);
        Ok(CallToolResult::success(vec![ContentBlock::json(&results)?]))
    }
}

// `router` is an arbitrary expression; the macro pastes it verbatim as
// `tools().call(tcc).await`, `tools().list_all()` and `tools().get(name).cloned()`.
#[tool_handler(router = tools())]
impl ServerHandler for Tuned {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rmcp_tuned", env!("CARGO_PKG_VERSION")))
    }
}

// ---------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------

type BoxError = Box<dyn std::error::Error + Send + Sync>;

struct Args {
    http: Option<String>,
    stateless: bool,
    json_response: bool,
    worker_threads: Option<usize>,
}

fn parse_args() -> Result<Args, BoxError> {
    let mut args = Args {
        http: None,
        stateless: false,
        json_response: false,
        worker_threads: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--http" => args.http = Some(it.next().ok_or("--http needs an ADDR")?),
            "--stateless" => args.stateless = true,
            "--json-response" => args.json_response = true,
            "--worker-threads" => {
                args.worker_threads = Some(it.next().ok_or("--worker-threads needs N")?.parse()?)
            }
            other => return Err(format!("unknown argument: {other}").into()),
        }
    }
    Ok(args)
}

fn main() -> Result<(), BoxError> {
    let args = parse_args()?;
    // Build the router before serving anything, so the first request does not pay for it.
    LazyLock::force(&ROUTER);

    match args.http {
        None => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all() // stdio_pipes() needs the IO driver
                .build()?;
            rt.block_on(async {
                // stdio_pipes() must be called inside the runtime (it registers the
                // pipe fds with the reactor on Linux).
                let service = Tuned.serve(stdio_pipes()).await?;
                service.waiting().await?;
                Ok::<(), BoxError>(())
            })
        }
        Some(addr) => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.enable_all();
            if let Some(n) = args.worker_threads {
                builder.worker_threads(n);
            }
            let rt = builder.build()?;
            rt.block_on(serve_http(&addr, args.stateless, args.json_response))
        }
    }
}

async fn serve_http(addr: &str, stateless: bool, json_response: bool) -> Result<(), BoxError> {
    let mut config = StreamableHttpServerConfig::default();
    if stateless {
        // Stateless: no Mcp-Session-Id, every POST is served by a fresh handler
        // from the factory (free here). json_response=true answers a plain
        // request/response tool call with `application/json` instead of SSE.
        config = config
            .with_legacy_session_mode(false)
            .with_json_response(json_response);
    }
    let ct = config.cancellation_token.clone();

    let router = if stateless {
        let service = StreamableHttpService::new(
            || Ok(Tuned),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        axum::Router::new().nest_service("/mcp", service)
    } else {
        let service = StreamableHttpService::new(
            || Ok(Tuned),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        axum::Router::new().nest_service("/mcp", service)
    };

    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("rmcp_tuned: Streamable HTTP on http://{addr}/mcp (stateless={stateless})");
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            ct.cancel();
        })
        .await?;
    Ok(())
}
