//! Tower layers around tool calls: what a layer sees and may change, for which tools it
//! runs, in which order, and `tower`'s own layers (limits, time limits, load shedding,
//! retries) working on calls unchanged.

use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tool_runtime::context::{Caller, Protocol};
use tool_runtime::layers::{CallRequest, Next, ToolAnswer, Tools};
use tool_runtime::registry::{RegistryBuilder, RegistryError};
use tool_runtime::{tool, CallError, Cancellation, Registry};
use tool_tests::layers::{around, Around, Run};
use tool_tests::{rpc, server_over, Client, Signal};

/// Add two integers.
#[tool(read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Say a word back.
#[tool]
fn echo_word(word: String) -> String {
    word
}

/// How many times `flaky` ran.
static FLAKY_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Fail every other call.
#[tool(idempotent)]
fn flaky() -> Result<&'static str, String> {
    match FLAKY_RUNS.fetch_add(1, Ordering::SeqCst) % 2 {
        0 => Err("the backend hiccupped".to_owned()),
        _ => Ok("steady"),
    }
}

/// How many `occupy` calls are running, and the most that ever ran at once.
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static MOST_AT_ONCE: AtomicUsize = AtomicUsize::new(0);
static OCCUPY_STARTED: Signal = Signal::new();
static RELEASE_OCCUPY: Signal = Signal::new();

/// Hold a seat until the test lets go.
#[tool]
async fn occupy() -> &'static str {
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    MOST_AT_ONCE.fetch_max(now, Ordering::SeqCst);
    OCCUPY_STARTED.fire();
    RELEASE_OCCUPY.wait("the test to let go").await;
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    "done"
}

static HOLD_STARTED: Signal = Signal::new();
static HOLD_RELEASE: Signal = Signal::new();

/// Hold until the test lets go (for load shedding).
#[tool]
async fn hold() -> &'static str {
    HOLD_STARTED.fire();
    HOLD_RELEASE.wait("the test to let go").await;
    "held"
}

static NEVER: Signal = Signal::new();

/// Never finish.
#[tool]
async fn never() -> &'static str {
    NEVER
        .wait("nothing: the layer's time limit stops it first")
        .await;
    "never"
}

static CANCEL_WAITING: Signal = Signal::new();
static CANCEL_SEEN: Signal = Signal::new();

/// Work until cancelled (a sync tool, which sees its cancellation as a flag).
#[tool]
fn until_cancelled(cancellation: Cancellation) -> &'static str {
    CANCEL_WAITING.fire();
    let deadline = std::time::Instant::now() + *tool_tests::PATIENCE;
    while !cancellation.is_cancelled() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    if cancellation.is_cancelled() {
        CANCEL_SEEN.fire();
    }
    "stopped"
}

/// Note a line, through the layer named "journal".
#[tool(layers = ["journal"])]
fn note(line: String) -> usize {
    line.len()
}

/// A layer that passes every call on.
fn pass_through() -> impl tower::Layer<Next, Service = Around<Next, Run>> + Clone {
    around(|call, mut next| Box::pin(async move { tower::Service::call(&mut next, call).await }))
}

/// A layer that writes `label` and the tool's name to `trail` before passing the call on.
fn recording(
    label: &'static str,
    trail: &Arc<Mutex<Vec<String>>>,
) -> impl tower::Layer<Next, Service = Around<Next, Run>> + Clone {
    let trail = Arc::clone(trail);
    around(move |call, mut next| {
        trail
            .lock()
            .unwrap()
            .push(format!("{label}:{}", call.tool().name()));
        Box::pin(async move { tower::Service::call(&mut next, call).await })
    })
}

/// A builder with the layer every tool of this binary names given (a pass-through).
fn builder() -> RegistryBuilder {
    Registry::builder().named_layer("journal", pass_through())
}

#[tokio::test]
async fn a_layer_sees_each_call_with_its_tool_arguments_and_caller() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let registry = builder()
        .layer(around(move |call, mut next| {
            let subject = call.caller().subject().unwrap_or("nobody").to_owned();
            let line = format!("{} {} by {subject}", call.tool().name(), call.arguments());
            sink.lock().unwrap().push(line);
            Box::pin(async move { tower::Service::call(&mut next, call).await })
        }))
        .build()
        .unwrap();
    let ada = Caller::http(None).with_subject("ada", ["tools"]);
    let result = registry.call_for(ada, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(result.output(), Some(&json!(5)));
    assert_eq!(
        *seen.lock().unwrap(),
        [r#"add {"a":2,"b":3} by ada"#.to_owned()]
    );
}

#[tokio::test]
async fn arguments_a_layer_changes_reach_the_tool_and_are_checked_again() {
    let registry = builder()
        .layer_for(
            "echo_word",
            around(|mut call, mut next| {
                let word = call.arguments()["word"].as_str().unwrap_or_default();
                let changed = match word {
                    "number" => json!(7),
                    other => json!(other.to_uppercase()),
                };
                call.arguments_mut()["word"] = changed;
                Box::pin(async move { tower::Service::call(&mut next, call).await })
            }),
        )
        .build()
        .unwrap();
    let result = registry.call("echo_word", json!({"word": "quiet"})).await;
    assert_eq!(result.output(), Some(&json!("QUIET")));
    // What the caller sent is what the result records.
    assert_eq!(result.input(), &json!({"word": "quiet"}));

    let result = registry.call("echo_word", json!({"word": "number"})).await;
    let error = result.error().expect("a number is not a word");
    assert_eq!(error.status(), "invalid_arguments");
    assert!(error.to_string().contains("'word'"), "{error}");
}

#[tokio::test]
async fn arguments_that_do_not_fit_never_reach_a_layer() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let registry = builder()
        .layer(around(move |call, mut next| {
            counted.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move { tower::Service::call(&mut next, call).await })
        }))
        .build()
        .unwrap();
    let result = registry.call("add", json!({"a": "two", "b": 3})).await;
    assert_eq!(result.error().unwrap().status(), "invalid_arguments");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_layer_may_change_the_answer_or_give_its_own() {
    let registry = builder()
        .layer_for(
            "add",
            around(|call, mut next| {
                Box::pin(async move {
                    let mut answer = tower::Service::call(&mut next, call).await?;
                    let sum = answer.value().as_i64().unwrap_or_default();
                    *answer.value_mut() = json!({"sum": sum, "checked": true});
                    Ok(answer)
                })
            }),
        )
        .layer_for(
            "echo_word",
            around(|_call, _next| Box::pin(async { Ok(ToolAnswer::new(json!("from the layer"))) })),
        )
        .build()
        .unwrap();
    let result = registry.call("add", json!({"a": 1, "b": 1})).await;
    assert_eq!(result.output(), Some(&json!({"sum": 2, "checked": true})));
    let result = registry.call("echo_word", json!({"word": "hi"})).await;
    assert_eq!(result.output(), Some(&json!("from the layer")));
}

#[tokio::test]
async fn a_deny_rule_by_subject_refuses_with_words_a_model_reads() {
    let registry = builder()
        .layer(around(|call, mut next| {
            if call.caller().subject() == Some("eve") {
                let refusal = CallError::refused(
                    call.tool().name(),
                    "eve may not call tools on this server; ask an administrator",
                );
                return Box::pin(async move { Err(refusal) });
            }
            Box::pin(async move { tower::Service::call(&mut next, call).await })
        }))
        .build()
        .unwrap();
    let eve = Caller::http(None).with_subject("eve", ["tools"]);
    let result = registry.call_for(eve, "add", json!({"a": 1, "b": 2})).await;
    let error = result.error().expect("eve is refused");
    assert_eq!(error.status(), "refused");
    assert_eq!(
        error.to_string(),
        "the call of 'add' was stopped: eve may not call tools on this server; ask an \
         administrator"
    );
    let ada = Caller::http(None).with_subject("ada", ["tools"]);
    let result = registry.call_for(ada, "add", json!({"a": 1, "b": 2})).await;
    assert_eq!(result.output(), Some(&json!(3)));
}

#[tokio::test]
async fn layers_run_in_the_order_given_and_only_for_the_tools_they_pick() {
    let trail = Arc::new(Mutex::new(Vec::new()));
    let registry = builder()
        .layer(recording("outer", &trail))
        .layer_for(["add", "flaky"], recording("pair", &trail))
        .layer_for(
            Tools::matching(|tool| tool.annotations().read_only == Some(true)),
            recording("read-only", &trail),
        )
        .layer_for("echo_word", recording("echo", &trail))
        .build()
        .unwrap();
    registry.call("add", json!({"a": 1, "b": 2})).await;
    registry.call("echo_word", json!({"word": "x"})).await;
    assert_eq!(
        *trail.lock().unwrap(),
        [
            "outer:add",
            "pair:add",
            "read-only:add",
            "outer:echo_word",
            "echo:echo_word"
        ]
    );
}

#[tokio::test]
async fn a_layer_given_for_several_tools_is_one_service_for_all() {
    let made = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&made);
    let layer = tower::layer::layer_fn(move |inner: Next| {
        counted.fetch_add(1, Ordering::SeqCst);
        inner
    });
    let registry = builder()
        .layer_for(["add", "echo_word"], layer)
        .build()
        .unwrap();
    registry.call("add", json!({"a": 1, "b": 2})).await;
    registry.call("echo_word", json!({"word": "x"})).await;
    assert_eq!(made.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_tool_goes_through_the_layer_it_names() {
    let trail = Arc::new(Mutex::new(Vec::new()));
    let registry = Registry::builder()
        .named_layer("journal", recording("journal", &trail))
        .build()
        .unwrap();
    assert_eq!(registry.get("note").unwrap().layers(), ["journal"]);
    let result = registry.call("note", json!({"line": "hello"})).await;
    assert_eq!(result.output(), Some(&json!(5)));
    registry.call("add", json!({"a": 1, "b": 2})).await;
    assert_eq!(*trail.lock().unwrap(), ["journal:note"]);
}

#[test]
fn a_layer_for_a_tool_the_registry_lacks_or_a_layer_never_given_stops_the_build() {
    let error = builder()
        .layer_for("ad", pass_through())
        .build()
        .unwrap_err();
    assert_eq!(
        error,
        RegistryError::LayerForUnknownTool {
            name: "ad".to_owned(),
            suggestion: Some("add".to_owned()),
        }
    );

    let error = Registry::builder().build().unwrap_err().to_string();
    assert_eq!(
        error,
        "tool `note` goes through the layer `journal`, but the registry was not given a \
         layer of that name; give it with RegistryBuilder::named_layer"
    );

    let error = Registry::builder()
        .named_layer("jornal", pass_through())
        .build()
        .unwrap_err()
        .to_string();
    assert!(error.contains("did you mean `jornal`?"), "{error}");

    let error = builder()
        .named_layer("the journal", pass_through())
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("a layer cannot be named `the journal`"),
        "{error}"
    );
}

#[tokio::test]
async fn towers_concurrency_limit_on_one_tool_bounds_its_calls() {
    let registry = Arc::new(
        builder()
            .layer_for("occupy", tower::limit::ConcurrencyLimitLayer::new(2))
            .build()
            .unwrap(),
    );
    let calls: Vec<_> = (0..5)
        .map(|_| {
            let registry = Arc::clone(&registry);
            tokio::spawn(async move { registry.call("occupy", json!({})).await })
        })
        .collect();
    OCCUPY_STARTED.wait("a call of occupy to start").await;
    // On this one-thread runtime, yielding lets every spawned call run until it waits: on
    // the tool's release, or on the limit. Without the limit all five would be running.
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert_eq!(RUNNING.load(Ordering::SeqCst), 2);
    RELEASE_OCCUPY.fire();
    for call in calls {
        assert_eq!(call.await.unwrap().output(), Some(&json!("done")));
    }
    assert_eq!(MOST_AT_ONCE.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn towers_load_shedding_refuses_past_the_limit_and_says_to_call_again() {
    let registry = Arc::new(
        builder()
            .layer_for(
                "hold",
                tower::ServiceBuilder::new()
                    .load_shed()
                    .concurrency_limit(1),
            )
            .build()
            .unwrap(),
    );
    let first = {
        let registry = Arc::clone(&registry);
        tokio::spawn(async move { registry.call("hold", json!({})).await })
    };
    HOLD_STARTED.wait("the first call to hold").await;
    let second = registry.call("hold", json!({})).await;
    let error = second.error().expect("the second call is shed");
    assert_eq!(error.status(), "refused");
    assert!(
        matches!(
            error,
            CallError::Refused {
                retry_after: Some(_),
                ..
            }
        ),
        "{error:?}"
    );
    HOLD_RELEASE.fire();
    assert_eq!(first.await.unwrap().output(), Some(&json!("held")));
}

#[tokio::test(start_paused = true)]
async fn towers_time_limit_stops_a_call_and_says_to_call_again() {
    let registry = builder()
        .layer_for(
            "never",
            tower::timeout::TimeoutLayer::new(Duration::from_secs(3)),
        )
        .build()
        .unwrap();
    let started = tokio::time::Instant::now();
    let result = registry.call("never", json!({})).await;
    assert_eq!(started.elapsed(), Duration::from_secs(3));
    let error = result.error().expect("stopped by the time limit");
    assert_eq!(
        error.to_string(),
        "the call of 'never' was stopped: it did not finish within the time limit the server \
         sets around it; call it again in 1s"
    );
}

#[tokio::test(start_paused = true)]
async fn towers_rate_limit_which_is_not_clone_spaces_calls() {
    let registry = builder()
        .layer_for(
            "add",
            tower::limit::RateLimitLayer::new(1, Duration::from_secs(60)),
        )
        .build()
        .unwrap();
    let started = tokio::time::Instant::now();
    let first = registry.call("add", json!({"a": 1, "b": 1})).await;
    assert_eq!(started.elapsed(), Duration::ZERO);
    let second = registry.call("add", json!({"a": 2, "b": 2})).await;
    assert_eq!(second.output(), Some(&json!(4)));
    assert_eq!(first.output(), Some(&json!(2)));
    assert!(started.elapsed() >= Duration::from_secs(60));
}

/// Retries a call whose tool failed, up to as many times as it holds, when the tool says
/// calling it again is harmless.
#[derive(Clone)]
struct RetryIdempotent(u8);

impl tower::retry::Policy<CallRequest, ToolAnswer, CallError> for RetryIdempotent {
    type Future = std::future::Ready<()>;

    fn retry(
        &mut self,
        call: &mut CallRequest,
        result: &mut Result<ToolAnswer, CallError>,
    ) -> Option<Self::Future> {
        let failed = matches!(result, Err(CallError::Failed { .. }));
        let idempotent = call.tool().annotations().idempotent == Some(true);
        if !(failed && idempotent) || self.0 == 0 {
            return None;
        }
        self.0 -= 1;
        Some(std::future::ready(()))
    }

    fn clone_request(&mut self, call: &CallRequest) -> Option<CallRequest> {
        Some(call.clone())
    }
}

#[tokio::test]
async fn towers_retry_runs_a_flaky_idempotent_tool_again() {
    let registry = builder()
        .layer_for("flaky", tower::retry::RetryLayer::new(RetryIdempotent(3)))
        .build()
        .unwrap();
    let runs_before = FLAKY_RUNS.load(Ordering::SeqCst);
    let result = registry.call("flaky", json!({})).await;
    assert_eq!(result.output(), Some(&json!("steady")));
    assert_eq!(FLAKY_RUNS.load(Ordering::SeqCst) - runs_before, 2);
}

#[tokio::test]
async fn over_mcp_a_refusal_is_a_tool_error_marked_refused() {
    let registry = builder()
        .layer_for(
            "add",
            around(|call, _next| {
                let refusal = CallError::refused(call.tool().name(), "adding is paused");
                Box::pin(async move { Err(refusal) })
            }),
        )
        .build()
        .unwrap();
    let server = server_over(registry, Default::default());
    let mut client = Client::initialized(&server);
    let answer = client
        .answer(&rpc::call(2, "add", json!({"a": 1, "b": 2})))
        .await;
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    assert_eq!(result["_meta"]["status"], "refused", "{answer}");
    assert_eq!(
        result["content"][0]["text"],
        "the call of 'add' was stopped: adding is paused"
    );
}

#[tokio::test]
async fn a_layer_sees_the_request_id_and_the_protocol_it_came_by() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let registry = builder()
        .layer(around(move |call, mut next| {
            let id = call.request_id().map(str::to_owned);
            sink.lock().unwrap().push((id, call.protocol()));
            Box::pin(async move { tower::Service::call(&mut next, call).await })
        }))
        .build()
        .unwrap();
    registry.call("add", json!({"a": 1, "b": 2})).await;
    let server = server_over(registry, Default::default());
    let mut handshake = Client::initialized(&server);
    handshake
        .answer(&rpc::call("first", "add", json!({"a": 1, "b": 2})))
        .await;
    let mut per_request = Client::new(&server);
    per_request
        .answer(&rpc::per_request(
            12,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
            json!({}),
        ))
        .await;
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (None, Protocol::Direct),
            (Some(r#""first""#.to_owned()), Protocol::McpHandshake),
            (Some("12".to_owned()), Protocol::McpPerRequest),
        ]
    );
}

#[tokio::test]
async fn a_cancelled_request_reaches_the_tool_through_its_layers() {
    let registry = builder()
        .layer(pass_through())
        .layer_for("until_cancelled", pass_through())
        .build()
        .unwrap();
    let server = server_over(registry, Default::default());
    let mut client = Client::initialized(&server);
    client.send(&rpc::call(7, "until_cancelled", json!({})));
    CANCEL_WAITING
        .wait("the tool to wait for its cancellation")
        .await;
    client.send(&rpc::notification(
        "notifications/cancelled",
        json!({"requestId": 7}),
    ));
    CANCEL_SEEN.wait("the tool to see its cancellation").await;
}
