//! How an answer becomes an HTTP response: its status (from the protocol's error code and
//! era, or from the reason it was refused), the headers a refusal carries (`Retry-After`,
//! the `WWW-Authenticate` challenge), and the small helpers every handler shares.

use super::App;
use crate::mcp::connection::{Refusal, ServerMessage, ServerMessageKind};
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::{self, code, RequestId};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// `message` (a whole answer) as a JSON response, with the status its refusal or its kind
/// calls for in `era`.
pub(super) fn answer(app: &App, message: ServerMessage, era: Era) -> Response {
    let status = match message.refusal() {
        Some(refusal) => refusal_status(refusal),
        None => status_for(message.kind, era),
    };
    let refusal = message.refusal().cloned();
    let response = json_response(status, message.bytes);
    match refusal {
        Some(refusal) => with_refusal_headers(app, response, &refusal),
        None => response,
    }
}

/// The status of a refusal.
fn refusal_status(refusal: &Refusal) -> StatusCode {
    match refusal {
        Refusal::InsufficientScope { .. } => StatusCode::FORBIDDEN,
        Refusal::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        Refusal::NotFound => StatusCode::NOT_FOUND,
        Refusal::Invalid => StatusCode::BAD_REQUEST,
        Refusal::TimedOut => StatusCode::GATEWAY_TIMEOUT,
        Refusal::Forbidden => StatusCode::FORBIDDEN,
        Refusal::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// `response` with what its refusal tells the client: when to retry, or which scopes to
/// ask the user for.
fn with_refusal_headers(app: &App, mut response: Response, refusal: &Refusal) -> Response {
    match refusal {
        Refusal::RateLimited {
            retry_after: Some(wait),
        }
        | Refusal::Unavailable { retry_after: wait } => {
            let wait = retry_after_header(*wait);
            response.headers_mut().insert(header::RETRY_AFTER, wait);
            response
        }
        #[cfg(feature = "oauth")]
        Refusal::InsufficientScope {
            scopes,
            description,
        } => match &app.options.oauth {
            Some(oauth) => {
                let challenge = oauth.insufficient_scope_challenge(scopes, description);
                with_challenge(response, &challenge)
            }
            None => response,
        },
        _ => {
            let _ = app;
            response
        }
    }
}

/// The HTTP status of a JSON-RPC answer, from its kind: protocol errors are 4xx in the
/// 2026-07-28 era and for malformed messages; everything else is 200.
pub(super) fn status_for(kind: ServerMessageKind, era: Era) -> StatusCode {
    let ServerMessageKind::Error(code) = kind else {
        return StatusCode::OK;
    };
    let per_request = era == Era::PerRequest;
    match code {
        code::PARSE_ERROR | code::INVALID_REQUEST => StatusCode::BAD_REQUEST,
        code::METHOD_NOT_FOUND if per_request => StatusCode::NOT_FOUND,
        code::INVALID_PARAMS
        | code::HEADER_MISMATCH
        | code::MISSING_CAPABILITY
        | code::UNSUPPORTED_PROTOCOL_VERSION
            if per_request =>
        {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

/// `Retry-After` for a wait, in whole seconds, rounded up (a client that waits that long
/// passes) and at least one.
pub(super) fn retry_after_header(wait: Duration) -> HeaderValue {
    HeaderValue::from((wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1))
}

/// `response` with a `WWW-Authenticate` challenge.
pub(super) fn with_challenge(mut response: Response, challenge: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

pub(super) fn plain(status: StatusCode, text: &'static str) -> Response {
    (status, text).into_response()
}

pub(super) fn json_response(status: StatusCode, bytes: Vec<u8>) -> Response {
    // Built by hand: the tuple form copies the content type into a new header value.
    let mut response = Response::new(axum::body::Body::from(bytes));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

pub(super) fn rpc_error(
    status: StatusCode,
    id: Option<&RequestId>,
    code: i64,
    message: &str,
) -> Response {
    json_response(status, jsonrpc::error_response(id, code, message, None))
}

/// Whether an `Accept` header lists `media_type` (or `*/*`), ignoring parameters.
pub(super) fn accept_includes(accept: &str, media_type: &str) -> bool {
    accept.split(',').any(|item| {
        let item = item.split(';').next().unwrap_or("").trim();
        item.eq_ignore_ascii_case(media_type) || item == "*/*"
    })
}

/// A header's value, without the whitespace around it (which HTTP says is not part of it).
pub(super) fn header_str(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim_matches([' ', '\t']))
}
