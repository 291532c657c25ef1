//! The MCP client against a real server in another process (`upstream-tools`), over stdio
//! and Streamable HTTP, in both protocol eras: what it lists and calls, progress and
//! cancellation, time limits, the questions a server asks, and what happens when the
//! server is unreachable, dies, or is no MCP server at all.

use serde_json::{json, Map, Value};
use std::time::Duration;
use tokio::sync::mpsc;
use tool_runtime::client::{
    Answer, CallResult, Client, ClientError, ClientHandler, Elicitation, Notification, Target,
};
use tool_tests::{spawn_http, wait_for, wait_for_some, PythonScript, ServerProcess, PATIENCE};

const UPSTREAM: &str = env!("CARGO_BIN_EXE_upstream-tools");

/// How the client reaches the upstream.
#[derive(Debug, Clone, Copy)]
enum Over {
    Stdio,
    Http,
}

/// Every way to reach a server: each transport, each era (`true` is the handshake era).
const EVERY_WAY: [(Over, bool); 4] = [
    (Over::Stdio, false),
    (Over::Stdio, true),
    (Over::Http, false),
    (Over::Http, true),
];

/// The upstream reached `over` a transport: for HTTP, its process (stopped when dropped).
struct Upstream {
    target: Target,
    _process: Option<ServerProcess>,
}

fn upstream(over: Over) -> Upstream {
    match over {
        Over::Stdio => Upstream {
            target: Target::Command(vec![UPSTREAM.to_owned(), "serve".to_owned()]),
            _process: None,
        },
        Over::Http => {
            let process = spawn_http(UPSTREAM, "127.0.0.1", &[], &[]);
            Upstream {
                target: Target::Http(format!("http://127.0.0.1:{}/mcp", process.port)),
                _process: Some(process),
            }
        }
    }
}

/// A client of `upstream` in the handshake era or not, answering with `handler` if given.
async fn connect(
    upstream: &Upstream,
    handshake: bool,
    handler: Option<Box<dyn ClientHandler>>,
) -> Client {
    let mut builder = Client::builder().handshake_era(handshake);
    if let Some(handler) = handler {
        builder = builder.handler(BoxedHandler(handler));
    }
    builder
        .connect_to(upstream.target.clone())
        .await
        .unwrap_or_else(|error| panic!("the client connects to {:?}: {error}", upstream.target))
}

/// The era a client at `handshake` agrees on with our server.
fn version(handshake: bool) -> &'static str {
    if handshake {
        "2025-11-25"
    } else {
        "2026-07-28"
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_lists_and_calls_tools_prompts_and_resources_every_way() {
    for (over, handshake) in EVERY_WAY {
        let way = format!("{over:?}, handshake era {handshake}");
        let upstream = upstream(over);
        let client = connect(&upstream, handshake, None).await;

        let server = client.server().await.unwrap();
        assert_eq!(server.protocol_version, version(handshake), "{way}");
        assert_eq!(server.name, "upstream-tools", "{way}");
        assert!(server.offers("tools") && server.offers("prompts"), "{way}");

        let tools = client.list_tools().await.unwrap();
        let mut names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, tool_tests::UPSTREAM_TOOLS, "{way}");
        let add = tools.iter().find(|tool| tool.name == "add").unwrap();
        assert!(add.is_read_only() && add.is_idempotent(), "{way}");
        assert_eq!(add.input_schema["required"], json!(["a", "b"]), "{way}");

        let sum = client
            .call_tool("add", json!({"a": 2, "b": 3}))
            .await
            .unwrap();
        assert!(!sum.is_error, "{way}: {sum:?}");
        assert_eq!(sum.text(), "5", "{way}: {sum:?}");

        let weather = client
            .call_tool("weather", json!({"city": "Lyon"}))
            .await
            .unwrap();
        assert_eq!(
            weather.structured,
            Some(json!({"city": "Lyon", "celsius": 21.5})),
            "{way}"
        );

        let broken = client.call_tool("broken", json!({})).await.unwrap();
        assert!(broken.is_error, "{way}");
        assert!(
            broken.text().contains("failed on purpose"),
            "{way}: {broken:?}"
        );

        let bad = client.call_tool("add", json!({"a": "two", "b": 3})).await;
        let refusal = match bad {
            Ok(result) => {
                assert!(result.is_error, "{way}: {result:?}");
                result.text()
            }
            Err(error) => error.to_string(),
        };
        assert!(
            refusal.contains('a') && refusal.contains("integer"),
            "{way}: {refusal}"
        );

        let unknown = client.call_tool("nowhere", json!({})).await;
        let told = match unknown {
            Ok(result) => {
                assert!(result.is_error, "{way}: {result:?}");
                result.text()
            }
            Err(error) => error.to_string(),
        };
        assert!(told.contains("nowhere"), "{way}: {told}");

        let prompt = client
            .get_prompt("haiku", json!({"topic": "rivers"}))
            .await
            .unwrap();
        assert!(
            prompt["messages"][0]["content"]["text"]
                .as_str()
                .unwrap()
                .contains("rivers"),
            "{way}: {prompt}"
        );
        let resources = client.list_resources().await.unwrap();
        assert!(
            resources.iter().any(|r| r["uri"] == "upstream://motto"),
            "{way}: {resources:?}"
        );
        let motto = client.read_resource("upstream://motto").await.unwrap();
        assert_eq!(motto["contents"][0]["text"], "mounted, not merged", "{way}");

        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_writes_anything_on_its_stderr_is_served_and_quoted_when_it_ends() {
    // Bytes that are not UTF-8, then more than a pipe holds: a client that stopped reading
    // its stderr at the first bad byte would leave the server stuck writing, never serving.
    let chatter =
        "printf 'starting \\377\\n' >&2; head -c 300000 /dev/zero | tr '\\0' x >&2; echo >&2";
    let serving = Target::Command(vec![
        "sh".to_owned(),
        "-c".to_owned(),
        format!("{chatter}; exec \"$0\" serve"),
        UPSTREAM.to_owned(),
    ]);
    let client = Client::builder()
        .timeout(*PATIENCE)
        .connect_to(serving)
        .await
        .expect("a server that said much on its stderr first is served");
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 2}))
        .await
        .unwrap();
    assert_eq!(sum.text(), "4");
    client.close().await;

    // A server that says less (what is still in the pipe when it ends is read within a
    // grace period), then ends before it answers: the error quotes its last lines, read as
    // text whatever the bytes, a line longer than is kept cut.
    let ending = Target::Command(vec![
        "sh".to_owned(),
        "-c".to_owned(),
        "printf 'starting \\377\\n' >&2; head -c 20000 /dev/zero | tr '\\0' x >&2; echo >&2; \
         echo 'the last line' >&2; exit 3"
            .to_owned(),
    ]);
    let error = Client::builder()
        .timeout(*PATIENCE)
        .connect_to(ending)
        .await
        .expect_err("a server that ends does not connect");
    let said = error.to_string();
    assert!(matches!(error, ClientError::TransportDown { .. }), "{said}");
    assert!(said.contains("starting \u{FFFD}"), "{said}");
    // The line of 20,000 x: 8 KiB of it kept, its first 300 characters quoted.
    assert!(
        said.contains(&format!("{} [19700 more bytes]", "x".repeat(300))),
        "{said}"
    );
    assert!(said.contains("the last line"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_takes_a_notification_cannot_hold_up_the_connect() {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    // It answers `initialize` and keeps every POST that expects no answer (here the
    // `notifications/initialized` a connect sends next) waiting forever.
    async fn mcp(body: axum::body::Bytes) -> axum::response::Response {
        let message: Value = serde_json::from_slice(&body).unwrap();
        if message.get("id").is_none() {
            std::future::pending::<()>().await;
        }
        let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "silent", "version": "1"},
        }});
        (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::HeaderName::from_static("mcp-session-id"), "s1"),
            ],
            answer.to_string(),
        )
            .into_response()
    }
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(mcp)
            .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
            .delete(|| async { StatusCode::OK }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    // One limit covers `initialize` too, which must be answered within it, on however
    // busy a machine: the patience.
    let limit = *PATIENCE;
    let url = format!("http://{address}/mcp");
    let connecting = Client::builder()
        .handshake_era(true)
        .timeout(limit)
        .connect(&url);
    let error = tokio::time::timeout(*PATIENCE * 2, connecting)
        .await
        .expect("the connect gives up by itself")
        .expect_err("a server that never takes the notification does not connect");
    match &error {
        ClientError::TimedOut { method, after } => {
            assert_eq!(method, "notifications/initialized", "{error}");
            assert_eq!(*after, limit, "{error}");
        }
        other => panic!("a time-out, not {other:?}"),
    }
}

/// The source of a server over stdio scripted in Python (its standard library alone):
/// `send` answers request `id` with its result or its error; `body` reads the messages.
macro_rules! scripted_server {
    ($body:literal) => {
        concat!(
            r#"
import json, sys
def send(id, result=None, error=None):
    answer = {"jsonrpc": "2.0", "id": id}
    if error is None:
        answer["result"] = result
    else:
        answer["error"] = error
    print(json.dumps(answer), flush=True)
"#,
            $body
        )
    };
}

/// A server over stdio, in Python's standard library, that says nothing to
/// `server/discover` until it has read another request. `late`: one of 2026-07-28 slow to
/// answer (it answers `server/discover` then, and refuses `initialize` as a connection
/// already serving 2026-07-28). `silent`: one of the handshake era that never answers a
/// method it does not know. Either way it answers `tools/call` with the protocol version
/// the call carried in its `_meta` (which only 2026-07-28 has).
const SLOW_TO_DISCOVER: &str = scripted_server!(
    r#"
mode = sys.argv[1]
held = None
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "server/discover":
        held = message["id"]
        continue
    if held is not None and mode == "late":
        send(held, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                    "serverInfo": {"name": "late", "version": "1"}})
        held = None
    if method == "initialize" and mode == "late":
        send(message["id"], error={"code": -32022,
                                   "message": "connection is serving the 2026-07-28 protocol"})
    elif method == "initialize":
        send(message["id"], {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                             "serverInfo": {"name": "silent", "version": "1"}})
    elif method == "tools/call":
        meta = message["params"].get("_meta", {})
        carried = meta.get("io.modelcontextprotocol/protocolVersion", "none")
        send(message["id"], {"content": [{"type": "text", "text": carried}]})
    else:
        send(message["id"], error={"code": -32601, "message": "no such method"})
"#
);

/// A server that refuses its `echo` calls for their headers whatever they carry (as when a
/// proxy drops them), and answers `counts` with how many calls and listings it was sent.
/// `silent-listing`: it never answers `tools/list`.
const REFUSES_HEADERS: &str = scripted_server!(
    r#"
mode = sys.argv[1] if len(sys.argv) > 1 else ""
sent = {"tools/call": 0, "tools/list": 0}
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method in sent:
        sent[method] += 1
    if method == "server/discover":
        send(message["id"], {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                             "serverInfo": {"name": "refuses-headers", "version": "1"}})
    elif method == "tools/list" and mode == "silent-listing":
        continue
    elif method == "tools/list":
        send(message["id"], {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
    elif method == "tools/call" and message["params"]["name"] == "echo":
        send(message["id"], error={"code": -32020, "message": "Header mismatch: Mcp-Method is missing"})
    elif method == "tools/call":
        send(message["id"], {"content": [{"type": "text", "text": json.dumps(sent)}]})
    else:
        send(message["id"], error={"code": -32601, "message": "no such method"})
"#
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_refused_for_headers_a_new_listing_does_not_change_is_not_sent_again() {
    let script = PythonScript::new("refuses-headers", REFUSES_HEADERS);
    let target = Target::Command(script.command(&[]));
    let client = Client::builder()
        .timeout(*PATIENCE)
        .connect_to(target)
        .await
        .unwrap();
    let refused = client.call_tool("echo", json!({})).await.unwrap_err();
    assert!(
        matches!(refused, ClientError::Server { code: -32020, .. }),
        "the server's refusal is the caller's: {refused:?}"
    );
    // The refusal had the tools listed again; the listing gives the same (no) headers, so
    // the call was not sent again.
    let counts = client.call_tool("counts", json!({})).await.unwrap();
    let counts: Value = serde_json::from_str(&counts.text()).unwrap();
    assert_eq!(counts, json!({"tools/call": 2, "tools/list": 1}));
    client.close().await;
}

/// A handshake-era server that knows no method but `initialize` (a tool that requires a
/// task, called as a plain call, is refused so) and never answers `tools/list`.
const KNOWS_NOTHING_LISTS_NOTHING: &str = scripted_server!(
    r#"
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        send(message["id"], {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                             "serverInfo": {"name": "lists-nothing", "version": "1"}})
    elif method != "tools/list":
        send(message["id"], error={"code": -32601, "message": "no such method"})
"#
);

/// A call can make the client list the tools on its way: a 2026-07-28 server refused it for
/// its headers, or a handshake-era one as a method it does not know (the tool may require a
/// task). That listing has the call's time limit, not the client's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_a_call_takes_on_its_way_has_the_calls_time_limit() {
    let refuses = PythonScript::new("refuses-headers-silent-listing", REFUSES_HEADERS);
    let knows_nothing = PythonScript::new("knows-nothing", KNOWS_NOTHING_LISTS_NOTHING);
    let cases = [
        (
            "refused for headers",
            refuses.command(&["silent-listing"]),
            false,
            -32020,
        ),
        ("not known", knows_nothing.command(&[]), true, -32601),
    ];
    for (case, command, handshake, code) in cases {
        // The client's own limit is far past the test's patience; the call's is short. The
        // server never answers the listing, so only a time limit ends it.
        let client = Client::builder()
            .timeout(Duration::from_secs(3600))
            .handshake_era(handshake)
            .connect_to(Target::Command(command))
            .await
            .unwrap();
        let call = client.call("echo", json!({}), None, Some(Duration::from_millis(300)));
        let refused = tokio::time::timeout(*PATIENCE, call)
            .await
            .unwrap_or_else(|_| panic!("{case}: the listing did not end with the call's limit"))
            .unwrap_err();
        assert!(
            matches!(refused, ClientError::Server { code: c, .. } if c == code),
            "{case}: a listing that fails leaves the server's refusal the caller's: {refused:?}"
        );
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_silent_to_discover_a_while_is_also_asked_to_initialize_and_its_answer_decides() {
    let script = PythonScript::new("slow-to-discover", SLOW_TO_DISCOVER);
    let connect = |mode: &str| {
        let target = Target::Command(script.command(&[mode]));
        Client::builder().timeout(*PATIENCE).connect_to(target)
    };
    // Both wait out the client's patience with `server/discover`: side by side.
    let (late, silent) = tokio::join!(connect("late"), connect("silent"));
    let agreed = [
        (late, "late", "2026-07-28", "2026-07-28"),
        (silent, "silent", "2025-11-25", "none"),
    ];
    for (client, name, era, carried) in agreed {
        let client = client.unwrap_or_else(|error| panic!("{name}: connected, not {error}"));
        let server = client.server().await.unwrap();
        // What the server said of itself comes from the answer that decided.
        assert_eq!(
            (server.name.as_str(), server.protocol_version.as_str()),
            (name, era)
        );
        // Spoken to in that era: the call carried (or not) the version as the era has it.
        let called = client.call_tool("era", json!({})).await.unwrap();
        assert_eq!(called.text(), carried, "{name}");
        client.close().await;
    }
}

/// A server over HTTP of both eras, slow to answer `server/discover`: an `initialize` sent
/// beside it gets a session (`abandoned`) and a stream that never ends, on which the server
/// asks `ping`; once the client's answer names that session (so the client holds it),
/// discover is answered, and decides. The client then speaks 2026-07-28 without naming the
/// session, and asks the server to end it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_by_an_initialize_that_lost_to_a_late_discover_is_ended_and_never_named() {
    use axum::body::{Body, Bytes};
    use axum::http::{header, HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    use futures_util::StreamExt as _;
    use std::sync::{Arc, Mutex};
    #[derive(Default)]
    struct Seen {
        /// Whether an answer of the client's named the session.
        held: tokio::sync::Notify,
        /// The session each `tools/call` named ("none" for none).
        called_with: Mutex<Vec<String>>,
    }
    let (seen, deleted) = (Arc::new(Seen::default()), Deletions::default());
    let post = {
        let seen = Arc::clone(&seen);
        move |headers: HeaderMap, body: Bytes| {
            let seen = Arc::clone(&seen);
            async move {
                let session = headers
                    .get("mcp-session-id")
                    .map_or("none", |id| id.to_str().unwrap())
                    .to_owned();
                let message: Value = serde_json::from_slice(&body).unwrap();
                let json = |answer: Value| {
                    (
                        [(header::CONTENT_TYPE, "application/json")],
                        answer.to_string(),
                    )
                        .into_response()
                };
                match message["method"].as_str() {
                    // The client's answer, taken with the session named, as servers do
                    // (a late answer naming the session must not bring it back).
                    None => {
                        if session == "abandoned" {
                            seen.held.notify_one();
                        }
                        let named = [(header::HeaderName::from_static("mcp-session-id"), session)];
                        (StatusCode::ACCEPTED, named).into_response()
                    }
                    Some("server/discover") => {
                        seen.held.notified().await;
                        json(json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                            "supportedVersions": ["2026-07-28"],
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "dual", "version": "1"}}}))
                    }
                    Some("initialize") => {
                        let ping = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
                        let first = Bytes::from(format!("data: {ping}\n\n"));
                        let events = futures_util::stream::once(async move {
                            Ok::<_, std::convert::Infallible>(first)
                        })
                        .chain(futures_util::stream::pending());
                        let headers = [
                            (header::CONTENT_TYPE, "text/event-stream"),
                            (
                                header::HeaderName::from_static("mcp-session-id"),
                                "abandoned",
                            ),
                        ];
                        (headers, Body::from_stream(events)).into_response()
                    }
                    Some("tools/call") => {
                        seen.called_with.lock().unwrap().push(session.clone());
                        json(json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                            "content": [{"type": "text", "text": session}]}}))
                    }
                    Some(_) if message.get("id").is_none() => StatusCode::ACCEPTED.into_response(),
                    Some(_) => json(json!({"jsonrpc": "2.0", "id": message["id"],
                        "error": {"code": -32601, "message": "no such method"}})),
                }
            }
        }
    };
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(post)
            .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
            .delete(noting_deletions(&deleted)),
    );
    let url = served(app).await;

    let client = Client::builder()
        .timeout(*PATIENCE)
        .connect(&url)
        .await
        .unwrap();
    let server = client.server().await.unwrap();
    assert_eq!(
        (server.name.as_str(), server.protocol_version.as_str()),
        ("dual", "2026-07-28"),
        "the discover answer decided"
    );
    let called = client.call_tool("anything", json!({})).await.unwrap();
    assert_eq!(
        called.text(),
        "none",
        "a 2026-07-28 request names no session"
    );
    wait_for("the abandoned session is ended", async || {
        *deleted.lock().unwrap() == ["abandoned"]
    })
    .await;
    client.close().await;
    assert_eq!(*seen.called_with.lock().unwrap(), ["none"]);
}

/// A session is what a server gives with its answer to `initialize`, and nothing else: a
/// 2026-07-28 server that names one on its other answers is never sent it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_answer_to_initialize_opens_a_session() {
    use axum::body::Bytes;
    use axum::http::{header, HeaderMap};
    let post = |headers: HeaderMap, body: Bytes| async move {
        let message: Value = serde_json::from_slice(&body).unwrap();
        let named = headers
            .get("mcp-session-id")
            .map_or("none", |id| id.to_str().unwrap())
            .to_owned();
        let result = match message["method"].as_str() {
            Some("server/discover") => json!({
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "stray", "version": "1"}}),
            _ => json!({"content": [{"type": "text", "text": named}]}),
        };
        let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
        let headers = [
            (header::CONTENT_TYPE, "application/json"),
            (header::HeaderName::from_static("mcp-session-id"), "stray"),
        ];
        (headers, answer.to_string())
    };
    let url = served(axum::Router::new().route("/mcp", axum::routing::post(post))).await;
    let client = Client::connect(&url).await.unwrap();
    for _ in 0..2 {
        let called = client.call_tool("anything", json!({})).await.unwrap();
        assert_eq!(called.text(), "none");
    }
    client.close().await;
}

/// A `server/discover` whose authorization comes only after `initialize` was sent beside it
/// (the client's patience passed meanwhile) still says 2026-07-28 in its headers, as its
/// body does: a server that checks the two against each other answers it, and it decides.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_held_while_the_era_changes_says_the_era_it_was_written_in() {
    use axum::body::Bytes;
    use axum::http::{header, HeaderMap};
    use axum::response::IntoResponse;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use tool_runtime::client::auth::Credentials;
    use tool_runtime::client::Answer;
    /// Authorizes every request at once but the first, which waits until `release`.
    struct FirstHeld {
        asked: AtomicUsize,
        release: Arc<tokio::sync::Notify>,
    }
    impl Credentials for FirstHeld {
        fn headers<'a>(&'a self, _: &'a str, _: &'a str) -> Answer<'a, Vec<(String, String)>> {
            Box::pin(async move {
                if self.asked.fetch_add(1, Ordering::SeqCst) == 0 {
                    self.release.notified().await;
                }
                Ok(vec![("authorization".to_owned(), "Bearer t".to_owned())])
            })
        }
    }
    #[derive(Default)]
    struct Seen {
        /// The version header each `server/discover` carried.
        discovered_with: Mutex<Vec<String>>,
        discover_came: tokio::sync::Notify,
    }
    let (seen, release) = (
        Arc::new(Seen::default()),
        Arc::new(tokio::sync::Notify::new()),
    );
    let post = {
        let (seen, release) = (Arc::clone(&seen), Arc::clone(&release));
        move |headers: HeaderMap, body: Bytes| {
            let (seen, release) = (Arc::clone(&seen), Arc::clone(&release));
            async move {
                let named = |name: &str| {
                    headers
                        .get(name)
                        .map_or("none", |value| value.to_str().unwrap())
                        .to_owned()
                };
                let message: Value = serde_json::from_slice(&body).unwrap();
                let json = |answer: Value| {
                    (
                        [(header::CONTENT_TYPE, "application/json")],
                        answer.to_string(),
                    )
                        .into_response()
                };
                let id = message["id"].clone();
                match message["method"].as_str() {
                    Some("server/discover") => {
                        let version = named("mcp-protocol-version");
                        seen.discovered_with.lock().unwrap().push(version.clone());
                        seen.discover_came.notify_one();
                        if version != "2026-07-28" || named("mcp-method") != "server/discover" {
                            return json(json!({"jsonrpc": "2.0", "id": id, "error": {
                                "code": -32020, "message": "Header mismatch"}}));
                        }
                        json(json!({"jsonrpc": "2.0", "id": id, "result": {
                            "supportedVersions": ["2026-07-28"],
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "strict", "version": "1"}}}))
                    }
                    // Answered once discover came, which lets the held discover go now.
                    Some("initialize") => {
                        release.notify_one();
                        seen.discover_came.notified().await;
                        json(json!({"jsonrpc": "2.0", "id": id, "error": {
                            "code": -32022, "message": "serving the 2026-07-28 protocol"}}))
                    }
                    _ => json(json!({"jsonrpc": "2.0", "id": id, "result": {}})),
                }
            }
        }
    };
    let url = served(axum::Router::new().route("/mcp", axum::routing::post(post))).await;

    let client = Client::builder()
        .timeout(*PATIENCE)
        .credentials(FirstHeld {
            asked: AtomicUsize::new(0),
            release,
        })
        .connect(&url)
        .await
        .unwrap();
    let server = client.server().await.unwrap();
    assert_eq!(
        (server.name.as_str(), server.protocol_version.as_str()),
        ("strict", "2026-07-28")
    );
    assert_eq!(*seen.discovered_with.lock().unwrap(), ["2026-07-28"]);
    client.close().await;
}

/// A client of the upstream started over stdio through a shell that writes the upstream's
/// process id to a file first: the client and that id.
async fn upstream_with_pid(name: &str) -> (Client, u32) {
    let file = std::env::temp_dir().join(format!("tool-tests-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let target = Target::Command(vec![
        "sh".to_owned(),
        "-c".to_owned(),
        "echo $$ > \"$1\"; exec \"$0\" serve".to_owned(),
        UPSTREAM.to_owned(),
        file.display().to_string(),
    ]);
    let client = Client::builder().connect_to(target).await.unwrap();
    let pid = std::fs::read_to_string(&file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    (client, pid)
}

/// Whether process `pid` has ended (gone, or a zombie not yet reaped).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command's name, which is in brackets.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
        Err(_) => true,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_process_ends_when_its_client_is_closed_or_dropped() {
    let (client, pid) = upstream_with_pid("closed").await;
    let sum = client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(sum.text(), "2");
    assert!(!ended(pid), "the server runs while its client is open");
    client.close().await;
    wait_for(
        "the server process ended once its client closed",
        async || ended(pid),
    )
    .await;

    let (client, pid) = upstream_with_pid("dropped").await;
    let copy = client.clone();
    drop(client);
    let sum = copy.call_tool("add", json!({"a": 2, "b": 2})).await;
    assert_eq!(sum.unwrap().text(), "4", "a clone keeps the connection");
    drop(copy);
    wait_for(
        "the server process ended once its client was dropped",
        async || ended(pid),
    )
    .await;
}

/// Serves `app` on a port of its own: the URL of its `/mcp`.
async fn served(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

type Deletions = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// A `DELETE` handler that notes in `deleted` the session each deletion names.
fn noting_deletions(
    deleted: &Deletions,
) -> impl Fn(axum::http::HeaderMap) -> std::future::Ready<axum::http::StatusCode>
       + Clone
       + Send
       + Sync
       + 'static {
    let deleted = std::sync::Arc::clone(deleted);
    move |headers| {
        let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
        deleted.lock().unwrap().push(session);
        std::future::ready(axum::http::StatusCode::OK)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_session_is_deleted_when_its_client_is_closed_or_dropped() {
    use axum::http::{header, HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    use std::sync::Arc;
    // A server of the handshake era that gives each `initialize` a session of its own and
    // notes which sessions were deleted.
    let deleted = Deletions::default();
    let opened = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let post = {
        let (opened, deleted) = (opened.clone(), deleted.clone());
        move |headers: HeaderMap, body: axum::body::Bytes| {
            let (opened, deleted) = (opened.clone(), deleted.clone());
            async move {
                // A deleted session is gone: its requests are not found.
                let session = headers.get("mcp-session-id").map(|id| id.to_str().unwrap());
                if session.is_some_and(|id| deleted.lock().unwrap().iter().any(|d| d == id)) {
                    return StatusCode::NOT_FOUND.into_response();
                }
                let message: Value = serde_json::from_slice(&body).unwrap();
                if message.get("id").is_none() {
                    return StatusCode::ACCEPTED.into_response();
                }
                let mut answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {}});
                let mut session = String::new();
                if message["method"] == "initialize" {
                    let number = opened.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    session = format!("session-{number}");
                    answer["result"] = json!({
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "sessions", "version": "1"},
                    });
                }
                let mut headers = HeaderMap::new();
                headers.insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
                if !session.is_empty() {
                    headers.insert("mcp-session-id", session.parse().unwrap());
                }
                (headers, answer.to_string()).into_response()
            }
        }
    };
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(post)
            .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
            .delete(noting_deletions(&deleted)),
    );
    let url = served(app).await;
    let connect = || Client::builder().handshake_era(true).connect(&url);

    let client = connect().await.unwrap();
    client.close().await;
    assert_eq!(
        *deleted.lock().unwrap(),
        ["session-0"],
        "close deletes the session"
    );

    let client = connect().await.unwrap();
    let copy = client.clone();
    drop(client);
    copy.request("ping", json!({})).await.unwrap();
    assert_eq!(
        deleted.lock().unwrap().len(),
        1,
        "a clone keeps the session"
    );
    drop(copy);
    wait_for("the dropped client's session is deleted", async || {
        deleted.lock().unwrap().len() == 2
    })
    .await;
    // One more session, closed: a deletion of the clone's drop, had there been one, came
    // before it.
    connect().await.unwrap().close().await;
    assert_eq!(
        *deleted.lock().unwrap(),
        ["session-0", "session-1", "session-2"],
        "each session deleted once, the second only once its last handle was dropped"
    );
}

/// A pair of paths the `work` tool is given: it returns once `release` exists, and writes
/// `cancelled` when its call is cancelled.
struct WorkFiles {
    dir: std::path::PathBuf,
}

impl WorkFiles {
    fn new(name: &str) -> WorkFiles {
        let dir =
            std::env::temp_dir().join(format!("tool-tests-client-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        WorkFiles { dir }
    }

    fn arguments(&self, steps: u32) -> Value {
        json!({
            "steps": steps,
            "release": self.dir.join("release"),
            "cancelled": self.dir.join("cancelled"),
        })
    }

    fn cancelled(&self) -> bool {
        self.dir.join("cancelled").exists()
    }

    /// Waits until the server has seen the call `what` cancelled.
    async fn until_cancelled(&self, what: &str) {
        wait_for(&format!("the server saw {what} cancelled"), async || {
            self.cancelled()
        })
        .await;
    }

    fn release(&self) {
        std::fs::write(self.dir.join("release"), b"go").unwrap();
    }
}

impl Drop for WorkFiles {
    fn drop(&mut self) {
        self.release();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_caller_and_a_dropped_call_is_cancelled_on_the_server() {
    for (over, handshake) in EVERY_WAY {
        let way = format!("{over:?}, handshake era {handshake}");
        let upstream = upstream(over);
        let client = connect(&upstream, handshake, None).await;
        let files = WorkFiles::new(&format!("cancel-{over:?}-{handshake}"));

        let (progress, mut reported) = mpsc::unbounded_channel();
        let calling = {
            let (client, arguments) = (client.clone(), files.arguments(3));
            tokio::spawn(async move { client.call("work", arguments, Some(progress), None).await })
        };
        for step in 1..=3 {
            let seen = tokio::time::timeout(*PATIENCE, reported.recv())
                .await
                .unwrap_or_else(|_| panic!("{way}: progress step {step} came"))
                .unwrap();
            assert_eq!(seen.progress, f64::from(step), "{way}");
            assert_eq!(seen.total, Some(3.0), "{way}");
            assert_eq!(seen.message.as_deref(), Some("working"), "{way}");
        }
        assert!(!files.cancelled(), "{way}: nothing cancelled the call yet");

        calling.abort();
        files.until_cancelled(&format!("{way}: the call")).await;

        // The connection serves on after a cancelled call.
        let sum = client
            .call_tool("add", json!({"a": 1, "b": 1}))
            .await
            .unwrap();
        assert_eq!(sum.text(), "2", "{way}");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_call_returns_its_result_after_its_progress() {
    let upstream = upstream(Over::Http);
    let client = connect(&upstream, false, None).await;
    let files = WorkFiles::new("released");
    let (progress, mut reported) = mpsc::unbounded_channel();
    let calling = {
        let (client, arguments) = (client.clone(), files.arguments(1));
        tokio::spawn(async move { client.call("work", arguments, Some(progress), None).await })
    };
    tokio::time::timeout(*PATIENCE, reported.recv())
        .await
        .expect("the progress came")
        .unwrap();
    files.release();
    let result = tokio::time::timeout(*PATIENCE, calling)
        .await
        .expect("the call ended once released")
        .unwrap()
        .unwrap();
    assert_eq!(result.text(), "released");
    assert!(!files.cancelled());
}

/// A call of `work` (one step, then waiting to be released) with time limit `limit`, driven
/// until the tool reports its step, so that it runs on the server. The server can only show
/// a call cancelled once its tool runs (the tool marks being stopped midway), so a try whose
/// time ran out before that first report is checked as a plain time-out and the call is
/// tried again, at most five times.
async fn a_running_work_call<'a>(
    client: &'a Client,
    name: &str,
    limit: Duration,
) -> (WorkFiles, Pending<'a>) {
    for tries in 1..=5 {
        let files = WorkFiles::new(&format!("{name}-{tries}"));
        let (progress, mut reported) = mpsc::unbounded_channel();
        let mut call: Pending<'a> =
            Box::pin(client.call("work", files.arguments(1), Some(progress), Some(limit)));
        tokio::select! {
            Some(_) = reported.recv() => return (files, call),
            outcome = &mut call => timed_out(&outcome, limit, name),
        }
    }
    panic!("{name}: the tool never started within {limit:?} in 5 tries");
}

/// A call of the client in flight, as `a_running_work_call` hands it over.
type Pending<'a> = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<CallResult, ClientError>> + Send + 'a>,
>;

/// Asserts that `outcome` is the client's own time-out of a `tools/call` after `limit`, one
/// worth retrying.
fn timed_out(outcome: &Result<CallResult, ClientError>, limit: Duration, what: &str) {
    match outcome {
        Err(error @ ClientError::TimedOut { method, after }) => {
            assert_eq!(method, "tools/call", "{what}");
            assert_eq!(*after, limit, "{what}");
            assert!(error.is_retryable(), "{what}: {error}");
        }
        other => panic!("{what}: a time-out, not {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handle_with_its_own_time_limit_gives_up_each_request_past_it() {
    for handshake in [false, true] {
        let upstream = upstream(Over::Stdio);
        let client = connect(&upstream, handshake, None).await;
        let limit = Duration::from_secs(1);
        let quick = client.with_timeout(limit);
        // The tool waits to be released, which it never is here.
        let files = WorkFiles::new(&format!("handle-limit-{handshake}"));
        let what = format!("handshake era {handshake}: a call");
        timed_out(
            &quick.call_tool("work", files.arguments(1)).await,
            limit,
            &what,
        );
        if handshake {
            // A plain request (at 2026-07-28 the server answers this one at once with the
            // task it runs the call as).
            let params = json!({"name": "work", "arguments": files.arguments(1)});
            match quick.request("tools/call", params).await {
                Err(ClientError::TimedOut { method, after }) => {
                    assert_eq!(method, "tools/call");
                    assert_eq!(after, limit);
                }
                other => panic!("a plain request: a time-out, not {other:?}"),
            }
        }
        // The connection, shared with the handle, serves on.
        let sum = client
            .call_tool("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(sum.text(), "3");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_time_limit_fails_retryably_and_is_cancelled_on_the_server() {
    for handshake in [false, true] {
        let upstream = upstream(Over::Stdio);
        let client = connect(&upstream, handshake, None).await;
        let what = format!("limit-{handshake}");
        let limit = Duration::from_secs(2);
        let (files, call) = a_running_work_call(&client, &what, limit).await;
        timed_out(&call.await, limit, &what);
        files.until_cancelled("the timed-out call").await;
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_left_unpolled_past_its_time_limit_is_still_cancelled_when_dropped() {
    // In the handshake era the call waits for its answer, which the client's timer gives
    // up while nobody polls it; at 2026-07-28 the server answers at once with the task it
    // runs the call as, an answer nobody reads. Either way, dropping the call ends it there.
    for handshake in [false, true] {
        let upstream = upstream(Over::Stdio);
        let client = connect(&upstream, handshake, None).await;
        let limit = Duration::from_secs(2);
        let (files, call) =
            a_running_work_call(&client, &format!("expired-unpolled-{handshake}"), limit).await;
        // Left unpolled past its time limit, then dropped.
        tokio::time::sleep(limit + Duration::from_millis(500)).await;
        drop(call);
        files.until_cancelled("the given-up call").await;
        client.close().await;
    }
}

/// Answers every form with `name` set to the value it was made with, and counts the
/// questions.
struct Answers {
    name: Value,
    asked: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl ClientHandler for Answers {
    fn supports(&self, capability: &str) -> bool {
        capability == "elicitation"
    }

    fn elicit<'a>(&'a self, message: &'a str, schema: &'a Value) -> Answer<'a, Elicitation> {
        assert_eq!(message, "What is your name?");
        assert_eq!(schema["properties"]["name"]["type"], "string");
        self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut content = Map::new();
        content.insert("name".to_owned(), self.name.clone());
        Box::pin(async move { Ok(Elicitation::Accept(content)) })
    }
}

/// A boxed handler, as the builder takes one.
struct BoxedHandler(Box<dyn ClientHandler>);

impl ClientHandler for BoxedHandler {
    fn supports(&self, capability: &str) -> bool {
        self.0.supports(capability)
    }

    fn elicit<'a>(&'a self, message: &'a str, schema: &'a Value) -> Answer<'a, Elicitation> {
        self.0.elicit(message, schema)
    }

    fn elicit_url<'a>(
        &'a self,
        message: &'a str,
        url: &'a str,
        elicitation_id: &'a str,
    ) -> Answer<'a, Elicitation> {
        self.0.elicit_url(message, url, elicitation_id)
    }

    fn sample<'a>(&'a self, params: &'a Value) -> Answer<'a, Value> {
        self.0.sample(params)
    }

    fn roots(&self) -> Answer<'_, Vec<Value>> {
        self.0.roots()
    }
}

fn answering(
    name: Value,
) -> (
    Box<dyn ClientHandler>,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    let asked = std::sync::Arc::default();
    let handler = Answers {
        name,
        asked: std::sync::Arc::clone(&asked),
    };
    (Box::new(handler), asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handler_answers_what_the_server_asks_every_way() {
    for (over, handshake) in EVERY_WAY {
        let way = format!("{over:?}, handshake era {handshake}");
        let upstream = upstream(over);
        let (handler, asked) = answering(json!("Ada"));
        let client = connect(&upstream, handshake, Some(handler)).await;
        let greeting = client.call_tool("greet", json!({})).await.unwrap();
        assert!(!greeting.is_error, "{way}: {greeting:?}");
        assert_eq!(greeting.text(), "hello Ada", "{way}");
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 1, "{way}");
        client.close().await;
    }
}

/// Answers for the client's model, its roots and the pages it is sent to, keeping what it
/// was asked.
#[derive(Clone, Default)]
struct ModelRootsAndPages {
    asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl ModelRootsAndPages {
    fn note(&self, what: String) {
        self.asked.lock().unwrap().push(what);
    }
}

impl ClientHandler for ModelRootsAndPages {
    fn supports(&self, capability: &str) -> bool {
        ["sampling", "roots", "elicitation.url"].contains(&capability)
    }

    fn elicit_url<'a>(
        &'a self,
        message: &'a str,
        url: &'a str,
        _elicitation_id: &'a str,
    ) -> Answer<'a, Elicitation> {
        self.note(format!("page {url}: {message}"));
        Box::pin(async { Ok(Elicitation::Accept(Map::new())) })
    }

    fn sample<'a>(&'a self, params: &'a Value) -> Answer<'a, Value> {
        let asked = params["messages"][0]["content"]["text"]
            .as_str()
            .unwrap_or_default();
        self.note(format!("model: {asked}"));
        Box::pin(async {
            Ok(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "rivers run to the sea"},
                "model": "scripted",
                "stopReason": "endTurn",
            }))
        })
    }

    fn roots(&self) -> Answer<'_, Vec<Value>> {
        self.note("roots".to_owned());
        Box::pin(async {
            Ok(vec![
                json!({"uri": "file:///work/maps", "name": "maps"}),
                json!({"uri": "file:///work/notes"}),
            ])
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handler_answers_for_the_model_the_roots_and_pages_to_visit_every_way() {
    for (over, handshake) in EVERY_WAY {
        let way = format!("{over:?}, handshake era {handshake}");
        let upstream = upstream(over);
        let handler = ModelRootsAndPages::default();
        let client = connect(&upstream, handshake, Some(Box::new(handler.clone()))).await;

        let said = client
            .call_tool("ask_model", json!({"topic": "rivers"}))
            .await
            .unwrap();
        assert!(!said.is_error, "{way}: {said:?}");
        assert_eq!(
            said.text(),
            "the model says: rivers run to the sea",
            "{way}"
        );

        let roots = client.call_tool("client_roots", json!({})).await.unwrap();
        assert!(!roots.is_error, "{way}: {roots:?}");
        assert_eq!(
            roots.text(),
            "roots: file:///work/maps file:///work/notes",
            "{way}"
        );

        let signed = client.call_tool("sign_in", json!({})).await.unwrap();
        assert!(!signed.is_error, "{way}: {signed:?}");
        assert_eq!(signed.text(), "signed in", "{way}");

        assert_eq!(
            *handler.asked.lock().unwrap(),
            [
                "model: Say one thing about rivers.",
                "roots",
                "page https://example.com/sign-in: Sign in to Example Co",
            ],
            "{way}: each question reached the handler once"
        );
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_handler_the_client_declares_no_forms_and_is_refused_as_its_era_says() {
    // At 2026-07-28 the server refuses a request that needs a capability the client did
    // not declare; in the handshake era the tool hears it cannot ask, and says so.
    let upstream = upstream(Over::Stdio);
    let client = connect(&upstream, false, None).await;
    match client.call_tool("greet", json!({})).await {
        Err(error @ ClientError::Server { .. }) => {
            assert_eq!(error.code(), Some(-32021), "{error:?}");
            assert!(error.to_string().contains("elicitation"), "{error}");
        }
        other => panic!("a refusal for the missing capability, not {other:?}"),
    }
    client.close().await;

    let client = connect(&upstream, true, None).await;
    let greeting = client.call_tool("greet", json!({})).await.unwrap();
    assert!(greeting.is_error, "{greeting:?}");
    assert!(greeting.text().contains("elicitation"), "{greeting:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_does_not_fit_the_form_never_reaches_the_server_as_accepted() {
    // At 2026-07-28 the client declines in its place (a form may always be declined); in
    // the handshake era it answers the server's request with an error.
    for (handshake, expected_error, expected_text) in [
        (false, false, "hello stranger"),
        (true, true, "does not fit the form"),
    ] {
        let upstream = upstream(Over::Stdio);
        let (handler, asked) = answering(json!(42));
        let client = connect(&upstream, handshake, Some(handler)).await;
        let greeting = client.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(greeting.is_error, expected_error, "{greeting:?}");
        assert!(
            greeting.text().contains(expected_text),
            "handshake era {handshake}: {greeting:?}"
        );
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_process_that_dies_mid_call_fails_the_call_and_the_next_call_starts_it_again() {
    for handshake in [false, true] {
        let upstream = upstream(Over::Stdio);
        let client = connect(&upstream, handshake, None).await;
        let mut events = client.notifications();
        let died = client.call_tool("quit", json!({})).await;
        match &died {
            Err(error @ ClientError::TransportDown { server, .. }) => {
                assert!(server.contains("upstream-tools"), "{error}");
                assert!(error.is_retryable());
            }
            other => panic!("handshake era {handshake}: the transport down, not {other:?}"),
        }
        // The first try after a failure may come before the backoff allows; the client
        // connects again by itself once it does.
        let mut sum = None;
        wait_for("the client connects to a new process", async || {
            sum = client.call_tool("add", json!({"a": 4, "b": 4})).await.ok();
            sum.is_some()
        })
        .await;
        assert_eq!(sum.unwrap().text(), "8");
        let connected = tokio::time::timeout(*PATIENCE, async {
            loop {
                if let Ok(Notification::Connected) = events.recv().await {
                    return;
                }
            }
        })
        .await;
        assert!(
            connected.is_ok(),
            "listeners are told the client connected again"
        );
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_that_restarts_is_reached_again_on_a_new_session() {
    for handshake in [false, true] {
        let first = spawn_http(UPSTREAM, "127.0.0.1", &[], &[]);
        let port = first.port;
        let target = Target::Http(format!("http://127.0.0.1:{port}/mcp"));
        let client = Client::builder()
            .handshake_era(handshake)
            .connect_to(target)
            .await
            .unwrap();
        assert_eq!(
            client
                .call_tool("add", json!({"a": 1, "b": 2}))
                .await
                .unwrap()
                .text(),
            "3"
        );
        drop(first);

        let down = client
            .call_tool("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap_err();
        assert!(down.is_retryable(), "handshake era {handshake}: {down}");
        assert!(down.to_string().contains(&port.to_string()), "{down}");

        let mut command = tool_tests::command(UPSTREAM);
        command
            .args(["serve", "--http", &format!("127.0.0.1:{port}")])
            .stdout(std::process::Stdio::null());
        let _second = ServerProcess::start(command, "upstream-tools-again");
        let mut sum = None;
        wait_for("the client reaches the restarted server", async || {
            sum = client.call_tool("add", json!({"a": 2, "b": 2})).await.ok();
            sum.is_some()
        })
        .await;
        assert_eq!(sum.unwrap().text(), "4");
        client.close().await;
    }
}

/// The calls made one after another over HTTP in the tests of connection reuse.
const CALLS_IN_A_ROW: i64 = 30;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_calls_one_after_another_keep_the_session_and_reuse_connections() {
    for handshake in [false, true] {
        let way = format!("handshake era {handshake}");
        let server = spawn_http(UPSTREAM, "127.0.0.1", &[], &[]);
        let tap = tool_tests::tap::Tap::before(server.port).await;
        let client = Client::builder()
            .handshake_era(handshake)
            .connect_to(Target::Http(format!("http://127.0.0.1:{}/mcp", tap.port)))
            .await
            .unwrap();
        let handshake_method = if handshake {
            "initialize"
        } else {
            "server/discover"
        };
        let handshakes = tap.sent_method(handshake_method);
        assert!(
            handshakes >= 1,
            "{way}: the client began with {handshake_method}"
        );

        for a in 0..CALLS_IN_A_ROW {
            let sum = client
                .call_tool("add", json!({"a": a, "b": 1}))
                .await
                .unwrap();
            assert_eq!(sum.text(), (a + 1).to_string(), "{way}");
        }

        assert_eq!(
            tap.sent_method("tools/call"),
            CALLS_IN_A_ROW as usize,
            "{way}: the tap saw every call"
        );
        assert_eq!(
            tap.sent_method(handshake_method),
            handshakes,
            "{way}: no call began a session again"
        );
        let sessions = tap.header_values("mcp-session-id");
        assert_eq!(
            sessions.len(),
            usize::from(handshake),
            "{way}: one session for every request of the handshake era, none at 2026: {sessions:?}"
        );
        // Calls one after another need one connection. hyper gives a connection back to
        // its pool a moment after its answer was read, so a call on a busy machine may
        // start before that and open another, which is then kept idle for the calls after
        // it: a few connections, where a client that connected per call opens one a call.
        let carrying = tap.connections_with("tools/call") as i64;
        assert!(
            (1..=CALLS_IN_A_ROW / 3).contains(&carrying),
            "{way}: {CALLS_IN_A_ROW} calls went over {carrying} connections"
        );
        client.close().await;
    }
}

/// How long the scripted server below keeps an idle connection: as Node's and uvicorn's
/// servers do.
const SERVER_KEEPS_IDLE: Duration = Duration::from_secs(5);

/// Reads one HTTP/1.1 request from `stream`: its body, or `None` once the client closed.
async fn read_request(stream: &mut tokio::io::BufReader<tokio::net::TcpStream>) -> Option<Vec<u8>> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut length = 0;
    loop {
        let mut line = String::new();
        if stream.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await.ok()?;
    Some(body)
}

/// Serves one connection as a server that keeps it idle for [`SERVER_KEEPS_IDLE`], in the
/// worst case: a request that comes after that, just as the server closes it, is reset
/// (counted in `resets`) rather than served.
async fn keep_alive_for_a_while(
    stream: tokio::net::TcpStream,
    resets: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    use tokio::io::AsyncWriteExt;
    let mut stream = tokio::io::BufReader::new(stream);
    let mut idle_since = None::<std::time::Instant>;
    while let Some(body) = read_request(&mut stream).await {
        if idle_since.is_some_and(|since| since.elapsed() >= SERVER_KEEPS_IDLE) {
            resets.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _ = stream.get_ref().set_zero_linger();
            return;
        }
        let message: Value = serde_json::from_slice(&body).unwrap();
        let result = match message["method"].as_str() {
            Some("server/discover") => json!({
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "keeps-alive", "version": "1"},
            }),
            _ => json!({"content": [{"type": "text", "text": "served"}]}),
        };
        let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            answer.len()
        );
        let written = stream.write_all(format!("{head}{answer}").as_bytes()).await;
        if written.is_err() || stream.flush().await.is_err() {
            return;
        }
        idle_since = Some(std::time::Instant::now());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_idle_as_long_as_servers_keep_one_is_not_sent_on_again() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let resets = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (kept_resets, kept_accepted) = (resets.clone(), accepted.clone());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            kept_accepted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(keep_alive_for_a_while(stream, kept_resets.clone()));
        }
    });
    let client = Client::builder()
        .timeout(*PATIENCE)
        .connect(&format!("http://{address}/mcp"))
        .await
        .unwrap();
    let first = client.call_tool("any", json!({})).await.unwrap();
    assert_eq!(first.text(), "served");
    // One connection, or two: hyper gives a connection back to its pool a moment after its
    // answer was read, and a request made before that opens another.
    let before = accepted.load(std::sync::atomic::Ordering::SeqCst);

    // Idle past the server's keep-alive: the connection is not the client's to use.
    tokio::time::sleep(SERVER_KEEPS_IDLE + Duration::from_millis(200)).await;
    let second = client.call_tool("any", json!({})).await;
    assert_eq!(second.map(|called| called.text()).unwrap(), "served");
    assert_eq!(
        resets.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no request was reset"
    );
    assert_eq!(
        accepted.load(std::sync::atomic::Ordering::SeqCst),
        before + 1,
        "a new connection"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_servers_fail_retryably_naming_what_was_tried() {
    let missing = Client::connect("/nonexistent/mcp-server --stdio")
        .await
        .unwrap_err();
    assert!(
        matches!(missing, ClientError::TransportDown { ref server, .. } if server == "/nonexistent/mcp-server --stdio"),
        "{missing:?}"
    );
    assert!(
        missing.to_string().contains("/nonexistent/mcp-server"),
        "{missing}"
    );
    assert!(missing.is_retryable());

    let port = tool_tests::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let refused = Client::connect(&url).await.unwrap_err();
    assert!(
        matches!(refused, ClientError::TransportDown { ref server, .. } if *server == url),
        "{refused:?}"
    );
    assert!(refused.is_retryable());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_is_no_mcp_server_is_a_protocol_error_not_a_hang() {
    let target = Target::Command(vec![
        "sh".to_owned(),
        "-c".to_owned(),
        "echo 'this is not JSON-RPC'; cat > /dev/null".to_owned(),
    ]);
    let outcome = tokio::time::timeout(
        *PATIENCE,
        Client::builder()
            .timeout(Duration::from_secs(2))
            .connect_to(target),
    )
    .await
    .expect("the client gives up by itself");
    let error = outcome.unwrap_err();
    assert!(matches!(error, ClientError::Protocol { .. }), "{error:?}");
    let told = error.to_string();
    assert!(told.contains("initialize"), "{told}");
    assert!(told.contains("this is not JSON-RPC"), "{told}");
}

/// A handshake-era server that, once initialized, asks the client two questions that are
/// not valid (params that are no object, params that are no JSON a client can hold), and
/// lists one tool named after each error code it was answered with.
const ASKS_WRONG: &str = r#"
import json, sys
def send(message):
    print(json.dumps(dict(message, jsonrpc="2.0")), flush=True)
answers = {}
for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        send({"id": message["id"], "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "wrong", "version": "1"}}})
    elif method == "notifications/initialized":
        send({"id": "not-an-object", "method": "roots/list", "params": [1]})
        print('{"jsonrpc":"2.0","id":"lone","method":"ping","params":{"x":"\\ud800"}}', flush=True)
    elif method is None and message.get("id") in ("not-an-object", "lone"):
        answers[message["id"]] = message.get("error", {}).get("code")
    elif method == "tools/list":
        pending = message
        while len(answers) < 2:
            answer = json.loads(sys.stdin.readline())
            answers[answer["id"]] = answer.get("error", {}).get("code")
        tools = [{"name": f"{id}_{code}", "inputSchema": {"type": "object"}}
                 for id, code in sorted(answers.items())]
        send({"id": pending["id"], "result": {"tools": tools}})
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_request_that_is_not_valid_is_answered_with_why_not_left_waiting() {
    let script = PythonScript::new("asks-wrong", ASKS_WRONG);
    let client = Client::builder()
        .handshake_era(true)
        .connect_to(Target::Command(script.command(&[])))
        .await
        .unwrap();
    let tools = tokio::time::timeout(*PATIENCE, client.list_tools())
        .await
        .expect("the server was answered, and listed its tools")
        .unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["lone_-32700", "not-an-object_-32600"]);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_exits_at_once_is_down_with_its_last_words_on_stderr() {
    let target = Target::Command(vec![
        "sh".to_owned(),
        "-c".to_owned(),
        "echo 'error: no config file at /etc/upstream.toml' >&2; exit 3".to_owned(),
    ]);
    let error = Client::builder().connect_to(target).await.unwrap_err();
    assert!(
        matches!(error, ClientError::TransportDown { .. }),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("no config file at /etc/upstream.toml"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_2026_a_client_hears_of_list_changes_on_its_listen_stream() {
    let (handle, url) = tool_tests::changing::changing_server().await;
    let client = Client::builder()
        .connect_to(Target::Http(url))
        .await
        .unwrap();
    assert_eq!(client.protocol_version().await.unwrap(), "2026-07-28");
    let mut events = client.notifications();
    let names = |tools: Vec<tool_runtime::client::RemoteTool>| {
        tools.into_iter().map(|t| t.name).collect::<Vec<_>>()
    };
    assert_eq!(names(client.list_tools().await.unwrap()), ["first"]);
    // Connected means listening: the listen stream was acknowledged before the connection
    // was handed over, so a change from now on reaches the client.
    let registry = handle.registry().expect("served");
    registry
        .add_tool(tool_tests::changing::named_tool("second"))
        .unwrap();
    tokio::time::timeout(*PATIENCE, async {
        loop {
            if let Ok(Notification::ToolsChanged) = events.recv().await {
                return;
            }
        }
    })
    .await
    .expect("the change came on the listen stream");
    assert_eq!(
        names(client.list_tools().await.unwrap()),
        ["first", "second"]
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_handshake_era_a_client_hears_of_list_changes_on_the_get_stream() {
    let (handle, url) = tool_tests::changing::changing_server().await;
    let client = Client::builder()
        .handshake_era(true)
        .connect_to(Target::Http(url))
        .await
        .unwrap();
    assert_eq!(client.protocol_version().await.unwrap(), "2025-11-25");
    let mut events = client.notifications();
    let registry = handle.registry().expect("served");
    // Tools are added until the client hears of it: a change made before the GET stream
    // that carries it is open goes to nobody.
    let mut added = 0;
    tokio::time::timeout(*PATIENCE, async {
        loop {
            added += 1;
            registry
                .add_tool(tool_tests::changing::named_tool(&format!("more{added}")))
                .unwrap();
            let heard = tokio::time::timeout(Duration::from_millis(200), events.recv()).await;
            if let Ok(Ok(Notification::ToolsChanged)) = heard {
                return;
            }
        }
    })
    .await
    .expect("the change came on the GET stream");
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.name)
        .collect();
    assert!(names.contains(&"more1".to_owned()), "{names:?}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_handshake_era_a_subscriber_hears_its_resource_updated() {
    let upstream = upstream(Over::Http);
    let client = connect(&upstream, true, None).await;
    let mut events = client.notifications();
    client.subscribe("upstream://motto").await.unwrap();
    // Touched until heard, for the same reason as above.
    tokio::time::timeout(*PATIENCE, async {
        loop {
            client.call_tool("touch_motto", json!({})).await.unwrap();
            let heard = tokio::time::timeout(Duration::from_millis(200), events.recv()).await;
            if let Ok(Ok(Notification::ResourceUpdated { uri })) = heard {
                assert_eq!(uri, "upstream://motto");
                return;
            }
        }
    })
    .await
    .expect("the update reached the subscriber");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompts_argument_is_completed_every_way() {
    for (over, handshake) in EVERY_WAY {
        let way = format!("{over:?}, handshake era {handshake}");
        let upstream = upstream(over);
        let client = connect(&upstream, handshake, None).await;
        let haiku = json!({"type": "ref/prompt", "name": "haiku"});
        let offered = client.complete(haiku.clone(), "topic", "r").await.unwrap();
        assert_eq!(offered, ["rain", "rivers"], "{way}");
        let offered = client.complete(haiku, "topic", "sn").await.unwrap();
        assert_eq!(offered, ["snow"], "{way}");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_of_a_2026_server_follows_its_list_changes() {
    let (handle, url) = tool_tests::changing::changing_server().await;
    let registry = std::sync::Arc::new(
        tool_runtime::Registry::builder()
            .mount(tool_runtime::mount::Mount::new("up", &url).unwrap())
            .build()
            .unwrap(),
    );
    tokio::time::timeout(*PATIENCE, registry.start_mounts())
        .await
        .unwrap()
        .unwrap();
    assert!(registry.get("up_first").is_some());
    handle
        .registry()
        .unwrap()
        .add_tool(tool_tests::changing::named_tool("second"))
        .unwrap();
    wait_for("the mount lists the upstream's new tool", async || {
        registry.get("up_second").is_some()
    })
    .await;
    handle.registry().unwrap().remove_tool("first");
    wait_for("the mount drops the upstream's removed tool", async || {
        registry.get("up_first").is_none()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_started_as_a_task_is_looked_at_waited_for_and_cancelled_in_each_era() {
    for handshake in [false, true] {
        let upstream = upstream(Over::Http);
        let client = connect(&upstream, handshake, None).await;
        let files = WorkFiles::new(&format!("task-{handshake}"));
        let task = client.start_task("work", files.arguments(0)).await.unwrap();
        assert!(!task.id.is_empty(), "handshake era {handshake}: {task:?}");
        assert_eq!(task.status, "working", "{task:?}");
        let seen = client.task(&task.id).await.unwrap();
        assert_eq!(
            (seen.id.as_str(), seen.status.as_str()),
            (task.id.as_str(), "working")
        );
        files.release();
        let result = tokio::time::timeout(*PATIENCE, client.task_result(&task))
            .await
            .expect("the task ended once released")
            .unwrap();
        assert_eq!(result.text(), "released", "handshake era {handshake}");
        assert!(client.task(&task.id).await.unwrap().is_over());

        let second = WorkFiles::new(&format!("task-cancel-{handshake}"));
        let task = client
            .start_task("work", second.arguments(0))
            .await
            .unwrap();
        client.cancel_task(&task.id).await.unwrap();
        wait_for("the server stopped the cancelled task", async || {
            second.cancelled()
        })
        .await;
        let mut status = String::new();
        wait_for("the task says it was cancelled", async || {
            status = client.task(&task.id).await.unwrap().status;
            status == "cancelled"
        })
        .await;
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_requires_a_task_is_called_as_one_every_way() {
    for (over, handshake) in EVERY_WAY {
        let way = format!("{over:?}, handshake era {handshake}");
        let upstream = upstream(over);
        let client = connect(&upstream, handshake, None).await;
        // Before the tools are listed: in the handshake era the server refuses the call
        // made without a task, and the client learns from the listing that the tool
        // requires one.
        let sum = client
            .call_tool("task_add", json!({"a": 2, "b": 3}))
            .await
            .unwrap_or_else(|error| panic!("{way}, not listed yet: {error}"));
        assert_eq!(sum.text(), "5", "{way}, not listed yet: {sum:?}");
        // A tool that does not exist is still an error, saying so.
        let missing = client.call_tool("no_such_tool", json!({})).await;
        assert!(
            matches!(&missing, Err(ClientError::Server { .. }))
                || missing.as_ref().is_ok_and(|result| result.is_error),
            "{way}: {missing:?}"
        );
        let tools = client.list_tools().await.unwrap();
        let support = |name: &str| {
            let tool = tools.iter().find(|tool| tool.name == name).unwrap();
            tool.task_support().map(str::to_owned)
        };
        if handshake {
            assert_eq!(support("task_add").as_deref(), Some("required"), "{way}");
            assert_eq!(support("work").as_deref(), Some("optional"), "{way}");
            // Said nothing of: forbidden, as the protocol reads it.
            assert_eq!(support("add"), None, "{way}");
        } else {
            // At 2026-07-28 the server decides, and lists no such field.
            assert_eq!(support("task_add"), None, "{way}");
        }
        // In the handshake era the server answers with the task it made; the sum comes
        // from following it.
        let sum = client
            .call_tool("task_add", json!({"a": 2, "b": 3}))
            .await
            .unwrap_or_else(|error| panic!("{way}: {error}"));
        assert!(!sum.is_error, "{way}: {sum:?}");
        assert_eq!(sum.text(), "5", "{way}: {sum:?}");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_a_task_asks_while_it_runs_is_answered_every_way() {
    // The task is made before the tool asks (it waits for its release): at 2026-07-28 it
    // then waits in `input_required` and the client answers with `tasks/update`; in the
    // handshake era the question comes while `tasks/result` waits.
    for (over, handshake) in EVERY_WAY {
        let way = format!("{over:?}, handshake era {handshake}");
        let upstream = upstream(over);
        let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let handler = Answers {
            name: json!("Ada"),
            asked: asked.clone(),
        };
        let client = connect(&upstream, handshake, Some(Box::new(handler))).await;
        let files = WorkFiles::new(&format!("task-greet-{over:?}-{handshake}"));
        let release = files.arguments(0)["release"].clone();
        let task = client
            .start_task("task_greet", json!({"release": release}))
            .await
            .unwrap_or_else(|error| panic!("{way}: {error}"));
        assert_eq!(task.status, "working", "{way}: {task:?}");
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 0, "{way}");
        files.release();
        let greeting = tokio::time::timeout(*PATIENCE, client.task_result(&task))
            .await
            .unwrap_or_else(|_| panic!("{way}: the task ended"))
            .unwrap_or_else(|error| panic!("{way}: {error}"));
        assert!(!greeting.is_error, "{way}: {greeting:?}");
        assert_eq!(greeting.text(), "hello Ada", "{way}");
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 1, "{way}");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_handshake_era_a_tasks_progress_reaches_the_call_that_made_it() {
    // The call is answered as soon as the task is made; the task asks its question once
    // released (only once it is listed), while its result is waited for, and reports
    // its progress once answered: after the call's answer, under the call's token. (At
    // 2026-07-28 a task's state is read with `tasks/get`, its message saying what it
    // does.)
    let handshake = true;
    for over in [Over::Stdio, Over::Http] {
        let way = format!("{over:?}");
        let upstream = upstream(over);
        let handler = Answers {
            name: json!("Ada"),
            asked: Default::default(),
        };
        let client = connect(&upstream, handshake, Some(Box::new(handler))).await;
        client.list_tools().await.unwrap();
        let files = WorkFiles::new(&format!("task-progress-{over:?}-{handshake}"));
        let release = files.arguments(0)["release"].clone();
        let (progress, mut reported) = tokio::sync::mpsc::unbounded_channel();
        let calling = tokio::spawn({
            let client = client.clone();
            async move {
                let arguments = json!({"release": release});
                client
                    .call("task_greet", arguments, Some(progress), None)
                    .await
            }
        });
        wait_for(&format!("{way}: the task is made"), async || {
            let listed = client.request("tasks/list", json!({})).await;
            listed.is_ok_and(|listed| {
                listed["tasks"]
                    .as_array()
                    .is_some_and(|tasks| !tasks.is_empty())
            })
        })
        .await;
        files.release();
        let step = tokio::time::timeout(*PATIENCE, reported.recv())
            .await
            .unwrap_or_else(|_| panic!("{way}: the task's progress came"))
            .expect("the task's progress came before its call ended");
        assert_eq!(step.message.as_deref(), Some("greeted"), "{way}");
        assert_eq!((step.progress, step.total), (1.0, Some(1.0)), "{way}");
        let greeting = calling
            .await
            .unwrap()
            .unwrap_or_else(|error| panic!("{way}: {error}"));
        assert_eq!(greeting.text(), "hello Ada", "{way}");
        // And its listener is let go once the task ended (the channel closes).
        let closed = tokio::time::timeout(*PATIENCE, reported.recv()).await;
        assert!(matches!(closed, Ok(None)), "{way}: {closed:?}");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_2026_a_call_the_server_turns_into_a_task_is_followed_to_its_result() {
    use tool_runtime::mcp::{McpServer, ServerInfo, ServerOptions};
    use tool_runtime::tasks::TaskOptions;
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Nothing {}
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let entered = std::sync::Arc::new(tokio::sync::Notify::new());
    let (held, told) = (gate.clone(), entered.clone());
    let slow = tool_runtime::DynamicTool::new("slow", "Wait to be let go.", move |_: Nothing| {
        let (held, told) = (held.clone(), told.clone());
        async move {
            told.notify_one();
            held.notified().await;
            Ok::<_, String>("let go")
        }
    })
    .unwrap()
    .task(tool_runtime::catalog::TaskSupport::Optional);
    let registry = tool_runtime::Registry::builder()
        .tool(slow)
        .build()
        .unwrap();
    // A call becomes a task at once: the answer can only come by following it.
    let options =
        ServerOptions::default().tasks(TaskOptions::default().promote_after(Duration::ZERO));
    let server = McpServer::with_options(registry, ServerInfo::new("tasks", "1"), options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = tool_runtime::transport::http::router(
        server,
        tool_runtime::transport::http::HttpOptions::for_address(address),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });

    let client = Client::connect(&format!("http://{address}/mcp"))
        .await
        .unwrap();
    let calling = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("slow", json!({})).await })
    };
    tokio::time::timeout(*PATIENCE, entered.notified())
        .await
        .expect("the tool ran");
    gate.notify_one();
    let result = tokio::time::timeout(*PATIENCE, calling)
        .await
        .expect("the call ended")
        .unwrap()
        .unwrap();
    assert_eq!(result.text(), "let go");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_passes_the_updates_of_its_servers_resources_to_this_servers_subscribers() {
    use tool_runtime::mcp::{McpServer, ServerInfo};
    use tool_runtime::transport::http::{router, HttpOptions};
    const URI: &str = "notes://today";
    // The upstream: a resource that changes, served over HTTP.
    let today =
        tool_runtime::registry::DynamicResource::new(URI, "today", "Today's note.", || async {
            Ok::<_, String>("rain")
        })
        .unwrap();
    let builder = tool_runtime::Registry::builder().resource(today);
    let updates = builder.resource_updates();
    let upstream = McpServer::new(builder.build().unwrap(), ServerInfo::new("notes", "1"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = router(upstream, HttpOptions::for_address(address));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{address}/mcp");

    // The front mounts it; a client of the front subscribes to the mounted resource.
    let front = tool_runtime::Registry::builder()
        .mount(tool_runtime::mount::Mount::new("up", &url).unwrap())
        .build()
        .unwrap();
    let front = McpServer::new(front, ServerInfo::new("front", "1"));
    let mut session = tool_tests::stdio::Session::in_memory(&front);
    session.send(tool_tests::INITIALIZE).await;
    session.answer_to(0).await;
    let mut asked = 0;
    wait_for_some("the front lists the mounted resource", async || {
        asked += 1;
        session
            .send(&tool_tests::rpc::request(
                100 + asked,
                "resources/list",
                json!({}),
            ))
            .await;
        let (listed, _) = session.answer_to(100 + asked).await;
        listed["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|resource| resource["uri"] == URI)
            .then_some(())
    })
    .await;
    session
        .send(&tool_tests::rpc::request(
            1,
            "resources/subscribe",
            json!({"uri": URI}),
        ))
        .await;
    let (subscribed, _) = session.answer_to(1).await;
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");

    // The upstream's resource changes (again and again, until the mount's own subscription
    // is in place): the front's subscriber hears of it.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let firing = {
        let stop = stop.clone();
        tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                updates.updated(URI);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    loop {
        let message = session.next().await;
        if message["method"] == "notifications/resources/updated" {
            assert_eq!(message["params"]["uri"], URI, "{message}");
            break;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    firing.await.unwrap();
}
