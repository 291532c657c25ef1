//! Servers that share a Redis store serve each other's state: tasks, request states,
//! large outputs, rate limits and budgets. Each server has a store connection of its own,
//! as replicas in separate processes would, against a real `redis-server`.

use serde_json::{json, Value};
use std::time::Duration;
use tool_runtime::ask::{AskError, Elicited};
use tool_runtime::mcp::{McpServer, ServerOptions};
use tool_runtime::store::Store;
use tool_runtime::tasks::TaskOptions;
use tool_runtime::{tool, CallContext};
use tool_tests::redis::RedisServer;
use tool_tests::{per_request, server, start_task, task_method, until, Client, Signal};

/// Whether to go ahead.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    /// Go ahead?
    confirm: bool,
}

/// Works a moment, then asks whether to go on.
#[tool(task = "optional")]
async fn ask_later(ctx: CallContext) -> Result<String, AskError> {
    tokio::time::sleep(Duration::from_millis(40)).await;
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

/// A server of its own store connection to `redis` under `prefix`, whose calls become
/// tasks after 20 ms.
async fn replica(redis: &RedisServer, prefix: &str) -> McpServer {
    let store = Store::builder(redis.url())
        .prefix(prefix)
        .connect()
        .await
        .expect("the store connects");
    let tasks = TaskOptions::default().promote_after(Duration::from_millis(20));
    server(ServerOptions::default().tasks(tasks).store(store))
}

/// A prefix no other test uses.
fn prefix(test: &str) -> String {
    format!("{test}-{}", std::process::id())
}

#[tokio::test]
async fn replicas_serve_each_others_tasks() {
    let redis = RedisServer::start();
    let prefix = prefix("tasks");
    let (a, b) = (
        replica(&redis, &prefix).await,
        replica(&redis, &prefix).await,
    );
    let (mut on_a, mut on_b) = (Client::new(&a), Client::new(&b));

    // Started on A; B sees its question, B's answer reaches the tool running on A, and B
    // reads its result.
    let task = start_task(&mut on_a, 1, "ask_later", json!({})).await;
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
    let other = replica(&redis, &format!("{prefix}-other")).await;
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
    let redis = RedisServer::start();
    let prefix = prefix("states");
    let (a, b) = (
        replica(&redis, &prefix).await,
        replica(&redis, &prefix).await,
    );
    let capabilities = json!({"elicitation": {}});
    let call = |id: u32, extra: Value| {
        let mut params = json!({"name": "two_steps", "arguments": {}});
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        per_request(id, "tools/call", params, capabilities.clone())
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
    let other = replica(&redis, &format!("{prefix}-other")).await;
    let refused = Client::new(&other)
        .call(&call(
            4,
            json!({"inputResponses": color, "requestState": state}),
        ))
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}
