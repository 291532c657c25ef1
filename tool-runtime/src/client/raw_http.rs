//! Reads HTTP/1.1 requests off a bare TCP stream, for the client's tests: their servers
//! answer byte by byte what a test needs (a stream held open past its answer, a connection
//! closed unannounced), which a server framework would not let a test do.

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

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
