//! HTTP as a test client speaks it: one [`Request`], sent over a new connection to a server
//! process ([`Request::send`]) or through a router in this process ([`Request::send_to`],
//! [`Request::stream_from`]); one [`Reply`]; and [`Events`], an event stream read as it
//! comes. Every wait is bounded by [`PATIENCE`]; statuses are returned, never asserted.

use crate::{messages, standard_headers, PATIENCE};
use serde_json::Value;
use std::collections::VecDeque;

/// An HTTP request as a test client sends it.
#[derive(Debug, Clone)]
pub struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// Whether the 2026-07-28 standard headers are derived from the body.
    standard: bool,
}

impl Request {
    /// A request of `method` to `path`, with no header and no body.
    pub fn new(method: &str, path: &str) -> Request {
        Request {
            method: method.to_owned(),
            path: path.to_owned(),
            headers: Vec::new(),
            body: Vec::new(),
            standard: false,
        }
    }

    /// `POST /mcp` as a conformant client sends it: JSON, answers in JSON or as an event
    /// stream accepted, and the 2026-07-28 standard headers derived from the body
    /// ([`standard_headers`]) where the request does not set them.
    pub fn mcp(body: impl AsRef<[u8]>) -> Request {
        let mut request = Request::new("POST", "/mcp")
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body);
        request.standard = true;
        request
    }

    /// `POST path` with a JSON body (a REST endpoint).
    pub fn rest(path: &str, body: &str) -> Request {
        Request::new("POST", path)
            .header("Content-Type", "application/json")
            .body(body)
    }

    /// `GET path`.
    pub fn get(path: &str) -> Request {
        Request::new("GET", path)
    }

    /// The same request with `body`.
    pub fn body(mut self, body: impl AsRef<[u8]>) -> Request {
        self.body = body.as_ref().to_vec();
        self
    }

    /// The same request with each of `headers` set ([`header`](Request::header)).
    pub fn headers(self, headers: &[(&str, &str)]) -> Request {
        headers
            .iter()
            .fold(self, |request, (name, value)| request.header(name, value))
    }

    /// The same request with header `name` set to `value` (replacing any, in any case).
    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.headers
            .retain(|(present, _)| !present.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The same request without header `name`.
    pub fn without(mut self, name: &str) -> Request {
        self.headers
            .retain(|(present, _)| !present.eq_ignore_ascii_case(name));
        self
    }

    /// The same request in the 2025-11-25 session `id`.
    pub fn session(self, id: &str) -> Request {
        self.header("Mcp-Session-Id", id)
            .header("MCP-Protocol-Version", "2025-11-25")
    }

    /// The same request with an access token.
    pub fn bearer(self, token: &str) -> Request {
        self.header("Authorization", &format!("Bearer {token}"))
    }

    /// The same request without the standard headers derived from its body: only what it
    /// sets itself is sent.
    pub fn raw(mut self) -> Request {
        self.standard = false;
        self
    }

    /// Its headers as sent: its own, then the derived standard ones it does not set.
    fn all_headers(&self) -> Vec<(String, String)> {
        let mut headers = self.headers.clone();
        if self.standard {
            for (name, value) in standard_headers(&self.body) {
                if !self.has(name) {
                    headers.push((name.to_owned(), value));
                }
            }
        }
        headers
    }

    fn has(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|(present, _)| present.eq_ignore_ascii_case(name))
    }

    /// What a failure says the request was.
    fn what(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// Sends it over a new connection to 127.0.0.1:`port` (a `Host` of localhost unless
    /// set) and reads the whole reply.
    pub fn send(&self, port: u16) -> Reply {
        use std::io::{Read, Write};
        let what = format!("{} to 127.0.0.1:{port}", self.what());
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))
            .unwrap_or_else(|error| panic!("{what}: {error}"));
        let mut head = format!(
            "{} {} HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.method,
            self.path,
            self.body.len()
        );
        if !self.has("host") {
            head.push_str(&format!("Host: localhost:{port}\r\n"));
        }
        for (name, value) in self.all_headers() {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&self.body);
        stream
            .write_all(&bytes)
            .unwrap_or_else(|error| panic!("{what}: {error}"));
        // A reply that never ends (an event stream opened by mistake) fails the test, not
        // hangs it.
        stream
            .set_read_timeout(Some(*PATIENCE))
            .expect("a read timeout");
        let mut response = String::new();
        if let Err(error) = stream.read_to_string(&mut response) {
            panic!(
                "{what}: no whole reply within {:?} ({error}): {response}",
                *PATIENCE
            );
        }
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        Reply {
            status: head
                .split(' ')
                .nth(1)
                .and_then(|code| code.parse().ok())
                .unwrap_or(0),
            head: head.to_owned(),
            body: body.to_owned(),
        }
    }

    /// The request as the router takes it (a `Host` of localhost unless set).
    fn in_process(&self) -> axum::http::Request<axum::body::Body> {
        let mut request = axum::http::Request::builder()
            .method(self.method.as_str())
            .uri(self.path.as_str());
        if !self.has("host") {
            request = request.header("host", "localhost");
        }
        for (name, value) in self.all_headers() {
            // As bytes: a test may send a value that is not ASCII.
            let value = axum::http::HeaderValue::from_bytes(value.as_bytes())
                .unwrap_or_else(|error| panic!("{}: header {name}: {error}", self.what()));
            request = request.header(name, value);
        }
        request
            .body(axum::body::Body::from(self.body.clone()))
            .unwrap_or_else(|error| panic!("{}: {error}", self.what()))
    }

    /// The router's response to it, within [`PATIENCE`].
    async fn response_of(&self, app: &axum::Router) -> axum::response::Response {
        use tower::ServiceExt;
        let responded = tokio::time::timeout(*PATIENCE, app.clone().oneshot(self.in_process()));
        match responded.await {
            Ok(Ok(response)) => response,
            Ok(Err(never)) => match never {},
            Err(_) => panic!("{}: no response within {:?}", self.what(), *PATIENCE),
        }
    }

    /// Sends it through `app` in this process and reads the whole reply.
    pub async fn send_to(&self, app: &axum::Router) -> Reply {
        let response = self.response_of(app).await;
        let head = head_of(&response);
        let status = response.status().as_u16();
        let body = tokio::time::timeout(
            *PATIENCE,
            axum::body::to_bytes(response.into_body(), usize::MAX),
        )
        .await
        .unwrap_or_else(|_| panic!("{}: no whole reply within {:?}", self.what(), *PATIENCE))
        .unwrap_or_else(|error| panic!("{}: {error}", self.what()));
        Reply {
            status,
            head,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }

    /// Sends it through `app` in this process; the reply's messages, read as they come.
    pub async fn stream_from(&self, app: &axum::Router) -> Events {
        let response = self.response_of(app).await;
        Events {
            status: response.status().as_u16(),
            head: head_of(&response),
            body: response.into_body(),
            buffer: String::new(),
            ready: VecDeque::new(),
            ended: false,
        }
    }
}

/// A response's status line and headers, written as they would be sent.
fn head_of(response: &axum::response::Response) -> String {
    let mut head = format!("HTTP/1.1 {}", response.status());
    for (name, value) in response.headers() {
        head.push_str(&format!(
            "\r\n{name}: {}",
            String::from_utf8_lossy(value.as_bytes())
        ));
    }
    head
}

/// The value of header `name` in `head` (in any case, as header names are), if sent.
fn header_in<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// One HTTP exchange's reply.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The status line and headers, as sent.
    pub head: String,
    /// The body (over a connection, chunked bodies are left as sent).
    pub body: String,
}

impl Reply {
    /// The value of header `name` (in any case, as header names are), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        header_in(&self.head, name)
    }

    /// The JSON-RPC messages of the body: one JSON answer, or the `data:` lines of an
    /// event stream.
    pub fn messages(&self) -> Vec<Value> {
        messages(&self.body)
    }

    /// The body's one message; fails the test, with the reply, when there is not exactly
    /// one.
    pub fn message(&self) -> Value {
        let mut messages = self.messages();
        if messages.len() != 1 {
            panic!(
                "one message in the reply: {}\n{}\n\n{}",
                messages.len(),
                self.head,
                self.body
            );
        }
        messages.remove(0)
    }

    /// The body as JSON (a REST answer, an error); fails the test when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|_| panic!("a JSON body: {}\n\n{}", self.head, self.body))
    }
}

/// Opens a 2025-11-25 session with the server on `port`; its id.
pub fn open_session(port: u16) -> String {
    let reply = Request::mcp(crate::INITIALIZE).send(port);
    assert_eq!(reply.status, 200, "{reply:?}");
    reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned()
}

/// The JSON-RPC messages of a reply, read as they come: an event stream's, or the one
/// answer of a plain JSON body once it is whole.
pub struct Events {
    /// The status code.
    pub status: u16,
    /// The status line and headers.
    pub head: String,
    body: axum::body::Body,
    /// Read and not yet parsed.
    buffer: String,
    /// Parsed and not yet given.
    ready: VecDeque<Value>,
    ended: bool,
}

impl Events {
    /// The value of header `name` (in any case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        header_in(&self.head, name)
    }

    /// The next message; nothing once the body has ended.
    pub async fn try_next(&mut self) -> Option<Value> {
        use http_body_util::BodyExt;
        loop {
            if let Some(message) = self.ready.pop_front() {
                return Some(message);
            }
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let data = event.lines().find_map(|line| line.strip_prefix("data: "));
                if let Some(data) = data {
                    let message = serde_json::from_str(data)
                        .unwrap_or_else(|_| panic!("an event that is not JSON: {data}"));
                    return Some(message);
                }
                continue;
            }
            if self.ended {
                // Not a stream: the plain JSON answer, whole.
                let whole = std::mem::take(&mut self.buffer);
                self.ready.extend(messages(&whole));
                return self.ready.pop_front();
            }
            let frame = tokio::time::timeout(*PATIENCE, self.body.frame())
                .await
                .unwrap_or_else(|_| {
                    panic!("no message within {:?}; so far: {}", *PATIENCE, self.buffer)
                });
            match frame {
                None => self.ended = true,
                Some(frame) => {
                    let frame = frame.expect("the body can be read");
                    if let Ok(data) = frame.into_data() {
                        self.buffer
                            .push_str(std::str::from_utf8(&data).expect("text"));
                    }
                }
            }
        }
    }

    /// The next message, which must come.
    pub async fn next(&mut self) -> Value {
        self.try_next()
            .await
            .unwrap_or_else(|| panic!("a message before the reply ended ({})", self.head))
    }

    /// The first message `wanted` picks (those before it are passed over).
    pub async fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.next().await;
            if wanted(&message) {
                return message;
            }
        }
    }

    /// Every message left, once the reply has ended.
    pub async fn rest(mut self) -> Vec<Value> {
        let mut rest = Vec::new();
        while let Some(message) = self.try_next().await {
            rest.push(message);
        }
        rest
    }

    /// The answer to request `id` among the messages left, which end with the reply.
    pub async fn answer_to(self, id: impl Into<Value>) -> Value {
        let id = id.into();
        let rest = self.rest().await;
        rest.iter()
            .find(|m| m["id"] == id && (m.get("result").is_some() || m.get("error").is_some()))
            .cloned()
            .unwrap_or_else(|| panic!("the answer to {id} among {rest:?}"))
    }
}
