//! The span of a REST call: `execute_tool {name}`, kind SERVER, with the HTTP route, its
//! parent the W3C trace context of the request's headers. REST has no convention of MCP's:
//! the span is the GenAI conventions' tool execution, seen from the server.

use crate::call::caller::Caller;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;

/// The trace context of a request's headers, read when traces are kept (the `otel`
/// feature); nothing otherwise.
pub(super) struct TraceHeaders {
    #[cfg(feature = "otel")]
    carrier: Option<crate::otel::TraceCarrier>,
}

impl<S: Send + Sync> FromRequestParts<S> for TraceHeaders {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        #[cfg(feature = "otel")]
        return Ok(TraceHeaders {
            carrier: crate::otel::active()
                .then(|| crate::otel::TraceCarrier::from_headers(&parts.headers))
                .flatten(),
        });
        #[cfg(not(feature = "otel"))]
        {
            let _ = parts;
            Ok(TraceHeaders {})
        }
    }
}

impl TraceHeaders {
    /// The span of the REST call at `route` by `caller` (none without the `otel` feature).
    pub(super) fn span(&self, route: &'static str, caller: &Caller) -> tracing::Span {
        #[cfg(feature = "otel")]
        {
            use tracing::field::Empty;
            let span = tracing::info_span!(
                target: "tool_runtime::otel",
                "rest call",
                "otel.name" = "execute_tool",
                "otel.kind" = "server",
                "otel.status_code" = Empty,
                "otel.status_description" = Empty,
                "gen_ai.operation.name" = "execute_tool",
                "gen_ai.tool.name" = Empty,
                "http.request.method" = "POST",
                "http.route" = route,
                "network.transport" = "tcp",
                "network.protocol.name" = "http",
                "client.address" = caller.peer().map(|peer| tracing::field::display(peer.ip())),
                "client.port" = caller.peer().map(|peer| i64::from(peer.port())),
                "error.type" = Empty,
                "rpc.response.status_code" = Empty,
            );
            crate::otel::spans::adopt(&span, None, self.carrier.as_ref());
            span
        }
        #[cfg(not(feature = "otel"))]
        {
            let _ = (route, caller);
            tracing::Span::none()
        }
    }
}
