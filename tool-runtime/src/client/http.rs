//! Streamable HTTP: each message a POST to the server's endpoint, answered with one JSON
//! message or an event stream of messages. At 2026-07-28 each POST carries the standard
//! headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) and closing a
//! request's stream cancels it. In the handshake era a session id travels on every POST
//! after `initialize`, a GET stream carries what the server sends on its own, and a stream
//! that ends before its answer is resumed with `Last-Event-ID`.

use super::auth::{Challenge, Credentials, Refusal};
use super::connections::{Connections, ResponseBody};
use super::error::ClientError;
use super::event_bound::bounded;
use super::session::{Failure, Session};
use super::wire;
use crate::mcp::era::Era;
use crate::mcp::header_values;
use crate::mcp::header_values::names::{
    METHOD as METHOD_HEADER, NAME as NAME_HEADER, SESSION as SESSION_HEADER,
    VERSION as VERSION_HEADER,
};
use crate::mcp::SUPPORTED_VERSIONS;
use crate::sync::lock;
use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::BodyExt;
use hyper::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use hyper::{Method, Response, StatusCode};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a stream that ended before its answer is resumed, at most.
const RESUMES: u32 = 5;
/// How long to wait before resuming when the server named no time.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// How often one request is authorized anew after a refusal before the refusal is final.
const MOST_REFUSALS: u32 = 2;

/// An HTTP server's endpoint and what travels with every request to it; cheap to clone.
#[derive(Clone)]
pub(crate) struct Http(Arc<Inner>);

struct Inner {
    /// The connections to `url`.
    connections: Connections,
    url: String,
    /// The session id (handshake era), once `initialize` gave one.
    session_id: Mutex<Option<String>>,
    credentials: Option<Arc<dyn Credentials>>,
    /// The largest message read.
    limit: usize,
    /// The GET stream of what the server sends on its own (handshake era), while open.
    listening: Mutex<Option<tokio::task::AbortHandle>>,
}

impl Http {
    pub(crate) fn new(
        url: &str,
        credentials: Option<Arc<dyn Credentials>>,
        limit: usize,
        connect_timeout: Duration,
    ) -> Result<Http, String> {
        // Read as a URL: the standard's rules, host names mapped.
        let parsed =
            reqwest::Url::parse(url).map_err(|error| format!("{url} is no URL: {error}"))?;
        // No redirect is followed (one could carry the credentials elsewhere): a 3xx answer
        // is an error like any other that is no MCP message.
        let connections = Connections::to(&parsed, connect_timeout)?;
        Ok(Http(Arc::new(Inner {
            connections,
            url: url.to_owned(),
            session_id: Mutex::new(None),
            credentials,
            limit,
            listening: Mutex::new(None),
        })))
    }

    /// The headers of every POST in the era `spoken` (the era and version its message was
    /// written in), with those of what the message is about (`about`: its method, the item
    /// it names, the arguments given as headers) and `authorization`.
    fn headers(
        &self,
        spoken: &Spoken,
        about: &About<'_>,
        authorization: &[(String, String)],
    ) -> HeaderMap {
        let method = about.method;
        // Room for every header a request has, so the map is made once, not grown.
        let mut headers = HeaderMap::with_capacity(8);
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let era = spoken.era;
        // Names given as text (the arguments' headers, authorization's) are checked and copied;
        // the protocol's own are static below.
        let named = |name: &str| HeaderName::try_from(name).ok();
        // Before `initialize` is answered there is no version to name.
        if era == Era::PerRequest || lock(&self.0.session_id).is_some() || method.is_none() {
            if let Some(version) = &spoken.version {
                headers.insert(VERSION_HEADER.clone(), version.clone());
            }
        }
        let mut put = |name: HeaderName, value: Option<HeaderValue>| {
            if let Some(value) = value {
                headers.insert(name, value);
            }
        };
        if let Some(id) = lock(&self.0.session_id).clone() {
            put(SESSION_HEADER.clone(), HeaderValue::from_str(&id).ok());
        }
        if era == Era::PerRequest {
            if let Some(method) = method {
                put(
                    METHOD_HEADER.clone(),
                    known_or_copied(method, &FREQUENT_METHODS),
                );
            }
            if let Some(name) = about.name {
                put(
                    NAME_HEADER.clone(),
                    HeaderValue::from_str(&header_values::encode(name)).ok(),
                );
            }
            for (name, value) in about.params {
                if let Some(name) = named(name) {
                    put(name, HeaderValue::from_str(value).ok());
                }
            }
        }
        for (name, value) in authorization {
            if let Some(name) = named(name) {
                put(name, HeaderValue::from_str(value).ok());
            }
        }
        headers
    }

    /// The headers that authorize the next request of `method`, when the client has
    /// credentials.
    async fn authorization(&self, method: &str) -> Result<Vec<(String, String)>, Failure> {
        match &self.0.credentials {
            Some(credentials) => credentials
                .headers(method, &self.0.url)
                .await
                .map_err(Failure::Unauthorized),
            None => Ok(Vec::new()),
        }
    }

    /// POSTs `body` (a message of `method`, or an answer of ours when `None`) and reads
    /// what comes back into `session`; a refusal of its authorization has the credentials
    /// authorize anew, and the POST is sent again.
    async fn post(
        &self,
        session: &Arc<Session>,
        spoken: &Spoken,
        about: About<'_>,
        body: Bytes,
        id: Option<u64>,
    ) -> Result<(), Failure> {
        let method = about.method;
        let mut refusals = 0;
        loop {
            let authorization = self.authorization("POST").await?;
            let headers = self.headers(spoken, &about, &authorization);
            let opens_session = method == Some("initialize");
            let exchanged = self.exchange(session, headers, body.clone(), id, opens_session);
            let refusal = match exchanged.await {
                Err(Failure::Refused(refusal)) => refusal,
                other => return other,
            };
            let Some(credentials) = &self.0.credentials else {
                return Err(Failure::Unauthorized(refused(&refusal)));
            };
            refusals += 1;
            if refusals > MOST_REFUSALS {
                return Err(Failure::Unauthorized(format!(
                    "{}, after authorizing {MOST_REFUSALS} times",
                    refused(&refusal)
                )));
            }
            let sent = authorization
                .into_iter()
                .find(|(name, _)| name == "authorization")
                .map(|(_, value)| value);
            let refusal = refusal.sent_with(sent);
            match credentials.refused(&refusal).await {
                Ok(true) => continue,
                Ok(false) => return Err(Failure::Unauthorized(refused(&refusal))),
                Err(why) => return Err(Failure::Unauthorized(why)),
            }
        }
    }

    /// POSTs request `id` and reads its answer into `session` (a failure is its answer),
    /// in its caller's future: no task of its own to spawn and wake, and dropped with the
    /// caller, which closes the exchange (at 2026-07-28 that cancels the request).
    pub(crate) async fn send_request(
        &self,
        session: &Arc<Session>,
        spoken: Spoken,
        id: u64,
        method: &str,
        bytes: Vec<u8>,
        headers: RequestHeaders<'_>,
    ) {
        let about = About {
            method: Some(method),
            name: headers.name,
            params: &headers.params,
        };
        let outcome = self
            .post(session, &spoken, about, bytes.into(), Some(id))
            .await;
        if let Err(failure) = outcome {
            session.fail(id, failure);
        }
    }

    /// POSTs a message that gets no answer (a notification, our answer to a question),
    /// waiting for the server to take it at most the client's time limit: a server that
    /// never answers the POST cannot hold up whoever sent it (a connect, a tool's call).
    pub(crate) async fn send_one_way(
        &self,
        session: &Arc<Session>,
        method: Option<&str>,
        bytes: Vec<u8>,
    ) -> Result<(), ClientError> {
        // Written a moment ago, in the era spoken now.
        let spoken = Spoken::now(session);
        let about = About {
            method,
            ..About::default()
        };
        let posted = self.post(session, &spoken, about, bytes.into(), None);
        let Ok(outcome) = tokio::time::timeout(session.timeout, posted).await else {
            return Err(ClientError::TimedOut {
                method: method.unwrap_or("our answer to its request").to_owned(),
                after: session.timeout,
            });
        };
        match outcome {
            Ok(()) => Ok(()),
            Err(Failure::Transport(reason)) => Err(session.down(reason)),
            Err(Failure::Protocol(reason)) => Err(ClientError::Protocol { reason }),
            Err(Failure::Unauthorized(reason)) => Err(ClientError::Unauthorized { reason }),
            Err(Failure::Refused(refusal)) => Err(ClientError::Unauthorized {
                reason: refused(&refusal),
            }),
            Err(Failure::Server(error)) => Err(ClientError::Server {
                method: method.unwrap_or("a response").to_owned(),
                code: error.code,
                message: error.message,
                data: error.data,
            }),
            // Only a request's timer says this, never a POST.
            Err(Failure::TimedOut) => Err(ClientError::Protocol {
                reason: "no answer came in time".to_owned(),
            }),
        }
    }

    /// Opens the GET stream of what the server sends on its own (handshake era, once a
    /// session exists): kept open, and resumed, for as long as the session lasts. A server
    /// that offers none (405) is fine.
    pub(crate) fn listen(&self, session: &Arc<Session>) -> tokio::sync::oneshot::Receiver<()> {
        let (session_weak, http) = (Arc::downgrade(session), self.clone());
        let (opened, answered) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let mut opened = Some(opened);
            let mut last_event: Option<String> = None;
            let mut retry = DEFAULT_RETRY;
            let mut failures = 0u32;
            loop {
                let Some(session) = session_weak.upgrade() else {
                    return;
                };
                if session.is_dead() {
                    return;
                }
                let authorization = http.authorization("GET").await.unwrap_or_default();
                let mut headers =
                    http.headers(&Spoken::now(&session), &About::default(), &authorization);
                headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
                if let Some(id) = last_event
                    .as_deref()
                    .and_then(|id| HeaderValue::from_str(id).ok())
                {
                    headers.insert("last-event-id", id);
                }
                let response = http.send(Method::GET, headers).await;
                // Whatever the first answer, the stream is as open as it will be.
                if let Some(opened) = opened.take() {
                    let _ = opened.send(());
                }
                let response = match response {
                    Ok(response) => response,
                    Err(_) => {
                        failures += 1;
                        if failures > RESUMES {
                            return;
                        }
                        drop(session);
                        tokio::time::sleep(retry).await;
                        continue;
                    }
                };
                if !response.status().is_success() {
                    // 405: the server sends nothing on its own.
                    return;
                }
                failures = 0;
                let mut cursor = Cursor {
                    last_event: last_event.clone(),
                    retry,
                };
                let _ = http
                    .read_events(&session, response, &mut cursor, None)
                    .await;
                last_event = cursor.last_event;
                retry = cursor.retry;
                drop(session);
                tokio::time::sleep(retry).await;
            }
        });
        if let Some(previous) = lock(&self.0.listening).replace(task.abort_handle()) {
            previous.abort();
        }
        answered
    }

    /// How many connections to the server are idle now.
    #[cfg(test)]
    pub(crate) fn idle_connections(&self) -> usize {
        self.0.connections.idle_count()
    }

    /// Forgets the session an `initialize` opened that lost to `server/discover` (sent
    /// beside it, answered first): the server speaks 2026-07-28 and is spoken to so, with no
    /// session, and is asked to end the one it opened, in the background (a server that
    /// does not take the request loses nothing by it).
    pub(crate) fn forget_session(&self, session: &Arc<Session>, version: &str) {
        let Some(id) = lock(&self.0.session_id).take() else {
            return;
        };
        let (http, session, version) = (self.clone(), Arc::clone(session), version.to_owned());
        tokio::spawn(async move {
            let authorization = http.authorization("DELETE").await.unwrap_or_default();
            let mut headers =
                http.headers(&Spoken::now(&session), &About::default(), &authorization);
            // The session's own era names it, not the one spoken now.
            for (name, value) in [(&SESSION_HEADER, &id), (&VERSION_HEADER, &version)] {
                if let Ok(value) = HeaderValue::from_str(value) {
                    headers.insert(name, value);
                }
            }
            let deleted = http.send(Method::DELETE, headers);
            let _ = tokio::time::timeout(Duration::from_secs(2), deleted).await;
        });
    }

    /// Ends the session: its GET stream closes, and a session with an id is deleted.
    pub(crate) async fn close(&self, session: &Arc<Session>) {
        if let Some(listening) = lock(&self.0.listening).take() {
            listening.abort();
        }
        if lock(&self.0.session_id).is_none() {
            return;
        }
        let authorization = self.authorization("DELETE").await.unwrap_or_default();
        let headers = self.headers(&Spoken::now(session), &About::default(), &authorization);
        let deleted = self.send(Method::DELETE, headers);
        let _ = tokio::time::timeout(Duration::from_secs(2), deleted).await;
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(listening) = lock(&self.listening).take() {
            listening.abort();
        }
    }
}

/// The era and version a message was written in, which its headers say: taken when it is
/// written, since negotiation may move the session to another era while it is on its way
/// (an `initialize` sent beside a `server/discover` still unanswered).
pub(crate) struct Spoken {
    era: Era,
    /// The version as its header's value; none when it cannot be one.
    version: Option<HeaderValue>,
}

impl Spoken {
    /// The era `era` in `version`.
    pub(crate) fn new(era: Era, version: &str) -> Spoken {
        Spoken {
            era,
            version: known_or_copied(version, &SUPPORTED_VERSIONS),
        }
    }

    /// What `session` speaks now.
    pub(crate) fn now(session: &Session) -> Spoken {
        let speaker = crate::sync::read(&session.speaker);
        Spoken::new(speaker.era(), speaker.version())
    }
}

/// The headers of a request besides the protocol's own: the item it names (`Mcp-Name`), and
/// the arguments its tool marks for headers (`Mcp-Param-*`) with any the caller adds.
pub(crate) struct RequestHeaders<'a> {
    pub(crate) name: Option<&'a str>,
    pub(crate) params: Vec<(String, String)>,
}

/// What a POST's message is about, which its headers say at 2026-07-28: its method (none
/// for an answer of ours), the item it names (`Mcp-Name`) and the arguments given as headers
/// (`Mcp-Param-*`, written as they go).
#[derive(Default)]
struct About<'a> {
    method: Option<&'a str>,
    name: Option<&'a str>,
    params: &'a [(String, String)],
}

/// The methods a client sends most: their `Mcp-Method` header is made with no copy.
const FREQUENT_METHODS: [&str; 8] = [
    "tools/call",
    "tools/list",
    "resources/read",
    "resources/list",
    "prompts/get",
    "prompts/list",
    "completion/complete",
    "tasks/get",
];

/// `value` as a header value: one of `known` is static text (made with no allocation, as
/// each request makes its headers anew), anything else is copied; none when it cannot be a
/// header's value.
fn known_or_copied(value: &str, known: &[&'static str]) -> Option<HeaderValue> {
    match known.iter().find(|known| **known == value) {
        Some(known) => Some(HeaderValue::from_static(known)),
        None => HeaderValue::from_str(value).ok(),
    }
}

/// Where a stream of events stands: the id of the last event, and how long to wait before
/// resuming it.
struct Cursor {
    last_event: Option<String>,
    retry: Duration,
}

impl Http {
    /// Sends a request with no body to the server's endpoint.
    async fn send(
        &self,
        method: Method,
        headers: HeaderMap,
    ) -> Result<Response<ResponseBody>, String> {
        self.0.connections.send(method, headers, Bytes::new()).await
    }

    /// POSTs `body` and reads what comes back into `session`; for request `id`, resumes a
    /// stream that ends before its answer. The session the server gives is taken from the
    /// answer to `initialize` alone (`opens_session`), as the protocol has it: taken from
    /// any answer, one the client has forgotten could come back on a late answer.
    async fn exchange(
        &self,
        session: &Arc<Session>,
        headers: HeaderMap,
        body: Bytes,
        id: Option<u64>,
        opens_session: bool,
    ) -> Result<(), Failure> {
        let response = self
            .0
            .connections
            .send(Method::POST, headers, body)
            .await
            .map_err(Failure::Transport)?;
        let status = response.status();
        if let Some(given) = response
            .headers()
            .get(&SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
            .filter(|_| opens_session)
        {
            let mut slot = lock(&self.0.session_id);
            if slot.is_none() {
                *slot = Some(given.to_owned());
            }
        }
        if status == StatusCode::ACCEPTED {
            return Ok(());
        }
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            let challenges = response
                .headers()
                .get_all(hyper::header::WWW_AUTHENTICATE)
                .iter()
                .filter_map(|value| value.to_str().ok())
                .map(str::to_owned)
                .collect::<Vec<_>>();
            let nonce = response
                .headers()
                .get("dpop-nonce")
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            return Err(Failure::Refused(Refusal::new(
                status.as_u16(),
                Challenge::from_headers(challenges.iter().map(String::as_str)),
                &self.0.url,
                nonce,
            )));
        }
        let is_stream = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|kind| kind.starts_with("text/event-stream"));
        if status.is_success() && is_stream {
            let mut cursor = Cursor {
                last_event: None,
                retry: DEFAULT_RETRY,
            };
            if let Some(rest) = self.read_events(session, response, &mut cursor, id).await? {
                finish(session, rest, id);
                return Ok(());
            }
            let Some(id) = id else {
                return Ok(());
            };
            // Boxed: a stream cut short is rare, and its state would otherwise be part of
            // every request's future, moved and copied with it.
            return Box::pin(self.resume(session, id, cursor)).await;
        }
        let body = read_body(response, self.0.limit).await?;
        if status == StatusCode::NOT_FOUND && lock(&self.0.session_id).is_some() {
            session.die("the server ended the session");
            return Err(Failure::Transport(
                "the server ended the session".to_owned(),
            ));
        }
        // A message that expects no answer is delivered once the server took it; what a
        // lenient server writes back anyway means nothing.
        if id.is_none() && status.is_success() {
            return Ok(());
        }
        match wire::read(&body) {
            Ok(message @ wire::Message::Response { .. }) => {
                session.dispatch(message);
                Ok(())
            }
            Ok(message) if status.is_success() => {
                session.dispatch(message);
                Ok(())
            }
            _ if status.is_success() && body.iter().all(u8::is_ascii_whitespace) => Ok(()),
            _ => Err(Failure::Protocol(format!(
                "HTTP {status}: {}",
                String::from_utf8_lossy(&body[..body.len().min(300)])
            ))),
        }
    }

    /// Reads a stream of events into `session`, keeping where it stands in `cursor`, to its
    /// end or, when it is request `related`'s own, to the answer to that request: then what
    /// is left of it is given back, to be finished with.
    async fn read_events(
        &self,
        session: &Arc<Session>,
        response: Response<ResponseBody>,
        cursor: &mut Cursor,
        related: Option<u64>,
    ) -> Result<Option<Events>, Failure> {
        let bytes = bounded(response.into_body().into_data_stream(), self.0.limit);
        let mut events: Events = Box::pin(sse_stream::SseStream::from_bytes_stream(bytes));
        while let Some(event) = events.next().await {
            let mut event = event
                .map_err(|error| Failure::Transport(format!("the event stream broke: {error}")))?;
            if let Some(id) = event.id.take() {
                cursor.last_event = Some(id);
            }
            if let Some(retry) = event.retry {
                cursor.retry = Duration::from_millis(retry);
            }
            match message_in(&event) {
                None => {}
                Some(Ok(message)) => {
                    let answers = related.is_some_and(|id| message.answers(id));
                    session.dispatch_for(message, related);
                    if answers {
                        return Ok(Some(events));
                    }
                }
                Some(Err(why)) => return Err(Failure::Protocol(why)),
            }
        }
        Ok(None)
    }

    /// A stream ended before the answer to `id`: in the handshake era, when its events had
    /// ids, it is resumed with a GET carrying `Last-Event-ID`, after the wait the server
    /// named; else the request has no answer.
    async fn resume(
        &self,
        session: &Arc<Session>,
        id: u64,
        mut cursor: Cursor,
    ) -> Result<(), Failure> {
        for _ in 0..RESUMES {
            if !session.waits_for(id) {
                return Ok(());
            }
            if session.era() != Era::Handshake || cursor.last_event.is_none() {
                break;
            }
            tokio::time::sleep(cursor.retry).await;
            let authorization = self.authorization("GET").await?;
            let mut headers =
                self.headers(&Spoken::now(session), &About::default(), &authorization);
            headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            if let Some(last) = cursor
                .last_event
                .as_deref()
                .and_then(|id| HeaderValue::from_str(id).ok())
            {
                headers.insert("last-event-id", last);
            }
            let response = self
                .send(Method::GET, headers)
                .await
                .map_err(Failure::Transport)?;
            if !response.status().is_success() {
                break;
            }
            // The resumed stream is read until the answer comes on it; what is left of it
            // then is not waited for: it is closed. An answer that comes on another stream
            // ends the wait too: this runs in the request's own future, which is dropped,
            // and the stream closed with it, once the answer is there.
            if self
                .read_events(session, response, &mut cursor, Some(id))
                .await?
                .is_some()
            {
                return Ok(());
            }
        }
        if session.waits_for(id) {
            return Err(Failure::Transport(
                "the server's stream ended before the answer".to_owned(),
            ));
        }
        Ok(())
    }
}

/// A stream of events as it is read.
type Events = std::pin::Pin<
    Box<dyn futures_util::Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send>,
>;

/// How long the rest of a stream after its answer is waited for: a server should end the
/// stream with the answer, and one that keeps it open (sending comments, say) should not
/// hold a connection and a task for long with each request.
const REST: Duration = Duration::from_millis(500);

/// Finishes with the rest of request `id`'s stream once its answer came: the stream is
/// read to its end, so that its connection can carry the next request (dropped unread, the
/// connection would be closed, and each request would open another). A stream whose end
/// already came is done with here; one still open is read in the background for at most
/// [`REST`], what comes on it reaching `session` as the request's, as if read in time.
fn finish(session: &Arc<Session>, rest: Events, id: Option<u64>) {
    let mut reading = Box::pin(read_rest(Arc::downgrade(session), rest, id));
    if futures_util::FutureExt::now_or_never(&mut reading).is_none() {
        tokio::spawn(reading);
    }
}

/// Reads what is left of request `id`'s stream to its end, or for at most [`REST`].
async fn read_rest(session: std::sync::Weak<Session>, mut rest: Events, id: Option<u64>) {
    let reading = async {
        while let Some(Ok(event)) = rest.next().await {
            // Past the answer, a message that cannot be read fails no request: it is
            // passed over, as one for a session already gone.
            if let (Some(session), Some(Ok(message))) = (session.upgrade(), message_in(&event)) {
                session.dispatch_for(message, id);
            }
        }
    };
    let _ = tokio::time::timeout(REST, reading).await;
}

/// The message an event carries, read; `None` for an event that carries none (a comment,
/// a priming event with an id alone).
fn message_in(event: &sse_stream::Sse) -> Option<Result<wire::Message, String>> {
    let data = event
        .data
        .as_deref()
        .filter(|data| !data.trim().is_empty())?;
    Some(wire::read(data.as_bytes()))
}

/// Reads a whole body, refusing one over `limit` bytes.
async fn read_body(response: Response<ResponseBody>, limit: usize) -> Result<Vec<u8>, Failure> {
    let mut incoming = response.into_body();
    let mut body = Vec::new();
    while let Some(frame) = incoming.frame().await {
        let frame = frame.map_err(Failure::Transport)?;
        // Trailers carry nothing of the message.
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        if body.len() + chunk.len() > limit {
            return Err(Failure::Protocol(format!(
                "the server sent a body over {limit} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// What a refusal says, for an error.
fn refused(refusal: &Refusal) -> String {
    let challenge = refusal.challenge.clone().unwrap_or_default();
    let why = challenge
        .error_description
        .or(challenge.error)
        .map(|why| format!(": {why}"))
        .unwrap_or_default();
    format!(
        "the server refused the request's authorization (HTTP {}){why}",
        refusal.status
    )
}

#[cfg(test)]
mod tests {
    use super::super::raw_http::{
        answer_event, chunk, empty, posted, read_request, serve, Posted, STREAM_HEAD,
    };
    use super::super::Client;
    use serde_json::{json, Value};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;
    use tokio::sync::oneshot;

    /// What the test's server saw and is told.
    #[derive(Default)]
    struct Seen {
        /// For each `tools/call`, the connection it came on (numbered as accepted).
        calls: Vec<usize>,
        /// Held by the first `tools/call`'s stream, which ends once it is sent.
        end_first_stream: Option<oneshot::Receiver<()>>,
    }

    /// A handshake-era server over raw HTTP/1.1 that answers `tools/call` with an event
    /// stream: the answer's event at once, the stream's end (for the first call) only when
    /// the test says.
    async fn server(seen: Arc<Mutex<Seen>>) -> String {
        serve(move |stream, connection| answer_each(stream, connection, Arc::clone(&seen))).await
    }

    async fn answer_each(mut stream: TcpStream, connection: usize, seen: Arc<Mutex<Seen>>) {
        let mut read = Vec::new();
        while let Some((head, body)) = read_request(&mut stream, &mut read).await {
            if !head.starts_with("post ") {
                // The GET stream is not offered; a DELETE ends the session.
                let status = if head.starts_with("get ") {
                    "405 Method Not Allowed"
                } else {
                    "200 OK"
                };
                stream.write_all(empty(status).as_bytes()).await.unwrap();
                continue;
            }
            let reply = match posted(&body, "streams") {
                Posted::Answered(reply) => reply,
                Posted::Call(id) => {
                    let end = {
                        let mut seen = seen.lock().unwrap();
                        seen.calls.push(connection);
                        seen.end_first_stream.take()
                    };
                    let opening = format!("{STREAM_HEAD}{}", chunk(&answer_event(&id, "done")));
                    stream.write_all(opening.as_bytes()).await.unwrap();
                    if let Some(end) = end {
                        let _ = end.await;
                    }
                    "0\r\n\r\n".to_owned()
                }
            };
            if stream.write_all(reply.as_bytes()).await.is_err() {
                return;
            }
        }
    }

    /// A request answered on an event stream the server ends only after the answer came
    /// leaves its connection open for the next request: the rest of the stream is read to
    /// its end, and the connection is used again (closed with the stream unread, every
    /// request answered by a stream would open a connection of its own).
    #[tokio::test]
    async fn a_connection_whose_stream_ends_after_its_answer_is_used_again() {
        let (end_first_stream, ended) = oneshot::channel();
        let seen = Arc::new(Mutex::new(Seen {
            end_first_stream: Some(ended),
            ..Seen::default()
        }));
        let url = server(Arc::clone(&seen)).await;
        let client = Client::builder()
            .handshake_era(true)
            .connect(&url)
            .await
            .unwrap();
        let idle = client.idle_connections().await;
        let first = client.call_tool("work", json!({})).await.unwrap();
        assert_eq!(first.text(), "done");
        // The answer came with its stream still open, its connection taken from the idle.
        assert_eq!(client.idle_connections().await, idle - 1);
        end_first_stream.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(10), async {
            while client.idle_connections().await < idle {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the connection the stream came on is idle again once the stream ended");
        let second = client.call_tool("work", json!({})).await.unwrap();
        assert_eq!(second.text(), "done");
        let calls = seen.lock().unwrap().calls.clone();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0], calls[1], "both calls went on one connection");
    }

    /// What the resuming server tells its test.
    struct Resuming {
        /// The `tools/call`'s id, once it came.
        call: Mutex<Value>,
        /// Told when the stream of the call was resumed (a GET with `Last-Event-ID`).
        resumed: tokio::sync::Notify,
        /// Told when the client closed the resumed stream.
        resumed_closed: tokio::sync::Notify,
    }

    /// A handshake-era server whose `tools/call` stream ends before its answer, after an
    /// event with an id: the client resumes it with a GET. That stream stays open with
    /// nothing on it, and the answer comes on the GET stream of what the server sends on
    /// its own instead, once the resumed stream opened.
    async fn resuming_server(state: Arc<Resuming>) -> String {
        serve(move |stream, _| answer_resuming(stream, Arc::clone(&state))).await
    }

    async fn answer_resuming(mut stream: TcpStream, state: Arc<Resuming>) {
        let mut read = Vec::new();
        while let Some((head, body)) = read_request(&mut stream, &mut read).await {
            if head.starts_with("get ") && head.contains("\r\nlast-event-id: 1") {
                stream.write_all(STREAM_HEAD.as_bytes()).await.unwrap();
                state.resumed.notify_one();
                // Open until the client closes it.
                let _ = stream.read(&mut [0; 64]).await;
                state.resumed_closed.notify_one();
                return;
            }
            if head.starts_with("get ") {
                stream.write_all(STREAM_HEAD.as_bytes()).await.unwrap();
                state.resumed.notified().await;
                let id = state.call.lock().unwrap().clone();
                let event = chunk(&answer_event(&id, "done"));
                stream.write_all(event.as_bytes()).await.unwrap();
                let _ = stream.read(&mut [0; 64]).await;
                return;
            }
            if !head.starts_with("post ") {
                stream.write_all(empty("200 OK").as_bytes()).await.unwrap();
                continue;
            }
            let reply = match posted(&body, "resuming") {
                Posted::Answered(reply) => reply,
                Posted::Call(id) => {
                    *state.call.lock().unwrap() = id;
                    // An event with an id and nothing else, then the stream's end.
                    let priming = chunk("id: 1\nretry: 10\ndata: \n\n");
                    format!("{STREAM_HEAD}{priming}0\r\n\r\n")
                }
            };
            if stream.write_all(reply.as_bytes()).await.is_err() {
                return;
            }
        }
    }

    /// A resumed stream that stays open without the answer does not hold its request:
    /// once the answer came on another stream, the request has it, and the resumed stream
    /// is closed (left open, each such request would keep a connection to no end).
    #[tokio::test]
    async fn a_resumed_stream_is_closed_once_the_answer_came_on_another() {
        let state = Arc::new(Resuming {
            call: Mutex::new(Value::Null),
            resumed: tokio::sync::Notify::new(),
            resumed_closed: tokio::sync::Notify::new(),
        });
        let url = resuming_server(Arc::clone(&state)).await;
        let client = Client::builder()
            .handshake_era(true)
            .connect(&url)
            .await
            .unwrap();
        let closed = state.resumed_closed.notified();
        let answer =
            tokio::time::timeout(Duration::from_secs(10), client.call_tool("work", json!({})))
                .await
                .expect("the answer that came on another stream ends the call")
                .unwrap();
        assert_eq!(answer.text(), "done");
        tokio::time::timeout(Duration::from_secs(10), closed)
            .await
            .expect("the resumed stream is closed once the answer came");
    }
}
