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
mod export;
pub(crate) mod outcome;
pub(crate) mod spans;

pub(crate) use carrier::{write_meta, TraceCarrier};
pub use export::{OtelError, OtelGuard, OtlpExport};

/// The `tracing` target of every span this crate opens for OpenTelemetry; a log filter
/// turns them off for people (`tool_runtime::otel=off`) without turning off their export.
pub const TARGET: &str = "tool_runtime::otel";
