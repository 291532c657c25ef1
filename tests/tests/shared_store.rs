//! Servers that share a Redis store serve each other's state: tasks, request states,
//! large outputs, rate limits and budgets. Each server has a store connection of its own,
//! as replicas in separate processes would, against a real `redis-server`, and again
//! against a real Redis Cluster of three nodes.

use serde_json::{json, Value};
use std::time::Duration;
use tool_runtime::ask::{AskError, Elicited};
use tool_runtime::mcp::LargeOutputs;
use tool_runtime::mcp::{McpServer, ServerOptions};
use tool_runtime::ops::Budget;
use tool_runtime::registry::DynamicTool;
use tool_runtime::store::{Store, StoreBuilder};
use tool_runtime::tasks::TaskOptions;
use tool_runtime::transport::http::{router, HttpOptions};
use tool_runtime::Registry;
use tool_runtime::{resource, tool, CallContext};
use tool_tests::gate::FileGate;
use tool_tests::http::Request;
use tool_tests::redis::{RedisCluster, RedisServer, SharedRedis};
use tool_tests::{
    rpc, server, server_over, start_task, task_method, until, Client, Signal, INITIALIZE,
};
use tool_tests::{wait_for, PATIENCE};

/// Whether to go ahead.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    /// Go ahead?
    confirm: bool,
}

/// Works until the test opens `gate` (once the call has become a task), then asks whether
/// to go on.
#[tool(task = "optional")]
async fn ask_later(
    /// The gate at which it works (a directory, see `tool_tests::gate`).
    gate: String,
    ctx: CallContext,
) -> Result<String, AskError> {
    tool_tests::gate::hold(&gate).await;
    let answer = ctx.elicit::<Confirm>("Go on?").key("go").await?;
    let yes = matches!(answer, Elicited::Accepted(Confirm { confirm: true }));
    Ok(format!("went on: {yes}"))
}

/// Fired when `endless_job` starts.
static ENDLESS_STARTED: Signal = Signal::new();
/// Fired when `endless_job`'s future is dropped.
static ENDLESS_STOPPED: Signal = Signal::new();

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

/// Asks for a name, then for a color, then says both.
#[tool]
async fn two_steps(ctx: CallContext) -> Result<String, AskError> {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Name {
        /// Your name.
        name: String,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Color {
        /// A color.
        color: String,
    }
    let Elicited::Accepted(Name { name }) = ctx.elicit::<Name>("Name?").key("name").await? else {
        return Ok("no name".into());
    };
    let Elicited::Accepted(Color { color }) = ctx.elicit::<Color>("Color?").key("color").await?
    else {
        return Ok("no color".into());
    };
    Ok(format!("{name} likes {color}"))
}

/// A report of `lines` lines, linked when large.
#[tool(large_output = "resource")]
fn report(
    /// How many lines.
    lines: u32,
) -> String {
    (1..=lines).map(|n| format!("line {n}\n")).collect()
}

/// Today's notes.
#[resource("notes://today", mime_type = "text/plain")]
fn today() -> String {
    "water the plants".to_owned()
}

/// How the replicas of these tests reach `redis` under `prefix`: each command given a
/// test's patience. Production's 500 ms is short for the Redis of a machine kept busy by
/// other work, and a command past its limit changes what a replica does (a call not kept
/// as a task stays a call), which is not what these tests look at.
fn store_of(redis: &impl SharedRedis, prefix: &str) -> StoreBuilder {
    Store::builder(redis.store_url())
        .prefix(prefix)
        .response_timeout(*PATIENCE)
}

/// A server of its own store connection to `redis` under `prefix`, whose calls become
/// tasks after 20 ms.
async fn replica(redis: &impl SharedRedis, prefix: &str) -> McpServer {
    replica_of(store_of(redis, prefix)).await
}

/// A server of its own connection to `store`, whose calls become tasks after 20 ms.
async fn replica_of(store: StoreBuilder) -> McpServer {
    let store = store.connect().await.expect("the store connects");
    let tasks = TaskOptions::default().promote_after(Duration::from_millis(20));
    server(ServerOptions::default().tasks(tasks).store(store))
}

/// A prefix no other test uses.
fn prefix(test: &str) -> String {
    format!("{test}-{}", std::process::id())
}

#[tokio::test]
async fn replicas_serve_each_others_tasks() {
    replicas_serve_each_others_tasks_on(&RedisServer::start()).await;
    replicas_serve_each_others_tasks_on(&RedisCluster::start()).await;
}

async fn replicas_serve_each_others_tasks_on(redis: &impl SharedRedis) {
    ENDLESS_STARTED.reset();
    ENDLESS_STOPPED.reset();
    let prefix = prefix("tasks");
    let (a, b) = (replica(redis, &prefix).await, replica(redis, &prefix).await);
    let (mut on_a, mut on_b) = (Client::new(&a), Client::new(&b));

    // Started on A; B sees its question, B's answer reaches the tool running on A, and B
    // reads its result.
    let gate = FileGate::new("ask-later");
    let task = start_task(&mut on_a, 1, "ask_later", json!({"gate": gate.path()})).await;
    gate.release();
    let asking = until(&mut on_b, 100, &task, "input_required").await;
    assert_eq!(
        asking["inputRequests"]["go"]["params"]["message"], "Go on?",
        "{asking}"
    );
    let answer = json!({"go": {"action": "accept", "content": {"confirm": true}}});
    let ack = task_method(
        &mut on_b,
        2,
        "tasks/update",
        json!({"taskId": task, "inputResponses": answer}),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = until(&mut on_b, 200, &task, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "went on: true",
        "{done}"
    );

    // Cancelled through B: the tool running on A stops.
    let task = start_task(&mut on_a, 3, "endless_job", json!({})).await;
    assert!(ENDLESS_STARTED.fired());
    let ack = task_method(&mut on_b, 4, "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    until(&mut on_a, 500, &task, "cancelled").await;
    ENDLESS_STOPPED.wait("the tool on A was stopped").await;

    // A server with another prefix shares nothing with them.
    let other = replica(redis, &format!("{prefix}-other")).await;
    let unknown = task_method(
        &mut Client::new(&other),
        5,
        "tasks/get",
        json!({"taskId": task}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[tokio::test]
async fn a_request_state_sealed_by_one_replica_opens_on_another() {
    a_request_state_sealed_by_one_replica_opens_on_another_on(&RedisServer::start()).await;
    a_request_state_sealed_by_one_replica_opens_on_another_on(&RedisCluster::start()).await;
}

async fn a_request_state_sealed_by_one_replica_opens_on_another_on(redis: &impl SharedRedis) {
    let prefix = prefix("states");
    let (a, b) = (replica(redis, &prefix).await, replica(redis, &prefix).await);
    let capabilities = json!({"elicitation": {}});
    let call = |id: u32, extra: Value| {
        let mut params = json!({"name": "two_steps", "arguments": {}});
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        rpc::per_request(id, "tools/call", params, capabilities.clone())
    };
    let first = Client::new(&a).call(&call(1, json!({}))).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let name = json!({"name": {"action": "accept", "content": {"name": "Ann"}}});
    let second = Client::new(&b)
        .call(&call(
            2,
            json!({"inputResponses": name, "requestState": state}),
        ))
        .await;
    assert_eq!(
        second["result"]["inputRequests"]["color"]["params"]["message"], "Color?",
        "B opened A's state: {second}"
    );
    let state = second["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let color = json!({"color": {"action": "accept", "content": {"color": "blue"}}});
    let third = Client::new(&a)
        .call(&call(
            3,
            json!({"inputResponses": color, "requestState": state}),
        ))
        .await;
    assert_eq!(
        third["result"]["content"][0]["text"], "Ann likes blue",
        "{third}"
    );

    // A server of another service (another prefix) has other keys.
    let other = replica(redis, &format!("{prefix}-other")).await;
    let refused = Client::new(&other)
        .call(&call(
            4,
            json!({"inputResponses": color, "requestState": state}),
        ))
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

/// A server sharing `redis` under `prefix`, whose lists may change.
async fn changing_replica(redis: &impl SharedRedis, prefix: &str) -> McpServer {
    let store = store_of(redis, prefix).connect().await.unwrap();
    server(ServerOptions::default().list_changed(true).store(store))
}

#[tokio::test]
async fn updates_and_list_changes_on_one_replica_reach_listeners_on_another() {
    updates_and_list_changes_on_one_replica_reach_listeners_on_another_on(&RedisServer::start())
        .await;
    updates_and_list_changes_on_one_replica_reach_listeners_on_another_on(&RedisCluster::start())
        .await;
}

async fn updates_and_list_changes_on_one_replica_reach_listeners_on_another_on(
    redis: &impl SharedRedis,
) {
    let prefix = prefix("notifications");
    let (a, b) = (
        changing_replica(redis, &prefix).await,
        changing_replica(redis, &prefix).await,
    );
    let mut on_b = Client::new(&b);
    let listen = rpc::per_request(
        1,
        "subscriptions/listen",
        json!({"notifications": {
            "toolsListChanged": true, "resourceSubscriptions": ["notes://today"]
        }}),
        json!({}),
    );
    let ack = on_b.call(&listen).await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );

    // Told on B's bus before A tells it: B listens already.
    a.registry().resource_updates().updated("notes://today");
    let updated = on_b.next().await;
    assert_eq!(
        updated["method"], "notifications/resources/updated",
        "{updated}"
    );
    assert_eq!(updated["params"]["uri"], "notes://today");

    let tool = DynamicTool::new(
        "added_later",
        "Added on A.",
        |_: serde_json::Map<String, Value>| async { Ok::<_, String>(1) },
    )
    .unwrap();
    a.registry().add_tool(tool).unwrap();
    let changed = on_b.next().await;
    assert_eq!(
        changed["method"], "notifications/tools/list_changed",
        "{changed}"
    );
}

/// One replica's HTTP side.
fn http_of(server: &McpServer) -> axum::Router {
    router(server.clone(), HttpOptions::default())
}

#[tokio::test]
async fn a_2025_task_asks_through_the_replica_where_its_result_waits() {
    a_2025_task_asks_through_the_replica_where_its_result_waits_on(&RedisServer::start()).await;
    a_2025_task_asks_through_the_replica_where_its_result_waits_on(&RedisCluster::start()).await;
}

async fn a_2025_task_asks_through_the_replica_where_its_result_waits_on(redis: &impl SharedRedis) {
    let prefix = prefix("relay");
    let (a, b, c) = (
        replica(redis, &prefix).await,
        replica(redis, &prefix).await,
        replica(redis, &prefix).await,
    );
    let (on_a, on_b, on_c) = (http_of(&a), http_of(&b), http_of(&c));
    let initialize = concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","#,
        r#""params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"#,
        r#""clientInfo":{"name":"t","version":"1"}}}"#
    );
    let opened = Request::mcp(initialize).stream_from(&on_a).await;
    let session = opened
        .header("mcp-session-id")
        .expect("a session")
        .to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        Request::mcp(initialized)
            .session(&session)
            .stream_from(&on_b)
            .await
            .status,
        202
    );

    // Started on A, as a task.
    let gate = FileGate::new("relay");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "ask_later", "arguments": {"gate": gate.path()}, "task": {}}})
    .to_string();
    let created = Request::mcp(&call)
        .session(&session)
        .stream_from(&on_a)
        .await
        .next()
        .await;
    gate.release();
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();

    // Its result is awaited on B: the question comes on B's stream, from A.
    let result = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{{"taskId":"{task}"}}}}"#
    );
    let mut waiting = Request::mcp(&result)
        .session(&session)
        .stream_from(&on_b)
        .await;
    let question = waiting.next().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    let question_id = question["id"].clone();
    assert!(
        question_id
            .as_str()
            .is_some_and(|id| id.starts_with(a.store().unwrap().replica())),
        "the id names the asking replica: {question}"
    );

    // Answered through C: handed to A, whose tool goes on; B's stream ends with the result.
    let answer = json!({"jsonrpc": "2.0", "id": question_id, "result": {
        "action": "accept", "content": {"confirm": true}
    }});
    assert_eq!(
        Request::mcp(answer.to_string())
            .session(&session)
            .stream_from(&on_c)
            .await
            .status,
        202
    );
    let ended = loop {
        let message = waiting.next().await;
        if message.get("id") == Some(&json!(2)) {
            break message;
        }
    };
    assert_eq!(
        ended["result"]["content"][0]["text"], "went on: true",
        "{ended}"
    );
}

#[tokio::test]
async fn a_large_output_stored_by_one_replica_is_read_from_another() {
    a_large_output_stored_by_one_replica_is_read_from_another_on(&RedisServer::start()).await;
    a_large_output_stored_by_one_replica_is_read_from_another_on(&RedisCluster::start()).await;
}

async fn a_large_output_stored_by_one_replica_is_read_from_another_on(redis: &impl SharedRedis) {
    let prefix = prefix("outputs");
    let options = |store| {
        ServerOptions::default()
            .large_outputs(LargeOutputs::default().above(200))
            .store(store)
    };
    let connect = || store_of(redis, &prefix).connect();
    let (a, b) = (
        server(options(connect().await.unwrap())),
        server(options(connect().await.unwrap())),
    );
    let (mut on_a, mut on_b) = (Client::initialized(&a), Client::initialized(&b));
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "report", "arguments": {"lines": 500}
    }});
    let linked = on_a.call(&call.to_string()).await;
    let uri = linked["result"]["content"][1]["uri"]
        .as_str()
        .unwrap_or_else(|| panic!("a link: {linked}"))
        .to_owned();
    let read =
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": uri}});
    let whole = on_b.call(&read.to_string()).await;
    let text = whole["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("the whole output: {whole}"));
    assert_eq!(text.lines().count(), 500);
    assert!(text.ends_with("line 500\n"));
}

#[tokio::test]
async fn a_budget_is_spent_across_replicas() {
    a_budget_is_spent_across_replicas_on(&RedisServer::start()).await;
    a_budget_is_spent_across_replicas_on(&RedisCluster::start()).await;
}

async fn a_budget_is_spent_across_replicas_on(redis: &impl SharedRedis) {
    let prefix = prefix("budget");
    let replica = || async {
        let store = store_of(redis, &prefix).connect().await.unwrap();
        let registry = Registry::builder()
            .budget(Budget::default().calls(3))
            .build()
            .unwrap();
        server_over(registry, ServerOptions::default().store(store))
    };
    let (a, b) = (replica().await, replica().await);
    let (mut on_a, mut on_b) = (Client::initialized(&a), Client::initialized(&b));
    let call = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "report", "arguments": {"lines": 1}
        }})
        .to_string()
    };
    // One client (the same key on both: this process's stdio), three calls in all.
    for id in 1..=3 {
        let client = if id == 2 { &mut on_b } else { &mut on_a };
        let answer = client.call(&call(id)).await;
        assert_eq!(
            answer["result"]["structuredContent"]["result"], "line 1\n",
            "{answer}"
        );
    }
    let refused = on_b.call(&call(4)).await;
    assert_eq!(
        refused["result"]["_meta"]["status"], "budget_exceeded",
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_tools_rate_holds_across_replicas() {
    a_mounted_tools_rate_holds_across_replicas_on(&RedisServer::start()).await;
    a_mounted_tools_rate_holds_across_replicas_on(&RedisCluster::start()).await;
}

/// Each replica mounts the same server of its own (a process each, as replicas in separate
/// processes would), and the mounted `up_add` may be called twice an hour in all.
async fn a_mounted_tools_rate_holds_across_replicas_on(redis: &impl SharedRedis) {
    use tool_runtime::mount::Mount;
    use tool_runtime::ops::Rate;
    let prefix = prefix("mounted-rate");
    let upstream = format!("{} serve", env!("CARGO_BIN_EXE_upstream-tools"));
    let replica = || async {
        let store = store_of(redis, &prefix).connect().await.unwrap();
        let registry = Registry::builder()
            .mount(Mount::new("up", &upstream).unwrap())
            .rate_limit("up_add", Rate::new(2, Duration::from_secs(3600)).unwrap())
            .build()
            .unwrap();
        server_over(registry, ServerOptions::default().store(store))
    };
    let (a, b) = (replica().await, replica().await);
    let (mut on_a, mut on_b) = (Client::initialized(&a), Client::initialized(&b));
    for client in [&mut on_a, &mut on_b] {
        client.until_listed("up_add").await;
    }
    let add = |id: u32| rpc::call(id, "up_add", json!({"a": 20, "b": 22}));
    let first = on_a.answer(&add(1)).await;
    assert_eq!(
        first["result"]["structuredContent"]["result"], 42,
        "{first}"
    );
    let second = on_b.answer(&add(2)).await;
    assert_eq!(
        second["result"]["structuredContent"]["result"], 42,
        "{second}"
    );
    // Two calls in all, one on each replica: the third is refused wherever it comes.
    for (client, id) in [(&mut on_a, 3), (&mut on_b, 4)] {
        let refused = client.answer(&add(id)).await;
        assert_eq!(
            refused["result"]["_meta"]["status"], "rate_limited",
            "{refused}"
        );
    }
}

#[tokio::test]
async fn without_its_store_a_session_request_says_retry_and_health_says_why() {
    let mut redis = RedisServer::start();
    let prefix = prefix("outage");
    // Production's time limit on each command: how long a request waits for a store that
    // is gone is what this test looks at.
    let production = || Store::builder(redis.store_url()).prefix(&prefix);
    let (a, b) = (
        replica_of(production()).await,
        replica_of(production()).await,
    );
    let (on_a, on_b) = (http_of(&a), http_of(&b));
    let opened = Request::mcp(INITIALIZE).stream_from(&on_a).await;
    let session = opened
        .header("mcp-session-id")
        .expect("a session")
        .to_owned();

    redis.stop();
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let started = std::time::Instant::now();
    let mut refused = Request::mcp(list)
        .session(&session)
        .stream_from(&on_b)
        .await;
    assert_eq!(refused.status, 503);
    assert_eq!(refused.header("retry-after"), Some("1"));
    let answer = refused.next().await;
    assert_eq!(answer["id"], 1, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("retry"), "{answer}");
    // A session cannot be opened either: the initialize is refused, by its id.
    let mut not_opened = Request::mcp(INITIALIZE).stream_from(&on_b).await;
    assert_eq!(not_opened.status, 503);
    let answer = not_opened.next().await;
    assert_eq!(answer["id"], 0, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the store that keeps sessions"),
        "{answer}"
    );
    // Store commands time out after 500 ms; a client must not hang on one. The bound is
    // one a user tells from hanging, generous for a busy machine.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the request did not hang"
    );
    // The store is every replica's: readiness, which is a replica's own, stays; health says
    // the store is unreachable.
    assert_eq!(
        Request::get("/readyz").send_to(&on_b).await.status,
        200,
        "still ready"
    );
    let health = Request::get("/healthz").send_to(&on_b).await;
    assert_eq!(health.status, 200);
    assert_eq!(
        health.json(),
        serde_json::json!({"status": "ok", "ready": true, "store": "unreachable"})
    );

    redis.restart();
    wait_for("the store back on /healthz", async || {
        let health = Request::get("/healthz").send_to(&on_b).await.body;
        health.contains("\"store\":\"reachable\"")
    })
    .await;
}
