//! Answers of read-only tools kept and given again (`#[tool(read_only, cache = "...")]`):
//! hits, expiry, one answer per caller unless the tool's are the same for everyone, one run
//! for a stampede of identical calls, errors never kept, bounds, and a list change.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tool_runtime::catalog::CachePolicy;
use tool_runtime::context::Caller;
use tool_runtime::layers::CacheLimits;
use tool_runtime::registry::RegistryError;
use tool_runtime::{tool, DynamicTool, Registry};
use tool_tests::{rpc, server_over, Client, Signal};

/// No arguments, for tools made at run time.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// How many times each tool ran for each key (its city): tests run side by side, each
/// with cities of its own.
static RUNS: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);

fn ran(key: &str) -> usize {
    let mut runs = RUNS.lock().unwrap();
    let runs = runs.get_or_insert_with(HashMap::new);
    let count = runs.entry(key.to_owned()).or_default();
    *count += 1;
    *count
}

fn runs_of(key: &str) -> usize {
    RUNS.lock()
        .unwrap()
        .as_ref()
        .and_then(|runs| runs.get(key).copied())
        .unwrap_or(0)
}

/// The forecast for a city, which depends on who asks (their own units, say).
#[tool(read_only, cache = "30s")]
fn forecast(city: String, days: Option<u8>) -> String {
    let run = ran(&format!("forecast:{city}"));
    format!("{city}, {} days: sunny (run {run})", days.unwrap_or(1))
}

/// The sunrise in a city: the same for everyone.
#[tool(read_only, cache = "1m", same_for_everyone)]
fn sunrise(city: String) -> String {
    let run = ran(&format!("sunrise:{city}"));
    format!("{city}: 06:12 (run {run})")
}

/// Fails the first time for each city.
#[tool(read_only, cache = "30s", same_for_everyone)]
fn first_fails(city: String) -> Result<String, String> {
    match ran(&format!("first_fails:{city}")) {
        1 => Err("the station did not answer".to_owned()),
        run => Ok(format!("{city} (run {run})")),
    }
}

static SLOW_STARTED: Signal = Signal::new();
static SLOW_RELEASE: Signal = Signal::new();

/// A slow lookup: holds until the test lets go.
#[tool(read_only, cache = "30s", same_for_everyone)]
async fn slow_lookup(city: String) -> String {
    let run = ran(&format!("slow_lookup:{city}"));
    SLOW_STARTED.fire();
    SLOW_RELEASE.wait("the test to let the lookup go").await;
    format!("{city} (run {run})")
}

fn call(registry: &Registry, tool: &str, arguments: Value) -> tool_runtime::ToolResult {
    tool_tests::runtime().block_on(registry.call(tool, arguments))
}

#[test]
fn the_same_arguments_get_the_kept_answer_whatever_their_order() {
    let registry = Registry::new().unwrap();
    let first = call(&registry, "forecast", json!({"city": "Oslo", "days": 3}));
    let second = call(&registry, "forecast", json!({"days": 3, "city": "Oslo"}));
    assert_eq!(first.output(), second.output());
    assert!(!first.is_cached());
    assert!(second.is_cached());
    assert_eq!(runs_of("forecast:Oslo"), 1);

    // Other arguments are another call.
    let other = call(&registry, "forecast", json!({"city": "Oslo", "days": 4}));
    assert!(!other.is_cached());
    assert_eq!(runs_of("forecast:Oslo"), 2);
}

#[tokio::test(start_paused = true)]
async fn a_kept_answer_expires() {
    let registry = Registry::new().unwrap();
    let arguments = json!({"city": "Lima"});
    registry.call("forecast", arguments.clone()).await;
    tokio::time::advance(Duration::from_secs(29)).await;
    assert!(registry
        .call("forecast", arguments.clone())
        .await
        .is_cached());
    tokio::time::advance(Duration::from_secs(2)).await;
    let after = registry.call("forecast", arguments).await;
    assert!(!after.is_cached());
    assert_eq!(runs_of("forecast:Lima"), 2);
}

#[test]
fn each_caller_has_their_own_answer_unless_it_is_the_same_for_everyone() {
    let registry = Registry::new().unwrap();
    let as_subject = |subject: &str, tool: &str| {
        let caller = Caller::http(None).with_subject(subject, ["weather"]);
        tool_tests::runtime().block_on(registry.call_for(caller, tool, json!({"city": "Pune"})))
    };
    assert!(!as_subject("ada", "forecast").is_cached());
    assert!(!as_subject("eve", "forecast").is_cached());
    assert!(as_subject("ada", "forecast").is_cached());
    assert_eq!(runs_of("forecast:Pune"), 2);

    assert!(!as_subject("ada", "sunrise").is_cached());
    assert!(as_subject("eve", "sunrise").is_cached());
    assert_eq!(runs_of("sunrise:Pune"), 1);
}

#[tokio::test]
async fn a_hundred_identical_calls_at_once_run_the_tool_once() {
    let registry = Arc::new(Registry::new().unwrap());
    let calls: Vec<_> = (0..100)
        .map(|_| {
            let registry = Arc::clone(&registry);
            tokio::spawn(async move { registry.call("slow_lookup", json!({"city": "Kyiv"})).await })
        })
        .collect();
    SLOW_STARTED.wait("the first lookup to start").await;
    // On this one-thread runtime, yielding lets every spawned call run until it waits:
    // without the cache's one run, each would be in the tool by now.
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert_eq!(runs_of("slow_lookup:Kyiv"), 1);
    SLOW_RELEASE.fire();
    let mut cached = 0;
    for call in calls {
        let result = call.await.unwrap();
        assert_eq!(result.output(), Some(&json!("Kyiv (run 1)")));
        cached += usize::from(result.is_cached());
    }
    assert_eq!(cached, 99);
    assert_eq!(runs_of("slow_lookup:Kyiv"), 1);
}

#[test]
fn errors_are_never_kept() {
    let registry = Registry::new().unwrap();
    let failed = call(&registry, "first_fails", json!({"city": "Quito"}));
    assert!(failed.is_error());
    let second = call(&registry, "first_fails", json!({"city": "Quito"}));
    assert_eq!(second.output(), Some(&json!("Quito (run 2)")));
    assert!(!second.is_cached());
    assert!(call(&registry, "first_fails", json!({"city": "Quito"})).is_cached());
}

#[test]
fn the_cache_holds_no_more_than_its_bounds() {
    let registry = Registry::builder()
        .cache_limits(CacheLimits::default().entries(1))
        .build()
        .unwrap();
    call(&registry, "sunrise", json!({"city": "Accra"}));
    call(&registry, "sunrise", json!({"city": "Dakar"}));
    // Accra's answer went to make room for Dakar's.
    assert!(!call(&registry, "sunrise", json!({"city": "Accra"})).is_cached());
    assert_eq!(runs_of("sunrise:Accra"), 2);
}

#[test]
fn a_change_to_the_list_of_tools_empties_the_cache() {
    let registry = Registry::new().unwrap();
    call(&registry, "sunrise", json!({"city": "Cusco"}));
    assert!(call(&registry, "sunrise", json!({"city": "Cusco"})).is_cached());
    let extra = DynamicTool::new("extra", "Extra.", |_: Nothing| async { Ok::<_, String>(1) });
    registry.add_tool(extra.unwrap()).unwrap();
    assert!(!call(&registry, "sunrise", json!({"city": "Cusco"})).is_cached());
}

#[test]
fn a_tool_made_at_run_time_keeps_answers_only_when_read_only() {
    let counted = Arc::new(Mutex::new(0));
    let runs = Arc::clone(&counted);
    let lookup = DynamicTool::new("lookup", "Look up.", move |_: Nothing| {
        *runs.lock().unwrap() += 1;
        async { Ok::<_, String>("found") }
    })
    .unwrap()
    .read_only()
    .cache(CachePolicy::new(Duration::from_secs(5)));
    let registry = Registry::builder().tool(lookup).build().unwrap();
    call(&registry, "lookup", json!({}));
    assert!(call(&registry, "lookup", json!({})).is_cached());
    assert_eq!(*counted.lock().unwrap(), 1);

    let writer = DynamicTool::new("write", "Write.", |_: Nothing| async { Ok::<_, String>(1) })
        .unwrap()
        .cache(CachePolicy::new(Duration::from_secs(5)));
    let error = Registry::builder().tool(writer).build().unwrap_err();
    assert_eq!(
        error,
        RegistryError::CacheNotReadOnly {
            tool: "write".to_owned()
        }
    );
}

#[tokio::test]
async fn over_mcp_a_kept_answer_is_marked_in_meta() {
    let server = server_over(Registry::new().unwrap(), Default::default());
    let mut client = Client::initialized(&server);
    let arguments = json!({"city": "Bern"});
    let first = client
        .answer(&rpc::call(1, "sunrise", arguments.clone()))
        .await;
    assert!(first["result"].get("_meta").is_none(), "{first}");
    let second = client.answer(&rpc::call(2, "sunrise", arguments)).await;
    assert_eq!(second["result"]["_meta"]["cached"], true, "{second}");
    assert_eq!(second["result"]["content"], first["result"]["content"]);
}
