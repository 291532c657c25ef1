//! How a request ended, recorded on its span: the error type and status the MCP semantic
//! conventions ask for. Only codes and fixed phrases are recorded, never an error's message,
//! which may quote the arguments a client sent.

use tracing::Span;

/// Records on the current span (the request's, while it is handled) that it was answered
/// with the JSON-RPC error `code`.
pub(crate) fn error_response(code: i64) {
    answered_with_error(&Span::current(), code);
}

/// Records on the current span that the call's answer is a tool error (`isError`).
pub(crate) fn tool_error() {
    failed(&Span::current(), "tool_error", "the tool reported an error");
}

/// Records on `span` (a server's or a client's) that its request was answered with the
/// JSON-RPC error `code`.
pub(crate) fn answered_with_error(span: &Span, code: i64) {
    if span.is_disabled() {
        return;
    }
    let code_text = code.to_string();
    span.record("rpc.response.status_code", code_text.as_str());
    failed(span, &code_text, phrase(code));
}

/// Records on `span` that its request failed: `kind` is the error type (`tool_error`, a
/// code, `timeout`, ...), `description` a fixed phrase.
pub(crate) fn failed(span: &Span, kind: &str, description: &str) {
    if span.is_disabled() {
        return;
    }
    span.record("error.type", kind);
    span.record("otel.status_code", "error");
    span.record("otel.status_description", description);
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
