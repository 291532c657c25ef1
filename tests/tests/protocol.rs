//! The MCP protocol layer, without I/O: messages in as bytes, messages out on a channel.
//! One test per rule of JSON-RPC, both protocol eras, tools/list, tools/call, progress,
//! logging, cancellation, timeouts, list changes and concurrency.

use serde_json::{json, Value};
use std::time::Duration;
use tool_runtime::mcp::connection::outbox;
use tool_runtime::mcp::{McpServer, ServerInfo, ServerOptions};
use tool_runtime::{tool, Cancellation, Content, DynamicTool, Logger, Progress, Registry};
use tool_tests::{Client, Signal, INITIALIZE};

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Greet someone.
#[tool]
fn greet(
    /// Who.
    name: String,
) -> String {
    format!("hello {name}")
}

/// Always fails.
#[tool]
fn broken() -> Result<u8, String> {
    Err("the station is offline".into())
}

/// Panics.
#[tool]
fn explode() -> u8 {
    panic!("secret detail /etc/passwd")
}

/// Reports progress twice.
#[tool]
async fn steps(progress: Progress) -> &'static str {
    progress.report(1.0, Some(2.0), Some("half"));
    progress.report(2.0, Some(2.0), None);
    "done"
}

/// Reports progress many times, faster than anyone reads.
#[tool]
async fn flood(times: u32, progress: Progress) -> u32 {
    for step in 1..=times {
        progress.report(f64::from(step), Some(f64::from(times)), None);
    }
    times
}

/// Logs at two levels.
#[tool]
async fn chatty(logger: Logger) -> &'static str {
    logger.named("chatty").debug("a detail");
    logger.warning(json!({"disk": "low"}));
    "said"
}

/// Fired when `slow` starts.
static SLOW_STARTED: Signal = Signal::new();
/// Fired when `slow` is dropped (it never finishes).
static SLOW_DROPPED: Signal = Signal::new();

/// Fires its signal when dropped.
struct FireOnDrop(&'static Signal);
impl Drop for FireOnDrop {
    fn drop(&mut self) {
        self.0.fire();
    }
}

/// Never finishes: it ends only when cancelled, stopped by its time limit, or dropped.
#[tool]
async fn slow() -> &'static str {
    let _guard = FireOnDrop(&SLOW_DROPPED);
    SLOW_STARTED.fire();
    std::future::pending::<()>().await;
    "slept"
}

/// Gives up after 100 ms.
#[tool(timeout = "100ms")]
async fn hasty() -> &'static str {
    tokio::time::sleep(Duration::from_secs(10)).await;
    "never"
}

/// Set when the sync `patient` tool saw its cancellation.
static PATIENT_SAW_CANCEL: Signal = Signal::new();

/// A sync tool that stops when cancelled.
#[tool(timeout = "100ms")]
fn patient(cancellation: Cancellation) -> &'static str {
    for _ in 0..200 {
        if cancellation.is_cancelled() {
            PATIENT_SAW_CANCEL.fire();
            return "stopped";
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    "finished"
}

/// A picture.
#[tool]
fn picture() -> Vec<Content> {
    vec![Content::text("a dot"), Content::image(b"png", "image/png")]
}

fn info() -> ServerInfo {
    ServerInfo::new("my-tools", "3.1.4").with_instructions("Use add for sums.")
}

fn server() -> McpServer {
    McpServer::new(Registry::new().unwrap(), info())
}

const META: &str = concat!(
    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":{}}"#
);

#[test]
fn json_rpc_is_strict() {
    let server = server();
    let mut client = Client::initialized(&server);
    let cases = [
        ("{", json!(null), -32700),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            json!(null),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            json!(null),
            -32600,
        ),
        (
            r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#,
            json!(5),
            -32600,
        ),
        (r#"{"id":6,"method":"ping"}"#, json!(6), -32600),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":"x"}"#,
            json!(7),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"eight","method":"no/such/method"}"#,
            json!("eight"),
            -32601,
        ),
    ];
    for (text, id, code) in cases {
        assert!(client.send(text), "{text}");
        let answer = client.next_now();
        assert_eq!(answer["jsonrpc"], "2.0", "{text}");
        assert_eq!(answer["id"], id, "{text}");
        assert_eq!(answer["error"]["code"], code, "{text}: {answer}");
    }
    // Notifications, known or not, are never answered.
    assert!(
        !client.send(r#"{"jsonrpc":"2.0","method":"no/such/notification"}"#),
        "a notification is not a request"
    );
    assert!(
        !client.send(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#
        ),
        "a notification is not a request"
    );
    assert!(client.nothing_yet());
}

#[test]
fn the_handshake_negotiates_and_names_the_program() {
    let server = server();
    for (asked, answered) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let mut client = Client::new(&server);
        client.send(&format!(
            concat!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","#,
                r#""params":{{"protocolVersion":"{asked}","capabilities":{{}},"#,
                r#""clientInfo":{{"name":"t","version":"1"}}}}}}"#
            ),
            asked = asked
        ));
        let answer = client.next_now();
        assert_eq!(answer["result"]["protocolVersion"], answered);
        assert_eq!(
            answer["result"]["serverInfo"],
            json!({"name": "my-tools", "version": "3.1.4"})
        );
        assert_eq!(answer["result"]["instructions"], "Use add for sums.");
        assert_eq!(
            answer["result"]["capabilities"],
            json!({"tools": {"listChanged": false}, "logging": {}}),
            "a static catalog never changes"
        );
        assert!(
            answer["result"].get("resultType").is_none(),
            "no 2026 fields in the handshake era"
        );
        assert_eq!(client.connection.negotiated_version(), Some(answered));
    }
}

#[test]
fn before_initialize_only_ping_works() {
    let server = server();
    let mut client = Client::new(&server);
    client.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert_eq!(
        client.next_now(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    client.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let answer = client.next_now();
    assert_eq!(answer["error"]["code"], -32600);
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("send \"initialize\" first"));
    client.send(r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}"#);
    assert_eq!(client.next_now()["error"]["code"], -32602);
}

#[test]
fn the_2026_era_needs_no_handshake() {
    let server = server();
    let mut client = Client::new(&server);
    client.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#
    ));
    let result = client.next_now()["result"].clone();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"][0], "2026-07-28");
    assert!(result["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!("2025-11-25")));
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "my-tools", "version": "3.1.4"})
    );
    assert_eq!(
        result["capabilities"]["tools"],
        json!({"listChanged": false})
    );
    assert!(result["ttlMs"].is_u64() && result["cacheScope"] == "public");

    client.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{{META}}}}}"#
    ));
    let result = client.next_now()["result"].clone();
    assert_eq!(result["resultType"], "complete");
    assert!(result["ttlMs"].is_u64() && result["cacheScope"] == "public");
    assert_eq!(
        result["tools"].as_array().unwrap().len(),
        server.registry().tools().len()
    );

    // Versions not served, with the versions that are.
    client.send(concat!(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","#,
        r#""params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","#,
        r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#
    ));
    let error = client.next_now()["error"].clone();
    assert_eq!(error["code"], -32022);
    assert_eq!(error["data"]["requested"], "2099-01-01");
    assert_eq!(error["data"]["supported"][0], "2026-07-28");

    // Required _meta fields, and methods of the handshake era only.
    client.send(concat!(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","#,
        r#""params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#
    ));
    assert_eq!(client.next_now()["error"]["code"], -32602);
    client.send(&format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{{META}}}}}"#
    ));
    assert_eq!(client.next_now()["error"]["code"], -32601);
    client.send(&format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","#,
            r#""params":{{"level":"debug",{META}}}}}"#
        ),
        META = META
    ));
    assert_eq!(client.next_now()["error"]["code"], -32601);
}

#[test]
fn tools_list_pages_follow_cursors_and_are_served_from_bytes() {
    let server = McpServer::with_options(
        Registry::new().unwrap(),
        info(),
        ServerOptions::default().page_size(4),
    );
    let mut client = Client::initialized(&server);
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut first_page_text = None;
    for page in 0.. {
        let params = match &cursor {
            Some(cursor) => format!(r#","params":{{"cursor":"{cursor}"}}"#),
            None => String::new(),
        };
        client.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{page},"method":"tools/list"{params}}}"#
        ));
        let answer = client.next_now();
        if page == 0 {
            first_page_text = Some(answer["result"].to_string());
        }
        let tools = answer["result"]["tools"].as_array().unwrap().clone();
        assert!(tools.len() <= 4);
        names.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        match answer["result"].get("nextCursor") {
            Some(next) => cursor = Some(next.as_str().unwrap().to_owned()),
            None => break,
        }
    }
    let mut every_tool: Vec<String> = server
        .registry()
        .tools()
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect();
    every_tool.sort();
    assert!(every_tool.len() > 4, "more than one page");
    assert_eq!(names, every_tool, "every tool exactly once, sorted by name");
    // The same request gives the same bytes.
    client.send(r#"{"jsonrpc":"2.0","id":"again","method":"tools/list"}"#);
    assert_eq!(
        client.next_now()["result"].to_string(),
        first_page_text.unwrap()
    );
    // A cursor we did not give.
    client.send(
        r#"{"jsonrpc":"2.0","id":"bad","method":"tools/list","params":{"cursor":"tools-3"}}"#,
    );
    assert_eq!(client.next_now()["error"]["code"], -32602);
    client.send(
        r#"{"jsonrpc":"2.0","id":"bad2","method":"tools/list","params":{"cursor":"nonsense"}}"#,
    );
    assert_eq!(client.next_now()["error"]["code"], -32602);
}

/// The tool `name` as `tools/list` shows it in `answer`.
fn listed<'a>(answer: &'a Value, name: &str) -> &'a Value {
    answer["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == name)
        .unwrap_or_else(|| panic!("{name} is listed: {answer}"))
}

#[tokio::test]
async fn an_output_is_its_value_at_2026_and_wrapped_only_where_the_handshake_era_needs_an_object() {
    let server = server();
    // 2026-07-28: the output schema and the structured content are the value's own.
    let mut client = Client::new(&server);
    client.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#
    ));
    let answer = client.next_now();
    assert_eq!(
        listed(&answer, "add")["outputSchema"],
        json!({"type": "integer"})
    );
    assert_eq!(
        listed(&answer, "greet")["outputSchema"],
        json!({"type": "string"})
    );
    let answer = client
        .call(&format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":40}},{META}}}}}"#
        ))
        .await;
    assert_eq!(answer["result"]["structuredContent"], json!(42));
    assert_eq!(
        answer["result"]["content"],
        json!([{"type": "text", "text": "42"}])
    );

    // The handshake era: structured content must be an object, so both say {"result": ...}.
    let mut client = Client::initialized(&server);
    client.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    let answer = client.next_now();
    assert_eq!(
        listed(&answer, "add")["outputSchema"],
        json!({"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]})
    );
    let answer = client
        .call(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ana"}}}"#)
        .await;
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"result": "hello Ana"})
    );
    // The text block is the value either way.
    assert_eq!(
        answer["result"]["content"],
        json!([{"type": "text", "text": "hello Ana"}])
    );
}

#[tokio::test]
async fn tools_call_answers_content_structured_content_and_is_error() {
    let server = server();
    let mut client = Client::initialized(&server);
    let answer = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","#,
            r#""params":{"name":"add","arguments":{"a":2,"b":40}}}"#
        ))
        .await;
    assert_eq!(
        answer["result"],
        json!({"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": 42}})
    );

    let answer = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","#,
            r#""params":{"name":"add","arguments":{"a":"x","b":1}}}"#
        ))
        .await;
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "invalid arguments for add: 'a' must be an integer; got \"x\""
    );

    let answer = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","#,
            r#""params":{"name":"broken","arguments":{}}}"#
        ))
        .await;
    assert_eq!(
        answer["result"],
        json!({"content": [{"type": "text", "text": "the station is offline"}], "isError": true})
    );

    let answer = client
        .call(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"explode"}}"#)
        .await;
    assert_eq!(answer["result"]["isError"], true);
    assert!(
        !answer.to_string().contains("passwd"),
        "panic details never reach the client"
    );

    let answer = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","#,
            r#""params":{"name":"ad","arguments":{}}}"#
        ))
        .await;
    assert_eq!(answer["error"]["code"], -32602);
    assert_eq!(
        answer["error"]["message"],
        "unknown tool 'ad'; did you mean 'add'?"
    );

    // No `arguments` is fine when nothing is required, an error when something is.
    let answer = client
        .call(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"picture"}}"#)
        .await;
    assert_eq!(answer["result"]["content"][1]["type"], "image");
    assert_eq!(answer["result"]["content"][1]["data"], "cG5n");
    assert!(answer["result"].get("structuredContent").is_none());
    let answer = client
        .call(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"greet"}}"#)
        .await;
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "invalid arguments for greet: missing required parameter 'name' (a string)"
    );

    client.send(r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{}}}"#);
    assert_eq!(client.next_now()["error"]["code"], -32602);
}

#[tokio::test]
async fn stateless_calls_carry_result_type() {
    let server = server();
    let mut client = Client::new(&server);
    let answer = client
        .call(&format!(
            concat!(
                r#"{{"jsonrpc":"2.0","id":"x","method":"tools/call","#,
                r#""params":{{"name":"greet","arguments":{{"name":"Ada"}},{META}}}}}"#
            ),
            META = META
        ))
        .await;
    assert_eq!(answer["id"], "x");
    assert_eq!(answer["result"]["resultType"], "complete");
    assert_eq!(answer["result"]["content"][0]["text"], "hello Ada");
}

#[tokio::test]
async fn notifications_a_client_does_not_read_are_bounded_and_the_answer_still_comes() {
    let server = server();
    let mut client = Client::initialized(&server);
    client.send(concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","#,
        r#""params":{"name":"flood","arguments":{"times":20000},"_meta":{"progressToken":"p"}}}"#
    ));
    // Nothing is read while the tool runs: its notifications wait on the connection.
    tokio::time::timeout(*tool_tests::PATIENCE, client.connection.drain())
        .await
        .expect("the tool finishes without waiting for the client");
    let mut notifications = 0;
    let answer = loop {
        let message = client.next().await;
        if message.get("id").is_some() {
            break message;
        }
        notifications += 1;
    };
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"result": 20000})
    );
    assert_eq!(
        notifications, 1024,
        "at most 1024 notifications wait per connection; the rest are dropped"
    );
    // Read notifications give their places back: the next call reports again.
    let answer = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","#,
            r#""params":{"name":"flood","arguments":{"times":3},"_meta":{"progressToken":"q"}}}"#
        ))
        .await;
    assert_eq!(answer["params"]["progressToken"], "q");
}

#[tokio::test]
async fn progress_goes_to_the_caller_only_when_asked_for() {
    let server = server();
    let mut client = Client::initialized(&server);
    client.send(concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","#,
        r#""params":{"name":"steps","_meta":{"progressToken":"tok"}}}"#
    ));
    assert_eq!(
        client.next().await,
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
            "progressToken": "tok", "progress": 1.0, "total": 2.0, "message": "half"
        }})
    );
    assert_eq!(
        client.next().await["params"],
        json!({"progressToken": "tok", "progress": 2.0, "total": 2.0})
    );
    assert_eq!(client.next().await["id"], 1);
    // An integer token keeps its type; no token, no notifications.
    client.send(concat!(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","#,
        r#""params":{"name":"steps","_meta":{"progressToken":17}}}"#
    ));
    assert_eq!(client.next().await["params"]["progressToken"], 17);
    client.next().await;
    assert_eq!(client.next().await["id"], 2);
    let answer = client
        .call(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"steps"}}"#)
        .await;
    assert_eq!(
        answer["id"], 3,
        "the answer comes with no progress before it"
    );
}

#[tokio::test]
async fn logging_respects_the_level_asked_for() {
    let server = server();
    let mut client = Client::initialized(&server);
    // Until the client sets a level, everything is sent.
    client.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chatty"}}"#);
    assert_eq!(
        client.next().await,
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
            "level": "debug", "logger": "chatty", "data": "a detail"
        }})
    );
    assert_eq!(
        client.next().await["params"],
        json!({"level": "warning", "data": {"disk": "low"}})
    );
    assert_eq!(client.next().await["id"], 1);

    client.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}"#,
    );
    assert_eq!(client.next_now()["result"], json!({}));
    client.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"chatty"}}"#);
    assert_eq!(client.next().await["params"]["level"], "warning");
    assert_eq!(client.next().await["id"], 3);
    client
        .send(r#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"loud"}}"#);
    assert_eq!(client.next_now()["error"]["code"], -32602);

    // 2026-07-28: no level in _meta, no logs; a level, logs at or above it.
    let mut stateless = Client::new(&server);
    let answer = stateless
        .call(&format!(
            concat!(
                r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","#,
                r#""params":{{"name":"chatty",{META}}}}}"#
            ),
            META = META
        ))
        .await;
    assert_eq!(answer["id"], 5);
    stateless.send(concat!(
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"chatty","#,
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
        r#""io.modelcontextprotocol/clientCapabilities":{},"#,
        r#""io.modelcontextprotocol/logLevel":"info"}}}"#
    ));
    assert_eq!(stateless.next().await["params"]["level"], "warning");
    assert_eq!(stateless.next().await["id"], 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_drops_the_work_and_sends_nothing() {
    let server = server();
    let mut client = Client::initialized(&server);
    client.send(r#"{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"slow"}}"#);
    SLOW_STARTED.wait("the slow tool's start").await;
    assert_eq!(client.connection.in_flight(), 1);
    client.send(concat!(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","#,
        r#""params":{"requestId":"long","reason":"user"}}"#
    ));
    SLOW_DROPPED
        .wait("the drop of the slow tool's future")
        .await;
    assert_eq!(client.connection.in_flight(), 0);
    assert!(client.nothing_yet(), "a cancelled request gets no response");
    // The connection carries on.
    let answer = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":"next","method":"tools/call","#,
            r#""params":{"name":"add","arguments":{"a":1,"b":1}}}"#
        ))
        .await;
    assert_eq!(answer["result"]["structuredContent"], json!({"result": 2}));
}

#[tokio::test]
async fn a_request_is_answered_only_when_its_work_runs_and_dropping_the_work_cancels_it() {
    let server = server();
    let mut client = Client::initialized(&server);
    let call = concat!(
        r#"{"jsonrpc":"2.0","id":"held","method":"tools/call","#,
        r#""params":{"name":"add","arguments":{"a":1,"b":2}}}"#
    );
    let work = client
        .connection
        .handle(call.as_bytes(), &client.sink)
        .into_work()
        .expect("a call leaves work to run");
    tool_tests::settle().await;
    assert!(
        client.nothing_yet(),
        "the protocol layer ran nothing by itself"
    );
    assert_eq!(client.connection.in_flight(), 1);
    drop(work);
    assert_eq!(
        client.connection.in_flight(),
        0,
        "dropped work ends its request"
    );
    assert!(client.nothing_yet(), "and nothing is answered for it");

    // The same id is free again, and work that runs is answered.
    let work = client
        .connection
        .handle(call.as_bytes(), &client.sink)
        .into_work()
        .expect("a call leaves work to run");
    work.run().await;
    assert_eq!(
        client.next_now()["result"]["structuredContent"],
        json!({"result": 3})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_stop_the_call_with_an_error_result() {
    let server = server();
    let mut client = Client::initialized(&server);
    let answer = client
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hasty"}}"#)
        .await;
    assert_eq!(
        answer["result"],
        json!({
            "content": [
                {"type": "text", "text": "tool 'hasty' did not finish within 100ms and was stopped"}
            ],
            "isError": true
        })
    );
    // A sync tool cannot be dropped; its Cancellation tells it to stop.
    let answer = client
        .call(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"patient"}}"#)
        .await;
    assert_eq!(answer["result"]["isError"], true);
    PATIENT_SAW_CANCEL
        .wait("the patient tool seeing its cancellation")
        .await;

    // A server-wide default for tools without their own limit.
    let registry = Registry::builder()
        .default_timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let server = McpServer::new(registry, info());
    let mut client = Client::initialized(&server);
    let answer = client
        .call(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}"#)
        .await;
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "tool 'slow' did not finish within 50ms and was stopped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_tool_never_holds_up_others() {
    let server = server();
    let mut client = Client::initialized(&server);
    client.send(r#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"slow"}}"#);
    for id in 0..20 {
        let answer = client
            .call(&format!(
                concat!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","#,
                    r#""params":{{"name":"add","arguments":{{"a":{id},"b":1}}}}}}"#
                ),
                id = id
            ))
            .await;
        assert_eq!(answer["id"], id);
        assert_eq!(answer["result"]["structuredContent"]["result"], id + 1);
    }
    // An id still in flight cannot be reused.
    client.send(r#"{"jsonrpc":"2.0","id":"slow","method":"ping"}"#);
    assert_eq!(client.next_now()["error"]["code"], -32600);
    client.connection.close();
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

fn dynamic(name: &str) -> DynamicTool {
    DynamicTool::new(name, "A run-time tool.", |_: NoArgs| async {
        Ok::<_, String>("ok")
    })
    .unwrap()
}

#[tokio::test]
async fn tool_changes_are_announced_in_both_eras() {
    let registry = Registry::builder().tool(dynamic("first")).build().unwrap();
    let server = McpServer::new(registry, info());

    // Handshake era: to the connection's unsolicited channel, once initialized.
    let mut client = Client::new(&server);
    let (unsolicited, mut announcements) = outbox();
    client.connection.set_unsolicited(unsolicited);
    client.send(INITIALIZE);
    assert_eq!(
        client.next_now()["result"]["capabilities"]["tools"]["listChanged"],
        true
    );

    // 2026-07-28: on a subscriptions/listen stream, acknowledged first.
    let mut listener = Client::new(&server);
    listener.send(concat!(
        r#"{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","#,
        r#""params":{"notifications":{"toolsListChanged":true},"#,
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
        r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#
    ));
    assert_eq!(
        listener.next_now(),
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "sub"},
            "notifications": {"toolsListChanged": true}
        }})
    );
    tokio::task::yield_now().await;

    server.registry().add_tool(dynamic("second")).unwrap();
    let announced = tokio::time::timeout(*tool_tests::PATIENCE, announcements.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&announced.bytes).unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})
    );
    assert_eq!(
        listener.next().await,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "sub"}
        }})
    );
    // The new tool is listed (the pages were rebuilt).
    client.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let names: Vec<String> = client.next_now()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"second".to_owned()));

    // Ending the subscription (cancel on stdio) stops it.
    listener.send(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub"}}"#,
    );
    assert_eq!(listener.connection.in_flight(), 0);
}

/// A tool list that may change may gain a tool that runs only as a task: such a server
/// offers tasks from the start, and the tool, added later, runs as one (were tasks not
/// offered, its clients could not ask for one, and the server would run it as a plain call
/// while listing it as a task's).
#[tokio::test]
async fn a_tool_added_later_that_runs_only_as_a_task_runs_as_one() {
    let registry = Registry::builder().tool(dynamic("first")).build().unwrap();
    let server = McpServer::new(registry, info());
    let mut client = Client::new(&server);
    // The announcement of the added tool goes aside, not between the call and its answer.
    let (unsolicited, _announcements) = outbox();
    client.connection.set_unsolicited(unsolicited);
    client.send(INITIALIZE);
    let opened = client.next_now();
    assert!(
        opened["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"].is_object(),
        "{opened}"
    );
    server
        .registry()
        .add_tool(dynamic("later").task(tool_runtime::catalog::TaskSupport::Required))
        .unwrap();
    let started = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","#,
            r#""params":{"name":"later","arguments":{},"task":{}}}"#
        ))
        .await;
    let task = started["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("not made a task: {started}"));
    let result = client
        .call(&format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{{"taskId":"{task}"}}}}"#
        ))
        .await;
    assert_eq!(result["result"]["content"][0]["text"], "ok", "{result}");
}

#[tokio::test]
async fn subscriptions_count_against_the_limit_and_their_ids_are_taken() {
    let server = McpServer::with_options(
        Registry::new().unwrap(),
        info(),
        ServerOptions::default().max_in_flight(2),
    );
    let mut client = Client::new(&server);
    let listen = |id: &str| {
        format!(
            concat!(
                r#"{{"jsonrpc":"2.0","id":"{id}","method":"subscriptions/listen","#,
                r#""params":{{"notifications":{{}},{META}}}}}"#
            ),
            id = id,
            META = META
        )
    };
    client.send(&listen("a"));
    assert_eq!(
        client.next_now()["method"],
        "notifications/subscriptions/acknowledged"
    );
    // The same id again, while the first subscription is open.
    client.send(&listen("a"));
    let refused = client.next_now();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("already used"));
    client.send(&listen("b"));
    assert_eq!(
        client.next_now()["method"],
        "notifications/subscriptions/acknowledged"
    );
    // A third stream is past the limit of two requests in flight.
    client.send(&listen("c"));
    let refused = client.next_now();
    assert_eq!(refused["id"], "c");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2 requests are already running"),
        "{refused}"
    );
}
