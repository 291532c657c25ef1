//! Traces over OpenTelemetry: the span every MCP request gets, named and attributed as
//! OpenTelemetry's MCP semantic conventions say, its parent taken from the trace context
//! the client sent, and the export of those spans over OTLP.
//!
//! The spans are `tracing` spans of the target `tool_runtime::otel`, so a tool's own
//! spans nest inside the request that ran it, and whatever exports `tracing` spans to
//! OpenTelemetry (a [`tracing_opentelemetry`] layer of the application's own, or the one
//! [`OtlpExport`] installs) exports them. With no such layer the spans are never enabled
//! and cost a check of a cached flag.
//!
//! The trace context of a request comes from its `_meta` (`traceparent`, `tracestate`,
//! `baggage`, reserved there by MCP for this) or else from the HTTP headers of W3C Trace
//! Context; when both name a parent, `_meta` is the parent and the header's span a link.
//! A malformed value is ignored: the request goes on, in a trace of its own.
//!
//! Errors are recorded by their JSON-RPC code (or `tool_error` for a tool's failure),
//! never by their message, which may quote the arguments.

mod carrier;
#[cfg(feature = "client")]
pub(crate) mod client;
mod durations;
mod export;
pub(crate) mod outcome;
pub(crate) mod spans;

#[cfg(feature = "client")]
pub(crate) use carrier::write_meta;
pub(crate) use carrier::{current_traceparent, TraceCarrier};
pub use export::{flush, OtelError, OtelGuard, OtlpExport, OtlpProtocol};

/// The most bytes of a call's arguments recorded on its span; 0 (the default) records
/// none. Arguments can hold what must not leave the server (names, tokens, documents).
static ARGUMENT_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Records the arguments of each tool call on its span (`gen_ai.tool.call.arguments`, as
/// JSON text), cut to at most `max_bytes` (at a character's boundary); 0 stops it. Off
/// unless turned on: arguments may hold personal data or secrets.
///
/// ```
/// tool_runtime::otel::record_arguments(256);
/// ```
pub fn record_arguments(max_bytes: usize) {
    ARGUMENT_BYTES.store(max_bytes, std::sync::atomic::Ordering::Relaxed);
}

/// A call's arguments as its span records them: none unless turned on, else their JSON
/// text cut to the size allowed.
pub(crate) fn recorded_arguments(arguments: &serde_json::Value) -> Option<String> {
    let most = ARGUMENT_BYTES.load(std::sync::atomic::Ordering::Relaxed);
    if most == 0 {
        return None;
    }
    let mut text = arguments.to_string();
    if text.len() > most {
        let mut end = most;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    Some(text)
}

/// Whether any subscriber wants this crate's spans: a cached check of a callsite, so that
/// the work of tracing (a header read, the current span looked up) is skipped when no
/// trace is kept.
pub(crate) fn active() -> bool {
    tracing::enabled!(target: "tool_runtime::otel", tracing::Level::INFO)
}

/// The `tracing` target of every span this crate opens for OpenTelemetry; a log filter
/// turns them off for people (`tool_runtime::otel=off`) without turning off their export.
pub const TARGET: &str = "tool_runtime::otel";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_recorded_only_when_asked_and_cut_at_a_character() {
        let arguments = serde_json::json!({"city": "Zürich"});
        assert_eq!(recorded_arguments(&arguments), None);
        record_arguments(11);
        // 11 bytes end inside `ü` (`{"city":"Z` is 10, `ü` two): the cut moves before it.
        assert_eq!(
            recorded_arguments(&arguments).as_deref(),
            Some("{\"city\":\"Z")
        );
        record_arguments(1000);
        assert_eq!(
            recorded_arguments(&arguments).as_deref(),
            Some("{\"city\":\"Zürich\"}")
        );
        record_arguments(0);
        assert_eq!(recorded_arguments(&arguments), None);
    }
}
