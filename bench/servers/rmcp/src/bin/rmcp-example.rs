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

use bench_rmcp::{
    AddArgs, AddOutput, BoxError, EchoArgs, GetWeatherArgs, SearchArgs, parse_args, search_results,
    serve_http, weather,
};
use rmcp::{
    ErrorData as McpError, ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig},
    tool, tool_handler, tool_router,
    transport::stdio,
};

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
#[cfg_attr(not(feature = "field_router"), tool_handler)]
// Variant: read the router stored in the struct.
#[cfg_attr(feature = "field_router", tool_handler(router = self.tool_router))]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("rmcp_example", env!("CARGO_PKG_VERSION")),
        )
    }
}

// ---------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------

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
        Some(addr) => {
            serve_http(
                "rmcp_example",
                &addr,
                args.stateless,
                args.json_response,
                Server::new,
            )
            .await?
        }
    }
    Ok(())
}
