//! Reads HTTP/1.1 requests off a bare TCP stream, for the client's tests: their servers
//! answer byte by byte what a test needs (a stream held open past its answer, a connection
//! closed unannounced), which a server framework would not let a test do.

use std::future::Future;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};

/// Serves on a port of 127.0.0.1 until the test's runtime ends: each connection accepted
/// goes to `connected` with its number (from 0, in the order accepted), in a task of its
/// own. Gives the URL of the MCP endpoint there.
pub(crate) async fn serve<F, Fut>(connected: F) -> String
where
    F: Fn(TcpStream, usize) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        for connection in 0.. {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(connected(stream, connection));
        }
    });
    format!("http://127.0.0.1:{port}/mcp")
}

/// Reads the next request off `stream`: its head, lower-cased, and its body (as many bytes
/// as its `content-length` says). `read` holds what was read and not used yet, for the next
/// request; `None` once the connection ended.
pub(crate) async fn read_request(
    stream: &mut TcpStream,
    read: &mut Vec<u8>,
) -> Option<(String, Vec<u8>)> {
    let mut buffer = vec![0; 4096];
    loop {
        if let Some(head_end) = memchr::memmem::find(read, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&read[..head_end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .map_or(0, |value| value.trim().parse().unwrap());
            let end = head_end + 4 + length;
            if read.len() >= end {
                let body = read[head_end + 4..end].to_vec();
                read.drain(..end);
                return Some((head, body));
            }
        }
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return None,
            Ok(count) => read.extend_from_slice(&buffer[..count]),
        }
    }
}

/// A POSTed message as the tests' handshake-era servers take it: answered here (a
/// notification, `initialize`, a method they do not serve), or a `tools/call` of `id`
/// for the test's server to answer its own way.
pub(crate) enum Posted {
    Answered(String),
    Call(serde_json::Value),
}

/// Reads `body`, a message POSTed to a server named `name`, and answers it unless it is a
/// `tools/call`.
pub(crate) fn posted(body: &[u8], name: &str) -> Posted {
    let message: serde_json::Value = serde_json::from_slice(body).unwrap();
    let id = &message["id"];
    Posted::Answered(match message["method"].as_str().unwrap() {
        _ if id.is_null() => empty("202 Accepted"),
        "initialize" => initialized(id, name),
        "tools/call" => return Posted::Call(id.clone()),
        _ => empty("400 Bad Request"),
    })
}

/// A response with no body, of `status` (`"202 Accepted"`).
pub(crate) fn empty(status: &str) -> String {
    format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n")
}

/// The answer to a handshake-era `initialize` of `id` from a server named `name` that
/// offers tools: a JSON body, and the session `s1` opened.
fn initialized(id: &serde_json::Value, name: &str) -> String {
    let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": "1"},
    }})
    .to_string();
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
         mcp-session-id: s1\r\ncontent-length: {}\r\n\r\n{answer}",
        answer.len()
    )
}

/// The head of a response whose body is an event stream sent in chunks.
pub(crate) const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                                      transfer-encoding: chunked\r\n\r\n";

/// `event` as one chunk of a chunked body.
pub(crate) fn chunk(event: &str) -> String {
    format!("{:x}\r\n{event}\r\n", event.len())
}

/// The event that answers request `id` with the text `text`.
pub(crate) fn answer_event(id: &serde_json::Value, text: &str) -> String {
    let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {
        "content": [{"type": "text", "text": text}],
    }});
    format!("event: message\ndata: {answer}\n\n")
}
