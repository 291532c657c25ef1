//! The transports: stdio over an in-memory pipe, and the HTTP router (Streamable HTTP and
//! seed 003's REST endpoints) driven without sockets.

use axum::http::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;
use tool_runtime::mcp::ServerOptions;
use tool_runtime::transport::http::{router, Cors, HttpOptions};
use tool_runtime::{tool, Progress};
use tool_tests::http::{Reply, Request};
use tool_tests::stdio::Session;
use tool_tests::{messages, server, Signal, INITIALIZE, PATIENCE};

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Waits a little, reporting progress.
#[tool]
async fn wait(
    /// How long, in milliseconds.
    millis: u64,
    progress: Progress,
) -> u64 {
    progress.report(0.0, None, None);
    tokio::time::sleep(Duration::from_millis(millis)).await;
    millis
}

/// Lets `held` end.
static RELEASE_HELD: Signal = Signal::new();

/// Waits until the test lets it end; says so.
#[tool]
async fn held() -> &'static str {
    RELEASE_HELD
        .wait("the test letting the held call end")
        .await;
    "released"
}

/// Fails.
#[tool]
fn fail() -> Result<(), String> {
    Err("nope".into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_answers_concurrently_and_exits_at_end_of_input() {
    let server = server(ServerOptions::default());
    let mut session = Session::in_memory(&server);
    let input = [
        INITIALIZE,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"held","arguments":{}}}"#,
        concat!(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","#,
            r#""params":{"name":"add","arguments":{"a":1,"b":2}}}"#
        ),
        "",
        concat!(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","#,
            r#""params":{"name":"add","arguments":{"a":1,"b":"2"}}}"#
        ),
    ];
    for line in input {
        session.send(line).await;
    }
    session.end_input().await;

    // The others are answered while the call sent first still runs; input has ended.
    let mut answers = Vec::new();
    while answers.len() < 3 {
        answers.push(session.next().await);
    }
    let mut ids: Vec<Value> = answers.iter().map(|a| a["id"].clone()).collect();
    assert_eq!(ids[0], 0);
    ids.sort_by_key(|id| id.as_i64());
    assert_eq!(ids, [0, 2, 3], "{answers:?}");
    let by_id = |id: i64| answers.iter().find(|a| a["id"] == id).unwrap();
    assert_eq!(
        by_id(2)["result"]["structuredContent"],
        json!({"result": 3})
    );
    assert_eq!(by_id(3)["result"]["isError"], true);
    // In-flight work finishes before exit.
    RELEASE_HELD.fire();
    let rest = session.finish().await;
    assert_eq!(
        rest.len(),
        1,
        "only the held call's answer is left: {rest:?}"
    );
    assert_eq!(rest[0]["id"], 1, "{rest:?}");
    assert_eq!(
        rest[0]["result"]["structuredContent"],
        json!({"result": "released"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_at_end_of_input_ends_listen_streams_and_exits_without_waiting_for_them() {
    // A grace far longer than the test's patience: only an exit that does not wait for
    // the open stream ends in time.
    let server = server(ServerOptions::default().shutdown_grace(Duration::from_secs(3600)));
    let mut session = Session::in_memory(&server);
    let listen = tool_tests::rpc::per_request(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
        json!({}),
    );
    session.send(&listen).await;
    let acknowledged = session.next().await;
    assert_eq!(
        acknowledged["method"], "notifications/subscriptions/acknowledged",
        "{acknowledged}"
    );
    // The client closes its input: the stream waits for news nobody will ask for, so it
    // ends, and the server exits (within the test's patience, or `finish` fails).
    let rest = session.finish().await;
    assert!(
        rest.iter().all(|message| message.get("error").is_none()),
        "{rest:?}"
    );
}

/// A ping with `id`, as a line.
fn ping(id: u64) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n")
}

/// `count` pings, one line each, ids from 0.
fn pings(count: u64) -> String {
    (0..count).map(ping).collect()
}

/// Reads `count` answers and checks that they answer ids 0 to `count - 1`, in order.
async fn answers_in_order(output: impl tokio::io::AsyncRead + Unpin, count: u64) {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(output).lines();
    for id in 0..count {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("an answer to each ping");
        assert_eq!(json_of(&line)["id"], id, "answers come in order: {line}");
    }
}

/// A client that sends without reading its answers is not answered into memory without
/// end: once its end of the pipe holds back what the server wrote, the server reads no
/// further, and it goes on, every answer in order, once the client reads.
#[tokio::test(start_paused = true)]
async fn stdio_reads_no_further_while_the_client_does_not_take_its_answers() {
    use tokio::io::AsyncWriteExt;
    let server = server(ServerOptions::default());
    let (mut to_server, server_input) = tokio::io::duplex(4096);
    let (server_output, from_server) = tokio::io::duplex(4096);
    let serving = tokio::spawn(async move {
        tool_runtime::transport::stdio::serve(&server, server_input, server_output).await
    });
    // 90 KB of requests, whose answers (80 KB) are far more than the pipes hold.
    let count = 2000;
    let requests = pings(count);
    let sending = tokio::spawn(async move {
        to_server.write_all(requests.as_bytes()).await.unwrap();
        to_server
    });
    // With time paused the clock moves only when nothing can run: this sleep ends once the
    // server has stopped for good, or has read every request.
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert!(
        !sending.is_finished(),
        "the server read every request though the client took none of its answers"
    );
    answers_in_order(from_server, count).await;
    drop(sending.await.unwrap());
    serving.await.unwrap().unwrap();
}

/// An input that always has the next message at once, as an in-memory reader does (tokio's
/// pipes instead make a task wait now and then, whatever they hold): `count` pings, one per
/// read, counting those handed out.
struct NeverWaiting {
    count: u64,
    given: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl tokio::io::AsyncRead for NeverWaiting {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let id = self.given.load(std::sync::atomic::Ordering::Relaxed);
        if id < self.count {
            buf.put_slice(ping(id).as_bytes());
            self.given
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        std::task::Poll::Ready(Ok(()))
    }
}

/// The same from an input that never makes the server wait: it does not read the whole
/// input in one go, answering it all into memory, but writes as it reads and stops when
/// the client does not take the answers.
#[tokio::test(start_paused = true)]
async fn stdio_reads_no_further_from_an_input_that_never_waits_while_the_answers_are_not_taken() {
    let server = server(ServerOptions::default());
    let count = 20_000;
    let given = std::sync::Arc::default();
    let input = NeverWaiting {
        count,
        given: std::sync::Arc::clone(&given),
    };
    let (server_output, from_server) = tokio::io::duplex(4096);
    let serving = tokio::spawn(async move {
        tool_runtime::transport::stdio::serve(&server, input, server_output).await
    });
    tokio::time::sleep(Duration::from_secs(3600)).await;
    let read = given.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        read < 1000,
        "the server read {read} of {count} requests though the client took none of its answers"
    );
    answers_in_order(from_server, count).await;
    serving.await.unwrap().unwrap();
}

/// An `AsyncWrite` that counts the writes it is given.
struct CountedWrites<W> {
    inner: W,
    writes: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl<W: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for CountedWrites<W> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.writes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Requests read together are answered together: the answers they made at once go out in
/// writes of up to 64 (one system call each on a pipe), not one each.
#[tokio::test]
async fn stdio_writes_the_answers_to_requests_read_together_at_once() {
    use tokio::io::AsyncWriteExt;
    let server = server(ServerOptions::default());
    let (mut to_server, server_input) = tokio::io::duplex(1 << 20);
    let (server_output, from_server) = tokio::io::duplex(1 << 20);
    let writes = std::sync::Arc::default();
    let output = CountedWrites {
        inner: server_output,
        writes: std::sync::Arc::clone(&writes),
    };
    // All of them are in the pipe before the server reads: it reads them in one go.
    let count = 100;
    to_server.write_all(pings(count).as_bytes()).await.unwrap();
    let serving = tokio::spawn(async move {
        tool_runtime::transport::stdio::serve(&server, server_input, output).await
    });
    answers_in_order(from_server, count).await;
    assert_eq!(
        writes.load(std::sync::atomic::Ordering::Relaxed),
        2,
        "100 answers made at once go out in two writes (64 and 36)"
    );
    drop(to_server);
    serving.await.unwrap().unwrap();
}

fn app() -> axum::Router {
    router(server(ServerOptions::default()), HttpOptions::default())
}

/// `request` sent through `app`: its status, the reply (for its headers), and its body.
async fn send(app: &axum::Router, request: Request) -> (StatusCode, Reply, String) {
    let reply = request.send_to(app).await;
    let status = StatusCode::from_u16(reply.status).expect("a status");
    let body = reply.body.clone();
    (status, reply, body)
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

#[tokio::test]
async fn http_sessions_of_the_handshake_era() {
    let app = app();
    let (status, headers, body) = send(&app, Request::mcp(INITIALIZE)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json_of(&body)["result"]["protocolVersion"], "2025-11-25");
    let session = headers
        .header("mcp-session-id")
        .expect("mcp-session-id")
        .to_owned();
    assert!(session.len() >= 32 && session.bytes().all(|b| (0x21..=0x7e).contains(&b)));

    let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _, body) = send(
        &app,
        Request::mcp(notification).header("mcp-session-id", &session),
    )
    .await;
    assert_eq!((status, body.as_str()), (StatusCode::ACCEPTED, ""));

    let call = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","#,
        r#""params":{"name":"add","arguments":{"a":2,"b":2}}}"#
    );
    let request = Request::mcp(call)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25");
    let (status, headers, body) = send(&app, request).await;
    assert_eq!(status, StatusCode::OK);
    // Nothing came before the answer, so no stream is needed, though the client takes one.
    assert_eq!(
        headers.header("content-type").expect("content-type"),
        "application/json"
    );
    assert_eq!(
        json_of(&body)["result"]["structuredContent"],
        json!({"result": 4})
    );

    // A notification before the answer (progress) opens a stream that carries both.
    let waiting = concat!(
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","#,
        r#""params":{"name":"wait","arguments":{"millis":20},"_meta":{"progressToken":"w"}}}"#
    );
    let request = Request::mcp(waiting).header("mcp-session-id", &session);
    let (status, headers, body) = send(&app, request).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        headers.header("content-type").expect("content-type"),
        "text/event-stream"
    );
    let streamed = messages(&body);
    assert_eq!(streamed[0]["method"], "notifications/progress", "{body}");
    assert_eq!(
        streamed.last().unwrap()["result"]["structuredContent"],
        json!({"result": 20})
    );

    // JSON only when the client accepts only JSON.
    let request = Request::new("POST", "/mcp")
        .header("accept", "application/json")
        .header("mcp-session-id", &session)
        .body(call);
    let (_, headers, body) = send(&app, request).await;
    assert_eq!(
        headers.header("content-type").expect("content-type"),
        "application/json"
    );
    assert_eq!(
        json_of(&body)["result"]["structuredContent"],
        json!({"result": 4})
    );

    // Without a session, with an unknown one, with a bad version header.
    let (status, _, _) = send(&app, Request::mcp(call)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _, _) = send(&app, Request::mcp(call).header("mcp-session-id", "nope")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let request = Request::mcp(call)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "1999-01-01");
    assert_eq!(send(&app, request).await.0, StatusCode::BAD_REQUEST);
    // A version that is not ASCII is no version, not an absent header.
    let request = Request::mcp(call)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25\u{e9}");
    assert_eq!(send(&app, request).await.0, StatusCode::BAD_REQUEST);

    // DELETE ends the session.
    let delete = |id: &str| Request::new("DELETE", "/mcp").header("mcp-session-id", id);
    assert_eq!(send(&app, delete(&session)).await.0, StatusCode::NO_CONTENT);
    assert_eq!(send(&app, delete(&session)).await.0, StatusCode::NOT_FOUND);
    let (status, _, _) = send(&app, Request::mcp(call).header("mcp-session-id", &session)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let get = Request::get("/mcp").header("accept", "text/event-stream");
    assert_eq!(send(&app, get).await.0, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test(start_paused = true)]
async fn http_sessions_open_only_on_success_expire_when_idle_and_streams_need_accept() {
    let app = router(
        server(ServerOptions::default()),
        HttpOptions::default().session_idle_timeout(Duration::from_millis(200)),
    );
    // A failed initialize (no protocol version) opens no session.
    let failed = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}"#;
    let (status, headers, body) = send(&app, Request::mcp(failed)).await;
    assert_eq!(json_of(&body)["error"]["code"], -32602, "{body}");
    assert_eq!(status, StatusCode::OK);
    assert!(headers.header("mcp-session-id").is_none(), "{headers:?}");

    let (_, headers, _) = send(&app, Request::mcp(INITIALIZE)).await;
    let session = headers
        .header("mcp-session-id")
        .expect("mcp-session-id")
        .to_owned();
    let ping = |session: &str| {
        Request::mcp(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .header("mcp-session-id", session)
    };
    // Used sessions stay open past the idle timeout...
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(send(&app, ping(&session)).await.0, StatusCode::OK);
    }

    // A GET must accept an event stream.
    let get = |accept: &str| {
        Request::get("/mcp")
            .header("accept", accept)
            .header("mcp-session-id", &session)
    };
    assert_eq!(
        send(&app, get("application/json")).await.0,
        StatusCode::NOT_ACCEPTABLE
    );
    let stream = get("text/event-stream").stream_from(&app).await;
    assert_eq!(stream.status, 200);
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    drop(stream);

    // ...and idle ones end: their client gets 404 and initializes again.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(send(&app, ping(&session)).await.0, StatusCode::NOT_FOUND);
}

/// Sends `body` with exactly these headers (no standard headers filled in): the status and
/// the answer.
async fn send_raw(app: &axum::Router, body: &str, headers: &[(&str, &str)]) -> (StatusCode, Value) {
    let reply = Request::mcp(body).raw().headers(headers).send_to(app).await;
    let status = StatusCode::from_u16(reply.status).expect("a status");
    (status, reply.messages().pop().unwrap_or(Value::Null))
}

#[tokio::test]
async fn http_standard_headers_and_era_rules_are_enforced() {
    let app = app();
    let meta = concat!(
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
        r#""io.modelcontextprotocol/clientCapabilities":{}}"#
    );
    let list = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{meta}}}}}"#);
    let call = format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","#,
            r#""params":{{"name":"add","arguments":{{"a":1,"b":2}},{meta}}}}}"#
        ),
        meta = meta
    );
    let version = ("MCP-Protocol-Version", "2026-07-28");
    let mismatch = |(status, answer): (StatusCode, Value), case: &str| {
        assert_eq!(status, StatusCode::BAD_REQUEST, "{case}: {answer}");
        assert_eq!(answer["error"]["code"], -32020, "{case}: {answer}");
    };

    // Conformant headers: served, whatever the case of the header names and the
    // whitespace around values.
    let (status, answer) = send_raw(&app, &list, &[version, ("mcp-method", "tools/list")]).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(answer["result"]["tools"].is_array());
    let (status, answer) = send_raw(
        &app,
        &call,
        &[
            version,
            ("MCP-METHOD", "tools/call"),
            ("Mcp-Name", "  add  "),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["result"]["structuredContent"], json!(3));

    // Missing, mismatched and case-mismatched values: 400 with -32020.
    mismatch(send_raw(&app, &list, &[version]).await, "no Mcp-Method");
    mismatch(
        send_raw(&app, &list, &[version, ("Mcp-Method", "prompts/list")]).await,
        "another method",
    );
    mismatch(
        send_raw(&app, &list, &[version, ("Mcp-Method", "TOOLS/LIST")]).await,
        "values are case-sensitive",
    );
    mismatch(
        send_raw(&app, &call, &[version, ("Mcp-Method", "tools/call")]).await,
        "no Mcp-Name",
    );
    mismatch(
        send_raw(
            &app,
            &call,
            &[version, ("Mcp-Method", "tools/call"), ("Mcp-Name", "other")],
        )
        .await,
        "another name",
    );
    mismatch(
        send_raw(&app, &list, &[("Mcp-Method", "tools/list")]).await,
        "no MCP-Protocol-Version",
    );
    mismatch(
        send_raw(
            &app,
            &list,
            &[
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Mcp-Method", "tools/list"),
            ],
        )
        .await,
        "a version other than _meta's",
    );

    // A request claiming 2026-07-28 without the _meta that makes it so: -32602, 400.
    let bare = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#;
    let (status, answer) = send_raw(&app, bare, &[version, ("Mcp-Method", "tools/list")]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["id"], 3);
    assert_eq!(
        answer["error"]["message"],
        "Invalid params: a request at a per-request protocol version needs \
         _meta[\"io.modelcontextprotocol/protocolVersion\"] and \
         _meta[\"io.modelcontextprotocol/clientCapabilities\"]"
    );

    // Methods removed at 2026-07-28: 404 with -32601, initialize included.
    for method in ["initialize", "ping", "logging/setLevel"] {
        let body = format!(
            concat!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"{method}","#,
                r#""params":{{"protocolVersion":"2026-07-28","level":"info",{meta}}}}}"#
            ),
            method = method,
            meta = meta
        );
        let (status, answer) = send_raw(&app, &body, &[version, ("Mcp-Method", method)]).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method}: {answer}");
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
    // ... whatever else is wrong with the request: params that do not fit the method, a
    // name the headers do not repeat.
    for method in [
        "initialize",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/result",
        "tasks/list",
    ] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"{method}","params":{{"taskId":"t",{meta}}}}}"#
        );
        let (status, answer) = send_raw(&app, &body, &[version, ("Mcp-Method", method)]).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method}: {answer}");
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
        assert_eq!(answer["id"], 4, "{method}: {answer}");
    }

    // Handshake era: an unknown version header is refused, and so is a request without a
    // session (ping included); only initialize opens one.
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    let (status, answer) = send_raw(&app, ping, &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["code"], -32600);
    let (status, _) = send_raw(&app, INITIALIZE, &[("MCP-Protocol-Version", "1999-01-01")]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, answer) = send_raw(&app, INITIALIZE, &[]).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}

#[tokio::test]
async fn http_requests_of_the_2026_era() {
    let app = app();
    let meta = concat!(
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
        r#""io.modelcontextprotocol/clientCapabilities":{}}"#
    );
    let call = concat!(
        r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","#,
        r#""params":{"name":"wait","arguments":{"millis":10},"#,
        r#""_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
        r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#
    );
    let request = Request::mcp(call)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call");
    let (status, headers, body) = send(&app, request).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        headers.header("mcp-session-id").is_none(),
        "no sessions in 2026-07-28"
    );
    let messages = messages(&body);
    assert_eq!(
        messages[0]["method"], "notifications/progress",
        "progress before the answer on the POST's stream"
    );
    assert_eq!(messages[1]["result"]["resultType"], "complete");

    let cases = [
        (
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"unknown/method","params":{{{meta}}}}}"#),
            StatusCode::NOT_FOUND,
            -32601,
        ),
        (
            concat!(
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","#,
                r#""params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","#,
                r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#
            )
            .to_owned(),
            StatusCode::BAD_REQUEST,
            -32022,
        ),
        (
            concat!(
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","#,
                r#""params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#
            )
            .to_owned(),
            StatusCode::BAD_REQUEST,
            -32602,
        ),
    ];
    for (body, expected_status, code) in cases {
        let (status, _, text) = send(&app, Request::mcp(body.clone())).await;
        assert_eq!(status, expected_status, "{body}");
        assert_eq!(json_of(&text)["error"]["code"], code, "{body}");
    }
    let list = format!(r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{{{meta}}}}}"#);
    let request = Request::mcp(list.clone()).header("mcp-protocol-version", "2025-11-25");
    let (status, _, text) = send(&app, request).await;
    assert_eq!(
        (status, json_of(&text)["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32020))
    );
    let request = Request::mcp(list).header("mcp-method", "tools/call");
    assert_eq!(send(&app, request).await.0, StatusCode::BAD_REQUEST);
    // Malformed bodies.
    let (status, _, text) = send(&app, Request::mcp("{oops")).await;
    assert_eq!(
        (status, json_of(&text)["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32700))
    );
    let (status, _, text) = send(&app, Request::mcp("[]")).await;
    assert_eq!(
        (status, json_of(&text)["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32600))
    );
}

#[tokio::test]
async fn http_refuses_foreign_hosts_and_origins_and_checks_tokens_and_sizes() {
    let app = app();
    let request = |host: &str, origin: Option<&str>| {
        let request = Request::new("POST", "/mcp")
            .header("host", host)
            .header("accept", "application/json")
            .body(INITIALIZE);
        match origin {
            Some(origin) => request.header("origin", origin),
            None => request,
        }
    };
    assert_eq!(
        send(
            &app,
            request("evil.example.com", Some("http://evil.example.com"))
        )
        .await
        .0,
        StatusCode::FORBIDDEN
    );
    let (status, _, body) = send(&app, request("evil.example.com", None)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        body.contains("\"evil.example.com\"") && body.contains("HttpOptions::allowed_hosts"),
        "the refusal names the host and the fix: {body}"
    );
    assert_eq!(
        send(
            &app,
            request("127.0.0.1:9000", Some("http://evil.example.com"))
        )
        .await
        .0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        send(
            &app,
            request("127.0.0.1:9000", Some("http://127.0.0.1:9000"))
        )
        .await
        .0,
        StatusCode::OK
    );
    assert_eq!(
        send(
            &app,
            request("localhost:9000", Some("http://localhost:9000"))
        )
        .await
        .0,
        StatusCode::OK
    );
    assert_eq!(
        send(&app, request("[::1]:9000", None)).await.0,
        StatusCode::OK
    );

    let guarded = router(
        server(ServerOptions::default()),
        HttpOptions::default()
            .bearer_token("s3cret")
            .body_limit(256),
    );
    let authorized = |token: &str| {
        Request::new("POST", "/mcp")
            .header("authorization", &format!("Bearer {token}"))
            .body(INITIALIZE)
    };
    let (status, headers, _) = send(&guarded, authorized("wrong")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        headers
            .header("www-authenticate")
            .expect("www-authenticate"),
        "Bearer"
    );
    assert_eq!(send(&guarded, authorized("s3cret")).await.0, StatusCode::OK);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(1000)
    );
    let request = Request::new("POST", "/mcp")
        .header("authorization", "Bearer s3cret")
        .body(big);
    assert_eq!(
        send(&guarded, request).await.0,
        StatusCode::PAYLOAD_TOO_LARGE
    );

    let open = router(
        server(ServerOptions::default()),
        HttpOptions::default().cors(Cors::Any).rest(true),
    );
    let request = Request::get("/api/tools/discover").header("origin", "https://app.example.com");
    let (status, headers, _) = send(&open, request).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        headers
            .header("access-control-allow-origin")
            .expect("access-control-allow-origin"),
        "*"
    );
}

#[tokio::test]
async fn seed_003_rest_endpoints() {
    let get = |path: &str| Request::get(path);
    // An embedding service exposes only the MCP endpoint unless it asks for REST.
    for path in ["/api/tools/discover", "/mcp/tools/list"] {
        let (status, _, _) = send(&app(), get(path)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path} without rest(true)");
    }
    let app = router(
        server(ServerOptions::default()),
        HttpOptions::default().rest(true),
    );
    let (status, _, body) = send(&app, get("/api/tools/discover")).await;
    assert_eq!(status, StatusCode::OK);
    let discovered = json_of(&body);
    assert_eq!(discovered["totalCount"], 5);
    assert_eq!(discovered["tools"][0]["name"], "add");
    assert_eq!(
        discovered["tools"][0]["parameters"]["required"],
        json!(["a", "b"])
    );

    let execute = |body: &str| {
        Request::new("POST", "/api/tools/execute")
            .header("content-type", "application/json")
            .body(body)
    };
    let (status, _, body) = send(
        &app,
        execute(r#"{"toolName":"add","parameters":{"a":1,"b":2}}"#),
    )
    .await;
    assert_eq!(
        (status, json_of(&body)),
        (
            StatusCode::OK,
            json!({"name": "add", "input": {"a": 1, "b": 2}, "output": 3})
        )
    );
    let (status, _, body) = send(&app, execute(r#"{"toolName":"add","parameters":{"a":1}}"#)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        json_of(&body)["error"],
        "invalid arguments for add: missing required parameter 'b' (an integer)"
    );
    assert_eq!(
        send(&app, execute(r#"{"toolName":"nope","parameters":{}}"#))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    let (status, _, body) = send(&app, execute(r#"{"toolName":"fail"}"#)).await;
    assert_eq!(
        (status, json_of(&body)["error"].clone()),
        (StatusCode::OK, json!("nope"))
    );
    assert_eq!(
        send(&app, execute("not json")).await.0,
        StatusCode::BAD_REQUEST
    );

    let (status, _, body) = send(&app, get("/mcp/tools/list")).await;
    assert_eq!(status, StatusCode::OK);
    let listed = json_of(&body);
    assert_eq!(listed["jsonrpc"], "2.0");
    // Each tool as MCP's tools/list shows it: seed 003's three keys, plus what MCP adds.
    let add = &listed["result"]["tools"][0];
    assert_eq!(
        (&add["name"], &add["description"], &add["inputSchema"]),
        (
            &json!("add"),
            &json!("Add two integers."),
            &discovered["tools"][0]["parameters"]
        )
    );
    assert_eq!(
        add["outputSchema"]["properties"]["result"]["type"],
        "integer"
    );

    let call = |body: &str| Request::new("POST", "/mcp/tools/call").body(body);
    let (_, _, body) = send(
        &app,
        call(concat!(
            r#"{"jsonrpc":"2.0","method":"tools/call","#,
            r#""params":{"name":"add","arguments":{"a":20,"b":22}},"id":"1"}"#
        )),
    )
    .await;
    assert_eq!(
        json_of(&body),
        json!({"jsonrpc": "2.0", "id": "1", "result": {
            "content": [{"type": "text", "text": "42"}],
            "structuredContent": {"result": 42}
        }})
    );
    let (_, _, body) = send(
        &app,
        call(concat!(
            r#"{"jsonrpc":"2.0","method":"tools/call","#,
            r#""params":{"name":"add","arguments":{"a":1}},"id":"2"}"#
        )),
    )
    .await;
    let error = json_of(&body)["error"].clone();
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid arguments for add: missing required parameter 'b'"),
        "{error}"
    );
    let (_, _, body) = send(
        &app,
        call(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"fail"},"id":3}"#),
    )
    .await;
    assert_eq!(
        json_of(&body)["result"],
        json!({"content": [{"type": "text", "text": "nope"}], "isError": true})
    );
    let (_, _, body) = send(
        &app,
        call(r#"{"jsonrpc":"2.0","method":"tools/list","id":4}"#),
    )
    .await;
    assert_eq!(json_of(&body)["error"]["code"], -32601);
    let (status, _, body) = send(&app, call("{oops")).await;
    assert_eq!(
        (status, json_of(&body)["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32700))
    );
}

#[tokio::test]
async fn the_router_nests_into_an_existing_app() {
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(app());
    let request = Request::get("/health");
    let (status, _, body) = send(&app, request).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "ok"));
    let (status, _, _) = send(&app, Request::mcp(INITIALIZE)).await;
    assert_eq!(status, StatusCode::OK);
}

/// Fired when `nap` starts.
static NAP_STARTED: Signal = Signal::new();

/// Never ends by itself: only ending its session releases its caller.
#[tool]
async fn nap() -> u8 {
    NAP_STARTED.fire();
    std::future::pending::<()>().await;
    1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ending_a_session_releases_a_request_waiting_for_its_answer() {
    // Both ways of waiting: JSON only, and JSON or a stream (the common case).
    for accept in ["application/json", "application/json, text/event-stream"] {
        ending_a_session_releases(accept).await;
    }
}

async fn ending_a_session_releases(accept: &'static str) {
    NAP_STARTED.reset();
    let app = app();
    let (_, headers, _) = send(&app, Request::mcp(INITIALIZE)).await;
    let session = headers
        .header("mcp-session-id")
        .expect("mcp-session-id")
        .to_owned();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nap"}}"#;
    let waiting = {
        let app = app.clone();
        let session = session.clone();
        tokio::spawn(async move {
            let request = Request::new("POST", "/mcp")
                .header("accept", accept)
                .header("mcp-session-id", &session)
                .body(call);
            send(&app, request).await
        })
    };
    NAP_STARTED.wait("the call's start").await;
    let delete = Request::new("DELETE", "/mcp").header("mcp-session-id", &session);
    assert_eq!(send(&app, delete).await.0, StatusCode::NO_CONTENT);
    // The tool never ends: only the session's end can have released the request.
    let (status, _, body) = tokio::time::timeout(*PATIENCE, waiting)
        .await
        .unwrap_or_else(|_| panic!("not released (accept: {accept})"))
        .unwrap();
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    let answer = json_of(&body);
    assert_eq!(answer["id"], 1);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("session was closed"),
        "{answer}"
    );
}
