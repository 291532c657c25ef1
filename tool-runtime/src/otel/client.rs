//! The span of one request our MCP client sends: `{mcp.method.name} {target}`, kind
//! CLIENT, as the MCP conventions describe a client's, its context sent in the request's
//! `_meta` so that the server's span joins the same trace, and how the request ended.

use super::spans::SpanName;
use tracing::field::Empty;
use tracing::Span;

/// The span of a request of `method` naming `target` (a tool, a prompt, a resource's URI);
/// its protocol version, its id and how it ended are recorded once known.
pub(crate) fn request_span(method: &str, target: Option<&str>) -> Span {
    let named = matches!(method, "tools/call" | "prompts/get")
        .then_some(target)
        .flatten();
    tracing::info_span!(
        target: "tool_runtime::otel",
        "mcp client request",
        "otel.name" = %SpanName { method, target: named },
        "otel.kind" = "client",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "mcp.method.name" = method,
        "gen_ai.operation.name" = (method == "tools/call").then_some("execute_tool"),
        "gen_ai.tool.name" = (method == "tools/call").then_some(target).flatten(),
        "gen_ai.prompt.name" = (method == "prompts/get").then_some(target).flatten(),
        "mcp.resource.uri" = (method == "resources/read").then_some(target).flatten(),
        "mcp.protocol.version" = Empty,
        "jsonrpc.request.id" = Empty,
        "error.type" = Empty,
        "rpc.response.status_code" = Empty,
    )
}
