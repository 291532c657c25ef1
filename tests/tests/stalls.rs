//! A sync tool that was quick many times and then turns slow keeps its timeout, and stalls
//! nothing else: other requests on the same stdio connection are answered while it runs.
//! The slow call blocks at a gate the test opens only at the end, so every answer the test
//! reads before then came while the tool was still running. Run in
//! memory (the async stdio server on a single-threaded runtime), over the real stdin and
//! stdout of a process (the threaded reader), over HTTP (quick tools run between the turns of
//! the server's runtime), and through the registry.

#[path = "../fixtures/stalls.rs"]
mod stalls;

use serde_json::{json, Value};
use std::sync::atomic::AtomicU32;
use tool_runtime::mcp::{McpServer, ServerInfo};
use tool_runtime::{tool, CallError, Registry};
use tool_tests::gate::FileGate;
use tool_tests::stdio::Session;
use tool_tests::{rpc, INITIALIZE};

static DIRECT_CALLS: AtomicU32 = AtomicU32::new(0);

/// `turns_slow`, for the call made through the registry (its own count of calls).
#[tool(timeout = "500ms")]
fn turns_slow_direct(
    /// The gate at which the slow calls block (a directory).
    gate: String,
) -> u32 {
    stalls::quick_then_slow(&DIRECT_CALLS, &gate)
}

/// The scenario: twenty quick calls of each tool, then `turns_slow` turns slow (it blocks
/// at `gate`) while other requests come; they are answered, and the slow call gets its
/// timeout, all while the tool is still blocked.
async fn a_tool_turns_slow(client: &mut Session, gate: &FileGate) {
    let slow = json!({"gate": gate.path()});
    client.send(INITIALIZE).await;
    assert_eq!(client.next().await["id"], 0);
    // Twenty quick calls of each: both tools now run in place or on a lane, not the pool.
    for id in 1..=20u64 {
        for line in [
            rpc::call(id, "turns_slow", slow.clone()),
            rpc::call(1000 + id, "quick", json!({"a": id})),
        ] {
            client.send(&line).await;
            let answer = client.next().await;
            assert!(answer["result"]["isError"].is_null(), "{answer}");
        }
    }

    // In one write, a quick call and then the call that turns slow: the quick one's answer
    // is ready before the slow one starts, and must not wait for it.
    client
        .send(&format!(
            "{}\n{}",
            rpc::call(1021, "quick", json!({"a": 0})),
            rpc::call(21, "turns_slow", slow.clone())
        ))
        .await;
    gate.wait_entered_async(1).await;
    client
        .send(r#"{"jsonrpc":"2.0","id":22,"method":"ping"}"#)
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":23,"method":"tools/list"}"#)
        .await;
    client.send(&rpc::call(24, "quick", json!({"a": 41}))).await;
    // The others are answered while the slow call still runs, and the slow call gets its
    // timeout: the tool is still blocked, so only its time limit can have answered it.
    let mut ids = Vec::new();
    for _ in 0..5 {
        let answer = client.next().await;
        match answer["id"].as_u64() {
            Some(24) => assert_eq!(
                answer["result"]["structuredContent"],
                json!({"result": 42}),
                "{answer}"
            ),
            Some(21) => {
                assert_eq!(answer["result"]["isError"], true, "{answer}");
                assert_eq!(
                    answer["result"]["content"][0]["text"],
                    "tool 'turns_slow' did not finish within 500ms and was stopped"
                );
            }
            _ => assert!(answer.get("result").is_some(), "{answer}"),
        }
        ids.push(answer["id"].as_u64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, [21, 22, 23, 24, 1021], "every request answered");
    gate.release();

    // The server goes on serving.
    client.send(&rpc::call(25, "quick", json!({"a": 1}))).await;
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
        let mut client = Session::in_memory(&server);
        a_tool_turns_slow(&mut client, &FileGate::new("stalls-in-memory")).await;
        assert_eq!(client.finish().await, Vec::<Value>::new());
    });
}

/// The process's real stdin and stdout, where a reader thread runs quick tools in place and
/// hands its role over when one turns slow.
#[tokio::test]
async fn over_process_stdio_a_sync_tool_turning_slow_times_out_and_stalls_no_other_request() {
    let mut client = Session::process(env!("CARGO_BIN_EXE_stall-tools"), &[]);
    a_tool_turns_slow(&mut client, &FileGate::new("stalls-process")).await;
    assert_eq!(client.finish().await, Vec::<Value>::new());
}

#[tokio::test]
async fn a_registry_call_of_a_sync_tool_turning_slow_keeps_its_timeout() {
    let registry = Registry::new().unwrap();
    let gate = FileGate::new("stalls-registry");
    let arguments = json!({"gate": gate.path()});
    for _ in 0..20 {
        let result = registry.call("turns_slow_direct", arguments.clone()).await;
        assert!(result.error().is_none());
    }
    // The tool stays blocked: only its time limit can end the call.
    let result = registry.call("turns_slow_direct", arguments).await;
    assert!(
        matches!(result.error(), Some(CallError::TimedOut { .. })),
        "{:?}",
        result.error()
    );
    assert_eq!(gate.entered_pids().len(), 1, "the slow call ran");
    gate.release();
}

/// `serve --http` on one thread, where quick sync tools run on the runtime's own thread
/// between its turns: when one turns slow, another thread drives the runtime, so the other
/// requests are answered and the slow call's time limit fires.
#[test]
fn over_http_a_sync_tool_turning_slow_times_out_and_stalls_no_other_request() {
    use tool_tests::http::{open_session, Reply, Request};
    use tool_tests::spawn_http;
    let server = spawn_http(env!("CARGO_BIN_EXE_stall-tools"), "127.0.0.1", &[], &[]);
    let port = server.port;
    let session = open_session(port);
    let gate = FileGate::new("stalls-http");
    let slow = json!({"gate": gate.path()});
    let result = |reply: Reply| -> Value {
        assert_eq!(reply.status, 200, "{reply:?}");
        let message: Value = serde_json::from_str(&reply.body).expect("a JSON answer");
        message["result"].clone()
    };
    for id in 1..=20u32 {
        for (name, arguments) in [("turns_slow", slow.clone()), ("quick", json!({"a": id}))] {
            let answer = result(
                Request::mcp(rpc::call(id, name, arguments))
                    .session(&session)
                    .send(port),
            );
            assert!(answer["isError"].is_null(), "{answer}");
        }
    }

    let slow_session = session.clone();
    let slow = std::thread::spawn(move || {
        Request::mcp(rpc::call(21, "turns_slow", slow))
            .session(&slow_session)
            .send(port)
    });
    gate.wait_entered(1);
    // Answered while the slow call's tool is blocked.
    let quick = result(
        Request::mcp(rpc::call(22, "quick", json!({"a": 41})))
            .session(&session)
            .send(port),
    );
    assert_eq!(quick["structuredContent"], json!({"result": 42}));

    // The tool is still blocked: only its time limit can have answered the slow call.
    let answer = result(slow.join().expect("the slow call's thread"));
    assert_eq!(answer["isError"], true);
    assert_eq!(
        answer["content"][0]["text"],
        "tool 'turns_slow' did not finish within 500ms and was stopped"
    );
    gate.release();
    // The server goes on serving.
    let answer = result(
        Request::mcp(rpc::call(23, "quick", json!({"a": 1})))
            .session(&session)
            .send(port),
    );
    assert_eq!(answer["structuredContent"], json!({"result": 2}));
}
