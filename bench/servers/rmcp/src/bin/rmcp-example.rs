//! rmcp_example: four tools written the way rmcp 3.9.0's own examples write a
//! server (see upstream `examples/servers/src/common/counter.rs`,
//! `counter_stdio.rs` and `counter_streamhttp.rs`):
//!
//! * `#[tool_router]` on an inherent impl, `#[tool_handler]` on `impl ServerHandler`;
//! * the struct holds `tool_router: ToolRouter<Self>`, filled by `Self::tool_router()`
//!   in `new()`;
//! * stdio: `Server::new().serve(stdio()).await?.waiting().await?`;
//! * HTTP: `StreamableHttpService::new(|| Ok(Server::new()), ...)` nested at `/mcp`.
//!
//! IMPORTANT (rmcp >= 1.4, including 3.9.0): a bare `#[tool_handler]` expands to
//! `Self::tool_router().call(..)` / `Self::tool_router().list_all()` /
//! `Self::tool_router().get(..)`, i.e. it REBUILDS the router on every
//! `tools/call`, `tools/list` and `get_tool` lookup; the `tool_router` field is
//! never read (upstream's counter.rs has `#![allow(dead_code)]` for this reason).
//! That is what the upstream examples do, so it is what this binary does by
//! default. Build with `--features field_router` to get
//! `#[tool_handler(router = self.tool_router)]` (router built once per
//! connection / HTTP session / stateless request, in `new()`).
//!
//! Usage:
//!   rmcp_example                       # MCP over stdio
//!   rmcp_example --http 127.0.0.1:8000 [--stateless] [--json-response]
//!                                      # Streamable HTTP at http://ADDR/mcp

use std::sync::Arc;

use rmcp::{
    ErrorData as McpError, ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig},
    schemars, tool, tool_handler, tool_router,
    transport::{
        stdio,
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

// Manual impl rather than `#[derive(Default)]` + `#[default]`, so the variant
// carries no extra attribute that schemars might react to. Because `Units` is
// `Serialize` and the field is `#[serde(default)]`, schemars emits
// `"default": "metric"` on the `units` property.
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
// Server, example style
// ---------------------------------------------------------------------------

#[derive(Clone)]
pub struct Server {
    // Never read when built with the default `#[tool_handler]` (see module docs).
    #[allow(dead_code)]
    tool_router: ToolRouter<Server>,
}

#[tool_router]
impl Server {
    pub fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Add two integers",
        output_schema = rmcp::handler::server::tool::schema_for_output::<AddOutput>()
    )]
    async fn add(
        &self,
        Parameters(AddArgs { a, b }): Parameters<AddArgs>,
    ) -> Result<CallToolResult, McpError> {
        let sum = a.wrapping_add(b);
        // `CallToolResult` is #[non_exhaustive]: build with a constructor, then
        // set the pub field. (`Json<AddOutput>` would make the text content
        // `{"result":5}` instead of `5`, hence the manual result.)
        let mut result = CallToolResult::success(vec![ContentBlock::text(sum.to_string())]);
        result.structured_content = Some(serde_json::json!({ "result": sum }));
        Ok(result)
    }

    #[tool(description = "Echo the message back")]
    async fn echo(
        &self,
        Parameters(EchoArgs { message }): Parameters<EchoArgs>,
    ) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(vec![ContentBlock::text(message)]))
    }

    #[tool(description = "Get the (fake) weather for a city")]
    async fn get_weather(
        &self,
        Parameters(args): Parameters<GetWeatherArgs>,
    ) -> Result<CallToolResult, McpError> {
        let w = weather(&args.city, args.units, args.include_forecast);
        // UNSURE (minor): `?` inside the body that #[tool] wraps in
        // `Box::pin(async move { .. })`; the error type is inferred from the
        // boxed future's declared Output (standard BoxFuture pattern).
        Ok(CallToolResult::success(vec![ContentBlock::json(&w)?]))
    }

    #[tool(description = "Search (fake): returns up to `limit` (default 3) results")]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, McpError> {
        let results = search_results(&args.query, args.limit, &args.tags);
        Ok(CallToolResult::success(vec![ContentBlock::json(&results)?]))
    }
}

impl Default for Server {
    fn default() -> Self {
        Self::new()
    }
}

// Default (what upstream examples do): router rebuilt per request.
// UNSURE: two stacked cfg_attr-wrapped attribute macros on one impl; cfg_attr is
// resolved before macro expansion so exactly one `tool_handler` remains, but this
// has not been compiled. If it misbehaves, keep only the plain `#[tool_handler]`.
#[cfg_attr(not(feature = "field_router"), tool_handler)]
// Variant: read the router stored in the struct.
#[cfg_attr(feature = "field_router", tool_handler(router = self.tool_router))]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rmcp_example", env!("CARGO_PKG_VERSION")))
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
}

fn parse_args() -> Result<Args, BoxError> {
    let mut args = Args {
        http: None,
        stateless: false,
        json_response: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--http" => args.http = Some(it.next().ok_or("--http needs an ADDR")?),
            "--stateless" => args.stateless = true,
            "--json-response" => args.json_response = true,
            other => return Err(format!("unknown argument: {other}").into()),
        }
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    // NOTE: upstream examples also install a tracing_subscriber (DEBUG, to
    // stderr). Deliberately omitted here: it would dominate a benchmark.
    let args = parse_args()?;
    match args.http {
        None => {
            let service = Server::new().serve(stdio()).await?;
            service.waiting().await?;
        }
        Some(addr) => serve_http(&addr, args.stateless, args.json_response).await?,
    }
    Ok(())
}

async fn serve_http(addr: &str, stateless: bool, json_response: bool) -> Result<(), BoxError> {
    // StreamableHttpServerConfig is #[non_exhaustive]: use Default + with_* builders.
    // Default: legacy_session_mode = true (stateful, Mcp-Session-Id), SSE
    // responses, sse_keep_alive = 15s, allowed_hosts = localhost/127.0.0.1/::1.
    let mut config = StreamableHttpServerConfig::default();
    if stateless {
        config = config
            .with_legacy_session_mode(false)
            .with_json_response(json_response);
    }
    // The config owns a CancellationToken by default; keep a handle to it so we
    // don't need a direct tokio-util dependency.
    let ct = config.cancellation_token.clone();

    let router = if stateless {
        let service = StreamableHttpService::new(
            || Ok(Server::new()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        axum::Router::new().nest_service("/mcp", service)
    } else {
        let service = StreamableHttpService::new(
            || Ok(Server::new()),
            LocalSessionManager::default().into(),
            config,
        );
        axum::Router::new().nest_service("/mcp", service)
    };

    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("rmcp_example: Streamable HTTP on http://{addr}/mcp (stateless={stateless})");
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            ct.cancel();
        })
        .await?;
    Ok(())
}
