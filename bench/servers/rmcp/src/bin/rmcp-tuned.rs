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

use std::sync::LazyLock;

use bench_rmcp::{
    AddArgs, AddOutput, BoxError, EchoArgs, GetWeatherArgs, SearchArgs, parse_args, search_results,
    serve_http, weather,
};
use rmcp::{
    ErrorData as McpError, ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig},
    tool, tool_handler, tool_router,
    transport::stdio_pipes,
};

// ---------------------------------------------------------------------------
// Server, tuned
// ---------------------------------------------------------------------------

/// Stateless, zero-sized handler: cloning / constructing it is free.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tuned;

/// The one router for the life of the process. `ToolRouter<Tuned>` is
/// Send + Sync (routes are `Arc<dyn Fn .. + Send + Sync>`), so it can live in a static.
static ROUTER: LazyLock<ToolRouter<Tuned>> = LazyLock::new(Tuned::tool_router);

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
    fn search(&self, Parameters(args): Parameters<SearchArgs>) -> Result<CallToolResult, McpError> {
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
            rt.block_on(serve_http(
                "rmcp_tuned",
                &addr,
                args.stateless,
                args.json_response,
                || Tuned,
            ))
        }
    }
}
