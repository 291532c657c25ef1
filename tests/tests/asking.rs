//! Tools that ask their client (elicitation, sampling, roots) and calls that run as tasks,
//! in both protocol eras: over the protocol layer as any transport drives it, and over
//! Streamable HTTP, where a handshake-era question travels on the call's own stream.
//! Calls become tasks after 20 ms here; the tests on one thread run on paused time, so that
//! moment comes in its order among the tools' own timers however busy the machine is (a
//! sync tool's run on the blocking pool holds paused time still).

use serde_json::{json, Value};
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::Notify;
use tool_runtime::ask::{AskError, ElicitationCompletion, Elicited, Sampling, UrlElicitation};
use tool_runtime::mcp::{McpServer, ServerOptions};
use tool_runtime::tasks::TaskOptions;
use tool_runtime::transport::http::{router, HttpOptions};
use tool_runtime::{tool, CallContext, Registry};
use tool_tests::http;
use tool_tests::{
    core_task_id, rpc, server, start_core_task, start_task, task_method, until, with_tasks, Client,
    Polling, Signal,
};

/// Whether to go ahead.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    /// Go ahead?
    confirm: bool,
}

/// Delete files once the user confirms.
#[tool]
async fn delete_files(count: u32, ctx: CallContext) -> Result<String, AskError> {
    let answer = ctx
        .elicit::<Confirm>(format!("Delete {count} files?"))
        .key("confirm")
        .await?;
    Ok(match answer {
        Elicited::Accepted(Confirm { confirm: true }) => format!("deleted {count}"),
        Elicited::Accepted(_) => "kept them".to_owned(),
        Elicited::Declined => "declined".to_owned(),
        Elicited::Cancelled => "cancelled".to_owned(),
    })
}

/// Send the user to sign in.
#[tool]
async fn sign_in(ctx: CallContext) -> Result<String, AskError> {
    let page = UrlElicitation::new("Sign in to continue", "https://example.com/sign-in");
    let answer = ctx.elicit_url(page).await?;
    Ok(format!("{answer:?}"))
}

/// Accounts whose owner finished at the connect page, and the completion of each page sent
/// (what the server's own web page keeps, to tell the client when the user is done).
static CONNECTED: Mutex<Vec<String>> = Mutex::new(Vec::new());
static PAGES: Mutex<Vec<(String, ElicitationCompletion)>> = Mutex::new(Vec::new());

/// List the files of an Example Co account, once its owner has connected it.
#[tool(task = "optional")]
async fn list_files(account: String, ctx: CallContext) -> Result<String, AskError> {
    if CONNECTED.lock().unwrap().contains(&account) {
        return Ok(format!("{account}: notes.txt"));
    }
    let connect = UrlElicitation::new(
        format!("Connect {account}"),
        format!("https://example.com/connect/{account}"),
    );
    let completion = ctx.elicitation_completion(&connect);
    PAGES.lock().unwrap().push((account, completion));
    Err(ctx.url_elicitation_required([connect]))
}

/// The owner of `account` finishes at the connect page: the page marks it connected, and
/// gives the completion of the last page sent for it.
fn finish_at_page(account: &str) -> ElicitationCompletion {
    CONNECTED.lock().unwrap().push(account.to_owned());
    let pages = PAGES.lock().unwrap();
    let (_, completion) = pages.iter().rev().find(|(a, _)| a == account).unwrap();
    completion.clone()
}

/// Summarize with the client's model.
#[tool]
async fn summarize(text: String, ctx: CallContext) -> Result<String, AskError> {
    let sampled = ctx.sample(Sampling::new(50).user(text)).await?;
    Ok(format!("{} (by {})", sampled.text(), sampled.model))
}

/// The client's roots.
#[tool]
async fn roots(ctx: CallContext) -> Result<String, AskError> {
    let roots = ctx.roots().await?;
    Ok(roots
        .into_iter()
        .map(|r| r.uri)
        .collect::<Vec<_>>()
        .join(","))
}

/// A name.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// A color.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Color {
    color: String,
}

/// Two questions, the second only once the first is answered, with a note kept between.
#[tool]
async fn two_steps(ctx: CallContext) -> Result<String, AskError> {
    let rounds: u32 = ctx.kept("rounds").unwrap_or(0);
    ctx.keep("rounds", &(rounds + 1));
    let Elicited::Accepted(Name { name }) = ctx.elicit::<Name>("Name?").key("name").await? else {
        return Ok("no name".to_owned());
    };
    let Elicited::Accepted(Color { color }) = ctx.elicit::<Color>("Color?").key("color").await?
    else {
        return Ok("no color".to_owned());
    };
    Ok(format!("{name} likes {color} (round {})", rounds + 1))
}

/// Work for a while, as a task when the client can follow one.
#[tool(task = "optional")]
async fn long_job(seconds: f64) -> String {
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    format!("slept {seconds}")
}

/// Work that runs only as a task, and asks along the way.
#[tool(task = "required")]
async fn careful_job(ctx: CallContext) -> Result<String, AskError> {
    tokio::time::sleep(Duration::from_millis(100)).await;
    let answer = ctx.elicit::<Confirm>("Go on?").key("go").await?;
    Ok(format!(
        "went on: {}",
        matches!(answer, Elicited::Accepted(Confirm { confirm: true }))
    ))
}

/// Lets `gated_careful_job` ask.
static ASK_GATE: Notify = Notify::const_new();

/// Work that runs only as a task, and asks once the test lets it.
#[tool(task = "required")]
async fn gated_careful_job(ctx: CallContext) -> Result<String, AskError> {
    ASK_GATE.notified().await;
    let answer = ctx.elicit::<Confirm>("Go on?").key("go").await?;
    Ok(format!(
        "went on: {}",
        matches!(answer, Elicited::Accepted(Confirm { confirm: true }))
    ))
}

/// Never a task.
#[tool]
fn quick() -> &'static str {
    "quick"
}

/// Fired when `endless_job` starts.
static ENDLESS_STARTED: Signal = Signal::new();
/// Fired when `endless_job`'s future is dropped.
static ENDLESS_STOPPED: Signal = Signal::new();

/// Fires `ENDLESS_STOPPED` when the tool's future is dropped.
struct Running;

impl Drop for Running {
    fn drop(&mut self) {
        ENDLESS_STOPPED.fire();
    }
}

/// Work that never ends by itself.
#[tool(task = "optional")]
async fn endless_job() -> String {
    let _running = Running;
    ENDLESS_STARTED.fire();
    std::future::pending::<()>().await;
    String::new()
}

/// Lets `gated_task_job` end.
static TASK_GATE: Signal = Signal::new();
/// Lets `gated_call` end.
static CALL_GATE: Signal = Signal::new();

/// Works until the test lets it end, as a task when the client asks for one.
#[tool(task = "optional")]
async fn gated_task_job() -> String {
    TASK_GATE.wait("the test to let the task end").await;
    "task done".to_owned()
}

/// Works until the test lets it end; never a task.
#[tool]
async fn gated_call() -> String {
    CALL_GATE.wait("the test to let the call end").await;
    "call done".to_owned()
}

/// Fails at once; runs only as a task.
#[tool(task = "required")]
fn instant_failure() -> Result<String, String> {
    Err("it always fails".to_owned())
}

/// Options whose calls become tasks after 20 ms (not the default second).
fn quick_tasks() -> ServerOptions {
    ServerOptions::default().tasks(TaskOptions::default().promote_after(Duration::from_millis(20)))
}

fn initialized(version: &str, capabilities: Value) -> Client {
    let mut client = Client::new(&server(quick_tasks()));
    client.send(&rpc::initialize(version, capabilities));
    let answer = client.next_now();
    assert!(answer["result"].is_object(), "{answer}");
    client
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {answer}"))
}

#[tokio::test(start_paused = true)]
async fn handshake_questions_go_to_the_client_and_the_call_waits_for_the_answer() {
    let capabilities = json!({"elicitation": {}, "sampling": {}, "roots": {}});
    let mut client = initialized("2025-11-25", capabilities);

    client.send(&rpc::call(1, "delete_files", json!({"count": 3})));
    let question = client.next().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert_eq!(question["params"]["message"], "Delete 3 files?");
    assert_eq!(
        question["params"]["requestedSchema"]["properties"]["confirm"]["type"],
        "boolean"
    );
    assert_eq!(
        question["params"]["requestedSchema"]["required"],
        json!(["confirm"])
    );
    assert!(client.nothing_yet(), "the call waits for the answer");
    client.send(&rpc::respond(
        &question["id"],
        json!({"action": "accept", "content": {"confirm": true}}),
    ));
    let answer = client.next().await;
    assert_eq!(
        (answer["id"].clone(), text(&answer)),
        (json!(1), "deleted 3")
    );

    // A declined form is an answer too.
    client.send(&rpc::call(2, "delete_files", json!({"count": 4})));
    let question = client.next().await;
    client.send(&rpc::respond(&question["id"], json!({"action": "decline"})));
    assert_eq!(text(&client.next().await), "declined");

    // Sampling: the model's message comes back typed.
    client.send(&rpc::call(3, "summarize", json!({"text": "long text"})));
    let question = client.next().await;
    assert_eq!(question["method"], "sampling/createMessage");
    assert_eq!(question["params"]["maxTokens"], 50);
    assert_eq!(
        question["params"]["messages"][0]["content"]["text"],
        "long text"
    );
    assert!(question["params"].get("tools").is_none());
    client.send(&rpc::respond(
        &question["id"],
        json!({
            "role": "assistant", "content": {"type": "text", "text": "short"}, "model": "m1",
            "stopReason": "endTurn"
        }),
    ));
    assert_eq!(text(&client.next().await), "short (by m1)");

    // A client that refuses: the tool hears why, and tells the model.
    client.send(&rpc::call(4, "summarize", json!({"text": "secret"})));
    let question = client.next().await;
    client.send(
        &json!({"jsonrpc": "2.0", "id": question["id"], "error": {
            "code": -1, "message": "User rejected sampling request"
        }})
        .to_string(),
    );
    let answer = client.next().await;
    assert_eq!(answer["result"]["isError"], true);
    assert!(
        text(&answer).contains("User rejected sampling request"),
        "{answer}"
    );

    // Roots.
    client.send(&rpc::call(5, "roots", json!({})));
    let question = client.next().await;
    assert_eq!(question["method"], "roots/list");
    client.send(&rpc::respond(
        &question["id"],
        json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
    ));
    assert_eq!(text(&client.next().await), "file:///work");

    // An answer that does not fit the form is the tool's error, saying what did not fit.
    client.send(&rpc::call(6, "delete_files", json!({"count": 5})));
    let question = client.next().await;
    client.send(&rpc::respond(
        &question["id"],
        json!({"action": "accept", "content": {"confirm": "yes"}}),
    ));
    let answer = client.next().await;
    assert_eq!(answer["result"]["isError"], true);
    assert!(text(&answer).contains("do not fit"), "{answer}");
}

#[tokio::test(start_paused = true)]
async fn a_url_elicitation_needs_its_own_capability_and_carries_an_id_only_live() {
    let mut client = initialized("2025-11-25", json!({"elicitation": {"url": {}}}));
    client.send(&rpc::call(1, "sign_in", json!({})));
    let question = client.next().await;
    let params = &question["params"];
    assert_eq!(
        (params["mode"].clone(), params["url"].clone()),
        (json!("url"), json!("https://example.com/sign-in")),
        "{question}"
    );
    assert_eq!(
        params["elicitationId"].as_str().map(str::len),
        Some(32),
        "{question}"
    );
    client.send(&rpc::respond(&question["id"], json!({"action": "accept"})));
    assert_eq!(text(&client.next().await), "Accepted(())");

    // Form mode only (`elicitation: {}`): never asked for a URL.
    let mut form_only = initialized("2025-11-25", json!({"elicitation": {}}));
    let refused = form_only.call(&rpc::call(2, "sign_in", json!({}))).await;
    assert_eq!(
        text(&refused),
        "the client does not support URL-mode elicitation (it did not declare the capability)",
        "{refused}"
    );

    // At 2026-07-28 the request state correlates rounds: no id.
    let mut stateless_client = Client::new(&server(quick_tasks()));
    let asked = stateless_client
        .call(&rpc::per_request(
            3,
            "tools/call",
            json!({"name": "sign_in", "arguments": {}}),
            json!({"elicitation": {"url": {}}}),
        ))
        .await;
    let request = &asked["result"]["inputRequests"]["elicitation-1"];
    assert_eq!(request["params"]["mode"], "url", "{asked}");
    assert!(request["params"].get("elicitationId").is_none(), "{asked}");
}

#[tokio::test(start_paused = true)]
async fn a_client_without_the_capability_is_never_asked() {
    let mut client = initialized("2025-11-25", json!({}));
    let answer = client
        .call(&rpc::call(1, "delete_files", json!({"count": 1})))
        .await;
    assert_eq!(
        answer["id"], 1,
        "the answer comes at once, with no question first: {answer}"
    );
    assert_eq!(answer["result"]["isError"], true);
    assert!(
        text(&answer).contains("does not support elicitation"),
        "{answer}"
    );

    // A client that elicits but does not sample is never asked to sample.
    let mut client = initialized("2025-11-25", json!({"elicitation": {}}));
    let answer = client
        .call(&rpc::call(2, "summarize", json!({"text": "x"})))
        .await;
    assert!(
        text(&answer).contains("does not support sampling"),
        "{answer}"
    );
}

/// A handshake-era session over Streamable HTTP, driven in process.
struct HttpSession {
    app: axum::Router,
    session: String,
}

impl HttpSession {
    /// Opens a session at 2025-11-25 whose client declares `capabilities`.
    async fn open(capabilities: Value) -> HttpSession {
        let app = router(server(quick_tasks()), HttpOptions::default());
        let opened = http::Request::mcp(rpc::initialize("2025-11-25", capabilities))
            .send_to(&app)
            .await;
        let session = opened
            .header("mcp-session-id")
            .expect("a session")
            .to_owned();
        HttpSession { app, session }
    }

    /// One message in the session.
    fn request(&self, body: String) -> http::Request {
        http::Request::mcp(body).session(&self.session)
    }

    /// POSTs a request answered with plain JSON: its answer.
    async fn answer(&self, body: String) -> Value {
        self.request(body).send_to(&self.app).await.message()
    }

    /// The client accepts `question` (an elicitation) with `content`: its answer is a POST
    /// of its own, accepted with 202.
    async fn accept(&self, question: &Value, content: Value) {
        let answer = json!({"action": "accept", "content": content});
        let answered = self
            .request(rpc::respond(&question["id"], answer))
            .send_to(&self.app)
            .await;
        assert_eq!(answered.status, 202, "{answered:?}");
    }

    /// POSTs a request answered with an event stream.
    async fn stream(&self, body: String) -> http::Events {
        let events = self.request(body).stream_from(&self.app).await;
        assert_eq!(events.header("content-type"), Some("text/event-stream"));
        events
    }
}

#[tokio::test(start_paused = true)]
async fn over_http_a_handshake_question_travels_on_the_calls_stream() {
    let http = HttpSession::open(json!({"elicitation": {}})).await;
    let mut events = http
        .stream(rpc::call(1, "delete_files", json!({"count": 2})))
        .await;
    let question = events.until(|m| m["method"].is_string()).await;
    assert_eq!(question["method"], "elicitation/create");

    http.accept(&question, json!({"confirm": true})).await;
    assert_eq!(text(&events.answer_to(1).await), "deleted 2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_2025_11_25_task_asks_on_the_tasks_result_stream_when_no_other_is_open() {
    // No GET stream is open: the task's question, asked once the call is answered, has
    // nowhere to go yet.
    let http = HttpSession::open(json!({"elicitation": {}})).await;
    let task = core_task_id(
        &http
            .answer(rpc::task_call(1, "careful_job", json!({})))
            .await,
    );
    let mut polling = Polling::new("the task to stop working");
    let polled = loop {
        let got = http
            .answer(rpc::request(2, "tasks/get", json!({"taskId": task})))
            .await;
        if got["result"]["status"] != "working" {
            break got["result"]["status"].clone();
        }
        polling.again(&got).await;
    };
    assert_eq!(polled, "input_required");

    // The client sees `input_required` and asks for the result, as the protocol says: the
    // question comes on that stream, then (once answered) the result.
    let mut events = http
        .stream(rpc::request(3, "tasks/result", json!({"taskId": task})))
        .await;
    let question = events.until(|m| m["method"] == "elicitation/create").await;
    assert_eq!(
        question["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        task.as_str()
    );
    http.accept(&question, json!({"confirm": true})).await;
    assert_eq!(text(&events.answer_to(3).await), "went on: true");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_tasks_result_request_leaves_no_stream_open_behind_it() {
    // A task that asks, followed over a connection whose `tasks/result` the client gives
    // up on: once cancelled, that request is answered by nobody and its stream ends, and
    // the task's question waits for the next `tasks/result` instead.
    let server = server(quick_tasks());
    let connection = server.connection();
    let handle = |text: &str, sink: &tool_runtime::mcp::connection::Outbox| {
        let handled = connection.handle(text.as_bytes(), sink);
        if let Some(work) = handled.into_work() {
            tokio::spawn(work.run());
        }
    };
    let read = |message: Option<tool_runtime::mcp::connection::ServerMessage>| {
        let message = message.expect("a message");
        serde_json::from_slice::<Value>(&message.bytes).unwrap()
    };
    let (sink, mut messages) = tool_runtime::mcp::connection::outbox();
    handle(
        &rpc::initialize("2025-11-25", json!({"elicitation": {}})),
        &sink,
    );
    assert!(read(messages.recv().await)["result"].is_object());
    handle(&rpc::task_call(1, "gated_careful_job", json!({})), &sink);
    let task = core_task_id(&read(messages.recv().await));
    drop(sink);

    // The first `tasks/result`, cancelled before the task asks.
    let (first, mut first_stream) = tool_runtime::mcp::connection::outbox();
    handle(
        &rpc::request(2, "tasks/result", json!({"taskId": task})),
        &first,
    );
    drop(first);
    let (other, _other_stream) = tool_runtime::mcp::connection::outbox();
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 2}});
    handle(&cancel.to_string(), &other);
    let ended = tokio::time::timeout(*tool_tests::PATIENCE, first_stream.recv()).await;
    assert!(
        matches!(ended, Ok(None)),
        "the cancelled request's stream ends: {ended:?}"
    );

    // Now the task asks; its question waits, and comes with the next `tasks/result`.
    ASK_GATE.notify_one();
    let mut polling = Polling::new("the task to ask");
    loop {
        let (sink, mut polled) = tool_runtime::mcp::connection::outbox();
        handle(
            &rpc::request(4, "tasks/get", json!({"taskId": task})),
            &sink,
        );
        drop(sink);
        let got = read(polled.recv().await);
        if got["result"]["status"] == "input_required" {
            break;
        }
        polling.again(&got).await;
    }
    let (second, mut second_stream) = tool_runtime::mcp::connection::outbox();
    handle(
        &rpc::request(3, "tasks/result", json!({"taskId": task})),
        &second,
    );
    drop(second);
    let question = tokio::time::timeout(*tool_tests::PATIENCE, second_stream.recv())
        .await
        .expect("the question in good time");
    let question = read(question);
    assert_eq!(question["method"], "elicitation/create", "{question}");
}

#[tokio::test(start_paused = true)]
async fn at_2026_questions_come_back_with_the_answer_and_the_retry_brings_the_answers() {
    let mut client = Client::new(&server(quick_tasks()));
    let capabilities = json!({"elicitation": {}});
    let first = client
        .call(&rpc::per_request(
            1,
            "tools/call",
            json!({"name": "two_steps", "arguments": {}}),
            capabilities.clone(),
        ))
        .await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    assert!(
        result["inputRequests"].get("color").is_none(),
        "asked only once the name is known"
    );
    let state = result["requestState"].as_str().unwrap().to_owned();

    // An altered state is refused, and so is one sent with other arguments.
    let tampered = client
        .call(&rpc::per_request(
            2,
            "tools/call",
            json!({"name": "two_steps", "arguments": {},
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Ann"}}},
            "requestState": format!("{state}x")}),
            capabilities.clone(),
        ))
        .await;
    assert_eq!(tampered["error"]["code"], -32602, "{tampered}");
    assert_eq!(
        tampered["error"]["message"],
        "Invalid params: \"requestState\" failed its integrity check: it was altered, or \
         issued by a server with another key; call again without it"
    );
    let elsewhere = client
        .call(&rpc::per_request(
            3,
            "tools/call",
            json!({"name": "two_steps", "arguments": {"x": 1},
            "requestState": state}),
            capabilities.clone(),
        ))
        .await;
    assert_eq!(elsewhere["error"]["code"], -32602, "{elsewhere}");
    assert_eq!(
        elsewhere["error"]["message"],
        "Invalid params: \"requestState\" was issued for another request; send it back only \
         with the tools/call request it came with, unchanged"
    );

    // Round two: the name answered, the color asked, with a new state.
    let second = client
        .call(&rpc::per_request(
            4,
            "tools/call",
            json!({"name": "two_steps", "arguments": {},
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Ann"}}},
            "requestState": state}),
            capabilities.clone(),
        ))
        .await;
    let result = &second["result"];
    assert_eq!(
        result["inputRequests"]["color"]["params"]["message"], "Color?",
        "{second}"
    );
    let next_state = result["requestState"].as_str().unwrap().to_owned();
    assert_ne!(next_state, state);

    // Round three brings the color: the name comes from the state, as does the note, and
    // a new answer to the sealed question does not replace the one the tool had.
    let third = client
        .call(&rpc::per_request(
            5,
            "tools/call",
            json!({"name": "two_steps", "arguments": {},
            "inputResponses": {"color": {"action": "accept", "content": {"color": "blue"}},
                               "name": {"action": "accept", "content": {"name": "Mallory"}}},
            "requestState": next_state}),
            capabilities.clone(),
        ))
        .await;
    assert_eq!(third["result"]["resultType"], "complete", "{third}");
    assert_eq!(text(&third), "Ann likes blue (round 3)");

    // An answer of the wrong shape is the retry's error, naming the key.
    let invalid = client
        .call(&rpc::per_request(
            6,
            "tools/call",
            json!({"name": "delete_files", "arguments": {"count": 1},
            "inputResponses": {"confirm": 12345}}),
            capabilities.clone(),
        ))
        .await;
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    assert_eq!(
        invalid["error"]["message"],
        "Invalid params: inputResponses[\"confirm\"] does not answer its question: an \
         elicitation result needs \"action\": \"accept\", \"decline\" or \"cancel\"; got 12345"
    );
    let not_an_object = client
        .call(&rpc::per_request(
            7,
            "tools/call",
            json!({"name": "delete_files", "arguments": {"count": 1},
            "inputResponses": [12345]}),
            capabilities,
        ))
        .await;
    assert_eq!(not_an_object["error"]["code"], -32602, "{not_an_object}");
    assert_eq!(
        not_an_object["error"]["message"],
        "Invalid params: \"inputResponses\" (answers, keyed as the inputRequests they answer) \
         must be an object; got an array"
    );

    // A capability the tool needs and the client lacks: -32021, naming it.
    let missing = client
        .call(&rpc::per_request(
            8,
            "tools/call",
            json!({"name": "summarize", "arguments": {"text": "x"}}),
            json!({}),
        ))
        .await;
    assert_eq!(missing["error"]["code"], -32021, "{missing}");
    assert_eq!(
        missing["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

/// A client of `server` whose requests come with an access token of `subject`.
fn as_subject(server: &McpServer, subject: &str) -> Client {
    let caller = tool_runtime::context::Caller::http(None).with_subject(subject, ["notes"]);
    tool_tests::drive(server);
    Client::of(server.connection().called_by(caller))
}

#[tokio::test(start_paused = true)]
async fn at_2026_a_request_state_serves_only_the_token_subject_it_was_issued_to() {
    let server = server(quick_tasks());
    let (mut ada, mut eve) = (as_subject(&server, "ada"), as_subject(&server, "eve"));
    let capabilities = json!({"elicitation": {}});
    let first = ada
        .call(&rpc::per_request(
            1,
            "tools/call",
            json!({"name": "two_steps", "arguments": {}}),
            capabilities.clone(),
        ))
        .await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let retry = |id| {
        rpc::per_request(
            id,
            "tools/call",
            json!({"name": "two_steps", "arguments": {},
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Ann"}}},
            "requestState": state}),
            capabilities.clone(),
        )
    };
    // Another token's subject cannot carry on ada's call, with ada's answers in its state.
    let stolen = eve.call(&retry(2)).await;
    assert_eq!(stolen["error"]["code"], -32602, "{stolen}");
    assert_eq!(
        stolen["error"]["message"],
        "Invalid params: \"requestState\" was issued to another client (another access \
         token's subject); call again without it",
        "{stolen}"
    );
    let carried_on = ada.call(&retry(3)).await;
    assert_eq!(
        carried_on["result"]["inputRequests"]["color"]["params"]["message"], "Color?",
        "{carried_on}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_task_belongs_to_the_token_subject_that_started_it_in_both_eras() {
    let server = server(quick_tasks());
    let (mut ada, mut eve) = (as_subject(&server, "ada"), as_subject(&server, "eve"));
    let task = start_task(&mut ada, 1, "long_job", json!({"seconds": 30})).await;
    // To another subject the task does not exist: it cannot read, answer or cancel it.
    for (id, method, params) in [
        (2, "tasks/get", json!({"taskId": task})),
        (
            3,
            "tasks/update",
            json!({"taskId": task, "inputResponses": {}}),
        ),
        (4, "tasks/cancel", json!({"taskId": task})),
    ] {
        let refused = eve
            .call(&rpc::per_request(id, method, params, with_tasks()))
            .await;
        assert_eq!(refused["error"], not_found(&task), "{method}: {refused}");
    }
    assert_eq!(tasks_get(&mut ada, 5, &task).await["status"], "working");

    // 2025-11-25: tasks/get, tasks/result and tasks/cancel of another subject's task find
    // nothing.
    let mut ada = as_subject(&server, "ada").past_handshake();
    let mut eve = as_subject(&server, "eve").past_handshake();
    let task = start_core_task(&mut ada, 2, "long_job", json!({"seconds": 30})).await;
    for (id, method) in [(3, "tasks/get"), (4, "tasks/result"), (6, "tasks/cancel")] {
        let refused = eve
            .call(&rpc::request(id, method, json!({"taskId": task})))
            .await;
        assert_eq!(refused["error"], not_found(&task), "{method}: {refused}");
    }
    let own = ada
        .call(&rpc::request(5, "tasks/get", json!({"taskId": task})))
        .await;
    assert_eq!(own["result"]["taskId"], task.as_str(), "{own}");
    assert_eq!(
        own["result"]["status"], "working",
        "eve's cancel left it running: {own}"
    );
    let cancelled = ada
        .call(&rpc::request(7, "tasks/cancel", json!({"taskId": task})))
        .await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
}

/// The error of a `tasks/*` request naming a task the caller cannot reach.
fn not_found(task: &str) -> Value {
    json!({
        "code": -32602,
        "message": format!("Invalid params: no task {task:?} (it never existed, or it expired)")
    })
}

/// The 2026-07-28 task `task`, as `tasks/get` shows it.
async fn tasks_get(client: &mut Client, id: u32, task: &str) -> Value {
    task_method(client, id, "tasks/get", json!({"taskId": task})).await["result"].clone()
}

#[tokio::test(start_paused = true)]
async fn at_2026_a_long_call_becomes_a_task_the_client_follows() {
    let mut client = Client::new(&server(quick_tasks()));
    let created = client
        .call(&rpc::per_request(
            1,
            "tools/call",
            json!({"name": "long_job", "arguments": {"seconds": 30}}),
            with_tasks(),
        ))
        .await;
    let result = &created["result"];
    assert_eq!(result["resultType"], "task", "{created}");
    assert_eq!(result["status"], "working");
    assert!(result.get("ttl").is_none() && result["ttlMs"].as_u64().unwrap() > 0);
    let task = result["taskId"].as_str().unwrap().to_owned();
    assert_eq!(task.len(), 32, "an unguessable id");

    assert_eq!(tasks_get(&mut client, 2, &task).await["status"], "working");
    let ack = client
        .call(&rpc::per_request(
            3,
            "tasks/cancel",
            json!({"taskId": task}),
            with_tasks(),
        ))
        .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert!(
        ack["result"].get("status").is_none(),
        "an acknowledgement only"
    );
    assert_eq!(
        tasks_get(&mut client, 4, &task).await["status"],
        "cancelled"
    );
    let again = client
        .call(&rpc::per_request(
            5,
            "tasks/cancel",
            json!({"taskId": task}),
            with_tasks(),
        ))
        .await;
    assert_eq!(
        again["result"]["resultType"], "complete",
        "cancelling twice is acknowledged"
    );

    // Without the extension: the same tool answers as any call, and the task methods refuse.
    let plain = client
        .call(&rpc::per_request(
            6,
            "tools/call",
            json!({"name": "long_job", "arguments": {"seconds": 0.05}}),
            json!({}),
        ))
        .await;
    assert_eq!(text(&plain), "slept 0.05");
    let refused = client
        .call(&rpc::per_request(
            7,
            "tasks/get",
            json!({"taskId": task}),
            json!({}),
        ))
        .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    let required = client
        .call(&rpc::per_request(
            8,
            "tools/call",
            json!({"name": "careful_job", "arguments": {}}),
            json!({}),
        ))
        .await;
    assert_eq!(
        required["error"]["data"]["requiredCapabilities"],
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    );
    let unknown = client
        .call(&rpc::per_request(
            9,
            "tasks/get",
            json!({"taskId": "nope"}),
            with_tasks(),
        ))
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[tokio::test(start_paused = true)]
async fn at_2026_a_task_asks_through_itself_and_tasks_update_answers() {
    let mut client = Client::new(&server(quick_tasks()));
    let task = start_task(&mut client, 1, "careful_job", json!({})).await;
    let status = until(&mut client, 10, &task, "input_required").await;
    assert_eq!(
        status["inputRequests"]["go"]["method"], "elicitation/create",
        "{status}"
    );
    let ack = client
        .call(&rpc::per_request(
            200,
            "tasks/update",
            json!({"taskId": task, "inputResponses": {
            "go": {"action": "accept", "content": {"confirm": true}},
            "unknown": {"ignored": true}}}),
            with_tasks(),
        ))
        .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let status = until(&mut client, 300, &task, "completed").await;
    assert_eq!(
        status["result"]["content"][0]["text"], "went on: true",
        "{status}"
    );
}

#[tokio::test(start_paused = true)]
async fn at_2025_11_25_a_client_asks_for_a_task_and_reads_its_result() {
    let mut client = initialized("2025-11-25", json!({}));
    let opened = {
        let mut fresh = Client::new(&server(quick_tasks()));
        fresh.call(&rpc::initialize("2025-11-25", json!({}))).await
    };
    assert_eq!(
        opened["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    let listed = client
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    let support = |name: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["execution"]["taskSupport"].clone()
    };
    assert_eq!(
        (
            support("long_job"),
            support("careful_job"),
            support("quick")
        ),
        (json!("optional"), json!("required"), Value::Null)
    );

    let created = client
        .call(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "long_job", "arguments": {"seconds": 0.2}, "task": {"ttl": 60000}}})
            .to_string(),
        )
        .await;
    let task = &created["result"]["task"];
    assert_eq!(
        (task["status"].clone(), task["ttl"].clone()),
        (json!("working"), json!(60000)),
        "{created}"
    );
    let id = task["taskId"].as_str().unwrap().to_owned();

    // tasks/result waits for the end, and says which task it belongs to.
    // The status notification and the answer of tasks/result both come, in either order.
    client.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": id}})
            .to_string(),
    );
    let (first, second) = (client.next().await, client.next().await);
    let (status, result) = if first["method"].is_string() {
        (first, second)
    } else {
        (second, first)
    };
    assert_eq!(status["method"], "notifications/tasks/status", "{status}");
    assert_eq!(status["params"]["status"], "completed");
    assert_eq!(status["params"]["taskId"], json!(id));
    assert_eq!(text(&result), "slept 0.2");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(id)
    );
    let listed = client
        .call(r#"{"jsonrpc":"2.0","id":4,"method":"tasks/list"}"#)
        .await;
    assert_eq!(
        listed["result"]["tasks"][0]["status"], "completed",
        "{listed}"
    );
    let cancel = client
        .call(
            &json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/cancel", "params": {"taskId": id}})
                .to_string(),
        )
        .await;
    assert_eq!(
        cancel["error"]["code"], -32602,
        "an ended task cannot be cancelled: {cancel}"
    );

    // A tool that runs only as a task needs one; one that never does refuses it.
    let bare = client.call(&rpc::call(6, "careful_job", json!({}))).await;
    assert_eq!(bare["error"]["code"], -32601, "{bare}");
    let refused = client
        .call(
            &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                "name": "quick", "task": {}
            }})
            .to_string(),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
}

#[tokio::test(start_paused = true)]
async fn at_2025_11_25_an_id_used_again_while_its_task_runs_names_a_request_of_its_own() {
    // Ids must differ only among requests in flight: the call that became a task was
    // answered, so the client may use its id for another request while the task runs.
    let mut client = initialized("2025-11-25", json!({}));
    // Run here, so the test knows when the task's work is over.
    let handled = client.connection.handle(
        rpc::task_call(1, "gated_task_job", json!({})).as_bytes(),
        &client.sink,
    );
    let task_work = tokio::spawn(handled.into_work().expect("the call's work").run());
    let created = client.next().await;
    assert!(created["result"]["task"]["taskId"].is_string(), "{created}");
    client.send(&rpc::call(1, "gated_call", json!({})));
    TASK_GATE.fire();
    task_work.await.expect("the task's work ends");
    assert_eq!(
        client.connection.in_flight(),
        1,
        "the task's end ended the request that uses its id again"
    );
    CALL_GATE.fire();
    let mut answer = client.next().await;
    while answer.get("id").is_none() {
        answer = client.next().await;
    }
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(text(&answer), "call done", "{answer}");
}

#[tokio::test(start_paused = true)]
async fn at_2025_11_25_a_task_asks_live_and_says_whose_question_it_is() {
    let mut client = initialized("2025-11-25", json!({"elicitation": {}}));
    let id = start_core_task(&mut client, 1, "careful_job", json!({})).await;
    let question = client.next().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert_eq!(
        question["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(id)
    );
    let status = client
        .call(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": id}})
                .to_string(),
        )
        .await;
    assert_eq!(status["result"]["status"], "input_required", "{status}");
    client.send(&rpc::respond(
        &question["id"],
        json!({"action": "accept", "content": {"confirm": true}}),
    ));
    client.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": id}})
            .to_string(),
    );
    let (first, second) = (client.next().await, client.next().await);
    let result = if first["id"] == 3 { first } else { second };
    assert_eq!(text(&result), "went on: true", "{result}");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(id)
    );
}

#[tokio::test(start_paused = true)]
async fn at_2026_a_cancelled_task_stops_its_tool_and_a_required_one_ending_at_once_is_an_ended_task(
) {
    let mut client = Client::new(&server(quick_tasks()));
    let task = start_task(&mut client, 1, "endless_job", json!({})).await;
    assert!(ENDLESS_STARTED.fired());
    client
        .call(&rpc::per_request(
            2,
            "tasks/cancel",
            json!({"taskId": task}),
            with_tasks(),
        ))
        .await;
    ENDLESS_STOPPED.wait("the tool was dropped").await;

    // A tool that runs only as a task and ends before the moment passes: a task, ended.
    let ended = client
        .call(&rpc::per_request(
            3,
            "tools/call",
            json!({"name": "instant_failure", "arguments": {}}),
            with_tasks(),
        ))
        .await;
    assert_eq!(ended["result"]["resultType"], "task", "{ended}");
    assert_eq!(
        ended["result"]["status"], "completed",
        "a tool error completes the task"
    );
    let task = ended["result"]["taskId"].as_str().unwrap().to_owned();
    let status = tasks_get(&mut client, 4, &task).await;
    assert_eq!(status["result"]["isError"], true, "{status}");
    assert_eq!(status["result"]["content"][0]["text"], "it always fails");
    assert!(
        status["result"].get("resultType").is_none(),
        "the call's own result, not an envelope: {status}"
    );
}

#[tokio::test(start_paused = true)]
async fn at_2025_11_25_a_tool_error_fails_the_task_and_each_connection_lists_its_own_tasks() {
    let server = server(quick_tasks().page_size(1));
    let mut client = Client::initialized(&server);

    let failing = start_core_task(&mut client, 1, "instant_failure", json!({})).await;
    client.send(&rpc::task_call(2, "long_job", json!({"seconds": 30})));
    // Two messages come, in either order (the first task fails as the second starts): the
    // answer that makes the second task, and the first's failure announced.
    let (mut created, mut announced) = (None, None);
    for _ in 0..2 {
        let message = client.next().await;
        match message.get("id") {
            Some(_) => created = Some(message),
            None => announced = Some(message),
        }
    }
    let endless = core_task_id(&created.expect("the second task made"));

    // The failure is announced, and tasks/result gives the call's own error result.
    let status = announced.expect("the failure announced");
    assert_eq!(status["method"], "notifications/tasks/status", "{status}");
    assert_eq!(
        (
            status["params"]["taskId"].clone(),
            status["params"]["status"].clone()
        ),
        (json!(failing), json!("failed"))
    );
    assert_eq!(
        status["params"]["statusMessage"],
        Value::Null,
        "a tool error is a result, not a protocol error"
    );
    let result = client
        .call(&rpc::request(3, "tasks/result", json!({"taskId": failing})))
        .await;
    assert_eq!(result["result"]["isError"], true, "{result}");

    // Listed a page at a time, this connection's tasks only.
    let first = client.call(&rpc::request(4, "tasks/list", json!({}))).await;
    assert_eq!(
        first["result"]["tasks"][0]["taskId"],
        json!(failing),
        "{first}"
    );
    let cursor = first["result"]["nextCursor"].clone();
    let second = client
        .call(&rpc::request(5, "tasks/list", json!({"cursor": cursor})))
        .await;
    assert_eq!(
        second["result"]["tasks"][0]["taskId"],
        json!(endless),
        "{second}"
    );
    assert!(second["result"].get("nextCursor").is_none());
    let mut other = Client::initialized(&server);
    let theirs = other.call(&rpc::request(1, "tasks/list", json!({}))).await;
    assert_eq!(theirs["result"]["tasks"], json!([]), "{theirs}");

    // Cancelling a running task answers it cancelled and announces it.
    let cancelled = client
        .call(&rpc::request(6, "tasks/cancel", json!({"taskId": endless})))
        .await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let status = client.next().await;
    assert_eq!(
        (
            status["params"]["taskId"].clone(),
            status["params"]["status"].clone()
        ),
        (json!(endless), json!("cancelled"))
    );
}

#[tokio::test(start_paused = true)]
async fn at_2025_11_25_a_tool_that_needs_a_page_first_answers_32042_and_the_page_says_when_done() {
    let mut client = initialized("2025-11-25", json!({"elicitation": {"url": {}}}));
    let refused = client
        .call(&rpc::call(1, "list_files", json!({"account": "ann"})))
        .await;
    let error = &refused["error"];
    assert_eq!(error["code"], -32042, "{refused}");
    assert_eq!(
        error["message"],
        "URL elicitation required: tool 'list_files' needs the user to visit Connect ann \
         (https://example.com/connect/ann) first; call it again once they are done"
    );
    let elicitations = error["data"]["elicitations"].as_array().unwrap();
    assert_eq!(elicitations.len(), 1, "{refused}");
    let page = &elicitations[0];
    let id = page["elicitationId"].as_str().unwrap().to_owned();
    assert_eq!(
        page,
        &json!({"mode": "url", "message": "Connect ann",
                "url": "https://example.com/connect/ann", "elicitationId": id})
    );
    assert_eq!(id.len(), 32, "an unguessable id: {id}");

    // The user finishes at the page, after the call ended: the client is told, once.
    let completion = finish_at_page("ann");
    assert_eq!(completion.id(), id);
    assert!(completion.complete());
    let told = client.next().await;
    assert_eq!(
        told,
        json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
               "params": {"elicitationId": id}})
    );
    assert!(!completion.complete(), "told once");
    assert!(client.nothing_yet());

    let retried = client
        .call(&rpc::call(2, "list_files", json!({"account": "ann"})))
        .await;
    assert_eq!(text(&retried), "ann: notes.txt");
}

#[tokio::test(start_paused = true)]
async fn a_page_is_never_sent_to_a_client_without_url_elicitation_and_a_direct_call_names_it() {
    let mut form_only = initialized("2025-11-25", json!({"elicitation": {}}));
    let refused = form_only
        .call(&rpc::call(1, "list_files", json!({"account": "bob"})))
        .await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert_eq!(
        text(&refused),
        "the client does not support URL-mode elicitation (it did not declare the capability)",
        "{refused}"
    );
    assert!(
        !finish_at_page("bob").complete(),
        "no page was sent, so there is nothing to complete"
    );
    assert!(form_only.nothing_yet());

    // Without a client (a call on the registry, as REST and the CLI make), the error names
    // the page.
    let registry = Registry::new().unwrap();
    let result = registry.call("list_files", json!({"account": "cyd"})).await;
    let error = result.error().unwrap();
    assert_eq!(error.status(), "url_elicitation_required");
    assert_eq!(
        error.to_string(),
        "tool 'list_files' needs the user to visit Connect cyd \
         (https://example.com/connect/cyd) first; call it again once they are done"
    );
    assert!(!finish_at_page("cyd").complete());
}

#[tokio::test(start_paused = true)]
async fn at_2026_a_tool_that_needs_a_page_first_asks_for_it_each_round_until_the_user_is_done() {
    let mut client = Client::new(&server(quick_tasks()));
    let capabilities = json!({"elicitation": {"url": {}}});
    let round = |id: u32, extra: Value| {
        let mut params = json!({"name": "list_files", "arguments": {"account": "dee"}});
        if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
            params.extend(extra);
        }
        rpc::per_request(id, "tools/call", params, capabilities.clone())
    };
    let first = client.call(&round(1, json!({}))).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"],
        json!({"elicitation-1": {"method": "elicitation/create", "params": {
            "mode": "url", "message": "Connect dee", "url": "https://example.com/connect/dee"}}}),
        "no elicitationId at 2026-07-28: {first}"
    );

    // The client answers (the user agreed to open the page) before the user is done: the
    // tool asks again.
    let answered = json!({
        "inputResponses": {"elicitation-1": {"action": "accept"}},
        "requestState": result["requestState"],
    });
    let again = client.call(&round(2, answered)).await;
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    let state = again["result"]["requestState"].clone();

    // The page has no notification to send at 2026-07-28; the retry after it runs the tool.
    assert!(!finish_at_page("dee").complete());
    let done = client
        .call(&round(
            3,
            json!({
                "inputResponses": {"elicitation-1": {"action": "accept"}}, "requestState": state
            }),
        ))
        .await;
    assert_eq!(text(&done), "dee: notes.txt", "{done}");

    // A client without URL elicitation: -32021, naming it.
    let mut form_only = Client::new(&server(quick_tasks()));
    let refused = form_only
        .call(&rpc::per_request(
            4,
            "tools/call",
            json!({"name": "list_files", "arguments": {"account": "eve"}}),
            json!({"elicitation": {}}),
        ))
        .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"url": {}}})
    );
}

#[tokio::test(start_paused = true)]
async fn at_2025_11_25_a_task_that_needs_a_page_first_ends_with_32042_and_its_pages() {
    let mut client = initialized("2025-11-25", json!({"elicitation": {"url": {}}}));
    let task = start_core_task(&mut client, 1, "list_files", json!({"account": "fay"})).await;
    client.send(&rpc::request(2, "tasks/result", json!({"taskId": task})));
    let ended = loop {
        let message = client.next().await;
        if message["id"] == 2 {
            break message;
        }
    };
    let error = &ended["error"];
    assert_eq!(error["code"], -32042, "{ended}");
    assert_eq!(
        error["data"]["elicitations"][0]["url"],
        "https://example.com/connect/fay"
    );
    assert_eq!(
        error["data"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        task.as_str()
    );
}
