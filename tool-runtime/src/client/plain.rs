//! Plain HTTP/1.1 connections to one server (an `http://` URL reached directly), each kept
//! while idle for the next request.
//!
//! hyper-util's pooled client serves such a URL too, at a cost per request that counts when
//! every MCP message is a POST: it races a connect against its checkout, writes the `Host`
//! header anew, and spawns a task to put an HTTP/1 connection back once its response's body
//! is read. Here the `Host` header and the request's path are made once, and a connection
//! goes back when its response is done with, from the task that read it. TLS (and HTTP/2,
//! which TLS negotiates) stays with hyper-util's pool.

use super::connections::{describe, TimedConnector, IDLE};
use crate::sync::lock;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderMap, HeaderValue, HOST};
use hyper::{Method, Request, Response, Uri};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::time::Instant;
use tower::ServiceExt as _;

type Sender = SendRequest<Full<Bytes>>;

/// The connections to one server's endpoint over plain HTTP/1.1; cheap to clone.
#[derive(Clone)]
pub(crate) struct Plain(Arc<Shared>);

struct Shared {
    idle: Mutex<IdleList>,
    connector: TimedConnector,
    /// The endpoint's URI, which connections are opened to.
    endpoint: Uri,
    /// What requests name: the endpoint's path and query.
    path: Uri,
    host: HeaderValue,
}

/// The connections idle now.
#[derive(Default)]
struct IdleList {
    /// The one idle the shortest time last (each is pushed as it goes idle).
    connections: Vec<Idle>,
    /// Whether a task closes them as their time runs out (see [`close_in_time`]).
    closing: bool,
}

struct Idle {
    sender: Sender,
    since: Instant,
}

impl IdleList {
    /// Closes the connections idle for [`IDLE`] or more at `now`.
    fn close_expired(&mut self, now: Instant) {
        let fresh = self
            .connections
            .iter()
            .position(|kept| now.duration_since(kept.since) < IDLE)
            .unwrap_or(self.connections.len());
        self.connections.drain(..fresh);
    }
}

impl Plain {
    /// The connections to `endpoint` (an `http://` URI), opened with `connector`.
    pub(crate) fn new(endpoint: Uri, connector: TimedConnector) -> Result<Plain, String> {
        let authority = endpoint
            .authority()
            .ok_or_else(|| format!("{endpoint} names no server"))?;
        // The `Host` header is the authority without credentials, which a URI here never
        // has (they were taken out as Basic authorization).
        let host = HeaderValue::from_str(authority.as_str())
            .map_err(|error| format!("{endpoint} names no host to send: {error}"))?;
        let path = endpoint
            .path_and_query()
            .map_or("/", |path| path.as_str())
            .parse()
            .map_err(|error| format!("{endpoint} has no path to send: {error}"))?;
        Ok(Plain(Arc::new(Shared {
            idle: Mutex::new(IdleList::default()),
            connector,
            endpoint,
            path,
            host,
        })))
    }

    /// Sends one request on a connection idle for less than [`IDLE`], or on a new one,
    /// and gives the response once its head came.
    pub(crate) async fn send(
        &self,
        method: Method,
        mut headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response<PlainBody>, String> {
        headers.insert(HOST, self.0.host.clone());
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = self.0.path.clone();
        *request.headers_mut() = headers;
        loop {
            let (mut sender, reused) = match self.take_idle() {
                Some(sender) => (sender, true),
                // Boxed: opening holds the whole connection (a TLS one's state is large)
                // while it runs, and it runs rarely; inline, every request's future, and
                // every future holding one, would be that large, and moved.
                None => (Box::pin(self.open()).await?, false),
            };
            // An idle connection closed by its server since is left for another.
            if reused && sender.ready().await.is_err() {
                continue;
            }
            match sender.try_send_request(request).await {
                Ok(response) => {
                    let back = Some(Back {
                        sender,
                        to: Arc::clone(&self.0),
                    });
                    return Ok(response.map(|body| PlainBody {
                        body,
                        ended: false,
                        back,
                    }));
                }
                Err(mut error) => match error.take_message() {
                    // Not written at all (the connection closed as it was taken): sent
                    // again on another, which is safe for any request.
                    Some(unsent) if reused => request = unsent,
                    _ => return Err(describe(error.error())),
                },
            }
        }
    }

    /// The connection idle the shortest time, if one is idle for less than [`IDLE`] and
    /// open. Those idle longer are closed: a server may close a connection idle for long
    /// just as a request is sent on it, and a POST cannot be sent again safely.
    fn take_idle(&self) -> Option<Sender> {
        let mut idle = lock(&self.0.idle);
        while let Some(Idle { sender, since }) = idle.connections.pop() {
            if since.elapsed() >= IDLE {
                // Pushed in the order they went idle: those below are older still.
                idle.connections.clear();
                return None;
            }
            if !sender.is_closed() {
                return Some(sender);
            }
        }
        None
    }

    /// How many connections are idle now.
    #[cfg(test)]
    pub(crate) fn idle_count(&self) -> usize {
        lock(&self.0.idle).connections.len()
    }

    /// Opens a connection, its reading and writing run by a task of its own.
    async fn open(&self) -> Result<Sender, String> {
        let stream = self
            .0
            .connector
            .clone()
            .oneshot(self.0.endpoint.clone())
            .await
            .map_err(|error| format!("cannot connect: {}", describe(&*error)))?;
        let (sender, connection) = hyper::client::conn::http1::handshake(stream)
            .await
            .map_err(|error| format!("cannot connect: {}", describe(&error)))?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(error = describe(&error), "an HTTP connection ended");
            }
        });
        Ok(sender)
    }
}

/// A connection to give back once its response is done with.
struct Back {
    sender: Sender,
    to: Arc<Shared>,
}

/// A response's body, read as it comes; its connection goes back to be used again once the
/// body has been read to its end (dropped before, the connection is closed with it).
pub(crate) struct PlainBody {
    body: Incoming,
    ended: bool,
    back: Option<Back>,
}

impl Drop for PlainBody {
    fn drop(&mut self) {
        let Some(Back { sender, to }) = self.back.take() else {
            return;
        };
        if !(self.ended || self.body.is_end_stream()) || sender.is_closed() {
            return;
        }
        let mut idle = lock(&to.idle);
        // Taken under the lock: the list stays in the order its connections went idle.
        let now = Instant::now();
        idle.close_expired(now);
        idle.connections.push(Idle { sender, since: now });
        if !idle.closing {
            // Outside a runtime (a body dropped as one shuts down) nothing is spawned;
            // the next request closes what has expired by then.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                idle.closing = true;
                runtime.spawn(close_in_time(Arc::downgrade(&to)));
            }
        }
    }
}

/// Closes each idle connection once it has been idle for [`IDLE`], for as long as any is
/// idle: a server that never closes an idle connection itself would otherwise keep its
/// socket open until the next request, however far off. One task does it for all the
/// connections to a server, waking when the oldest expires, so a connection going idle
/// costs no timer of its own.
async fn close_in_time(shared: std::sync::Weak<Shared>) {
    /// Says no closer runs if this one is dropped while it sleeps (its runtime shutting
    /// down): the next connection to go idle then starts another.
    struct Dropped(Option<std::sync::Weak<Shared>>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            if let Some(shared) = self.0.take().and_then(|shared| shared.upgrade()) {
                lock(&shared.idle).closing = false;
            }
        }
    }
    let mut dropped = Dropped(Some(shared.clone()));
    loop {
        let due = {
            let Some(shared) = shared.upgrade() else {
                return;
            };
            let mut idle = lock(&shared.idle);
            idle.close_expired(Instant::now());
            let Some(oldest) = idle.connections.first() else {
                // Said under the lock: a connection going idle now starts another closer.
                idle.closing = false;
                dropped.0 = None;
                return;
            };
            oldest.since + IDLE
        };
        tokio::time::sleep_until(due).await;
    }
}

impl Body for PlainBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let frame = Pin::new(&mut this.body).poll_frame(context);
        if let Poll::Ready(None) = frame {
            this.ended = true;
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::super::raw_http::{read_request, serve};
    use super::*;
    use http_body_util::BodyExt as _;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// A server that answers each request with `reply`, closing the connection after the
    /// first when `close` is set; it counts the connections it accepted.
    async fn server(reply: &'static str, close: bool) -> (Uri, Arc<AtomicUsize>) {
        let accepted = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&accepted);
        let url = serve(move |stream, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move {
                answer_each(stream, reply, close).await;
            }
        })
        .await;
        (url.parse().unwrap(), accepted)
    }

    /// Reads requests and answers each with `reply`; gives how many it answered once the
    /// connection ends.
    async fn answer_each(mut stream: TcpStream, reply: &'static str, close: bool) -> usize {
        let mut read = Vec::new();
        let mut answered = 0;
        while read_request(&mut stream, &mut read).await.is_some() {
            if stream.write_all(reply.as_bytes()).await.is_err() {
                break;
            }
            answered += 1;
            if close {
                break;
            }
        }
        answered
    }

    const OK: &str = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";

    fn plain(uri: Uri) -> Plain {
        Plain::new(
            uri,
            super::super::connections::connector(Duration::from_secs(5)).unwrap(),
        )
        .unwrap()
    }

    async fn post(plain: &Plain) -> Response<PlainBody> {
        plain
            .send(Method::POST, HeaderMap::new(), Bytes::from_static(b"{}"))
            .await
            .unwrap()
    }

    /// Requests one after another go on one connection, each once the one before was read.
    #[tokio::test]
    async fn a_connection_is_used_again_once_its_response_was_read() {
        let (uri, accepted) = server(OK, false).await;
        let plain = plain(uri);
        for _ in 0..3 {
            let body = post(&plain).await.into_body().collect().await.unwrap();
            assert_eq!(body.to_bytes(), "{}");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    /// A response dropped before its body was read leaves its connection unusable: it is
    /// closed, and the next request opens another.
    #[tokio::test]
    async fn a_response_dropped_unread_closes_its_connection() {
        let (uri, accepted) = server(OK, false).await;
        let plain = plain(uri);
        drop(post(&plain).await);
        let body = post(&plain).await.into_body().collect().await.unwrap();
        assert_eq!(body.to_bytes(), "{}");
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    /// A connection left idle is closed once it has been idle for [`IDLE`], though no
    /// request comes after it; one used again meanwhile is kept for its time from then.
    #[tokio::test]
    async fn a_connection_left_idle_is_closed_in_time() {
        // For each connection that ended: how many requests it answered, and when.
        let (closed, mut closes) = tokio::sync::mpsc::unbounded_channel();
        let url = serve(move |stream, _| {
            let closed = closed.clone();
            async move {
                let answered = answer_each(stream, OK, false).await;
                let _ = closed.send((answered, Instant::now()));
            }
        })
        .await;
        let plain = plain(url.parse().unwrap());
        // Two connections: the second opened while the first is busy.
        let first = post(&plain).await;
        let second = post(&plain).await;
        let went_idle = Instant::now();
        first.into_body().collect().await.unwrap();
        second.into_body().collect().await.unwrap();
        assert_eq!(plain.idle_count(), 2);
        // One is used again half way through its time, the other left alone.
        tokio::time::sleep_until(went_idle + IDLE / 2).await;
        post(&plain).await.into_body().collect().await.unwrap();
        let mut answered = 0;
        while answered < 3 {
            let (count, at) = tokio::time::timeout(Duration::from_secs(30), closes.recv())
                .await
                .expect("connections idle for their time are closed though no request came")
                .unwrap();
            answered += count;
            let kept_from = if count == 2 {
                went_idle + IDLE / 2
            } else {
                went_idle
            };
            assert!(
                at >= kept_from + IDLE,
                "a connection that answered {count} was closed before its time"
            );
        }
    }

    /// A connection its server closes after an answer (`connection: close`) is not sent on
    /// again: the next request opens another and is answered.
    #[tokio::test]
    async fn a_connection_its_server_closes_is_not_sent_on_again() {
        const CLOSING: &str = "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}";
        let (uri, accepted) = server(CLOSING, true).await;
        let plain = plain(uri);
        for _ in 0..2 {
            let body = post(&plain).await.into_body().collect().await.unwrap();
            assert_eq!(body.to_bytes(), "{}");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    /// A connection its server closes after an answer without saying so beforehand (no
    /// `connection: close`) is not sent on once closed: each next request is answered, on
    /// a connection of its own.
    #[tokio::test]
    async fn a_connection_closed_unannounced_is_not_sent_on_again() {
        let (uri, accepted) = server(OK, true).await;
        let plain = plain(uri);
        for round in 1..=10 {
            let body = post(&plain).await.into_body().collect().await.unwrap();
            assert_eq!(body.to_bytes(), "{}", "round {round}");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 10);
    }

    /// Each request names the endpoint's path and its host, as HTTP/1.1 asks.
    #[tokio::test]
    async fn a_request_names_the_path_and_the_host() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let head = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buffer = vec![0; 4096];
            // The head and its two bytes of body, all read before the answer: unread
            // bytes at the close would reset the connection.
            while memchr::memmem::find(&head, b"\r\n\r\n").is_none_or(|end| head.len() < end + 6) {
                let count = stream.read(&mut buffer).await.unwrap();
                assert!(count > 0, "the request ended early");
                head.extend_from_slice(&buffer[..count]);
            }
            stream.write_all(OK.as_bytes()).await.unwrap();
            String::from_utf8(head).unwrap()
        });
        let uri = format!("http://127.0.0.1:{port}/mcp?tenant=a")
            .parse()
            .unwrap();
        let response = post(&plain(uri)).await;
        assert_eq!(response.status(), 200);
        let head = head.await.unwrap();
        assert!(
            head.starts_with("POST /mcp?tenant=a HTTP/1.1\r\n"),
            "{head}"
        );
        assert!(
            head.to_ascii_lowercase()
                .contains(&format!("\r\nhost: 127.0.0.1:{port}\r\n")),
            "{head}"
        );
    }
}
