//! Streamable HTTP on the MCP endpoint: POST carries one JSON-RPC message, answered with
//! JSON or an SSE stream as `Accept` allows (a notification gets 202); in the handshake era
//! a session per `Mcp-Session-Id`, a GET stream for what belongs to no request, DELETE to
//! end it; at 2026-07-28 no session, and the standard headers must agree with the body.

use super::guard::{body_of, Admitted};
use super::reply::{accept_includes, answer, header_str, plain, rpc_error};
use super::sessions::{NotOpened, Unreachable};
use super::{param_headers, App};
use super::{METHOD_HEADER, NAME_HEADER, SESSION_HEADER, VERSION_HEADER};
use crate::call::caller::Caller;
use crate::mcp::connection::Arrived;
use crate::mcp::connection::{outbox, Connection, OutboxReader, ServerMessage, ServerMessageKind};
use crate::mcp::era::{Decision, Era};
use crate::mcp::jsonrpc::{code, RequestId};
use crate::mcp::params::{CancelledParams, MethodParams};
use crate::mcp::Read;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream};
use std::convert::Infallible;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Waker};

/// A request that needs the store, which did not answer: 503, to be retried.
fn store_unreachable(id: Option<&RequestId>) -> Response {
    let mut response = rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        code::INTERNAL_ERROR,
        "Service unavailable: the store that keeps sessions did not answer; retry shortly",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// The answer to an `initialize` when as many sessions as allowed are open and none is
/// idle: 503, to be tried again shortly.
fn sessions_full(id: Option<&RequestId>, most: usize) -> Response {
    let mut response = rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        id,
        code::SERVER_BUSY,
        &format!(
            "Server busy: {most} sessions are open (the limit) and none is idle; retry shortly"
        ),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// What a message of a session shared by replicas leaves to another replica: the client's
/// answer to a question another replica asked, or the cancellation of a request another
/// runs. `true` when it was handed over (the message is done here).
async fn hand_over(
    app: &App,
    session: &str,
    read: &Read<'_>,
    connection: &Connection,
) -> Result<bool, Unreachable> {
    match &read.arrived {
        Arrived::Response {
            id: Some(id),
            outcome,
        } => {
            app.sessions
                .hand_over(session, &id.to_value(), outcome)
                .await
        }
        Arrived::Notification { method, params } if method == "notifications/cancelled" => {
            let Ok(CancelledParams { request_id }) = crate::mcp::params::read(*params) else {
                return Ok(false);
            };
            let id = RequestId::from_value(&request_id);
            if connection.is_in_flight(&id) || connection.shared_session().is_none() {
                return Ok(false);
            }
            app.sessions.cancel_elsewhere(session, &request_id).await?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Which connection a POST goes to, in which era.
struct Routed {
    connection: Arc<Connection>,
    era: Era,
    /// The session an `initialize` opens, once it succeeds.
    opens: Option<String>,
    /// The session the request belongs to, when it belongs to one.
    session: Option<String>,
}

pub(super) async fn mcp_post(
    State(app): State<Arc<App>>,
    Admitted(caller): Admitted,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    let body = match body_of(&app, body).await {
        Ok(body) => body,
        Err(refusal) => return refusal,
    };
    // The body is read once, and its era decided once, here; the connection is handed both.
    // A version header that is not ASCII is no version we serve, not an absent header.
    let version = headers
        .get(&VERSION_HEADER)
        .map(|value| match value.to_str() {
            Ok(text) => std::borrow::Cow::Borrowed(text.trim_matches([' ', '\t'])),
            Err(_) => String::from_utf8_lossy(value.as_bytes()),
        });
    #[cfg_attr(not(feature = "otel"), allow(unused_mut))]
    let mut read = Read::new(&body, version.as_deref());
    #[cfg(feature = "otel")]
    if crate::otel::active() {
        read.header_trace = crate::otel::TraceCarrier::from_headers(headers);
    }
    let routed = match route(&app, headers, &read, &caller).await {
        Ok(routed) => routed,
        Err(refusal) => return *refusal,
    };
    let caller = match routed.session.as_deref() {
        Some(session) if caller.session().is_none() => caller.with_session(session),
        _ => caller,
    };
    if let Some(session) = routed.session.as_deref() {
        match hand_over(&app, session, &read, &routed.connection).await {
            Ok(true) => return StatusCode::ACCEPTED.into_response(),
            Ok(false) => {}
            Err(Unreachable) => return store_unreachable(read.id()),
        }
    }
    let request_id = read.id().cloned();
    let (sink, outgoing) = outbox();
    let handled = routed.connection.handle_read(read, &caller, &sink);
    // From here only the request's work holds a sender, so however the work ends (answered,
    // cancelled, its session closed) every wait below ends with it.
    drop(sink);
    if !handled.is_request() {
        return StatusCode::ACCEPTED.into_response();
    }
    let work = handled.into_work().map(IntoFuture::into_future);
    let work = match routed.era {
        // Inside this request's own future until its answer comes (a call that streams
        // notifications moves to a task of its own then): a 2026-07-28 client that goes
        // away cancels its request anyway, and a task per call costs more than this.
        Era::PerRequest => Pending { work },
        // On its own task: a client that goes away mid-call does not cancel it.
        Era::Handshake => {
            if let Some(work) = work {
                tokio::spawn(work);
            }
            Pending { work: None }
        }
    };
    respond(&app, routed, &caller, request_id, headers, outgoing, work).await
}

/// A request's work that runs inside the handler's future, until it is answered.
struct Pending {
    work: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl Pending {
    /// The next message `until` gives, running the work meanwhile.
    async fn run_until(
        &mut self,
        until: impl Future<Output = Option<ServerMessage>>,
    ) -> Option<ServerMessage> {
        let mut until = std::pin::pin!(until);
        std::future::poll_fn(|cx| {
            if let Some(work) = &mut self.work {
                if work.as_mut().poll(cx).is_ready() {
                    self.work = None;
                }
            }
            until.as_mut().poll(cx)
        })
        .await
    }

    /// Runs the work once, so that a call that needs no waiting is answered by now.
    fn poll_once(&mut self) {
        if let Some(work) = &mut self.work {
            let mut cx = Context::from_waker(Waker::noop());
            if work.as_mut().poll(&mut cx).is_ready() {
                self.work = None;
            }
        }
    }

    /// Whatever is left of the work goes on on a task of its own (it streams, or it has
    /// yet to wind down after its answer).
    fn detach(mut self) {
        if let Some(work) = self.work.take() {
            tokio::spawn(work);
        }
    }
}

/// The connection a POST goes to: a new one for a request of no session (2026-07-28, or
/// one the protocol layer refuses), a new session's for `initialize`, else the session the
/// request names; a refusal when the standard headers disagree with the body, or the
/// session is missing or unknown.
async fn route(
    app: &App,
    headers: &HeaderMap,
    read: &Read<'_>,
    caller: &Caller,
) -> Result<Routed, Box<Response>> {
    let fresh = |era| Routed {
        connection: Arc::new(app.server.connection()),
        era,
        opens: None,
        session: None,
    };
    let request_id = read.id();
    match &read.decision {
        // A method 2026-07-28 does not have is not found, whatever its headers say.
        Decision::PerRequest(_)
            if read
                .asked()
                .is_some_and(|asked| !asked.method().exists_in(Era::PerRequest)) =>
        {
            Ok(fresh(Era::PerRequest))
        }
        Decision::PerRequest(_) | Decision::UnsupportedVersion(_) => {
            let checked = check_standard_headers(headers, &read.decision, read).and_then(|()| {
                match read.asked() {
                    Some(MethodParams::CallTool(call)) => {
                        let registry = app.server.registry();
                        param_headers::check(headers, registry, &call.name, &call.arguments)
                    }
                    _ => Ok(()),
                }
            });
            match checked {
                Ok(()) => Ok(fresh(Era::PerRequest)),
                Err(problem) => Err(Box::new(rpc_error(
                    StatusCode::BAD_REQUEST,
                    request_id,
                    code::HEADER_MISMATCH,
                    &format!("Header mismatch: {problem}"),
                ))),
            }
        }
        // The protocol layer answers with the precise error.
        Decision::MissingMeta => Ok(fresh(Era::PerRequest)),
        Decision::UnsupportedClaim(_) => Ok(fresh(Era::Handshake)),
        Decision::Handshake => session_of(app, headers, read, caller, fresh).await,
    }
}

/// The handshake-era session a POST belongs to (a new one for `initialize`).
async fn session_of(
    app: &App,
    headers: &HeaderMap,
    read: &Read<'_>,
    caller: &Caller,
    fresh: impl Fn(Era) -> Routed,
) -> Result<Routed, Box<Response>> {
    if read.method() == Some("initialize") {
        let id = crate::call::ids::unguessable_id();
        return Ok(Routed {
            opens: Some(id.clone()),
            session: Some(id),
            ..fresh(Era::Handshake)
        });
    }
    if let Some(session) = header_str(headers, &SESSION_HEADER) {
        return match app.sessions.get(session, caller).await {
            Err(Unreachable) => Err(Box::new(store_unreachable(read.id()))),
            Ok(Some(connection)) => Ok(Routed {
                connection,
                era: Era::Handshake,
                opens: None,
                session: Some(session.to_owned()),
            }),
            Ok(None) => Err(Box::new(rpc_error(
                StatusCode::NOT_FOUND,
                read.id(),
                code::INVALID_REQUEST,
                "Session not found: initialize again",
            ))),
        };
    }
    if !read.is_valid() {
        // Not a valid message: the protocol layer gives the precise error.
        return Ok(fresh(Era::PerRequest));
    }
    Err(Box::new(rpc_error(
        StatusCode::BAD_REQUEST,
        read.id(),
        code::INVALID_REQUEST,
        "Bad Request: missing Mcp-Session-Id; send initialize first, or name the protocol \
         version in the request's _meta (2026-07-28)",
    )))
}

/// The answer to a POSTed request: JSON when it is ready at once, or when the client takes
/// JSON and no notification comes first; else a stream.
async fn respond(
    app: &App,
    routed: Routed,
    caller: &Caller,
    request_id: Option<RequestId>,
    headers: &HeaderMap,
    mut outgoing: OutboxReader,
    mut work: Pending,
) -> Response {
    let era = routed.era;
    work.poll_once();
    if let Some(first) = outgoing.try_recv() {
        work.detach();
        if !first.is_response() {
            // A notification came first (a subscription's acknowledgement): stream.
            return sse(routed.connection, request_id, era, Some(first), outgoing);
        }
        return answer_opening(app, routed, caller, request_id.as_ref(), first).await;
    }
    let accept = header_str(headers, header::ACCEPT).unwrap_or("*/*");
    let takes_sse = accept_includes(accept, "text/event-stream");
    let takes_json = accept_includes(accept, "application/json");
    // An `initialize` is answered as JSON with its session, whenever its answer comes.
    if takes_sse && !takes_json && routed.opens.is_none() {
        work.detach();
        return sse(routed.connection, request_id, era, None, outgoing);
    }
    // A 2026-07-28 client that goes away while waiting cancels the request, as it would
    // by closing a stream.
    let mut waiting = CancelOnDrop {
        connection: Arc::clone(&routed.connection),
        id: (era == Era::PerRequest)
            .then(|| request_id.clone())
            .flatten(),
    };
    let first = match takes_sse {
        // Either will do: a plain JSON answer unless a notification (progress, a log line)
        // comes before it, which only a stream can carry. A stream costs more on both
        // sides, so it is opened only when needed.
        true => work.run_until(outgoing.recv()).await,
        // JSON only: notifications cannot be delivered and are dropped.
        false => work.run_until(next_response(&mut outgoing)).await,
    };
    waiting.id = None;
    work.detach();
    match first {
        Some(first) if first.is_response() => {
            answer_opening(app, routed, caller, request_id.as_ref(), first).await
        }
        Some(first) => sse(routed.connection, request_id, era, Some(first), outgoing),
        None => rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            request_id.as_ref(),
            code::INTERNAL_ERROR,
            "The request ended without an answer: it was cancelled, or its session was closed \
             while it ran",
        ),
    }
}

/// The JSON answer `first`, with the session an `initialize` that succeeded opens (whether
/// its answer came at once or once the layers around requests let it through).
async fn answer_opening(
    app: &App,
    routed: Routed,
    caller: &Caller,
    request_id: Option<&RequestId>,
    first: ServerMessage,
) -> Response {
    // Only an `initialize` that succeeded opens a session; with a shared store, it is kept
    // there before the client learns of it.
    let opens = routed
        .opens
        .filter(|_| first.kind == ServerMessageKind::Result);
    let mut response = answer(app, first, routed.era);
    if let Some(id) = opens {
        if let Ok(value) = HeaderValue::from_str(&id) {
            match app.sessions.open(id, routed.connection, caller).await {
                Ok(()) => {}
                Err(NotOpened::Unreachable) => return store_unreachable(request_id),
                Err(NotOpened::Full(most)) => return sessions_full(request_id, most),
            }
            response.headers_mut().insert(&SESSION_HEADER, value);
        }
    }
    response
}

/// The next response among `outgoing`, dropping the notifications before it.
pub(super) async fn next_response(outgoing: &mut OutboxReader) -> Option<ServerMessage> {
    while let Some(message) = outgoing.recv().await {
        if message.is_response() {
            return Some(message);
        }
    }
    None
}

/// Checks the standard headers of a request at a per-request protocol version:
/// `MCP-Protocol-Version` must name the version `_meta` names, `Mcp-Method` the method,
/// and `Mcp-Name` the tool, prompt or resource the body names. Header names are matched
/// case-insensitively (the `http` crate does that); values exactly, once the whitespace
/// around them is trimmed, as HTTP requires.
fn check_standard_headers(
    headers: &HeaderMap,
    decision: &Decision,
    read: &Read<'_>,
) -> Result<(), String> {
    // A version that is not even a string is the protocol layer's to refuse (-32022).
    let Some(version) = decision.named_version() else {
        return Ok(());
    };
    let expect = |name, shown, expected: &str, body_says| {
        expect_header(headers, name, shown, expected, body_says)
    };
    expect(
        &VERSION_HEADER,
        "MCP-Protocol-Version",
        version,
        "_meta names",
    )?;
    let Some(method) = read.method() else {
        return Ok(());
    };
    expect(
        &METHOD_HEADER,
        "Mcp-Method",
        method,
        "the request's method is",
    )?;
    if let Some(named) = read.asked().and_then(MethodParams::named) {
        expect(&NAME_HEADER, "Mcp-Name", named, "the request names")?;
    }
    Ok(())
}

/// Checks that header `name` (shown as `shown`) is present and says `expected`; the error
/// says what came and what the body says (`body_says` introduces the body's value).
fn expect_header(
    headers: &HeaderMap,
    name: &HeaderName,
    shown: &str,
    expected: &str,
    body_says: &str,
) -> Result<(), String> {
    match header_str(headers, name) {
        Some(claimed) if claimed == expected => Ok(()),
        Some(claimed) => Err(format!(
            "{shown} is {claimed:?} but {body_says} {expected:?}"
        )),
        None => Err(format!("{shown} is missing; {body_says} {expected:?}")),
    }
}

/// Cancels a 2026-07-28 request whose stream the client closed before the answer.
struct CancelOnDrop {
    connection: Arc<Connection>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.connection.cancel(&id);
        }
    }
}

fn sse(
    connection: Arc<Connection>,
    id: Option<RequestId>,
    era: Era,
    first: Option<ServerMessage>,
    outgoing: OutboxReader,
) -> Response {
    // In the handshake era a dropped stream is not a cancellation (the client cancels with
    // notifications/cancelled); in 2026-07-28 it is.
    let cancel = CancelOnDrop {
        id: id.filter(|_| era == Era::PerRequest),
        connection,
    };
    let state = (first, outgoing, cancel, false);
    let events = stream::unfold(
        state,
        |(first, mut outgoing, mut cancel, done)| async move {
            if done {
                return None;
            }
            let message = match first {
                Some(message) => message,
                None => outgoing.recv().await?,
            };
            let finished = message.is_response();
            if finished {
                cancel.id = None;
            }
            let event = Event::default().data(String::from_utf8_lossy(&message.bytes));
            Some((
                Ok::<Event, Infallible>(event),
                (None, outgoing, cancel, finished),
            ))
        },
    );
    sse_response(events)
}

fn sse_response(
    events: impl Stream<Item = Result<Event, Infallible>> + Send + 'static,
) -> Response {
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response();
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

pub(super) async fn mcp_get(
    State(app): State<Arc<App>>,
    Admitted(caller): Admitted,
    headers: HeaderMap,
) -> Response {
    // GET only ever opens an event stream; a client that cannot take one gets nothing else.
    let accept = header_str(&headers, header::ACCEPT).unwrap_or("");
    if !accept_includes(accept, "text/event-stream") {
        return plain(
            StatusCode::NOT_ACCEPTABLE,
            "not acceptable: GET opens a stream of server-sent events; send Accept: \
             text/event-stream",
        );
    }
    let Some(session_id) = header_str(&headers, &SESSION_HEADER) else {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: GET needs an Mcp-Session-Id",
        );
    };
    let connection = match app.sessions.get(session_id, &caller).await {
        Ok(Some(connection)) => connection,
        Ok(None) => return plain(StatusCode::NOT_FOUND, "session not found"),
        Err(Unreachable) => return store_unreachable(None),
    };
    let (sink, outgoing) = outbox();
    connection.set_unsolicited(sink);
    let events = stream::unfold(outgoing, |mut outgoing| async move {
        let message = outgoing.recv().await?;
        let event = Event::default().data(String::from_utf8_lossy(&message.bytes));
        Some((Ok::<Event, Infallible>(event), outgoing))
    });
    sse_response(events)
}

pub(super) async fn mcp_delete(
    State(app): State<Arc<App>>,
    Admitted(caller): Admitted,
    headers: HeaderMap,
) -> Response {
    let Some(session_id) = header_str(&headers, &SESSION_HEADER) else {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: DELETE needs an Mcp-Session-Id",
        );
    };
    match app.sessions.remove(session_id, &caller).await {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => plain(StatusCode::NOT_FOUND, "session not found"),
        Err(Unreachable) => store_unreachable(None),
    }
}
