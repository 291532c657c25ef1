//! The bad-input corpus (`tests/corpus/bad-input.jsonl`, each case with its expected
//! answer) against the stdio and the HTTP server, plus inputs too big for a file: a 10 MB
//! string, arrays nested 100,000 deep, bodies past the size limit. After every case the
//! server must answer a valid request, and no answer may leak internals.

use axum::http::StatusCode;
use base64::Engine;
use serde_json::{json, Value};
use std::collections::HashMap;
use tool_runtime::mcp::{McpServer, ServerOptions};
use tool_runtime::tool;
use tool_runtime::transport::http::{router, HttpOptions};
use tool_tests::http::Request;
use tool_tests::stdio::Session;
use tool_tests::{messages, server, Signal};

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Panics with something secret.
#[tool]
fn explode() -> u8 {
    panic!("secret detail at /root/src/main.rs:12")
}

/// Fails.
#[tool]
fn broken() -> Result<u8, String> {
    Err("the station is offline".into())
}

/// Returns a map whose keys JSON cannot hold.
#[tool]
fn unserializable() -> HashMap<(u8, u8), u8> {
    HashMap::from([((1, 2), 3)])
}

/// Echoes a text back.
#[tool]
fn echo(text: String) -> String {
    text
}

/// Its own id, so the answer to it is told apart from the cases' (which use 0 and 1).
const INIT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"init","method":"initialize","#,
    r#""params":{"protocolVersion":"2025-11-25","capabilities":{},"#,
    r#""clientInfo":{"name":"t","version":"1"}}}"#
);
/// The valid request sent after each case: a 2026-07-28 call, served in any session state.
const AFTER: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"add","#,
    r#""arguments":{"a":1,"b":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#
);
const LEAKS: [&str; 8] = [
    "panicked",
    "secret detail",
    ".rs:",
    "/root",
    "/home",
    "backtrace",
    "RUST_",
    "stack",
];

struct Case {
    name: String,
    send: Vec<u8>,
    expect: Value,
    fresh: bool,
}

fn corpus() -> Vec<Case> {
    let text = include_str!("../corpus/bad-input.jsonl");
    text.lines()
        .map(|line| {
            let case: Value = serde_json::from_str(line).unwrap();
            let send = match (&case["send"], &case["send_base64"]) {
                (Value::String(text), _) => text.as_bytes().to_vec(),
                (_, Value::String(encoded)) => base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .unwrap(),
                _ => panic!("a case sends something"),
            };
            Case {
                name: case["name"].as_str().unwrap().to_owned(),
                send,
                expect: case["expect"].clone(),
                fresh: case["fresh"] == true,
            }
        })
        .collect()
}

/// Whether `answers` (everything the server sent for the case) is what the case expects.
fn matches(expect: &Value, answers: &[Value]) -> Result<(), String> {
    if expect["silent"] == true {
        return if answers.is_empty() {
            Ok(())
        } else {
            Err(format!("expected no answer, got {answers:?}"))
        };
    }
    let [answer] = answers else {
        return Err(format!("expected one answer, got {answers:?}"));
    };
    if answer["jsonrpc"] != "2.0" {
        return Err(format!("not JSON-RPC 2.0: {answer}"));
    }
    if answer["id"] != expect["id"] {
        return Err(format!("id {} instead of {}", answer["id"], expect["id"]));
    }
    if let Some(code) = expect.get("error") {
        return if &answer["error"]["code"] == code && answer["error"]["message"].is_string() {
            Ok(())
        } else {
            Err(format!("expected error {code}, got {answer}"))
        };
    }
    let result = &answer["result"];
    if !result.is_object() {
        return Err(format!("expected a result, got {answer}"));
    }
    let is_error = result["isError"] == true;
    if expect["tool_error"] == true && !is_error {
        return Err(format!("expected a tool error result, got {answer}"));
    }
    if expect["result"] == true && is_error {
        return Err(format!("expected a success, got {answer}"));
    }
    Ok(())
}

fn no_leaks(text: &str) -> Result<(), String> {
    match LEAKS.iter().find(|leak| text.contains(*leak)) {
        Some(leak) => Err(format!("the answer leaks {leak:?}: {text}")),
        None => Ok(()),
    }
}

/// One stdio session: sends `lines`, then the `after` request, and returns every answer
/// but the one to `after` (which must come) and to `init`.
async fn stdio_session(server: &McpServer, lines: &[&[u8]]) -> Result<Vec<Value>, String> {
    let mut session = Session::in_memory(server);
    for line in lines {
        session.send_bytes(line).await;
        session.send_bytes(b"\n").await;
    }
    session.send(AFTER).await;
    session.end_input().await;
    // Read everything until the server ends its output (it does at the end of input, once
    // the calls in flight are answered): slow answers may come after the next request's.
    let mut answers = Vec::new();
    let mut after_served = false;
    while let Some(line) = session.next_text().await {
        no_leaks(&line)?;
        let answer: Value =
            serde_json::from_str(&line).map_err(|e| format!("not JSON: {e}: {line}"))?;
        if answer["id"] == "after" {
            if answer["result"]["structuredContent"] != json!(2) {
                return Err(format!("the next request was not served: {answer}"));
            }
            after_served = true;
        } else if answer["id"] != "init" {
            answers.push(answer);
        }
    }
    if !after_served {
        return Err("the next request got no answer".to_owned());
    }
    session.finish().await;
    Ok(answers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_corpus_over_stdio() {
    let cases = corpus();
    assert!(cases.len() >= 100, "{} cases", cases.len());
    let server = server(ServerOptions::default());
    let mut failures = Vec::new();
    for case in &cases {
        let lines: Vec<&[u8]> = if case.fresh {
            vec![&case.send]
        } else {
            vec![INIT.as_bytes(), &case.send]
        };
        match stdio_session(&server, &lines).await {
            Ok(answers) => {
                if let Err(problem) = matches(&case.expect, &answers) {
                    failures.push(format!("{}: {problem}", case.name));
                }
            }
            Err(problem) => failures.push(format!("{}: {problem}", case.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// POSTs `body` to `app` (in `session`, if any): the status and body of the reply.
async fn post(app: &axum::Router, session: Option<&str>, body: Vec<u8>) -> (StatusCode, String) {
    let mut request = Request::mcp(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let reply = request.send_to(app).await;
    (
        StatusCode::from_u16(reply.status).expect("a status"),
        reply.body,
    )
}

/// Opens a session with `app`: its id.
async fn http_session(app: &axum::Router) -> String {
    let reply = Request::mcp(INIT).send_to(app).await;
    reply
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("a session: {reply:?}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_corpus_over_http() {
    let app = router(server(ServerOptions::default()), HttpOptions::default());
    let mut failures = Vec::new();
    for case in corpus() {
        let initialize = case.send.windows(12).any(|w| w == b"\"initialize\"");
        let stateless = case.send.windows(13).any(|w| w == b"protocolVersi");
        let session = if case.fresh {
            None
        } else {
            Some(http_session(&app).await)
        };
        let (status, body) = post(&app, session.as_deref(), case.send.clone()).await;
        let outcome = no_leaks(&body).and_then(|()| {
            let answers = messages(&body);
            if case.fresh && !initialize && !stateless {
                // Without a session the HTTP side answers for itself: initialize first.
                return if status == StatusCode::BAD_REQUEST
                    && answers
                        .first()
                        .is_some_and(|a| a["error"]["code"] == -32600)
                {
                    Ok(())
                } else {
                    Err(format!("expected 400 and -32600, got {status} {body}"))
                };
            }
            if case.expect["silent"] == true && status != StatusCode::ACCEPTED {
                return Err(format!("a notification gets 202, not {status}"));
            }
            matches(&case.expect, &answers)
        });
        if let Err(problem) = outcome {
            failures.push(format!("{}: {problem}", case.name));
        }
        // The server answers a valid request right after.
        let session = http_session(&app).await;
        let (status, body) = post(&app, Some(&session), AFTER.as_bytes().to_vec()).await;
        if status != StatusCode::OK
            || messages(&body)
                .last()
                .map(|m| m["result"]["structuredContent"].clone())
                != Some(json!(2))
        {
            failures.push(format!(
                "{}: the next request failed: {status} {body}",
                case.name
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inputs_too_big_for_a_file() {
    let server = server(ServerOptions::default());
    let app = router(server.clone(), HttpOptions::default());

    // A 10 MB string: past the message limit on stdio, past the body limit over HTTP.
    let huge = format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","#,
            r#""params":{{"name":"echo","arguments":{{"text":"{}"}}}}}}"#
        ),
        "x".repeat(10_000_000)
    );
    let answers = stdio_session(&server, &[INIT.as_bytes(), huge.as_bytes()])
        .await
        .unwrap();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["error"]["code"], -32600);
    assert_eq!(answers[0]["id"], Value::Null);
    assert!(
        answers[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the limit is 4194304 bytes"),
        "{}",
        answers[0]
    );
    let session = http_session(&app).await;
    let (status, _) = post(&app, Some(&session), huge.into_bytes()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);

    // Arrays nested 100,000 deep: refused by the parser's depth limit, not by a crash, and
    // answered to the request (its id was read before its params).
    let deep = format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","#,
            r#""params":{{"name":"echo","arguments":{{"text":{}{}}}}}}}"#
        ),
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let answers = stdio_session(&server, &[INIT.as_bytes(), deep.as_bytes()])
        .await
        .unwrap();
    assert_eq!(
        (
            answers[0]["error"]["code"].clone(),
            answers[0]["id"].clone()
        ),
        (json!(-32602), json!(2))
    );
    assert_eq!(
        answers[0]["error"]["message"],
        "Invalid params: values are nested too deeply (the limit is 128 levels)"
    );
    let (status, body) = post(&app, Some(&session), deep.into_bytes()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(messages(&body)[0]["error"]["code"], -32602);

    // A big message within the limits is served.
    let big = format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","#,
            r#""params":{{"name":"echo","arguments":{{"text":"{}"}}}}}}"#
        ),
        "y".repeat(3_000_000)
    );
    let small = server_with_output_limit(1_000);
    let answers = stdio_session(&small, &[INIT.as_bytes(), big.as_bytes()])
        .await
        .unwrap();
    let text = answers[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.ends_with("the limit is 1000 bytes. Ask for less.]"),
        "output cut with a marker"
    );
    assert!(text.len() < 1_200);
    assert_eq!(answers[0]["result"]["isError"], true);
}

fn server_with_output_limit(bytes: usize) -> McpServer {
    server(ServerOptions::default().max_output_bytes(bytes))
}

/// Lets `paused` end.
static RESUME: Signal = Signal::new();

/// Answers once the test lets it.
#[tool]
async fn paused() -> &'static str {
    RESUME.wait("the test letting the paused call end").await;
    "resumed"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_ids_in_flight_over_stdio() {
    let server = server(ServerOptions::default());
    let mut session = Session::in_memory(&server);
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"paused"}}"#;
    session.send(INIT).await;
    session.answer_to("init").await;
    session.send(call).await;
    session.send(call).await;
    // The first is still running (it waits for the test): the second is refused at once.
    let refused = session.next().await;
    assert_eq!(refused["id"], 7);
    assert_eq!(
        refused["error"]["code"], -32600,
        "the second request with id 7 is refused at once: {refused}"
    );
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("already used by a request that has not been answered"));
    RESUME.fire();
    let answered = session.next().await;
    assert_eq!(answered["id"], 7);
    assert_eq!(
        answered["result"]["structuredContent"],
        json!({"result": "resumed"}),
        "the first is answered"
    );
    assert_eq!(session.finish().await, Vec::<Value>::new(), "nothing more");
}
