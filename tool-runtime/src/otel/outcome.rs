//! How a request ended, recorded on its span: the error type and status the MCP semantic
//! conventions ask for. Only codes and fixed phrases are recorded, never an error's message,
//! which may quote the arguments a client sent.

use tracing::Span;

/// Records on the current span (the request's, while it is handled) that it was answered
/// with the JSON-RPC error `code`.
pub(crate) fn error_response(code: i64) {
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    let code_text = code.to_string();
    span.record("error.type", code_text.as_str());
    span.record("rpc.response.status_code", code_text.as_str());
    span.record("otel.status_code", "error");
    span.record("otel.status_description", phrase(code));
}

/// Records on the current span that the call's answer is a tool error (`isError`).
pub(crate) fn tool_error() {
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    span.record("error.type", "tool_error");
    span.record("otel.status_code", "error");
    span.record("otel.status_description", "the tool reported an error");
}

/// What a JSON-RPC error code means, in a fixed phrase.
fn phrase(code: i64) -> &'static str {
    match code {
        -32700 => "parse error",
        -32600 => "invalid request",
        -32601 => "method not found",
        -32602 => "invalid params",
        -32603 => "internal error",
        -32042 => "URL elicitation required",
        -32002 => "resource not found",
        -32000 => "server busy",
        -32020 => "header mismatch",
        -32021 => "missing capability",
        -32022 => "unsupported protocol version",
        _ => "error response",
    }
}
