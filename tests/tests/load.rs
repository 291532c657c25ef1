//! Load and faults: 16 concurrent HTTP clients, every answer exactly once with the right id
//! (10,000 calls over stdio, with memory back to its baseline, are in memory.rs); calls in
//! flight past the limit; a client that goes away mid-call (cancelling it at 2026-07-28, not
//! in the handshake era); input that ends in the middle of a message.

#[path = "../fixtures/load.rs"]
mod load;

use load::{expected, per_request};
use serde_json::{json, Value};
use std::time::Duration;
use tool_runtime::mcp::ServerOptions;
use tool_runtime::tool;
use tool_runtime::transport::http::{router, HttpOptions};
use tool_tests::http::Request;
use tool_tests::stdio::Session;
use tool_tests::{server, Signal, INITIALIZE};

/// Fired by the test to let `held` calls end.
static RELEASE_HELD: Signal = Signal::new();

/// Doubles `n` once the test lets it.
#[tool]
async fn held(n: i64) -> i64 {
    RELEASE_HELD.wait("the test letting held calls end").await;
    n * 2
}

/// Fired when `hold` starts.
static HOLD_STARTED: Signal = Signal::new();
/// Fired when `hold`'s future is dropped.
static HOLD_DROPPED: Signal = Signal::new();

struct Flag;
impl Drop for Flag {
    fn drop(&mut self) {
        HOLD_DROPPED.fire();
    }
}

/// Holds the call for ten seconds.
#[tool]
async fn hold() -> u8 {
    let _flag = Flag;
    HOLD_STARTED.fire();
    tokio::time::sleep(Duration::from_secs(10)).await;
    0
}

/// Fired when `outlive` starts.
static OUTLIVE_STARTED: Signal = Signal::new();
/// Fired by the test to let `outlive` end.
static RELEASE_OUTLIVE: Signal = Signal::new();
/// Fired when `outlive` ran to its end (never when its future is dropped).
static OUTLIVE_ENDED: Signal = Signal::new();

/// Waits until the test lets it end, and says so.
#[tool]
async fn outlive() -> u8 {
    OUTLIVE_STARTED.fire();
    RELEASE_OUTLIVE.wait("the test letting outlive end").await;
    OUTLIVE_ENDED.fire();
    0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_http_clients_at_once() {
    let app = router(server(ServerOptions::default()), HttpOptions::default());
    let clients: Vec<_> = (0..16u64)
        .map(|client| {
            let app = app.clone();
            tokio::spawn(async move {
                for i in 0..150u64 {
                    let id = client * 1000 + i + 1;
                    let answer = Request::mcp(per_request(id))
                        .header("Accept", "application/json")
                        .send_to(&app)
                        .await
                        .message();
                    assert_eq!(answer["id"], id);
                    assert_eq!(answer["result"]["structuredContent"], expected(id));
                }
            })
        })
        .collect();
    for client in clients {
        client.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_past_the_in_flight_limit_are_refused_with_the_limit() {
    let server = server(ServerOptions::default().max_in_flight(3));
    let connection = server.connection();
    let (sink, mut messages) = tool_runtime::mcp::connection::outbox();
    let _ = connection.handle(INITIALIZE.as_bytes(), &sink);
    messages.recv().await.unwrap();
    for id in 1..=4 {
        let handled = connection.handle(
            format!(
                concat!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","#,
                    r#""params":{{"name":"held","arguments":{{"n":1}}}}}}"#
                ),
                id = id
            )
            .as_bytes(),
            &sink,
        );
        if let Some(work) = handled.into_work() {
            tokio::spawn(work.run());
        }
    }
    let refused: Value = serde_json::from_slice(&messages.recv().await.unwrap().bytes).unwrap();
    assert_eq!(refused["id"], 4);
    assert_eq!(refused["error"]["code"], -32000, "the server-busy error");
    assert_eq!(refused["error"]["data"]["retryAfterMs"], 1000);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Server busy: 3 requests are already running"),
        "{refused}"
    );
    // Held until the refusal was read: the three were surely running when the fourth came.
    RELEASE_HELD.fire();
    for _ in 0..3 {
        let answer: Value = serde_json::from_slice(&messages.recv().await.unwrap().bytes).unwrap();
        assert_eq!(answer["result"]["structuredContent"], json!({"result": 2}));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_mid_call_drops_the_work() {
    let app = router(server(ServerOptions::default()), HttpOptions::default());
    let body = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hold","#,
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
        r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#
    );
    // No notification comes before the answer, so the server holds the response back
    // until the answer is ready (JSON); the client gives up while it waits.
    let waiting = tokio::spawn(async move { Request::mcp(body).send_to(&app).await });
    HOLD_STARTED.wait("the held call's start").await;
    assert!(!HOLD_DROPPED.fired());
    waiting.abort(); // The client hangs up.
    HOLD_DROPPED
        .wait("the drop of the held call's future")
        .await;
}

/// In the handshake era a client that goes away mid-call does not cancel it (only
/// `notifications/cancelled` does): the call runs to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_era_client_that_goes_away_mid_call_leaves_it_running() {
    let app = router(server(ServerOptions::default()), HttpOptions::default());
    let opened = Request::mcp(INITIALIZE).send_to(&app).await;
    let session = opened
        .header("mcp-session-id")
        .expect("a session for the initialize")
        .to_owned();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"outlive"}}"#;
    let (request, serving) = (Request::mcp(call).session(&session), app.clone());
    // The server (and the session) lives on here; only the request's future goes.
    let waiting = tokio::spawn(async move { request.send_to(&serving).await });
    OUTLIVE_STARTED.wait("the call's start").await;
    waiting.abort(); // The client hangs up.
    assert!(waiting.await.unwrap_err().is_cancelled());
    RELEASE_OUTLIVE.fire();
    OUTLIVE_ENDED
        .wait("the call running to its end after its client went away")
        .await;
    drop(app);
}

#[tokio::test]
async fn input_that_ends_mid_message_is_answered_and_the_server_exits_cleanly() {
    let server = server(ServerOptions::default());
    let mut session = Session::in_memory(&server);
    session
        .send_bytes(br#"{"jsonrpc":"2.0","id":1,"method":"pi"#)
        .await;
    let answers = session.finish().await;
    assert_eq!(
        answers.len(),
        1,
        "one answer, then the output ends: {answers:?}"
    );
    assert_eq!(answers[0]["error"]["code"], -32700);
}

/// Never returns.
#[tool]
async fn forever() -> u8 {
    std::future::pending::<()>().await;
    0
}

#[tokio::test]
async fn a_tool_that_never_returns_does_not_keep_the_server_alive_after_input_ends() {
    let server = server(ServerOptions::default().shutdown_grace(Duration::from_millis(100)));
    let mut session = Session::in_memory(&server);
    session
        .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#)
        .await;
    session
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forever"}}"#)
        .await;
    // The server exits after the grace period (`finish` fails the test if it does not), and
    // the cancelled call gets no answer.
    let answers = session.finish().await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], 0);
}

/// Fired when `occupy` starts.
static OCCUPIED: Signal = Signal::new();

/// Holds its place for a minute, unless cancelled.
#[tool]
async fn occupy() -> u8 {
    OCCUPIED.fire();
    tokio::time::sleep(Duration::from_secs(60)).await;
    0
}

/// The status and body of `GET path` on `app`.
async fn get(app: &axum::Router, path: &str) -> (u16, String) {
    let reply = Request::get(path).send_to(app).await;
    (reply.status, reply.body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_says_no_while_the_server_holds_all_the_requests_it_takes() {
    let app = router(
        server(ServerOptions::default().max_in_flight_total(1)),
        HttpOptions::default(),
    );
    assert_eq!(get(&app, "/readyz").await, (200, "ready\n".to_owned()));
    let body = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"occupy","#,
        r#""arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
        r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#
    );
    let call = {
        let app = app.clone();
        let request = Request::mcp(body).header("Accept", "application/json");
        tokio::spawn(async move { request.send_to(&app).await })
    };
    OCCUPIED.wait("the call started").await;
    assert_eq!(
        get(&app, "/readyz").await,
        (503, "at capacity\n".to_owned())
    );
    let (_, health) = get(&app, "/healthz").await;
    assert!(health.contains(r#""ready":false"#), "{health}");

    // The client goes away: its call is cancelled, and the place is free again.
    call.abort();
    let mut polling = tool_tests::Polling::new("readiness after the call ended");
    loop {
        let ready = get(&app, "/readyz").await;
        if ready.0 == 200 {
            break;
        }
        polling.again(&Value::String(ready.1)).await;
    }
}
