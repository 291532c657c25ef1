//! The span of one MCP request, as OpenTelemetry's MCP semantic conventions describe a
//! server's: `{mcp.method.name} {target}`, kind SERVER, with the method, the tool or prompt
//! or resource it names, the request's id, the protocol version, the session (handshake era
//! only: a 2026-07-28 request belongs to none) and the transport. Its parent is the trace
//! context the request carried. How it ended is recorded where its answer is made.

use super::connection::{Connection, RequestId};
use super::era::{Decision, Era};
use super::params::MethodParams;
use crate::call::caller::Caller;
use crate::otel::spans::{adopt, SpanName};
use crate::otel::TraceCarrier;
use tracing::field::Empty;
use tracing::Span;

impl Connection {
    /// The span of the request `id` (`method`, asking `asked`), sent by `caller`, in the era
    /// `decision` says; `headers` is the trace context of its HTTP request, if any.
    pub(super) fn request_span(
        &self,
        (id, method, asked): (&RequestId, &str, &MethodParams),
        decision: &Decision,
        caller: &Caller,
        headers: Option<&TraceCarrier>,
    ) -> Span {
        let (tool, prompt, uri) = match asked {
            MethodParams::CallTool(params) => (Some(params.name.as_str()), None, None),
            MethodParams::GetPrompt(params) => (None, Some(params.name.as_str()), None),
            MethodParams::ReadResource(params) => (None, None, Some(params.uri.as_str())),
            MethodParams::Subscribe(params) | MethodParams::Unsubscribe(params) => {
                (None, None, Some(params.uri.as_str()))
            }
            _ => (None, None, None),
        };
        let handshake = decision.era() == Era::Handshake;
        let over_http = caller.transport() == "http";
        let span = tracing::info_span!(
            target: "tool_runtime::otel",
            "mcp request",
            "otel.name" = %SpanName { method, target: tool.or(prompt) },
            "otel.kind" = "server",
            "otel.status_code" = Empty,
            "otel.status_description" = Empty,
            "mcp.method.name" = method,
            "gen_ai.operation.name" = tool.map(|_| "execute_tool"),
            "gen_ai.tool.name" = tool,
            "gen_ai.prompt.name" = prompt,
            "mcp.resource.uri" = uri,
            "jsonrpc.request.id" = %IdText(id),
            "mcp.protocol.version" = match decision {
                Decision::PerRequest(version) => Some(*version),
                _ if handshake => self.negotiated_version(),
                _ => None,
            },
            // Hashed: over HTTP the id is what a client presents to use the session.
            "mcp.session.id" = caller.session().filter(|_| handshake).map(session_digest),
            "network.transport" = if over_http { "tcp" } else { "pipe" },
            "network.protocol.name" = over_http.then_some("http"),
            "client.address" = caller.peer().map(|peer| tracing::field::display(peer.ip())),
            "client.port" = caller.peer().map(|peer| i64::from(peer.port())),
            "gen_ai.tool.call.arguments" = Empty,
            "tool_runtime.name_unknown" = Empty,
            "error.type" = Empty,
            "rpc.response.status_code" = Empty,
        );
        if !span.is_disabled() {
            // A name the server does not have is no label for the duration metrics: a
            // client could make as many as it likes.
            let registry = &self.shared.registry;
            let unknown = tool.is_some_and(|name| registry.get(name).is_none())
                || prompt.is_some_and(|name| registry.prompt(name).is_none());
            if unknown {
                span.record("tool_runtime.name_unknown", true);
            }
            if let MethodParams::CallTool(params) = asked {
                if let Some(arguments) = crate::otel::recorded_arguments(&params.arguments) {
                    span.record("gen_ai.tool.call.arguments", arguments);
                }
            }
            let meta = asked.meta().map().and_then(TraceCarrier::from_meta);
            adopt(&span, meta.as_ref(), headers);
        }
        span
    }
}

/// A session's id as spans record it: the first 16 bytes of its SHA-256, in hex (the same
/// session, the same digest; the id itself, a credential over HTTP, never leaves).
fn session_digest(session: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(session.as_bytes());
    digest[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A request id as the conventions record it: a string's text, a number's digits.
struct IdText<'a>(&'a RequestId);

impl std::fmt::Display for IdText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let written: &str = &self.0 .0;
        match serde_json::from_str::<String>(written) {
            Ok(text) => f.write_str(&text),
            Err(_) => f.write_str(written),
        }
    }
}
