//! The floor of a mount: a relay that does the least a front server must do to serve
//! another server's tools under a prefix. Each request is read, a `tools/call`'s tool name
//! loses the `up_` prefix (parsed and written again with serde_json, as any relay that
//! renames must), the request goes to the upstream, and its answer comes back unchanged.
//! Nothing else: no checks, no sessions of its own, one request at a time on stdio.
//!
//! `--relay COMMAND ARGS...` relays stdio to a child process; `--http ADDR --relay-to URL`
//! relays HTTP POSTs to an upstream over one pooled hyper client (keep-alive). What the
//! benchmark's CPU figures for it measure is what a mount cannot cost less than on the
//! machine they run on: the system calls and wake-ups of a second hop.

use std::convert::Infallible;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};

use super::http::status;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;
use tokio::net::TcpListener;

/// The prefix the benchmark mounts its upstream under.
const PREFIX: &str = "up_";

/// `message` as the upstream takes it (a call's tool name without the prefix; any other
/// message as it came), and whether it is a request (which the upstream answers).
fn renamed(message: &[u8]) -> (Vec<u8>, bool) {
    let Ok(mut value) = serde_json::from_slice::<Value>(message) else {
        return (message.to_vec(), false);
    };
    let request = value.get("id").is_some() && value.get("method").is_some();
    if value.get("method").and_then(Value::as_str) != Some("tools/call") {
        return (message.to_vec(), request);
    }
    if let Some(name) = value.pointer_mut("/params/name") {
        if let Some(bare) = name.as_str().and_then(|name| name.strip_prefix(PREFIX)) {
            *name = Value::String(bare.to_owned());
        }
    }
    let bytes = serde_json::to_vec(&value).unwrap_or_else(|_| message.to_vec());
    (bytes, request)
}

/// Relays stdin to `command`'s stdin and its answers to stdout, one request at a time.
pub fn stdio(command: &[String]) -> io::Result<()> {
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut to_upstream = BufWriter::new(child.stdin.take().expect("piped"));
    let mut from_upstream = BufReader::new(child.stdout.take().expect("piped"));
    let mut reader = BufReader::with_capacity(64 * 1024, io::stdin().lock());
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let (mut line, mut answer) = (String::new(), String::new());
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let (onward, request) = renamed(line.trim_end().as_bytes());
        to_upstream.write_all(&onward)?;
        to_upstream.write_all(b"\n")?;
        to_upstream.flush()?;
        // A request is answered, a notification is not. The next line from the upstream is
        // taken as the answer: the benchmark's upstream sends nothing else while calls run.
        if request {
            answer.clear();
            if from_upstream.read_line(&mut answer)? == 0 {
                break;
            }
            out.write_all(answer.as_bytes())?;
            out.flush()?;
        }
    }
    drop(to_upstream);
    child.wait().map(drop)
}

/// Relays each POST on `address` to `upstream`, over one pooled client.
pub fn http(address: &str, upstream: &str) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let upstream: Arc<str> = upstream.into();
    // As reqwest's connector does: no Nagle delay on the upstream connection.
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build(connector);
    runtime.block_on(async move {
        let listener = TcpListener::bind(address).await?;
        loop {
            let (stream, _) = listener.accept().await?;
            stream.set_nodelay(true)?;
            let (client, upstream) = (client.clone(), Arc::clone(&upstream));
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    relay(request, client.clone(), Arc::clone(&upstream))
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

/// The headers a request and its answer carry across.
const CARRIED: [&str; 4] = [
    "content-type",
    "accept",
    "mcp-protocol-version",
    "mcp-session-id",
];

async fn relay(
    request: Request<Incoming>,
    client: Client<HttpConnector, Full<Bytes>>,
    upstream: Arc<str>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.method() != hyper::Method::POST {
        return Ok(status(StatusCode::METHOD_NOT_ALLOWED));
    }
    let (parts, body) = request.into_parts();
    let Ok(body) = body.collect().await else {
        return Ok(status(StatusCode::BAD_REQUEST));
    };
    let mut onward = Request::post(&*upstream);
    for name in CARRIED {
        if let Some(value) = parts.headers.get(name) {
            onward = onward.header(name, value);
        }
    }
    let (renamed, _) = renamed(&body.to_bytes());
    let Ok(onward) = onward.body(Full::new(Bytes::from(renamed))) else {
        return Ok(status(StatusCode::INTERNAL_SERVER_ERROR));
    };
    let Ok(answer) = client.request(onward).await else {
        return Ok(status(StatusCode::BAD_GATEWAY));
    };
    let (parts, body) = answer.into_parts();
    let Ok(body) = body.collect().await else {
        return Ok(status(StatusCode::BAD_GATEWAY));
    };
    let mut back = Response::builder().status(parts.status);
    for name in CARRIED {
        if let Some(value) = parts.headers.get(name) {
            back = back.header(name, value);
        }
    }
    Ok(back
        .body(Full::new(body.to_bytes()))
        .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR)))
}
