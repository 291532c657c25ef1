//! What the spans of requests share: the name the conventions give them
//! (`{mcp.method.name} {target}`), and their place in the caller's trace.

use super::TraceCarrier;
use opentelemetry::trace::TraceContextExt;
use std::fmt;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// A span's name: the method, and the tool or prompt it names when it names one (a URI is
/// left out: names are meant to have few distinct values).
pub(crate) struct SpanName<'a> {
    pub(crate) method: &'a str,
    pub(crate) target: Option<&'a str>,
}

impl fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.target {
            Some(target) => write!(f, "{} {target}", self.method),
            None => f.write_str(self.method),
        }
    }
}

/// Makes `span` a child of the trace context a request carried in `_meta`, or else of the
/// one in its HTTP headers; when both name a parent and they differ, the header's becomes a
/// link (the transport's hop, kept but not the parent). Call it before the span is first
/// entered.
pub(crate) fn adopt(span: &Span, meta: Option<&TraceCarrier>, headers: Option<&TraceCarrier>) {
    if span.is_disabled() {
        return;
    }
    let from_meta = meta.and_then(TraceCarrier::parent);
    let from_headers = headers.and_then(TraceCarrier::parent);
    match (from_meta, from_headers) {
        (Some(parent), from_headers) => {
            let parent_span = parent.span().span_context().clone();
            // A span not yet entered always takes its parent.
            let _ = span.set_parent(parent);
            if let Some(other) = from_headers {
                let other = other.span().span_context().clone();
                if other != parent_span {
                    span.add_link(other);
                }
            }
        }
        (None, Some(parent)) => {
            let _ = span.set_parent(parent);
        }
        (None, None) => {}
    }
}

/// Names `span` anew once what it does is known (a REST call's tool, read from its body).
#[cfg(feature = "http")]
pub(crate) fn rename(span: &Span, name: String) {
    if span.is_disabled() {
        return;
    }
    span.context().span().update_name(name);
}

/// Links `span` to the span a `traceparent` names (a malformed one is ignored).
pub(crate) fn link(span: &Span, traceparent: &str) {
    if span.is_disabled() {
        return;
    }
    let carrier = TraceCarrier::of_traceparent(traceparent);
    if let Some(linked) = carrier.parent() {
        span.add_link(linked.span().span_context().clone());
    }
}
