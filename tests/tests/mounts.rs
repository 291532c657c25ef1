//! Another MCP server's tools served as this registry's own: listed under the mount's
//! prefix beside the local tools, checked against their schema before anything is sent,
//! called with their progress, cancellation and questions passed through, and kept
//! through the upstream's death and restart while every other tool goes on.

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tool_runtime::client::auth::BearerToken;
use tool_runtime::mcp::ServerOptions;
use tool_runtime::mount::Mount;
use tool_runtime::{tool, Registry};
use tool_tests::{
    rpc, server_over, spawn_http, wait_for, Client, PythonScript, ServerProcess, PATIENCE,
};

const UPSTREAM: &str = env!("CARGO_BIN_EXE_upstream-tools");

/// Echo a word back: a tool of this binary, beside the mounted ones.
#[tool]
fn echo(word: String) -> String {
    word
}

/// The upstream over stdio, as a mount's command line writes it.
fn stdio_upstream() -> String {
    format!("{UPSTREAM} serve")
}

/// A server of this binary's tools and the upstream's, mounted over stdio under `up`.
fn serving_the_upstream() -> tool_runtime::mcp::McpServer {
    let registry = Registry::builder()
        .mount(Mount::new("up", &stdio_upstream()).unwrap())
        .build()
        .unwrap();
    server_over(registry, ServerOptions::default())
}

fn text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result in {answer}"))
        .to_owned()
}

/// The next message that is not a list's change (a mount's items arrive as they come).
async fn next_but_list_changes(client: &mut Client) -> Value {
    loop {
        let message = client.next().await;
        let method = message["method"].as_str().unwrap_or_default();
        if !method.ends_with("/list_changed") {
            return message;
        }
    }
}

/// The names a `tools/list` answer lists, sorted.
async fn listed(client: &mut Client, id: u32) -> Vec<String> {
    let list = client
        .answer(&rpc::request(id, "tools/list", json!({})))
        .await;
    let mut names = tool_tests::names(&list, "tools", "name");
    names.sort();
    names
}

/// A registry of its own with `mount`, its mounts started: the registry, and how the
/// mount's first try ended (waited for, never longer than the patience of a test).
async fn started(mount: Mount) -> (Arc<Registry>, Result<(), String>) {
    let registry = Arc::new(Registry::builder().mount(mount).build().unwrap());
    let tried = tokio::time::timeout(*PATIENCE, registry.start_mounts())
        .await
        .expect("the mount tried its server rather than waiting for it");
    (registry, tried)
}

/// `registry` shared, its mounts started and their tools listed (within the patience).
async fn listed_its_tools(registry: Registry) -> Arc<Registry> {
    let registry = Arc::new(registry);
    tokio::time::timeout(*PATIENCE, registry.start_mounts())
        .await
        .expect("the mount tried its server")
        .expect("the mount listed its server's tools");
    registry
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_tools_are_listed_under_its_prefix_and_called_through_it() {
    let registry = Registry::builder()
        .mount(
            Mount::new("up", &stdio_upstream())
                .unwrap()
                .exclude(["quit"])
                .rename("add", "sum"),
        )
        .build()
        .unwrap();
    let server = server_over(registry, ServerOptions::default());
    let mut client = Client::initialized(&server);
    client.until_listed("up_sum").await;
    assert_eq!(
        listed(&mut client, 1).await,
        [
            "echo",
            "up_ask_model",
            "up_broken",
            "up_chatty",
            "up_client_roots",
            "up_followed",
            "up_greet",
            "up_route",
            "up_sign_in",
            "up_sum",
            "up_task_add",
            "up_task_greet",
            "up_touch_motto",
            "up_weather",
            "up_work"
        ],
        "the excluded tool is left out, the renamed one renamed"
    );

    let list = client
        .answer(&rpc::request(2, "tools/list", json!({})))
        .await;
    let tools = list["result"]["tools"].as_array().unwrap();
    let sum = tools.iter().find(|t| t["name"] == "up_sum").unwrap();
    assert_eq!(sum["description"], "Add two integers.");
    assert_eq!(sum["annotations"]["readOnlyHint"], true);
    assert_eq!(sum["inputSchema"]["properties"]["a"]["type"], "integer");
    let weather = tools.iter().find(|t| t["name"] == "up_weather").unwrap();
    assert_eq!(
        weather["outputSchema"]["properties"]["celsius"]["type"],
        "number"
    );

    let answer = client
        .answer(&rpc::call(3, "up_sum", json!({"a": 20, "b": 22})))
        .await;
    assert_eq!(text(&answer), "42", "{answer}");
    let answer = client
        .answer(&rpc::call(4, "up_weather", json!({"city": "Oslo"})))
        .await;
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"city": "Oslo", "celsius": 21.5}),
        "{answer}"
    );
    let answer = client.answer(&rpc::call(5, "up_broken", json!({}))).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(text(&answer).contains("failed on purpose"), "{answer}");
    let answer = client
        .answer(&rpc::call(6, "echo", json!({"word": "local"})))
        .await;
    assert_eq!(text(&answer), "local");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_that_do_not_fit_a_mounted_tool_are_refused_here_naming_the_parameter() {
    let server = serving_the_upstream();
    let mut client = Client::initialized(&server);
    client.until_listed("up_add").await;
    let answer = client
        .answer(&rpc::call(1, "up_add", json!({"a": "twenty", "b": 22})))
        .await;
    let told = answer.to_string();
    assert!(told.contains("up_add"), "{told}");
    assert!(
        told.contains("\\\"a\\\"") || told.contains("`a`") || told.contains("'a'"),
        "{told}"
    );
    assert!(told.contains("integer"), "{told}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_of_its_own_starts_its_mounts_and_calls_them_directly() {
    let (registry, tried) = started(Mount::new("up", &stdio_upstream()).unwrap()).await;
    tried.expect("the mount listed its server's tools");
    assert!(registry.get("up_add").is_some());
    let again = tokio::time::timeout(*PATIENCE, registry.start_mounts()).await;
    assert_eq!(
        again,
        Ok(Ok(())),
        "started once, a registry starts nothing more"
    );
    let result = registry.call("up_add", json!({"a": 1, "b": 2})).await;
    assert!(result.error().is_none(), "{result:?}");
    assert_eq!(
        result.content().unwrap(),
        [tool_runtime::Content::text("3")],
        "{result:?}"
    );
}

/// A server that lists a tool with an output schema and answers its calls with text alone,
/// as a broken server might (Python's standard library, one JSON-RPC message a line).
const PROMISE_BREAKER: &str = r#"
import json, os, sys
for line in sys.stdin:
    message = json.loads(line)
    if "METHODS_LOG" in os.environ:
        with open(os.environ["METHODS_LOG"], "a") as log:
            print(message.get("method"), file=log)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "odd", "version": "1"}}
    elif method == "tools/list":
        schema = {"type": "object", "properties": {"metres": {"type": "number"}}}
        result = {"tools": [
            {"name": "measure", "inputSchema": {"type": "object"}, "outputSchema": schema},
            {"name": "describe", "inputSchema": {"type": "object"}, "outputSchema": None},
        ]}
    elif method == "tools/call":
        said = "about 3 metres" if message["params"]["name"] == "measure" else "tall"
        result = {"content": [{"type": "text", "text": said}]}
    else:
        error = {"code": -32601, "message": "no such method"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_without_the_structured_content_its_schema_promises_is_an_error_saying_so() {
    let script = PythonScript::new("mount-promise", PROMISE_BREAKER);
    let mount = Mount::new("odd", &script.command_line()).unwrap();
    let (registry, tried) = started(mount).await;
    tried.expect("the mount listed its server's tools (python3 runs that server)");
    let call = |name| tokio::time::timeout(*PATIENCE, registry.call(name, json!({})));
    let result = call("odd_measure").await.expect("an answer in time");
    let error = result.error().expect("the call fails").to_string();
    assert!(
        error.contains("`odd`")
            && error.contains("without the structured content its output schema promises")
            && error.contains("about 3 metres"),
        "{error}"
    );
    // A schema of `null` is none: what has none promises nothing.
    let result = call("odd_describe").await.expect("an answer in time");
    assert!(result.error().is_none(), "{result:?}");
    assert_eq!(
        result.content().unwrap(),
        [tool_runtime::Content::text("tall")]
    );
    let listed = registry.get("odd_describe").expect("listed");
    assert_eq!(listed.output_schema(), None);
}

/// A server over HTTP (stateless JSON answers, the handshake era) that writes its answers
/// indented, on many lines, as JSON allows: one tool, `measure`, with an output schema.
const INDENTING_SERVER: &str = r#"
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method = message.get("method")
        if "id" not in message:
            self.send_response(202)
            self.end_headers()
            return
        answer = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            answer["result"] = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                "serverInfo": {"name": "indenting", "version": "1"}}
        elif method == "tools/list":
            schema = {"type": "object", "properties": {"metres": {"type": "number"}}}
            answer["result"] = {"tools": [
                {"name": "measure", "inputSchema": {"type": "object"}, "outputSchema": schema}]}
        elif method == "tools/call":
            answer["result"] = {"content": [{"type": "text", "text": "about\n3 metres"}],
                                "structuredContent": {"metres": 3.0}}
        else:
            answer["error"] = {"code": -32601, "message": "no such method"}
        body = json.dumps(answer, indent=2).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"serving MCP over HTTP at http://127.0.0.1:{server.server_address[1]}/mcp", file=sys.stderr, flush=True)
server.serve_forever()
"#;

/// An answer a server over HTTP sent on many lines reaches a caller over stdio as one
/// message, its text and numbers as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_sent_on_many_lines_is_passed_on_over_stdio_as_one_message() {
    let script = PythonScript::new("mount-indenting", INDENTING_SERVER);
    let mut command = std::process::Command::new("python3");
    command.args(&script.command(&[])[1..]);
    let upstream = ServerProcess::start(command, "an indenting MCP server (python3)");
    let address = format!("http://127.0.0.1:{}/mcp", upstream.port);
    let registry = Registry::builder()
        .mount(Mount::new("far", &address).unwrap())
        .build()
        .unwrap();
    let server = server_over(registry, ServerOptions::default());
    let mut session = tool_tests::stdio::Session::in_memory(&server);
    session
        .send(&rpc::initialize("2025-11-25", json!({})))
        .await;
    session.answer_to(0).await;
    session
        .send(&rpc::notification("notifications/initialized", json!({})))
        .await;
    // The mount lists its server's tools once it reached it.
    let mut id = 0;
    wait_for("the mounted tool is listed", async || {
        id += 1;
        session
            .send(&rpc::request(id, "tools/list", json!({})))
            .await;
        let (list, _) = session.answer_to(id).await;
        tool_tests::names(&list, "tools", "name").contains(&"far_measure".to_owned())
    })
    .await;
    session
        .send(&rpc::call(1000, "far_measure", json!({})))
        .await;
    let (answer, _) = session.answer_to(1000).await;
    assert_eq!(
        answer["result"],
        json!({
            "content": [{"type": "text", "text": "about\n3 metres"}],
            "structuredContent": {"metres": 3.0},
        }),
        "{answer}"
    );
}

/// Files the upstream's `work` tool is given (see the client tests).
struct WorkFiles(std::path::PathBuf);

impl WorkFiles {
    fn new(name: &str) -> WorkFiles {
        let dir =
            std::env::temp_dir().join(format!("tool-tests-mount-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        WorkFiles(dir)
    }

    fn arguments(&self, steps: u32) -> Value {
        json!({"steps": steps, "release": self.0.join("release"),
            "cancelled": self.0.join("cancelled")})
    }

    fn cancelled(&self) -> bool {
        self.0.join("cancelled").exists()
    }
}

impl Drop for WorkFiles {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0.join("release"), b"go");
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_comes_through_a_mount_and_a_cancelled_call_is_cancelled_upstream() {
    let server = serving_the_upstream();
    let mut client = Client::initialized(&server);
    client.until_listed("up_work").await;
    let files = WorkFiles::new("progress");
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "up_work", "arguments": files.arguments(2), "_meta": {"progressToken": "p"}}});
    client.send(&call.to_string());
    for step in 1..=2 {
        let note = next_but_list_changes(&mut client).await;
        assert_eq!(note["method"], "notifications/progress", "{note}");
        assert_eq!(note["params"]["progressToken"], "p");
        assert_eq!(note["params"]["progress"], f64::from(step));
        assert_eq!(note["params"]["total"], 2.0);
    }
    assert!(!files.cancelled());
    client.send(&rpc::notification(
        "notifications/cancelled",
        json!({"requestId": 7, "reason": "changed my mind"}),
    ));
    wait_for("the upstream saw the call cancelled", async || {
        files.cancelled()
    })
    .await;
}

/// The mounted server is asked to report a call's progress only when the caller asked for
/// it: for any other caller its reports would go nowhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_server_reports_progress_only_to_a_caller_that_asked_for_it() {
    let server = serving_the_upstream();
    let mut client = Client::initialized(&server);
    client.until_listed("up_followed").await;
    let unasked = client.answer(&rpc::call(1, "up_followed", json!({}))).await;
    assert_eq!(text(&unasked), "false", "{unasked}");
    let asked = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "up_followed", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let asked = client.answer(&asked.to_string()).await;
    assert_eq!(text(&asked), "true", "{asked}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_questions_go_to_the_caller_in_the_handshake_era() {
    let server = serving_the_upstream();
    let mut client = Client::new(&server);
    client.send(&rpc::initialize("2025-11-25", json!({"elicitation": {}})));
    next_but_list_changes(&mut client).await;
    client.send(&rpc::notification("notifications/initialized", json!({})));
    client.until_listed("up_greet").await;

    client.send(&rpc::call(1, "up_greet", json!({})));
    let question = next_but_list_changes(&mut client).await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert_eq!(question["params"]["message"], "What is your name?");
    assert_eq!(
        question["params"]["requestedSchema"]["properties"]["name"]["type"],
        "string"
    );
    client.send(&rpc::respond(
        &question["id"],
        json!({"action": "accept", "content": {"name": "Grace"}}),
    ));
    let answer = next_but_list_changes(&mut client).await;
    assert_eq!(answer["id"], 1);
    assert_eq!(text(&answer), "hello Grace", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_questions_come_back_as_input_required_at_2026() {
    let server = serving_the_upstream();
    let mut client = Client::new(&server);
    let capabilities = json!({"elicitation": {}});
    let mut id = 0;
    wait_for("up_greet is listed at 2026", async || {
        id += 1;
        let list = client
            .answer(&rpc::per_request(
                id,
                "tools/list",
                json!({}),
                capabilities.clone(),
            ))
            .await;
        tool_tests::names(&list, "tools", "name").contains(&"up_greet".to_owned())
    })
    .await;

    let first = client
        .answer(&rpc::per_request(
            1,
            "tools/call",
            json!({"name": "up_greet", "arguments": {}}),
            capabilities.clone(),
        ))
        .await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let requests = result["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{first}");
    let (key, question) = requests.iter().next().unwrap();
    assert_eq!(question["method"], "elicitation/create");
    assert_eq!(question["params"]["message"], "What is your name?");

    let mut params = json!({"name": "up_greet", "arguments": {},
        "inputResponses": {key: {"action": "accept", "content": {"name": "Lin"}}}});
    if let Some(state) = result.get("requestState") {
        params["requestState"] = state.clone();
    }
    let second = client
        .answer(&rpc::per_request(2, "tools/call", params, capabilities))
        .await;
    assert_eq!(text(&second), "hello Lin", "{second}");
}

/// Waits until the mounted `up_add` answers again (its server was restarted), calling it
/// with ids from `id` on; the answers of earlier requests that come meanwhile are passed
/// over.
async fn until_mounted_add_answers(client: &mut Client, id: &mut u32, what: &str) {
    wait_for(what, async || {
        *id += 1;
        let asked = *id;
        client.send(&rpc::call(asked, "up_add", json!({"a": 2, "b": 3})));
        let answer = loop {
            let message = client.next().await;
            if message["id"] == asked {
                break message;
            }
        };
        answer["result"]["content"][0]["text"] == "5"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_a_mounted_server_is_down_its_tools_say_so_and_the_others_go_on() {
    let upstream = spawn_http(UPSTREAM, "127.0.0.1", &[], &[]);
    let port = upstream.port;
    let registry = Registry::builder()
        .mount(Mount::new("up", &format!("http://127.0.0.1:{port}/mcp")).unwrap())
        .build()
        .unwrap();
    let server = server_over(registry, ServerOptions::default());
    let mut client = Client::initialized(&server);
    client.until_listed("up_add").await;
    let answer = client
        .answer(&rpc::call(1, "up_add", json!({"a": 1, "b": 1})))
        .await;
    assert_eq!(text(&answer), "2");

    drop(upstream);
    let answer = client
        .answer(&rpc::call(2, "up_add", json!({"a": 1, "b": 1})))
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let told = text(&answer);
    assert!(told.contains("`up`"), "the error names the mount: {told}");
    assert!(told.contains(&port.to_string()), "and its server: {told}");
    assert!(told.contains("retry"), "and says to retry: {told}");
    let answer = client
        .answer(&rpc::call(3, "echo", json!({"word": "still"})))
        .await;
    assert_eq!(text(&answer), "still", "the other tools go on");

    let mut command = tool_tests::command(UPSTREAM);
    command
        .args(["serve", "--http", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null());
    let _restarted = ServerProcess::start(command, "upstream-tools-restarted");
    let mut id = 10;
    until_mounted_add_answers(&mut client, &mut id, "the mounted tool answers again").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_calls_its_server_over_http_on_kept_connections_not_one_per_call() {
    const CALLS: i64 = 30;
    let upstream = spawn_http(UPSTREAM, "127.0.0.1", &[], &[]);
    let tap = tool_tests::tap::Tap::before(upstream.port).await;
    let url = format!("http://127.0.0.1:{}/mcp", tap.port);
    let (registry, tried) = started(Mount::new("up", &url).unwrap()).await;
    tried.expect("the mount lists its server's tools");
    let discovered = tap.sent_method("server/discover");
    assert!(discovered >= 1, "the mount's client began by discovering");

    for a in 0..CALLS {
        let result = registry.call("up_add", json!({"a": a, "b": 1})).await;
        assert_eq!(result.output(), Some(&json!(a + 1)), "{result:?}");
    }

    assert_eq!(tap.sent_method("tools/call"), CALLS as usize);
    assert_eq!(
        tap.sent_method("server/discover"),
        discovered,
        "no call connected again"
    );
    // One connection carries the calls. hyper gives a connection back to its pool a moment
    // after its answer was read, so a call on a busy machine may start before that and
    // open another, which is then kept idle for the calls after it: a few connections,
    // where a gateway that connected per call opens one a call.
    let carrying = tap.connections_with("tools/call") as i64;
    assert!(
        (1..=CALLS / 3).contains(&carrying),
        "{CALLS} calls through the mount went over {carrying} connections"
    );
}

/// A server of ours over HTTP refuses a call whose marked argument is not in its header,
/// so the calls below pass only if the client wrote it there: a client that had not listed
/// the tool lists it when refused and calls again with the header (`call_tool` and
/// `start_task`), and a mount (whose arguments are written as text once) sends it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_argument_marked_for_a_header_goes_in_it_from_a_client_and_through_a_mount() {
    let upstream = spawn_http(UPSTREAM, "127.0.0.1", &[], &[]);
    let tap = tool_tests::tap::Tap::before(upstream.port).await;
    let url = format!("http://127.0.0.1:{}/mcp", tap.port);
    let connected = || async {
        tool_runtime::client::Client::builder()
            .connect_to(tool_runtime::client::Target::Http(url.clone()))
            .await
            .expect("the client connects")
    };
    let direct = connected()
        .await
        .call_tool("route", json!({"region": "north"}))
        .await
        .expect("the call is answered");
    assert_eq!(direct.text(), "routed to north", "{direct:?}");
    assert_eq!(tap.sent_method("tools/list"), 1, "listed when refused");
    let called = tap.sent_method("tools/call");
    assert_eq!(called, 2, "refused, then called again");
    // `start_task` sends its call the same way (this tool answers at once, with no task).
    let task = connected()
        .await
        .start_task("route", json!({"region": "east"}))
        .await
        .expect("the call is answered");
    let text = &task.raw["result"]["content"][0]["text"];
    assert_eq!(text, "routed to east", "{task:?}");
    assert_eq!(tap.sent_method("tools/list"), 2, "listed when refused");
    let called = tap.sent_method("tools/call");
    assert_eq!(called, 4, "refused, then called again");

    let (registry, tried) = started(Mount::new("up", &url).unwrap()).await;
    tried.expect("the mount lists its server's tools");
    // Not ASCII: written in the header as the protocol encodes such a value.
    let mounted = registry
        .call("up_route", json!({"region": "Zürich, \"Süd\""}))
        .await;
    assert!(mounted.error().is_none(), "{mounted:?}");
    assert_eq!(
        mounted.content().unwrap(),
        [tool_runtime::Content::text("routed to Zürich, \"Süd\"")]
    );
    let called = tap.sent_method("tools/call");
    assert_eq!(called, 5, "the mount's call went at once");
    // Each call's own value: as it is, and encoded as the protocol encodes text that is
    // not plain ASCII.
    let regions = tap.header_values("mcp-param-region");
    let expected = ["=?base64?WsO8cmljaCwgIlPDvGQi?=", "east", "north"];
    assert_eq!(regions, expected, "{regions:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_process_that_died_is_started_again_with_its_tools() {
    let server = serving_the_upstream();
    let mut client = Client::initialized(&server);
    client.until_listed("up_quit").await;
    let answer = client.answer(&rpc::call(1, "up_quit", json!({}))).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(text(&answer).contains("retry"), "{answer}");
    let mut id = 10;
    let what = "the mounted process is started again";
    until_mounted_add_answers(&mut client, &mut id, what).await;
    // The new process's tools are listed again once the mount has read them anew (the
    // mount re-reads its server's list on every new connection, in the background).
    client.until_listed("up_add").await;
}

/// Whether the upstream's motto, touched through the mount, reaches this server's
/// subscriber as an update: touches it once and reads what comes (the answer, and the
/// update relayed beside it) for a while. `id` numbers the request.
async fn motto_update_comes_through(client: &mut Client, id: u32) -> bool {
    client.send(&rpc::call(id, "up_touch_motto", json!({})));
    let looking = async {
        loop {
            let message = client.next().await;
            if message["method"] == "notifications/resources/updated" {
                assert_eq!(message["params"]["uri"], "upstream://motto", "{message}");
                return;
            }
        }
    };
    // Not seen in this while: the caller touches it again (an update late from this
    // touch counts then). The answers of the touches are passed over, now and later.
    tokio::time::timeout(std::time::Duration::from_millis(500), looking)
        .await
        .is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_resources_updates_reach_subscribers_here_and_again_after_a_restart() {
    let server = serving_the_upstream();
    let mut client = Client::initialized(&server);
    client.until_listed("up_touch_motto").await;
    // The mount lists its server's resources after its tools: subscribed once it has.
    let mut id = 100;
    wait_for("the mounted resource can be subscribed to", async || {
        id += 1;
        let request = rpc::request(
            id,
            "resources/subscribe",
            json!({"uri": "upstream://motto"}),
        );
        let subscribed = client.answer(&request).await;
        subscribed["result"] == json!({})
    })
    .await;
    wait_for("the upstream's update reaches the subscriber", async || {
        id += 1;
        motto_update_comes_through(&mut client, id).await
    })
    .await;

    // The upstream dies; the mount starts it again and subscribes there anew.
    client.send(&rpc::call(2, "up_quit", json!({})));
    let what = "the mounted process is started again";
    until_mounted_add_answers(&mut client, &mut id, what).await;
    wait_for(
        "an update after the restart reaches the subscriber",
        async || {
            id += 1;
            motto_update_comes_through(&mut client, id).await
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_be_reached_leaves_the_others_served() {
    let port = tool_tests::free_port();
    let gone = Mount::new("gone", &format!("http://127.0.0.1:{port}/mcp")).unwrap();
    let (registry, tried) = started(gone).await;
    let why = tried.unwrap_err();
    assert!(
        why.contains("`gone`") && why.contains(&port.to_string()),
        "{why}"
    );
    assert!(why.contains("cannot be reached"), "{why}");
    assert!(registry.get("gone_add").is_none());
    let result = registry.call("echo", json!({"word": "fine"})).await;
    assert_eq!(result.output(), Some(&json!("fine")), "{result:?}");
}

/// The upstream over HTTP, taking only requests that present `token`.
fn protected_upstream(token: &str) -> (ServerProcess, String) {
    let upstream = spawn_http(UPSTREAM, "127.0.0.1", &[], &[("MCP_BEARER_TOKEN", token)]);
    let url = format!("http://127.0.0.1:{}/mcp", upstream.port);
    (upstream, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_with_credentials_reaches_a_server_that_takes_only_them() {
    let (_upstream, url) = protected_upstream("up-secret");
    let mount = Mount::new("up", &url).unwrap();
    let (registry, tried) = started(mount.credentials(BearerToken::new("up-secret"))).await;
    tried.expect("with its token, the mount lists the server's tools");
    let result = registry.call("up_add", json!({"a": 20, "b": 22})).await;
    assert_eq!(result.output(), Some(&json!(42)), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_without_the_servers_token_says_it_was_refused_and_lists_nothing() {
    let (_upstream, url) = protected_upstream("up-secret");
    for mount in [
        Mount::new("up", &url).unwrap(),
        Mount::new("up", &url)
            .unwrap()
            .credentials(BearerToken::new("a-wrong-one")),
    ] {
        let (registry, tried) = started(mount).await;
        let why = tried.unwrap_err();
        assert!(why.contains("`up`") && why.contains("401"), "{why}");
        assert!(registry.get("up_add").is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_process_is_given_the_environment_the_mount_names() {
    // The upstream's own budget, set through its environment: one call per client.
    let mount = Mount::new("up", &stdio_upstream()).unwrap();
    let (registry, tried) = started(mount.env("MCP_MAX_CALLS", "1")).await;
    tried.expect("the mount listed its server's tools");
    let first = registry.call("up_add", json!({"a": 1, "b": 2})).await;
    assert_eq!(first.output(), Some(&json!(3)), "{first:?}");
    let second = registry.call("up_add", json!({"a": 1, "b": 2})).await;
    let refusal = second
        .error()
        .expect("the second call is refused upstream")
        .to_string();
    assert!(
        refusal.contains("budget exceeded") && refusal.contains("1 of its 1 calls"),
        "{refusal}"
    );
}

#[test]
fn mounts_are_refused_with_a_reason_when_written_wrong() {
    let no_equals = Mount::parse("just-a-command").unwrap_err();
    assert!(no_equals.contains("PREFIX=URL"), "{no_equals}");
    let bad_prefix = Mount::new("has space", "http://127.0.0.1:1/mcp").unwrap_err();
    assert!(bad_prefix.contains("has space"), "{bad_prefix}");
    let unclosed = Mount::parse("up=sh -c 'echo").unwrap_err();
    assert!(unclosed.contains("unclosed quote"), "{unclosed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_prompts_and_resources_are_listed_under_its_prefix_and_passed_through() {
    let server = serving_the_upstream();
    let mut client = Client::initialized(&server);
    // The mount reads its server's prompts, then its resources: each is waited for.
    let mut id = 0;
    wait_for("the mounted prompt and resources are listed", async || {
        id += 3;
        let prompts = client
            .answer(&rpc::request(id, "prompts/list", json!({})))
            .await;
        let resources = client
            .answer(&rpc::request(id + 1, "resources/list", json!({})))
            .await;
        let templates = client
            .answer(&rpc::request(id + 2, "resources/templates/list", json!({})))
            .await;
        tool_tests::names(&prompts, "prompts", "name").contains(&"up_haiku".to_owned())
            && tool_tests::names(&resources, "resources", "name").contains(&"up_motto".to_owned())
            && tool_tests::names(&templates, "resourceTemplates", "name")
                .contains(&"up_note".to_owned())
    })
    .await;
    let list = client
        .answer(&rpc::request(1_000, "prompts/list", json!({})))
        .await;
    let haiku = list["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "up_haiku")
        .unwrap()
        .clone();
    assert_eq!(haiku["description"], "Ask for a haiku about `topic`.");
    assert_eq!(haiku["arguments"][0]["name"], "topic");
    assert_eq!(haiku["arguments"][0]["required"], true);
    let got = client
        .answer(&rpc::request(
            101,
            "prompts/get",
            json!({"name": "up_haiku", "arguments": {"topic": "moss"}}),
        ))
        .await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"], "Write a haiku about moss.",
        "{got}"
    );

    let resources = client
        .answer(&rpc::request(1_002, "resources/list", json!({})))
        .await;
    let motto = resources["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "upstream://motto")
        .unwrap_or_else(|| panic!("the motto is listed: {resources}"))
        .clone();
    assert_eq!(motto["name"], "up_motto");
    let read = client
        .answer(&rpc::request(
            103,
            "resources/read",
            json!({"uri": "upstream://motto"}),
        ))
        .await;
    assert_eq!(
        read["result"]["contents"][0]["text"], "mounted, not merged",
        "{read}"
    );

    let templates = client
        .answer(&rpc::request(1_004, "resources/templates/list", json!({})))
        .await;
    let note = templates["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["uriTemplate"] == "upstream://notes/{id}")
        .unwrap_or_else(|| panic!("the template is listed: {templates}"))
        .clone();
    assert_eq!(note["name"], "up_note");
    let read = client
        .answer(&rpc::request(
            105,
            "resources/read",
            json!({"uri": "upstream://notes/41"}),
        ))
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "note 41", "{read}");
    assert_eq!(
        read["result"]["contents"][0]["uri"], "upstream://notes/41",
        "{read}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_tools_log_messages_reach_its_caller_at_their_level() {
    let upstream = spawn_http(UPSTREAM, "127.0.0.1", &[], &[]);
    let registry = Registry::builder()
        .mount(Mount::new("up", &format!("http://127.0.0.1:{}/mcp", upstream.port)).unwrap())
        .build()
        .unwrap();
    let server = server_over(registry, ServerOptions::default());
    let mut client = Client::initialized(&server);
    client.until_listed("up_chatty").await;
    client.send(&rpc::call(1, "up_chatty", json!({})));
    let first = next_but_list_changes(&mut client).await;
    assert_eq!(first["method"], "notifications/message", "{first}");
    assert_eq!(first["params"]["level"], "info");
    assert_eq!(first["params"]["logger"], "chatter");
    assert_eq!(first["params"]["data"], "working on it");
    let second = next_but_list_changes(&mut client).await;
    assert_eq!(second["params"]["level"], "warning", "{second}");
    assert_eq!(second["params"]["data"], "almost there");
    let answer = next_but_list_changes(&mut client).await;
    assert_eq!(text(&answer), "done", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_loop_calls_mounted_tools_beside_its_own_in_the_models_order() {
    use tool_runtime::agent::{Dialect, Tools};
    let (registry, tried) = started(Mount::new("up", &stdio_upstream()).unwrap()).await;
    tried.expect("the mount listed its server's tools");
    let tools = Tools::new(&registry).concurrency(2);
    let names = tools.names();
    assert!(
        names.contains(&"up_add".to_owned()) && names.contains(&"echo".to_owned()),
        "{names:?}"
    );
    let declared = tools.declarations(Dialect::OpenAiChat).to_string();
    assert!(declared.contains("\"up_add\""), "{declared}");
    let call = |id: &str, name: &str, arguments: &str| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}});
    let turn = Dialect::OpenAiChat
        .read_turn(
            &json!({"role": "assistant", "content": null, "tool_calls": [
                call("a", "up_add", r#"{"a": 20, "b": 22}"#),
                call("b", "echo", r#"{"word": "local"}"#),
                call("c", "up_broken", "{}"),
                call("d", "up_add", "```json\n{\"a\": 1, \"b\": 2}\n```"),
            ]}),
        )
        .unwrap();
    let answer = tools.answer(Dialect::OpenAiChat, &turn).await;
    let ids: Vec<&str> = answer
        .calls
        .iter()
        .map(|c| c.call.id.as_deref().unwrap_or_default())
        .collect();
    assert_eq!(
        ids,
        ["a", "b", "c", "d"],
        "one result per call, in the model's order"
    );
    let content = |index: usize| answer.messages[index]["content"].to_string();
    assert!(content(0).contains("42"), "{}", content(0));
    assert!(content(1).contains("local"), "{}", content(1));
    assert!(content(2).contains("failed on purpose"), "{}", content(2));
    assert!(answer.calls[2].result.is_error());
    assert!(
        !answer.calls[3].result.is_error() && answer.calls[3].repair.is_some(),
        "almost-JSON arguments are repaired: {:?}",
        answer.calls[3]
    );
    assert!(content(3).contains('3'), "{}", content(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registrys_limits_layers_scopes_and_approval_hold_a_mounted_tool_by_its_name() {
    use tool_runtime::context::Caller;
    use tool_runtime::ops::Rate;
    use tool_tests::layers::around;
    let mount = Mount::new("up", &stdio_upstream())
        .unwrap()
        .scopes(["up:call"])
        .tool_scopes("add", ["math:add"])
        .approval(["broken"]);
    let hour = std::time::Duration::from_secs(3600);
    let registry = Registry::builder()
        .mount(mount)
        // Named before the mount has brought the tools: taken on trust.
        .rate_limit("up_add", Rate::new(1, hour).unwrap())
        .layer_for(
            "up_weather",
            around(|call, mut next| {
                Box::pin(async move {
                    let mut answer = tower::Service::call(&mut next, call).await?;
                    answer.value_mut()["seen_by_the_layer"] = json!(true);
                    Ok(answer)
                })
            }),
        )
        .build()
        .expect("names under a mount's prefix build");
    let registry = listed_its_tools(registry).await;

    let caller = |scopes: &[&str]| Caller::http(None).with_subject("ada", scopes.to_vec());
    let add = json!({"a": 1, "b": 2});
    // The mount's scopes and the tool's own, both required; a refusal spends no allowance.
    for (held, missing) in [(&["up:call"][..], "math:add"), (&["math:add"], "up:call")] {
        let refused = registry.call_for(caller(held), "up_add", add.clone()).await;
        let error = refused
            .error()
            .expect("a token without every scope is refused");
        assert_eq!(error.status(), "insufficient_scope", "{error}");
        assert!(error.to_string().contains(missing), "{error}");
    }
    let granted = caller(&["up:call", "math:add"]);
    let first = registry
        .call_for(granted.clone(), "up_add", add.clone())
        .await;
    assert!(first.error().is_none(), "{first:?}");
    let second = registry.call_for(granted.clone(), "up_add", add).await;
    let error = second
        .error()
        .expect("the rate limit of up_add is one an hour");
    assert_eq!(error.status(), "rate_limited", "{error}");
    // Another tool of the mount needs only the mount's scope, and has no limit.
    let weather = json!({"city": "Oslo"});
    for _ in 0..2 {
        let result = registry
            .call_for(caller(&["up:call"]), "up_weather", weather.clone())
            .await;
        assert_eq!(
            result.output().map(|output| &output["seen_by_the_layer"]),
            Some(&json!(true)),
            "the layer named for the mounted tool wraps it: {result:?}"
        );
    }

    let tools = tool_runtime::agent::Tools::new(&registry);
    assert!(tools.needs_approval("up_broken"));
    assert!(!tools.needs_approval("up_add"));

    // A name under no mount's prefix is still refused at build time.
    let misspelt = Registry::builder()
        .mount(Mount::new("up", &stdio_upstream()).unwrap())
        .rate_limit("upp_add", Rate::new(1, hour).unwrap())
        .build();
    assert!(misspelt.is_err(), "a limit for no tool is an error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_clients_are_told_when_a_mounted_servers_tools_change_whatever_era_it_speaks() {
    use tool_tests::changing::{add_until_seen, changing_server};
    for handshake in [true, false] {
        let era = format!("a mount in the handshake era {handshake}");
        let (upstream, url) = changing_server().await;
        let mount = Mount::new("up", &url).unwrap().handshake_era(handshake);
        let registry = Registry::builder().mount(mount).build().unwrap();
        let server = server_over(registry, ServerOptions::default());
        Client::initialized(&server).until_listed("up_first").await;
        // A session opened once the mount's tools are in hears of no change made before.
        let mut client = Client::initialized(&server);

        let upstream = upstream.registry().expect("the upstream serves");
        // Told, then listing a tool the upstream added (any: an earlier one may be heard
        // late).
        let mut id = 0;
        let told = format!("{era}: our client is told the list changed");
        add_until_seen(&upstream, &told, async |_| loop {
            let message = client.next().await;
            if message["method"] != "notifications/tools/list_changed" {
                continue;
            }
            id += 1;
            let names = listed(&mut client, id).await;
            if names.iter().any(|name| name.starts_with("up_second")) {
                return;
            }
        })
        .await;
        upstream.remove_tool("first");
        until_gone(&mut client, "up_first").await;
    }
}

/// Waits until the server no longer lists `name`.
async fn until_gone(client: &mut Client, name: &str) {
    let mut id = 2000;
    wait_for(&format!("{name} is no longer listed"), async || {
        id += 1;
        !listed(client, id).await.iter().any(|listed| listed == name)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_held_to_one_era_speaks_only_it() {
    // A server of the handshake era only (it knows no `server/discover`).
    let files = WorkFiles::new("one-era");
    let script = PythonScript::new("mount-one-era", PROMISE_BREAKER);
    let command = script.command_line();
    // Each mount's servers write what they were sent to a file of its own (a server the
    // first started may still be ending while the second runs).
    let logs = [
        files.0.join("methods-2026"),
        files.0.join("methods-handshake"),
    ];
    let methods = |at: usize| std::fs::read_to_string(&logs[at]).unwrap_or_default();
    let only_2026 = Mount::new("odd", &command)
        .unwrap()
        .handshake_era(false)
        .env("METHODS_LOG", logs[0].display().to_string());
    let (registry, tried) = started(only_2026).await;
    let why = tried.expect_err("held to 2026-07-28, the mount does not fall back");
    assert!(why.contains("`odd`"), "{why}");
    assert!(registry.get("odd_describe").is_none());
    drop(registry);
    assert!(methods(0).contains("server/discover"), "{}", methods(0));
    assert!(!methods(0).contains("initialize"), "{}", methods(0));

    let only_handshake = Mount::new("odd", &command)
        .unwrap()
        .handshake_era(true)
        .env("METHODS_LOG", logs[1].display().to_string());
    let (registry, tried) = started(only_handshake).await;
    tried.expect("the mount speaks the handshake era at once");
    assert!(registry.get("odd_describe").is_some());
    assert!(methods(1).starts_with("initialize\n"), "{}", methods(1));
    assert!(!methods(1).contains("server/discover"), "{}", methods(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_tool_called_as_a_task_here_is_a_task_of_this_server() {
    let server = serving_the_upstream();
    let mut client = Client::initialized(&server);
    client.until_listed("up_add").await;
    let list = client
        .answer(&rpc::request(1, "tools/list", json!({})))
        .await;
    let add = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "up_add")
        .unwrap();
    assert_eq!(
        add["execution"]["taskSupport"], "optional",
        "a mounted tool may run as a task here: {add}"
    );

    let params = json!({"name": "up_add", "arguments": {"a": 20, "b": 22}, "task": {}});
    let created = client.answer(&rpc::request(2, "tools/call", params)).await;
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task was made: {created}"))
        .to_owned();
    let result = client
        .answer(&rpc::request(3, "tasks/result", json!({"taskId": task})))
        .await;
    assert_eq!(text(&result), "42", "{result}");
    let status = client
        .answer(&rpc::request(4, "tasks/get", json!({"taskId": task})))
        .await;
    assert_eq!(status["result"]["status"], "completed", "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_era_upstream_tasks_progress_and_question_reach_the_caller_of_this_task() {
    // Two tasks in a row: the caller's here, and the one the mount makes on its server.
    // Each call is answered as its task is made; the upstream asks its question once
    // released, while the mount waits for the task's result, and reports its progress
    // once answered: both come to the caller of this server's task (the progress under
    // the token of the call that made it).
    let mount = Mount::new("up", &stdio_upstream())
        .unwrap()
        .handshake_era(true);
    let registry = Registry::builder().mount(mount).build().unwrap();
    let server = server_over(registry, ServerOptions::default());
    let mut client = Client::new(&server);
    client.send(&rpc::initialize("2025-11-25", json!({"elicitation": {}})));
    next_but_list_changes(&mut client).await;
    client.send(&rpc::notification("notifications/initialized", json!({})));
    client.until_listed("up_task_greet").await;

    let files = WorkFiles::new("task-progress");
    let params = json!({
        "name": "up_task_greet",
        "arguments": {"release": files.0.join("release")},
        "task": {},
        "_meta": {"progressToken": "greeting"},
    });
    let created = client.answer(&rpc::request(2, "tools/call", params)).await;
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task was made: {created}"))
        .to_owned();
    std::fs::write(files.0.join("release"), b"go").unwrap();
    client.send(&rpc::request(3, "tasks/result", json!({"taskId": task})));
    let mut progress = Vec::new();
    let result = loop {
        let message = next_but_list_changes(&mut client).await;
        match message["method"].as_str() {
            Some("notifications/progress") => progress.push(message["params"].clone()),
            Some("elicitation/create") => {
                let name = json!({"action": "accept", "content": {"name": "Ada"}});
                client.send(&rpc::respond(&message["id"], name));
            }
            _ if message["id"] == 3 => break message,
            _ => {}
        }
    };
    assert_eq!(text(&result), "hello Ada", "{result}");
    assert!(
        progress
            .iter()
            .any(|step| step["progressToken"] == "greeting"
                && step["progress"] == 1.0
                && step["message"] == "greeted"),
        "the upstream task's progress came to the caller: {progress:?}"
    );
}

/// A handshake-era server whose `survey` requires a task, and says how the task goes
/// (`notifications/tasks/status`) while its result is waited for.
const STATUS_TELLER: &str = r#"
import json, sys
def send(message):
    print(json.dumps(dict(message, jsonrpc="2.0")), flush=True)
def status(said, state="working"):
    task = {"taskId": "t1", "status": state, "statusMessage": said,
            "createdAt": "2026-12-01T00:00:00Z", "lastUpdatedAt": "2026-12-01T00:00:00Z",
            "ttl": 60000}
    return task
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, id = message.get("method"), message["id"]
    if method == "initialize":
        send({"id": id, "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}},
              "serverInfo": {"name": "surveyor", "version": "1"}}})
    elif method == "tools/list":
        send({"id": id, "result": {"tools": [{"name": "survey", "inputSchema": {"type": "object"},
              "execution": {"taskSupport": "required"}}]}})
    elif method == "tools/call":
        send({"id": id, "result": {"task": status("starting")}})
        send({"method": "notifications/tasks/status", "params": status("halfway")})
        send({"method": "notifications/tasks/status", "params": status("halfway")})
        send({"method": "notifications/tasks/status",
              "params": dict(status("another task's"), taskId="t2")})
    elif method == "tasks/result":
        send({"method": "notifications/tasks/status", "params": status("wrapping up")})
        send({"id": id, "result": {"content": [{"type": "text", "text": "surveyed"}]}})
    else:
        send({"id": id, "error": {"code": -32601, "message": "no such method"}})
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_era_upstream_tasks_states_reach_the_caller_as_they_change() {
    // The mount calls `survey` as a task and waits for its result; each state the server
    // announces meanwhile comes to the caller once, in order, then the last (a state
    // repeated, or another task's, is not told).
    let script = PythonScript::new("mount-task-states", STATUS_TELLER);
    let mount = Mount::new("odd", &script.command_line())
        .unwrap()
        .handshake_era(true);
    let registry = Registry::builder().mount(mount).build().unwrap();
    let server = server_over(registry, ServerOptions::default());
    let mut client = Client::initialized(&server);
    client.until_listed("odd_survey").await;
    client.send(&rpc::call(1, "odd_survey", json!({})));
    let mut told = Vec::new();
    let answer = loop {
        let message = next_but_list_changes(&mut client).await;
        if message["method"] == "notifications/message" && message["params"]["logger"] == "task" {
            told.push(message["params"]["data"].as_str().unwrap().to_owned());
        } else if message["id"] == 1 {
            break message;
        }
    };
    assert_eq!(text(&answer), "surveyed", "{answer}");
    assert_eq!(
        told,
        [
            "task t1: working (starting)",
            "task t1: working (halfway)",
            "task t1: working (wrapping up)",
            "task t1: completed",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_tools_rate_limit_holds_through_its_list_read_again() {
    use tool_runtime::ops::Rate;
    use tool_tests::changing::{add_until_seen, changing_server};
    let (upstream, url) = changing_server().await;
    let hour = Duration::from_secs(3600);
    let registry = Registry::builder()
        .mount(Mount::new("up", &url).unwrap())
        .rate_limit("up_first", Rate::new(1, hour).unwrap())
        .build()
        .unwrap();
    let registry = listed_its_tools(registry).await;
    let first = registry.call("up_first", json!({})).await;
    assert!(first.error().is_none(), "{first:?}");

    // The server's list changes: the mount reads it again and puts up_first back.
    let upstream = upstream.registry().expect("the upstream serves");
    add_until_seen(
        &upstream,
        "the mount read its server's list again",
        async |name| {
            let mounted = format!("up_{name}");
            while registry.get(&mounted).is_none() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        },
    )
    .await;

    let second = registry.call("up_first", json!({})).await;
    let error = second
        .error()
        .expect("the limit of one an hour still counts the first call");
    assert_eq!(error.status(), "rate_limited", "{error}");
}

/// What the tracing events of one thread say, as the log shows them.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

// One thread: the mount's tasks run where the test's subscriber is the default.
#[tokio::test(flavor = "current_thread")]
async fn a_limit_or_layer_named_for_a_tool_its_mount_does_not_bring_is_warned_of_with_the_closest()
{
    use tool_runtime::ops::Rate;
    use tool_tests::layers::around;
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _recording = tracing::subscriber::set_default(subscriber);

    let hour = Duration::from_secs(3600);
    let registry = Registry::builder()
        .mount(Mount::new("up", &stdio_upstream()).unwrap())
        // Misspelt: under the mount's prefix, so taken on trust until the mount lists.
        .rate_limit("up_ad", Rate::new(1, hour).unwrap())
        .layer_for(
            "up_wether",
            around(|call, mut next| {
                Box::pin(async move { tower::Service::call(&mut next, call).await })
            }),
        )
        .build()
        .expect("names under a mount's prefix build");
    let registry = listed_its_tools(registry).await;
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    for (name, closest) in [("up_ad", "up_add"), ("up_wether", "up_weather")] {
        let warning = format!(
            "a rate limit or a layer is given for the tool `{name}`, which the mounted server \
             does not bring (did you mean `{closest}`?)"
        );
        assert_eq!(log.matches(&warning).count(), 1, "{warning}\nin:\n{log}");
    }
    // The tools it does bring are served as ever.
    let sum = registry.call("up_add", json!({"a": 1, "b": 2})).await;
    assert!(sum.error().is_none(), "{sum:?}");
}
