//! What the MCP client holds a server to, whatever it sends: a list read up to a number of
//! pages, a request's `input_required` rounds up to a number, each message up to the
//! client's size limit; past each, an error that says which, and the client goes on.

use axum::http::header;
use axum::response::IntoResponse;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tool_runtime::client::{Client, ClientError, Target};
use tool_tests::{PythonScript, PATIENCE};

/// The size limit the tests give the client: small, so that a message over it is cheap.
const LIMIT: usize = 64 * 1024;

/// A client held to [`LIMIT`], patient as a test is.
fn bounded() -> tool_runtime::client::ClientBuilder {
    Client::builder()
        .timeout(*PATIENCE)
        .max_message_bytes(LIMIT)
}

/// Calls `huge`, whose answer is over [`LIMIT`]: refused, saying so.
async fn refused_huge(client: &Client) {
    let error = client
        .call_tool("huge", json!({}))
        .await
        .expect_err("a message over the limit is refused");
    assert!(
        error.to_string().contains(&format!("over {LIMIT} bytes")),
        "{error}"
    );
}

/// A tool's description as the servers here list it.
fn listed_tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

/// What a server without end answers `message` (2026-07-28): a list whose every page
/// names another, calls of `ask` that need answers round after round, calls of `huge`
/// answered with more text than the client takes, and calls of `fine` answered.
fn endless_answer(message: &Value) -> Value {
    let result = match (
        message["method"].as_str(),
        message["params"]["name"].as_str(),
    ) {
        (Some("server/discover"), _) => json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "endless", "version": "1"},
        }),
        (Some("tools/list"), _) => json!({"tools": [listed_tool("fine")], "nextCursor": "more"}),
        (Some("tools/call"), Some("ask")) => json!({
            "resultType": "input_required",
            "inputRequests": {"again": {"method": "elicitation/create", "params": {
                "mode": "form",
                "message": "Once more?",
                "requestedSchema": {"type": "object", "properties": {}},
            }}},
            "requestState": "round",
        }),
        (Some("tools/call"), Some("huge")) => json!({
            "content": [{"type": "text", "text": "x".repeat(LIMIT)}],
        }),
        (Some("tools/call"), _) => json!({"content": [{"type": "text", "text": "fine"}]}),
        _ => {
            return json!({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32601, "message": "no such method",
            }})
        }
    };
    json!({"jsonrpc": "2.0", "id": message["id"], "result": result})
}

/// How many requests of each kind (`tools/call ask`, `tools/list`) a server was sent.
#[derive(Clone, Default)]
struct Counts(Arc<Mutex<HashMap<String, usize>>>);

impl Counts {
    fn note(&self, message: &Value) {
        let method = message["method"].as_str().unwrap_or_default();
        let kind = match message["params"]["name"].as_str() {
            Some(name) => format!("{method} {name}"),
            None => method.to_owned(),
        };
        *self.0.lock().unwrap().entry(kind).or_default() += 1;
    }

    fn of(&self, kind: &str) -> usize {
        self.0
            .lock()
            .unwrap()
            .get(kind)
            .copied()
            .unwrap_or_default()
    }
}

/// Serves [`endless_answer`] over Streamable HTTP on a port of 127.0.0.1, for as long as
/// the test's runtime runs: its URL, and the requests it counted.
async fn endless_over_http() -> (String, Counts) {
    let counts = Counts::default();
    let counted = counts.clone();
    let mcp = move |body: axum::body::Bytes| {
        let counts = counted.clone();
        async move {
            let message: Value = serde_json::from_slice(&body).unwrap();
            counts.note(&message);
            let answer = endless_answer(&message).to_string();
            ([(header::CONTENT_TYPE, "application/json")], answer).into_response()
        }
    };
    let app = axum::Router::new().route("/mcp", axum::routing::post(mcp));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}/mcp"), counts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_end_is_held_to_the_clients_bounds_and_the_client_goes_on() {
    let (url, counts) = endless_over_http().await;
    let client = bounded()
        .connect(&url)
        .await
        .expect("the server connects at 2026-07-28");

    let error = client
        .list_tools()
        .await
        .expect_err("cursors without end are not followed for ever");
    assert!(matches!(error, ClientError::Protocol { .. }), "{error:?}");
    assert!(
        error.to_string().contains("more than 1000 pages"),
        "{error}"
    );
    assert_eq!(
        counts.of("tools/list"),
        1000,
        "no page past the bound asked"
    );

    let error = client
        .call_tool("ask", json!({}))
        .await
        .expect_err("questions without end are not answered for ever");
    assert!(
        error
            .to_string()
            .contains("still needed answers after 8 rounds"),
        "{error}"
    );
    assert_eq!(
        counts.of("tools/call ask"),
        8,
        "no round past the bound sent"
    );

    refused_huge(&client).await;

    let fine = client.call_tool("fine", json!({})).await.unwrap();
    assert_eq!(fine.text(), "fine", "the client goes on after each");
    client.close().await;
}

/// A server over stdio, in Python's standard library: one message a line, `huge` answered
/// with a line over the client's limit, anything else called answered.
const HUGE_LINE: &str = r#"
import json, sys
limit = int(sys.argv[1])
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "server/discover":
        result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "wordy", "version": "1"}}
    elif method == "tools/call":
        name = message["params"]["name"]
        text = "x" * limit if name == "huge" else name
        result = {"content": [{"type": "text", "text": text}]}
    else:
        error = {"code": -32601, "message": "no such method"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_over_the_limit_ends_that_connection_and_the_client_connects_again() {
    let script = PythonScript::new("huge-line", HUGE_LINE);
    let target = Target::Command(script.command(&[&LIMIT.to_string()]));
    let client = bounded()
        .connect_to(target)
        .await
        .expect("python3 runs the server");

    // A line cannot be skipped without reading it: the connection ends, saying why.
    refused_huge(&client).await;
    // The next request starts the server again.
    let again = client.call_tool("fine", json!({})).await.unwrap();
    assert_eq!(again.text(), "fine");
    client.close().await;
}
