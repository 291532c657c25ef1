//! A sync tool that was quick many times and then turns slow keeps its timeout, and stalls
//! nothing else: other requests on the same stdio connection are answered at once.

use serde_json::{json, Value};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_runtime::mcp::{McpServer, ServerInfo};
use tool_runtime::{tool, CallError, Registry};
use tool_tests::INITIALIZE;

/// How many calls `turns_slow` has had.
static SLOW_CALLS: AtomicU32 = AtomicU32::new(0);
/// How many calls `turns_slow_direct` has had.
static DIRECT_CALLS: AtomicU32 = AtomicU32::new(0);

/// Quick for 20 calls, then sleeps for 2 s.
#[tool(timeout = "500ms")]
fn turns_slow() -> u32 {
    let call = SLOW_CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if call > 20 {
        std::thread::sleep(Duration::from_secs(2));
    }
    call
}

/// The same, for the call made through the registry.
#[tool(timeout = "500ms")]
fn turns_slow_direct() -> u32 {
    let call = DIRECT_CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if call > 20 {
        std::thread::sleep(Duration::from_secs(2));
    }
    call
}

/// Always quick.
#[tool]
fn quick(a: i64) -> i64 {
    a + 1
}

fn call(id: u64, name: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}).to_string()
}

/// A client's ends of an in-memory stdio pipe.
struct Client {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Client {
    async fn send(&mut self, line: &str) {
        self.write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
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

/// The stdio server on a single-threaded runtime, as `serve` runs it by default.
#[test]
fn a_sync_tool_turning_slow_times_out_and_stalls_no_other_request() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let server = McpServer::new(
            Registry::new().unwrap(),
            ServerInfo {
                name: "t".into(),
                version: "1".into(),
                instructions: None,
            },
        );
        let (client_side, server_side) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_side);
        let serving = tokio::spawn(async move {
            tool_runtime::transport::stdio::serve(&server, server_read, server_write).await
        });
        let (client_read, write) = tokio::io::split(client_side);
        let mut client = Client {
            write,
            lines: BufReader::new(client_read).lines(),
        };

        client.send(INITIALIZE).await;
        assert_eq!(client.next().await["id"], 0);
        // Twenty quick calls of each: both tools now run on a lane, not the blocking pool.
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
        client.send(&call(21, "turns_slow", json!({}))).await;
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
        for _ in 0..3 {
            let answer = client.next().await;
            if answer["id"] == 24 {
                assert_eq!(answer["result"]["structuredContent"], json!({"result": 42}));
            }
            ids.push(answer["id"].as_u64().unwrap());
        }
        ids.sort_unstable();
        assert_eq!(ids, [22, 23, 24], "the other requests came first");
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

        drop(client);
        let _ = serving.await;
    });
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

/// The same over the process's real stdin and stdout, where a reader thread runs quick sync
/// tools in place and hands its role over when one turns slow.
#[test]
fn over_process_stdio_a_tool_turning_slow_times_out_and_stalls_no_other_request() {
    use std::io::{BufRead, Write};
    use std::process::{Command, Stdio};

    let mut server = Command::new(env!("CARGO_BIN_EXE_stall-tools"))
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the stall-tools binary starts");
    let mut input = server.stdin.take().unwrap();
    let output = server.stdout.take().unwrap();
    let (lines, answers) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(output).lines() {
            let Ok(line) = line else { break };
            if lines.send(serde_json::from_str(&line).unwrap()).is_err() {
                break;
            }
        }
    });
    let mut send = |line: &str| {
        input.write_all(format!("{line}\n").as_bytes()).unwrap();
        input.flush().unwrap();
    };
    let next = || {
        answers
            .recv_timeout(Duration::from_secs(5))
            .expect("an answer within 5 s")
    };

    send(INITIALIZE);
    assert_eq!(next()["id"], 0);
    for id in 1..=20u64 {
        for line in [
            call(id, "turns_slow", json!({})),
            call(1000 + id, "quick", json!({"a": id})),
        ] {
            send(&line);
            let answer = next();
            assert!(answer["result"]["isError"].is_null(), "{answer}");
        }
    }

    let sent = Instant::now();
    send(&call(21, "turns_slow", json!({})));
    std::thread::sleep(Duration::from_millis(50));
    send(r#"{"jsonrpc":"2.0","id":22,"method":"ping"}"#);
    send(r#"{"jsonrpc":"2.0","id":23,"method":"tools/list"}"#);
    send(&call(24, "quick", json!({"a": 41})));
    let mut ids = Vec::new();
    for _ in 0..3 {
        let answer = next();
        if answer["id"] == 24 {
            assert_eq!(answer["result"]["structuredContent"], json!({"result": 42}));
        }
        ids.push(answer["id"].as_u64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, [22, 23, 24], "the other requests came first");
    assert!(
        sent.elapsed() < Duration::from_millis(450),
        "the other requests waited for the slow call"
    );
    let answer = next();
    assert_eq!(answer["id"], 21);
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "tool 'turns_slow' did not finish within 500ms and was stopped"
    );
    assert!(sent.elapsed() < Duration::from_millis(1500));

    // The slow tool now runs on the pool, with its limit; the server still serves.
    send(&call(25, "quick", json!({"a": 1})));
    assert_eq!(next()["result"]["structuredContent"], json!({"result": 2}));
    drop(input);
    let status = server.wait().unwrap();
    assert!(status.success(), "{status}");
}
