//! Tower layers around every MCP request (`ServerOptions::request_layer`): what a layer
//! sees of a request, a refusal answered as the request's error, the order of layers, and
//! requests answered as before once let through; the in-flight caps outside every layer.

use serde_json::json;
use std::sync::{Arc, Mutex};
use tool_runtime::context::Protocol;
use tool_runtime::layers::{McpRequest, NextRequest};
use tool_runtime::mcp::ServerOptions;
use tool_runtime::transport::http::{router, HttpOptions};
use tool_runtime::{prompt, resource, tool, CallError, Registry};
use tool_tests::http::Request;
use tool_tests::{messages, rpc, server_over, Client};

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Greet someone.
#[prompt]
fn greeting(
    /// Who to greet.
    name: String,
) -> String {
    format!("Say hello to {name}.")
}

/// Today's note.
#[resource("notes:///today", mime_type = "text/plain")]
fn today() -> String {
    "water the plants".to_owned()
}

/// A layer that writes what it sees of each request (with `label`) to `trail`.
fn recording(
    label: &'static str,
    trail: &Arc<Mutex<Vec<String>>>,
) -> impl tower::Layer<
    NextRequest,
    Service = impl tower::Service<McpRequest, Response = (), Error = CallError, Future = impl Send>
                  + Send,
> {
    let trail = Arc::clone(trail);
    tower::layer::layer_fn(move |mut next: NextRequest| {
        let trail = Arc::clone(&trail);
        tower::service_fn(move |request: McpRequest| {
            trail.lock().unwrap().push(format!(
                "{label} {} {} {}",
                request.method(),
                request.target().unwrap_or("-"),
                request.id()
            ));
            tower::Service::call(&mut next, request)
        })
    })
}

/// A layer that refuses `resources/read` to a caller without a token's subject.
fn signed_in_readers_only() -> impl tower::Layer<
    NextRequest,
    Service = impl tower::Service<McpRequest, Response = (), Error = CallError, Future = impl Send>
                  + Send,
> {
    tower::layer::layer_fn(|mut next: NextRequest| {
        tower::service_fn(move |request: McpRequest| {
            let refused =
                request.method() == "resources/read" && request.caller().subject().is_none();
            let answer = (!refused).then(|| tower::Service::call(&mut next, request));
            async move {
                match answer {
                    Some(answer) => answer.await,
                    None => Err(CallError::refused("resources/read", "sign in first")),
                }
            }
        })
    })
}

#[tokio::test]
async fn a_layer_sees_each_request_its_method_target_and_id_in_the_order_given() {
    let trail = Arc::new(Mutex::new(Vec::new()));
    let options = ServerOptions::default()
        .request_layer(recording("outer", &trail))
        .request_layer(recording("inner", &trail));
    let server = server_over(Registry::new().unwrap(), options);
    let mut client = Client::new(&server);
    client.send(tool_tests::INITIALIZE);
    assert!(client.next().await["result"]["protocolVersion"].is_string());
    client.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    let listed = client
        .answer(&rpc::request(1, "tools/list", json!({})))
        .await;
    assert_eq!(listed["result"]["tools"][0]["name"], "add", "{listed}");
    let called = client
        .answer(&rpc::call("two", "add", json!({"a": 2, "b": 3})))
        .await;
    assert_eq!(
        called["result"]["structuredContent"]["result"], 5,
        "{called}"
    );
    let got = client
        .answer(&rpc::request(
            3,
            "prompts/get",
            json!({"name": "greeting", "arguments": {"name": "Ana"}}),
        ))
        .await;
    assert!(got["result"]["messages"].is_array(), "{got}");
    assert_eq!(
        *trail.lock().unwrap(),
        [
            "outer initialize - 0",
            "inner initialize - 0",
            "outer tools/list - 1",
            "inner tools/list - 1",
            r#"outer tools/call add "two""#,
            r#"inner tools/call add "two""#,
            "outer prompts/get greeting 3",
            "inner prompts/get greeting 3",
        ]
    );
}

#[tokio::test]
async fn a_refusal_is_the_requests_error_and_other_requests_go_on() {
    let options = ServerOptions::default().request_layer(signed_in_readers_only());
    let server = server_over(Registry::new().unwrap(), options);
    let mut client = Client::new(&server);
    client.send(tool_tests::INITIALIZE);
    client.next().await;
    let read = client
        .answer(&rpc::request(
            4,
            "resources/read",
            json!({"uri": "notes:///today"}),
        ))
        .await;
    assert_eq!(read["error"]["code"], -32600, "{read}");
    assert_eq!(
        read["error"]["message"],
        "resources/read was refused: sign in first"
    );
    let listed = client
        .answer(&rpc::request(5, "resources/list", json!({})))
        .await;
    assert_eq!(
        listed["result"]["resources"][0]["uri"], "notes:///today",
        "{listed}"
    );
}

#[tokio::test]
async fn a_layer_knows_the_era_a_request_came_in() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let options = ServerOptions::default().request_layer(tower::layer::layer_fn(
        move |mut next: NextRequest| {
            let sink = Arc::clone(&sink);
            tower::service_fn(move |request: McpRequest| {
                sink.lock().unwrap().push(request.protocol());
                tower::Service::call(&mut next, request)
            })
        },
    ));
    let server = server_over(Registry::new().unwrap(), options);
    let mut client = Client::new(&server);
    let listed = client
        .answer(&rpc::per_request(1, "tools/list", json!({}), json!({})))
        .await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    assert_eq!(*seen.lock().unwrap(), [Protocol::McpPerRequest]);
}

#[tokio::test]
async fn over_http_a_session_opens_through_the_layers_and_a_refusal_is_the_answer() {
    let options = ServerOptions::default().request_layer(signed_in_readers_only());
    let app = router(
        server_over(Registry::new().unwrap(), options),
        HttpOptions::default(),
    );
    let opened = Request::mcp(tool_tests::INITIALIZE).send_to(&app).await;
    assert_eq!(opened.status, 200, "{opened:?}");
    let session = opened
        .header("mcp-session-id")
        .expect("a session, issued through the layers")
        .to_owned();
    let read = rpc::request(2, "resources/read", json!({"uri": "notes:///today"}));
    let reply = Request::mcp(&read)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send_to(&app)
        .await;
    let answer = &messages(&reply.body)[0];
    assert_eq!(answer["error"]["code"], -32600, "{reply:?}");
    let call = rpc::call(3, "add", json!({"a": 1, "b": 2}));
    let reply = Request::mcp(&call)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send_to(&app)
        .await;
    let answer = &messages(&reply.body)[0];
    assert_eq!(
        answer["result"]["structuredContent"]["result"], 3,
        "{reply:?}"
    );
}

/// A client of `server` past the handshake, which goes through its request layers (so
/// the answer to `initialize` is awaited, not read at once).
async fn past_the_handshake(server: &tool_runtime::mcp::McpServer) -> Client {
    let mut client = Client::new(server);
    client.send(tool_tests::INITIALIZE);
    client.next().await;
    client.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    client
}

/// A server with one request in flight per connection and [`holding_calls`] around its
/// requests: the server, the layer's gate, and the ids it let through.
fn one_call_at_a_time_held_by_a_layer() -> (
    tool_runtime::mcp::McpServer,
    Arc<tokio::sync::Semaphore>,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let (passed_to, passed) = tokio::sync::mpsc::unbounded_channel();
    let options = ServerOptions::default()
        .max_in_flight(1)
        .request_layer(holding_calls(&gate, passed_to));
    (server_over(Registry::new().unwrap(), options), gate, passed)
}

/// A layer that holds each `tools/call` until `gate` gives it a permit, and sends its id on
/// `passed` once the server's handling of it ended.
fn holding_calls(
    gate: &Arc<tokio::sync::Semaphore>,
    passed: tokio::sync::mpsc::UnboundedSender<String>,
) -> impl tower::Layer<
    NextRequest,
    Service = impl tower::Service<McpRequest, Response = (), Error = CallError, Future = impl Send>
                  + Send,
> {
    let gate = Arc::clone(gate);
    tower::layer::layer_fn(move |next: NextRequest| {
        let (gate, passed) = (Arc::clone(&gate), passed.clone());
        tower::service_fn(move |request: McpRequest| {
            let (gate, passed, mut next) = (Arc::clone(&gate), passed.clone(), next.clone());
            async move {
                if request.method() != "tools/call" {
                    return tower::Service::call(&mut next, request).await;
                }
                let id = request.id().to_owned();
                gate.acquire().await.expect("the gate stays open").forget();
                let handled = tower::Service::call(&mut next, request).await;
                let _ = passed.send(id);
                handled
            }
        })
    })
}

#[tokio::test]
async fn the_in_flight_caps_count_a_request_before_any_layer_holds_it() {
    let (server, gate, mut passed) = one_call_at_a_time_held_by_a_layer();
    let mut client = past_the_handshake(&server).await;

    client.send(&rpc::call(1, "add", json!({"a": 1, "b": 2})));
    // The first call waits in the layer, counted: the second is refused as it arrives,
    // before the layer sees it, and never waits behind the first.
    client.send(&rpc::call(2, "add", json!({"a": 3, "b": 4})));
    let refused = client.next_now();
    assert_eq!(refused["id"], 2, "{refused}");
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Server busy: 1 requests are already running on this connection"),
        "{refused}"
    );
    // A listing runs no work: it is not counted, and is answered meanwhile.
    let listed = client
        .answer(&rpc::request(3, "tools/list", json!({})))
        .await;
    assert_eq!(listed["result"]["tools"][0]["name"], "add", "{listed}");

    gate.add_permits(1);
    let first = client.next().await;
    assert_eq!(first["id"], 1, "{first}");
    assert_eq!(first["result"]["structuredContent"]["result"], 3, "{first}");
    assert_eq!(passed.recv().await.as_deref(), Some("1"));

    // Its place is free again: the next call is let through and answered.
    gate.add_permits(1);
    let next = client
        .answer(&rpc::call(4, "add", json!({"a": 2, "b": 2})))
        .await;
    assert_eq!(next["result"]["structuredContent"]["result"], 4, "{next}");
}

#[tokio::test]
async fn a_request_cancelled_while_a_layer_holds_it_leaves_at_once_and_is_never_answered() {
    let (server, gate, mut passed) = one_call_at_a_time_held_by_a_layer();
    let mut client = past_the_handshake(&server).await;

    client.send(&rpc::call(1, "add", json!({"a": 1, "b": 2})));
    client.send(&rpc::notification(
        "notifications/cancelled",
        json!({"requestId": 1}),
    ));
    // Its place and its id are free at once, while the layer would still hold it: the
    // connection's one place takes a new request of the same id.
    client.send(&rpc::call(1, "add", json!({"a": 2, "b": 5})));
    gate.add_permits(1);
    let again = client.next().await;
    assert_eq!(again["id"], 1, "{again}");
    assert_eq!(again["result"]["structuredContent"]["result"], 7, "{again}");
    assert_eq!(passed.recv().await.as_deref(), Some("1"));
    // The cancelled one left the layer's queue: it is never let through nor answered.
    gate.add_permits(1);
    let listed = client
        .answer(&rpc::request(2, "tools/list", json!({})))
        .await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    assert!(client.nothing_yet(), "a cancelled request is not answered");
    assert!(
        passed.try_recv().is_err(),
        "the cancelled request was let through"
    );
}

#[tokio::test]
async fn a_layer_that_sheds_load_answers_as_the_servers_own_limit_does() {
    let options =
        ServerOptions::default().request_layer(tower::layer::layer_fn(|mut next: NextRequest| {
            tower::service_fn(move |request: McpRequest| {
                let busy = request.method() == "tools/call";
                let answer = (!busy).then(|| tower::Service::call(&mut next, request));
                async move {
                    match answer {
                        Some(answer) => answer.await,
                        None => Err(CallError::refused("tools/call", "too many calls now")
                            .retry_after(std::time::Duration::from_secs(2))),
                    }
                }
            })
        }));
    let app = router(
        server_over(Registry::new().unwrap(), options),
        HttpOptions::default(),
    );
    let call = rpc::per_request(
        1,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        json!({}),
    );
    let reply = Request::mcp(&call)
        .header("Accept", "application/json")
        .send_to(&app)
        .await;
    assert_eq!(reply.status, 503, "{reply:?}");
    assert_eq!(reply.header("retry-after"), Some("2"), "{reply:?}");
    let answer = &messages(&reply.body)[0];
    assert_eq!(answer["error"]["code"], -32000, "{reply:?}");
    assert_eq!(answer["error"]["data"]["retryAfterMs"], 2000, "{reply:?}");
    assert_eq!(
        answer["error"]["message"],
        "tools/call was refused: too many calls now; send it again in 2s"
    );
}

#[tokio::test]
async fn a_request_a_layer_refused_but_kept_frees_its_id_and_is_never_handled_later() {
    // A layer that keeps the first call it is given (as a buffer keeps what it queued past
    // a time limit), refuses it, and lets the test pass it on later.
    let kept: Arc<Mutex<Option<(McpRequest, NextRequest)>>> = Arc::default();
    let keeper = Arc::clone(&kept);
    let options =
        ServerOptions::default().request_layer(tower::layer::layer_fn(move |next: NextRequest| {
            let keeper = Arc::clone(&keeper);
            tower::service_fn(move |request: McpRequest| {
                let (keeper, mut next) = (Arc::clone(&keeper), next.clone());
                async move {
                    let passed = {
                        let mut slot = keeper.lock().unwrap();
                        if request.method() == "tools/call" && slot.is_none() {
                            *slot = Some((request, next.clone()));
                            None
                        } else {
                            Some(request)
                        }
                    };
                    match passed {
                        Some(request) => tower::Service::call(&mut next, request).await,
                        None => Err(CallError::refused("tools/call", "queued too long")
                            .retry_after(std::time::Duration::from_secs(1))),
                    }
                }
            })
        }));
    let server = server_over(Registry::new().unwrap(), options);
    let mut client = past_the_handshake(&server).await;

    let refused = client
        .answer(&rpc::call(1, "add", json!({"a": 1, "b": 2})))
        .await;
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    // Its id is free although the layer still holds the request.
    let again = client
        .answer(&rpc::call(1, "add", json!({"a": 2, "b": 2})))
        .await;
    assert_eq!(again["result"]["structuredContent"]["result"], 4, "{again}");

    // Passed on at last, the refused request is not handled: nothing more is answered.
    let (request, mut next) = kept.lock().unwrap().take().expect("the kept request");
    tower::Service::call(&mut next, request)
        .await
        .expect("let through");
    let listed = client
        .answer(&rpc::request(2, "tools/list", json!({})))
        .await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    assert!(client.nothing_yet(), "a refused request is answered once");
}
