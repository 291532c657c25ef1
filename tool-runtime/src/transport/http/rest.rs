//! The REST endpoints beside MCP (`GET /api/tools/discover`, `POST /api/tools/execute`,
//! `POST /api/tools/{name}/call`, `GET /openapi.json`, `GET /mcp/tools/list`,
//! `POST /mcp/tools/call`): framing only. Each request goes to a
//! connection of its own, which answers it in the REST dialect; a call's work runs here, so
//! a client that goes away cancels it.

use super::guard::{body_of, Admitted};
use super::reply::{answer, rpc_error};
use super::streamable::next_response;
use super::traced::TraceHeaders;
use super::App;
use crate::call::caller::Caller;
use crate::mcp::connection::{outbox, Connection, Handled, OutboxReader};
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::code;
use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use std::sync::Arc;
use tracing::Instrument;

/// A connection for one REST request of `caller`.
fn connection(app: &App, caller: Caller) -> Connection {
    app.server.connection().called_by(caller)
}

pub(super) async fn discover(State(app): State<Arc<App>>, Admitted(caller): Admitted) -> Response {
    let listed = connection(&app, caller).rest_discover();
    answer(&app, listed, Era::Handshake)
}

pub(super) async fn execute(
    State(app): State<Arc<App>>,
    Admitted(caller): Admitted,
    trace: TraceHeaders,
    body: Body,
) -> Response {
    let span = trace.span("/api/tools/execute", &caller);
    with_body(&app, caller, body, span, |connection, body, sink| {
        connection.rest_execute(body, sink)
    })
    .await
}

/// `POST /api/tools/{name}/call`: the body is the tool's arguments.
pub(super) async fn call_tool(
    State(app): State<Arc<App>>,
    Admitted(caller): Admitted,
    axum::extract::Path(name): axum::extract::Path<String>,
    trace: TraceHeaders,
    body: Body,
) -> Response {
    let span = trace.span("/api/tools/{name}/call", &caller);
    with_body(&app, caller, body, span, |connection, body, sink| {
        connection.rest_call_tool(&name, body, sink)
    })
    .await
}

/// `GET /openapi.json`: the REST endpoints as OpenAPI 3.1, one operation per tool.
pub(super) async fn openapi(State(app): State<Arc<App>>, Admitted(caller): Admitted) -> Response {
    let document = connection(&app, caller).rest_openapi();
    answer(&app, document, Era::Handshake)
}

pub(super) async fn rpc_list(State(app): State<Arc<App>>, Admitted(caller): Admitted) -> Response {
    let listed = connection(&app, caller).rest_rpc_list();
    answer(&app, listed, Era::Handshake)
}

pub(super) async fn rpc_call(
    State(app): State<Arc<App>>,
    Admitted(caller): Admitted,
    trace: TraceHeaders,
    body: Body,
) -> Response {
    let span = trace.span("/mcp/tools/call", &caller);
    with_body(&app, caller, body, span, |connection, body, sink| {
        connection.rest_rpc_call(body, sink)
    })
    .await
}

/// A REST request with a body: the body read within the limits, handed with a sink to a
/// connection of the caller's, and its work run here to the answer, all inside `span`
/// (the call's, when traces are kept).
async fn with_body(
    app: &App,
    caller: Caller,
    body: Body,
    span: tracing::Span,
    handle: impl FnOnce(&Connection, &[u8], &crate::mcp::connection::Outbox) -> Handled,
) -> Response {
    let body = match body_of(app, body).await {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    let connection = connection(app, caller);
    let (sink, outgoing) = outbox();
    let handled = span.in_scope(|| handle(&connection, &body, &sink));
    drop(sink);
    finish(app, handled, outgoing).instrument(span).await
}

/// Runs a REST request's work here (dropped with the request when its client goes away),
/// then answers with its response.
async fn finish(app: &App, handled: Handled, mut outgoing: OutboxReader) -> Response {
    if let Some(work) = handled.into_work() {
        work.await;
    }
    match next_response(&mut outgoing).await {
        Some(message) => answer(app, message, Era::Handshake),
        // Its connection lives until here, so nothing cancels the work before it answers.
        None => rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            code::INTERNAL_ERROR,
            "The request ended without an answer",
        ),
    }
}
