//! The door every request passes: the `Host` and `Origin` checks (a web page must not reach
//! a local server through DNS rebinding), then the bearer token or the OAuth access token.
//! A request that passes carries its [`Caller`] for the handlers.

use super::reply::{header_str, plain, with_challenge};
use super::{App, Cors};
use crate::call::caller::Caller;
use axum::body::{Body, Bytes};
use axum::extract::FromRequestParts;
#[cfg(feature = "oauth")]
use axum::extract::State;
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::response::Response;
use std::net::SocketAddr;
use std::sync::Arc;

/// A request that passed the door (the `Host`, `Origin` and token checks), and who it is
/// from. Every handler takes one, so no request reaches a handler without the checks; a
/// request that fails them is answered with the refusal.
pub(super) struct Admitted(pub(super) Caller);

impl FromRequestParts<Arc<App>> for Admitted {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, Response> {
        check_host_and_origin(app, parts).map_err(|refusal| *refusal)?;
        let peer = parts
            .extensions
            .get::<axum::extract::ConnectInfo<SocketAddr>>()
            .map(|info| info.0);
        let peer =
            super::forwarded::client_address(peer, &parts.headers, &app.options.trusted_proxies);
        authenticate(app, parts, Caller::http(peer))
            .map(Admitted)
            .map_err(|refusal| *refusal)
    }
}

/// The body of an admitted request, within the server's limit (413 past it) and its time
/// limit (408 past it: a client that sends its body slowly holds the connection no longer).
pub(super) async fn body_of(app: &App, body: Body) -> Result<Bytes, Response> {
    // A declared `Content-Length` over the limit is refused before any byte is waited for:
    // otherwise such a request would hold its connection for the whole body time limit.
    let declared = axum::body::HttpBody::size_hint(&body).lower();
    if declared > app.options.body_limit as u64 {
        return Err(too_large());
    }
    let limit = app.options.connections.body_timeout;
    let read = axum::body::to_bytes(body, app.options.body_limit);
    let Ok(read) = tokio::time::timeout(limit, read).await else {
        return Err(plain(
            StatusCode::REQUEST_TIMEOUT,
            "request timeout: the body did not arrive in time",
        ));
    };
    read.map_err(|error| {
        let too_large = std::error::Error::source(&error)
            .is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
        match too_large {
            true => self::too_large(),
            false => plain(
                StatusCode::BAD_REQUEST,
                "bad request: the body could not be read",
            ),
        }
    })
}

fn too_large() -> Response {
    plain(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload too large: the body is over this server's limit",
    )
}

/// Refuses (403) a `Host` the server does not answer for, and an `Origin` it does not
/// accept requests from.
fn check_host_and_origin(app: &App, parts: &Parts) -> Result<(), Box<Response>> {
    let options = &app.options;
    if options.allowed_hosts.is_empty() {
        return Ok(());
    }
    let headers = &parts.headers;
    let host = header_str(headers, header::HOST).unwrap_or("");
    if !host_allowed(host, &options.allowed_hosts) {
        let message = format!(
            "forbidden: this server does not answer for the Host {host:?} (it answers for {}); \
             its operator can allow it with HttpOptions::allowed_hosts, or serve --allowed-host",
            options.allowed_hosts.join(", ")
        );
        return Err(Box::new((StatusCode::FORBIDDEN, message).into_response()));
    }
    if options.cors == Cors::Any {
        return Ok(());
    }
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().unwrap_or("");
    let listed = match &options.cors {
        Cors::Origins(list) => list.iter().any(|o| o == origin),
        _ => false,
    };
    let same_host =
        origin_host(origin).is_some_and(|host| host_allowed(host, &options.allowed_hosts));
    if listed || same_host {
        Ok(())
    } else {
        Err(Box::new(plain(
            StatusCode::FORBIDDEN,
            "forbidden: requests from that Origin are not accepted",
        )))
    }
}

/// Who the request is from, once its credentials check out: the OAuth access token when the
/// server is a resource server (its metadata is open to all), else the static bearer token
/// when there is one; the refusal (401) otherwise.
fn authenticate(app: &App, parts: &Parts, caller: Caller) -> Result<Caller, Box<Response>> {
    let options = &app.options;
    let authorization = header_str(&parts.headers, header::AUTHORIZATION);
    #[cfg(feature = "oauth")]
    if let Some(oauth) = &options.oauth {
        if parts.uri.path().starts_with(super::oauth::METADATA_PATH) {
            return Ok(caller);
        }
        return oauth
            .authenticate(authorization, caller)
            .map_err(|problem| {
                if let Some(problem) = &problem {
                    tracing::debug!(%problem, "refused an access token");
                }
                let text = match &problem {
                    Some(problem) => format!("unauthorized: {problem}"),
                    None => "unauthorized: this server requires an OAuth access token \
                         (Authorization: Bearer <token>); its metadata says where to get one"
                        .to_owned(),
                };
                let challenge = oauth.unauthorized_challenge(problem.as_ref(), || tool_scopes(app));
                let response = (StatusCode::UNAUTHORIZED, text).into_response();
                Box::new(with_challenge(response, &challenge))
            });
    }
    if let Some(token) = &options.bearer_token {
        let given = authorization.and_then(bearer).unwrap_or("");
        if !constant_time_eq(given.as_bytes(), token.as_bytes()) {
            let response = plain(
                StatusCode::UNAUTHORIZED,
                "unauthorized: a valid bearer token is required",
            );
            return Err(Box::new(with_challenge(response, "Bearer")));
        }
    }
    Ok(caller)
}

/// The token of an `Authorization: Bearer <token>` header value; `None` for another scheme
/// (the scheme's name is matched in any case, as HTTP says).
pub(super) fn bearer(authorization: &str) -> Option<&str> {
    let (scheme, token) = authorization.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Every scope some tool requires, in order.
#[cfg(feature = "oauth")]
pub(super) fn tool_scopes(app: &App) -> std::collections::BTreeSet<String> {
    app.server
        .registry()
        .tools()
        .iter()
        .flat_map(|tool| tool.scopes().iter().cloned())
        .collect()
}

/// The protected-resource metadata (RFC 9728), open to every client: it says where to get
/// the token every other request needs.
#[cfg(feature = "oauth")]
pub(super) async fn resource_metadata(State(app): State<Arc<App>>, _: Admitted) -> Response {
    // Routed only when the server is a resource server.
    let Some(oauth) = &app.options.oauth else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let name = app.server.info().name();
    axum::Json(oauth.metadata(|| tool_scopes(&app), name)).into_response()
}

/// `Host` is `name` or `name:port`, with IPv6 addresses in brackets.
pub(super) fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let name = if host.starts_with('[') {
        host.split_inclusive(']').next().unwrap_or(host)
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    allowed.iter().any(|a| a.eq_ignore_ascii_case(name))
}

fn origin_host(origin: &str) -> Option<&str> {
    let rest = origin.split_once("://")?.1;
    Some(rest.split('/').next().unwrap_or(rest))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
