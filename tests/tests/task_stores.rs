//! Task stores of a user's own, as a database would be: every operation takes a moment,
//! several servers share one, and it can fail. Tasks still run, ask, answer and cancel.
//! On paused time: when a call becomes a task (after a moment) is the subject, so timers
//! fire in the order of their deadlines however busy the machine is.

use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tool_runtime::ask::{AskError, Elicited};
use tool_runtime::mcp::{McpServer, ServerInfo, ServerOptions};
use tool_runtime::tasks::{InMemoryTasks, StoreError, StoreFuture, Task, TaskOptions, TaskStore};
use tool_runtime::{tool, CallContext, Registry};
use tool_tests::{
    rpc, server, start_core_task, start_task, task_method, until, until_seen, Client, Signal,
    PATIENCE,
};

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
    went_on(&ctx).await
}

/// Asks whether to go on, telling `KEPT_GATE` first.
#[tool(task = "optional")]
async fn ask_while_kept(ctx: CallContext) -> Result<String, AskError> {
    ask_through(&KEPT_GATE, &ctx).await
}

/// Asks whether to go on, telling `REFUSED_GATE` first.
#[tool(task = "optional")]
async fn ask_while_refused(ctx: CallContext) -> Result<String, AskError> {
    ask_through(&REFUSED_GATE, &ctx).await
}

/// Works a moment, then asks whether to go on, telling `gate` as it asks (a gated store
/// keeps the task only then, so the question comes while it does).
async fn ask_through(gate: &Notify, ctx: &CallContext) -> Result<String, AskError> {
    tokio::time::sleep(Duration::from_millis(40)).await;
    gate.notify_one();
    went_on(ctx).await
}

async fn went_on(ctx: &CallContext) -> Result<String, AskError> {
    let answer = ctx.elicit::<Confirm>("Go on?").key("go").await?;
    let yes = matches!(answer, Elicited::Accepted(Confirm { confirm: true }));
    Ok(format!("went on: {yes}"))
}

/// Asks, stops waiting for the answer, then asks again under the same key and waits.
#[tool(task = "optional")]
async fn ask_twice(ctx: CallContext) -> Result<String, AskError> {
    tokio::time::sleep(Duration::from_millis(40)).await;
    let first = ctx.elicit::<Confirm>("Go on?").key("go");
    let gave_up = tokio::time::timeout(Duration::from_millis(200), first)
        .await
        .is_err();
    let answer = ctx.elicit::<Confirm>("Go on, really?").key("go").await?;
    let yes = matches!(answer, Elicited::Accepted(Confirm { confirm: true }));
    Ok(format!("gave up once: {gave_up}; then went on: {yes}"))
}

/// Asks, stops waiting for the answer after a moment, and works on.
#[tool(task = "optional")]
async fn impatient(ctx: CallContext) -> String {
    tokio::time::sleep(Duration::from_millis(60)).await;
    let question = ctx.elicit::<Confirm>("Quick, go on?").key("quick");
    let waited = tokio::time::timeout(Duration::from_millis(300), question).await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    format!("gave up: {}", waited.is_err())
}

/// Works for a while.
#[tool(task = "optional")]
async fn long_job(seconds: f64) -> String {
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    format!("slept {seconds}")
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

/// Told by `ask_while_kept` as it asks (each gated test has a gate of its own, since the
/// tests run at once).
static KEPT_GATE: Notify = Notify::const_new();
/// Told by `ask_while_refused` as it asks.
static REFUSED_GATE: Notify = Notify::const_new();

/// A store as a database would be: each operation waits a moment first (so its future is
/// pending when first polled), a change is seen by polling (no replica is told of
/// another's writes), keeping a task may wait for a gate, and it can be down or full.
struct Remote {
    tasks: InMemoryTasks,
    delay: Duration,
    /// When set, keeping a task waits until this gate is told.
    gate: Option<&'static Notify>,
    down: AtomicBool,
    /// When set, it has no room for a new task.
    full: AtomicBool,
    /// Tasks it no longer keeps, as if they had expired.
    lost: Mutex<HashSet<String>>,
    /// How many reads it has served, for a test to wait for the next one.
    reads: tokio::sync::watch::Sender<u64>,
}

impl Remote {
    fn new(delay: Duration) -> Remote {
        Remote {
            tasks: InMemoryTasks::default(),
            delay,
            gate: None,
            down: AtomicBool::new(false),
            full: AtomicBool::new(false),
            lost: Mutex::default(),
            reads: tokio::sync::watch::Sender::new(0),
        }
    }

    /// Waits until it has served a read after the `seen` first ones ([`PATIENCE`] at most).
    async fn read_after(&self, seen: u64) {
        let mut reads = self.reads.subscribe();
        let read = tokio::time::timeout(*PATIENCE, reads.wait_for(|n| *n > seen));
        assert!(
            read.await.is_ok(),
            "the store was not read within {:?}",
            *PATIENCE
        );
    }

    fn has_lost(&self, id: &str) -> bool {
        self.lost.lock().unwrap().contains(id)
    }

    /// A store that keeps a task only once `gate` is told.
    fn gated(gate: &'static Notify) -> Remote {
        Remote {
            gate: Some(gate),
            ..Remote::new(Duration::ZERO)
        }
    }

    async fn reach(&self) -> Result<(), StoreError> {
        tokio::time::sleep(self.delay).await;
        match self.down.load(Ordering::SeqCst) {
            true => Err(StoreError::new("connection refused by 10.0.0.9:6379")),
            false => Ok(()),
        }
    }
}

impl TaskStore for Remote {
    fn insert(&self, task: Task) -> StoreFuture<'_, Result<bool, StoreError>> {
        Box::pin(async move {
            if let Some(gate) = self.gate {
                gate.notified().await;
            }
            self.reach().await?;
            if self.full.load(Ordering::SeqCst) {
                return Ok(false);
            }
            self.tasks.insert(task).await
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<Option<Task>, StoreError>> {
        Box::pin(async move {
            self.reads.send_modify(|reads| *reads += 1);
            self.reach().await?;
            if self.has_lost(id) {
                return Ok(None);
            }
            self.tasks.get(id).await
        })
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: &'a mut (dyn FnMut(&mut Task) + Send),
    ) -> StoreFuture<'a, Result<Option<Task>, StoreError>> {
        Box::pin(async move {
            self.reach().await?;
            if self.has_lost(id) {
                return Ok(None);
            }
            self.tasks.update(id, change).await
        })
    }

    fn changed(&self, _id: &str) -> StoreFuture<'static, ()> {
        Box::pin(tokio::time::sleep(Duration::from_millis(25)))
    }
}

/// Options whose calls become tasks after 20 ms, kept in `store` (this process's memory
/// when none).
fn tasks_in(store: Option<&Arc<Remote>>) -> ServerOptions {
    let mut tasks = TaskOptions::default().promote_after(Duration::from_millis(20));
    if let Some(store) = store {
        tasks = tasks.store(Arc::clone(store));
    }
    ServerOptions::default().tasks(tasks)
}

/// Answers the task's question `go` with `confirm` (through `client`, with the request
/// id `id`), and waits for the task to complete; the text it answered.
async fn answer_go(client: &mut Client, id: u32, task: &str, confirm: bool) -> String {
    let answer = json!({"go": {"action": "accept", "content": {"confirm": confirm}}});
    let ack = task_method(
        client,
        id,
        "tasks/update",
        json!({"taskId": task, "inputResponses": answer}),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = until(client, id + 1, task, "completed").await;
    done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text: {done}"))
        .to_owned()
}

#[tokio::test(start_paused = true)]
async fn servers_sharing_a_store_serve_each_others_tasks() {
    let store = Arc::new(Remote::new(Duration::from_millis(5)));
    let (a, b) = (
        server(tasks_in(Some(&store))),
        server(tasks_in(Some(&store))),
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
    assert_eq!(answer_go(&mut on_b, 2, &task, true).await, "went on: true");

    // Cancelled through B: the tool running on A stops.
    let task = start_task(&mut on_a, 3, "endless_job", json!({})).await;
    assert!(ENDLESS_STARTED.fired());
    let ack = task_method(&mut on_b, 4, "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    until(&mut on_a, 500, &task, "cancelled").await;
    ENDLESS_STOPPED.wait("the tool on A was stopped").await;
}

#[tokio::test(start_paused = true)]
async fn a_question_asked_while_the_store_keeps_the_task_waits_in_the_task() {
    // The store keeps the task only once the tool asks: the tool runs on meanwhile, and its
    // question goes to the task, not to a retry the client would never send.
    let store = Arc::new(Remote::gated(&KEPT_GATE));
    let mut client = Client::new(&server(tasks_in(Some(&store))));
    let task = start_task(&mut client, 1, "ask_while_kept", json!({})).await;
    let asking = until(&mut client, 100, &task, "input_required").await;
    assert_eq!(
        asking["inputRequests"]["go"]["method"], "elicitation/create",
        "{asking}"
    );
    assert_eq!(
        answer_go(&mut client, 2, &task, false).await,
        "went on: false"
    );
}

#[tokio::test(start_paused = true)]
async fn a_question_asked_while_the_store_refuses_the_task_comes_back_for_a_retry() {
    // The store has no room: the call stays a call, and the question asked while it
    // decided goes back with the answer, for the client's retry.
    let store = Arc::new(Remote::gated(&REFUSED_GATE));
    store.full.store(true, Ordering::SeqCst);
    let mut client = Client::new(&server(tasks_in(Some(&store))));
    let answer = task_method(
        &mut client,
        1,
        "tools/call",
        json!({"name": "ask_while_refused", "arguments": {}}),
    )
    .await;
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    assert_eq!(
        result["inputRequests"]["go"]["params"]["message"], "Go on?",
        "{answer}"
    );
    assert!(result["requestState"].is_string(), "{answer}");
}

#[tokio::test(start_paused = true)]
async fn a_question_asked_again_under_its_key_is_not_forgotten_for_the_one_before() {
    let mut client = Client::new(&server(tasks_in(None)));
    let task = start_task(&mut client, 1, "ask_twice", json!({})).await;
    let message = |seen: &Value| seen["inputRequests"]["go"]["params"]["message"].clone();
    let asking = until_seen(&mut client, 100, &task, "asking again", |seen| {
        message(seen) == "Go on, really?"
    })
    .await;
    assert_eq!(asking["status"], "input_required", "{asking}");
    assert_eq!(
        answer_go(&mut client, 2, &task, true).await,
        "gave up once: true; then went on: true"
    );
}

#[tokio::test(start_paused = true)]
async fn a_question_the_tool_stops_waiting_for_leaves_the_task() {
    let store = Arc::new(Remote::new(Duration::from_millis(2)));
    let mut client = Client::new(&server(tasks_in(Some(&store))));
    let task = start_task(&mut client, 1, "impatient", json!({})).await;
    let asking = until(&mut client, 100, &task, "input_required").await;
    assert_eq!(
        asking["inputRequests"]["quick"]["params"]["message"], "Quick, go on?",
        "{asking}"
    );
    // The tool gave up on it and works on: the task no longer asks.
    let working = until(&mut client, 300, &task, "working").await;
    assert!(working.get("inputRequests").is_none(), "{working}");
    let cancelled = task_method(&mut client, 2, "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
}

#[tokio::test(start_paused = true)]
async fn at_2025_11_25_a_task_in_a_slow_store_is_listed_and_its_result_read() {
    let store = Arc::new(Remote::new(Duration::from_millis(5)));
    let mut client = Client::new(&server(tasks_in(Some(&store)))).past_handshake();
    let task = start_core_task(&mut client, 1, "long_job", json!({"seconds": 0.1})).await;
    let listed = client.call(&rpc::request(2, "tasks/list", json!({}))).await;
    assert_eq!(
        tool_tests::fields(&listed["result"]["tasks"], "taskId"),
        vec![task.as_str()],
        "{listed}"
    );
    client.send(&rpc::request(3, "tasks/result", json!({"taskId": task})));
    // Its status may come first, where the connection's unsolicited messages go.
    let mut result = client.next().await;
    while result.get("id").is_none() {
        result = client.next().await;
    }
    assert_eq!(
        result["result"]["content"][0]["text"], "slept 0.1",
        "{result}"
    );
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        task.as_str()
    );
}

#[tokio::test(start_paused = true)]
async fn at_2025_11_25_a_list_cursor_keeps_its_place_when_its_task_is_gone() {
    let store = Arc::new(Remote::new(Duration::ZERO));
    let tasks = TaskOptions::default().store(Arc::clone(&store));
    let server = McpServer::with_options(
        Registry::new().unwrap(),
        ServerInfo::new("stores", "1"),
        ServerOptions::default().tasks(tasks).page_size(1),
    );
    let mut client = Client::new(&server).past_handshake();
    let first = start_core_task(&mut client, 1, "long_job", json!({"seconds": 0.01})).await;
    let second = start_core_task(&mut client, 2, "long_job", json!({"seconds": 0.01})).await;
    let page = client.call(&rpc::request(3, "tasks/list", json!({}))).await;
    assert_eq!(
        tool_tests::fields(&page["result"]["tasks"], "taskId"),
        vec![first.as_str()],
        "{page}"
    );
    let cursor = page["result"]["nextCursor"].clone();
    // The first task expires, and a listing from the start takes it off the list.
    store.lost.lock().unwrap().insert(first.clone());
    let again = client.call(&rpc::request(4, "tasks/list", json!({}))).await;
    assert_eq!(
        tool_tests::fields(&again["result"]["tasks"], "taskId"),
        vec![second.as_str()],
        "{again}"
    );
    let next = client
        .call(&rpc::request(5, "tasks/list", json!({"cursor": cursor})))
        .await;
    assert_eq!(
        tool_tests::fields(&next["result"]["tasks"], "taskId"),
        vec![second.as_str()],
        "{next}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_store_that_fails_gets_an_internal_error_that_names_no_detail() {
    let store = Arc::new(Remote::new(Duration::ZERO));
    let mut client = Client::new(&server(tasks_in(Some(&store))));
    let task = start_task(&mut client, 1, "long_job", json!({"seconds": 30})).await;
    store.down.store(true, Ordering::SeqCst);
    let expected = json!({"code": -32603,
        "message": "Internal error: the server could not reach its task store; retry shortly"});
    for (id, method, params) in [
        (2, "tasks/get", json!({"taskId": task})),
        (
            3,
            "tasks/update",
            json!({"taskId": task, "inputResponses": {}}),
        ),
        (4, "tasks/cancel", json!({"taskId": task})),
    ] {
        let failed = task_method(&mut client, id, method, params).await;
        assert_eq!(failed["error"], expected, "{method}: {failed}");
    }
    // A call that would become a task goes on as a call.
    let call = task_method(
        &mut client,
        5,
        "tools/call",
        json!({"name": "long_job", "arguments": {"seconds": 0.1}}),
    )
    .await;
    assert_eq!(call["result"]["content"][0]["text"], "slept 0.1", "{call}");

    // 2025-11-25: a call that asks for a task the store cannot keep is refused, a list
    // that cannot be read is refused, and a `tasks/result` that cannot read its task is
    // answered after a few tries.
    store.down.store(false, Ordering::SeqCst);
    let mut client = Client::new(&server(tasks_in(Some(&store)))).past_handshake();
    let kept = start_core_task(&mut client, 6, "long_job", json!({"seconds": 30})).await;
    store.down.store(true, Ordering::SeqCst);
    let refused = client
        .call(&rpc::task_call(7, "long_job", json!({"seconds": 30})))
        .await;
    assert_eq!(refused["error"], expected, "{refused}");
    let listed = client.call(&rpc::request(8, "tasks/list", json!({}))).await;
    assert_eq!(listed["error"], expected, "{listed}");
    // A `tasks/result` already waiting when the store goes down.
    store.down.store(false, Ordering::SeqCst);
    let reads = *store.reads.borrow();
    client.send(&rpc::request(9, "tasks/result", json!({"taskId": kept})));
    store.read_after(reads).await;
    tool_tests::settle().await;
    assert!(client.nothing_yet(), "it waits for the task");
    store.down.store(true, Ordering::SeqCst);
    let result = client.next().await;
    assert_eq!(result["id"], 9, "{result}");
    assert_eq!(result["error"], expected, "{result}");
    // Back up: only the task it kept is listed.
    store.down.store(false, Ordering::SeqCst);
    let listed = client
        .call(&rpc::request(10, "tasks/list", json!({})))
        .await;
    assert_eq!(
        tool_tests::fields(&listed["result"]["tasks"], "taskId"),
        vec![kept.as_str()],
        "{listed}"
    );
}
