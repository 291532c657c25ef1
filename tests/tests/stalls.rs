//! A sync tool that was quick many times and then turns slow keeps its timeout, and stalls
//! nothing else: other requests on the same stdio connection are answered at once. Run in
//! memory (the async stdio server on a single-threaded runtime), over the real stdin and
//! stdout of a process (the threaded reader), over HTTP (quick tools run between the turns of
//! the server's runtime), and through the registry.

#[path = "../fixtures/stalls.rs"]
mod stalls;

use serde_json::{json, Value};
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, Lines};
use tool_runtime::mcp::{McpServer, ServerInfo};
use tool_runtime::{tool, CallError, Registry};
use tool_tests::INITIALIZE;

static DIRECT_CALLS: AtomicU32 = AtomicU32::new(0);

/// `turns_slow`, for the call made through the registry (its own count of calls).
#[tool(timeout = "500ms")]
fn turns_slow_direct() -> u32 {
    stalls::quick_then_slow(&DIRECT_CALLS)
}

fn call(id: u64, name: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name, "arguments": arguments
    }})
    .to_string()
}

/// A client's ends of a stdio connection.
struct Client {
    write: Box<dyn AsyncWrite + Unpin + Send>,
    lines: Lines<BufReader<Box<dyn AsyncRead + Unpin + Send>>>,
}

impl Client {
    fn new(
        write: impl AsyncWrite + Unpin + Send + 'static,
        read: impl AsyncRead + Unpin + Send + 'static,
    ) -> Client {
        let read: Box<dyn AsyncRead + Unpin + Send> = Box::new(read);
        Client {
            write: Box::new(write),
            lines: BufReader::new(read).lines(),
        }
    }

    async fn send(&mut self, line: &str) {
        self.write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        self.write.flush().await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.lines.next_line())
            .await
            .expect("an answer within 5 s")
            .unwrap()
            .expect("the server is still there");
        serde_json::from_str(&line).unwrap()
    }
}

/// The scenario: twenty quick calls of each tool, then `turns_slow` turns slow while other
/// requests come; they are answered at once, and the slow call gets its timeout.
async fn a_tool_turns_slow(client: &mut Client) {
    client.send(INITIALIZE).await;
    assert_eq!(client.next().await["id"], 0);
    // Twenty quick calls of each: both tools now run in place or on a lane, not the pool.
    for id in 1..=20u64 {
        for line in [
            call(id, "turns_slow", json!({})),
            call(1000 + id, "quick", json!({"a": id})),
        ] {
            client.send(&line).await;
            let answer = client.next().await;
            assert!(answer["result"]["isError"].is_null(), "{answer}");
        }
    }

    let sent = Instant::now();
    // In one write, a quick call and then the call that turns slow: the quick one's answer
    // is ready before the slow one starts, and must not wait for it.
    client
        .send(&format!(
            "{}\n{}",
            call(1021, "quick", json!({"a": 0})),
            call(21, "turns_slow", json!({}))
        ))
        .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    client
        .send(r#"{"jsonrpc":"2.0","id":22,"method":"ping"}"#)
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":23,"method":"tools/list"}"#)
        .await;
    client.send(&call(24, "quick", json!({"a": 41}))).await;
    // The others are answered while the slow call still runs, before its timeout.
    let mut ids = Vec::new();
    for _ in 0..4 {
        let answer = client.next().await;
        if answer["id"] == 24 {
            assert_eq!(answer["result"]["structuredContent"], json!({"result": 42}));
        }
        ids.push(answer["id"].as_u64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, [22, 23, 24, 1021], "the other requests came first");
    assert!(
        sent.elapsed() < Duration::from_millis(450),
        "the other requests waited for the slow call"
    );

    // Then the slow call gets its timeout, long before the tool's 2 s are over.
    let answer = client.next().await;
    assert_eq!(answer["id"], 21);
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "tool 'turns_slow' did not finish within 500ms and was stopped"
    );
    assert!(sent.elapsed() < Duration::from_millis(1500));

    // The server goes on serving.
    client.send(&call(25, "quick", json!({"a": 1}))).await;
    assert_eq!(
        client.next().await["result"]["structuredContent"],
        json!({"result": 2})
    );
}

/// The async stdio server on a single-threaded runtime, where quick tools run on a lane.
#[test]
fn in_memory_a_sync_tool_turning_slow_times_out_and_stalls_no_other_request() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let server = McpServer::new(Registry::new().unwrap(), ServerInfo::new("t", "1"));
        let (client_side, server_side) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_side);
        let serving = tokio::spawn(async move {
            tool_runtime::transport::stdio::serve(&server, server_read, server_write).await
        });
        let (read, write) = tokio::io::split(client_side);
        let mut client = Client::new(write, read);
        a_tool_turns_slow(&mut client).await;
        drop(client);
        serving.await.unwrap().unwrap();
    });
}

/// The process's real stdin and stdout, where a reader thread runs quick tools in place and
/// hands its role over when one turns slow.
#[tokio::test]
async fn over_process_stdio_a_sync_tool_turning_slow_times_out_and_stalls_no_other_request() {
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_stall-tools"))
        .arg("serve")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the stall-tools binary starts");
    let write = server.stdin.take().unwrap();
    let read = server.stdout.take().unwrap();
    let mut client = Client::new(write, read);
    a_tool_turns_slow(&mut client).await;
    drop(client);
    let status = server.wait().await.unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn a_registry_call_of_a_sync_tool_turning_slow_keeps_its_timeout() {
    let registry = Registry::new().unwrap();
    for _ in 0..20 {
        let result = registry.call("turns_slow_direct", json!({})).await;
        assert!(result.error().is_none());
    }
    let started = Instant::now();
    let result = registry.call("turns_slow_direct", json!({})).await;
    assert!(
        matches!(result.error(), Some(CallError::TimedOut { .. })),
        "{:?}",
        result.error()
    );
    assert!(started.elapsed() < Duration::from_millis(1500));
}

/// `serve --http` on one thread, where quick sync tools run on the runtime's own thread
/// between its turns: when one turns slow, another thread drives the runtime, so the other
/// requests are answered and the slow call's time limit fires.
#[test]
fn over_http_a_sync_tool_turning_slow_times_out_and_stalls_no_other_request() {
    use tool_tests::{call_reply, open_session, spawn_http};
    let server = spawn_http(env!("CARGO_BIN_EXE_stall-tools"), "127.0.0.1", &[], &[]);
    let port = server.port;
    let session = open_session(port);
    let result = |reply: tool_tests::HttpReply| -> Value {
        assert_eq!(reply.status, 200, "{reply:?}");
        let message: Value = serde_json::from_str(&reply.body).expect("a JSON answer");
        message["result"].clone()
    };
    for id in 1..=20u32 {
        for (name, arguments) in [("turns_slow", json!({})), ("quick", json!({"a": id}))] {
            let answer = result(call_reply(port, &session, id, name, arguments));
            assert!(answer["isError"].is_null(), "{answer}");
        }
    }

    let sent = Instant::now();
    let slow_session = session.clone();
    let slow =
        std::thread::spawn(move || call_reply(port, &slow_session, 21, "turns_slow", json!({})));
    // Nothing outside the server tells when the slow call has started; this makes it likely
    // (had it not, the quick call below would pass without proving anything).
    std::thread::sleep(Duration::from_millis(50));
    let quick = result(call_reply(port, &session, 22, "quick", json!({"a": 41})));
    assert_eq!(quick["structuredContent"], json!({"result": 42}));
    assert!(
        sent.elapsed() < Duration::from_millis(450),
        "the quick call waited for the slow one"
    );

    let answer = result(slow.join().expect("the slow call's thread"));
    assert_eq!(answer["isError"], true);
    assert_eq!(
        answer["content"][0]["text"],
        "tool 'turns_slow' did not finish within 500ms and was stopped"
    );
    assert!(
        sent.elapsed() < Duration::from_millis(1500),
        "the time limit fired, not the tool's end"
    );
    // The server goes on serving.
    let answer = result(call_reply(port, &session, 23, "quick", json!({"a": 1})));
    assert_eq!(answer["structuredContent"], json!({"result": 2}));
}
