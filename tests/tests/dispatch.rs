//! Dispatch: argument errors a model can act on, unknown tools, panics, sync tools kept off
//! the executor, injected state, and tools added at run time.

use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;
use tool_runtime::registry::RegistryError;
use tool_runtime::{tool, CallContext, CallError, DynamicTool, Registry, State};

#[derive(Debug, Deserialize, schemars::JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    #[default]
    Metric,
    Imperial,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Filter {
    limit: u8,
    tags: Vec<String>,
}

/// Get the current weather for a city.
#[tool]
async fn get_weather(
    city: String,
    #[arg(default)] units: Units,
    #[arg(default = false)] include_forecast: bool,
) -> String {
    format!("{city} {units:?} {include_forecast}")
}

/// Filter things.
#[tool]
fn filtered(filter: Filter, count: u8) -> String {
    format!("{} {} {count}", filter.limit, filter.tags.len())
}

/// Always panics.
#[tool]
fn explode() -> u8 {
    panic!("secret internal detail: /home/user/db.sqlite")
}

/// Panics after an await.
#[tool]
async fn explode_later() -> u8 {
    tokio::task::yield_now().await;
    panic!("another secret")
}

/// A clock of shared state.
pub struct Counter {
    calls: AtomicUsize,
}

/// Count calls in shared state.
#[tool]
fn count_call(counter: State<Counter>, context: CallContext) -> usize {
    assert!(context.state::<Counter>().is_some());
    counter.calls.fetch_add(1, Ordering::SeqCst) + 1
}

/// A channel the blocking test uses to release the sync tool.
pub struct Release {
    receiver: std::sync::Mutex<mpsc::Receiver<()>>,
    sender: std::sync::Mutex<mpsc::Sender<()>>,
}

/// Blocks its thread until `release` runs.
#[tool]
fn wait_for_release(release: State<Release>) -> Result<&'static str, String> {
    let receiver = release.receiver.lock().unwrap();
    receiver
        .recv_timeout(*tool_tests::PATIENCE)
        .map(|()| "released")
        .map_err(|_| "never released: the executor was blocked".to_owned())
}

/// Releases `wait_for_release`.
#[tool]
async fn release(release: State<Release>) -> &'static str {
    release.sender.lock().unwrap().send(()).unwrap();
    "sent"
}

fn registry() -> Registry {
    let (sender, receiver) = mpsc::channel();
    Registry::builder()
        .state(Counter {
            calls: AtomicUsize::new(0),
        })
        .state(Release {
            receiver: std::sync::Mutex::new(receiver),
            sender: std::sync::Mutex::new(sender),
        })
        .build()
        .expect("registry")
}

fn error(result: &tool_runtime::ToolResult) -> String {
    tool_tests::error_text(result)
}

#[tokio::test]
async fn invalid_arguments_name_the_parameter_the_expectation_and_what_came() {
    let registry = registry();
    let cases = [
        (
            json!({"city": "Lima", "units": "kelvin"}),
            "invalid arguments for get_weather: 'units' must be one of \"metric\", \"imperial\"; \
             got \"kelvin\"",
        ),
        (
            json!({"units": "metric"}),
            "invalid arguments for get_weather: missing required parameter 'city' (a string)",
        ),
        (
            json!({"city": "Lima", "cty": "x"}),
            "invalid arguments for get_weather: unexpected parameter 'cty'; did you mean 'city'?",
        ),
        (
            json!({"city": "Lima", "zzz": 1}),
            "invalid arguments for get_weather: unexpected parameter 'zzz'; parameters are: \
             city, include_forecast, units",
        ),
        (
            json!({"city": 5, "include_forecast": "yes"}),
            "invalid arguments for get_weather: 'city' must be a string; got 5. \
             'include_forecast' must be a boolean (true or false); got \"yes\"",
        ),
        (
            json!(["Lima"]),
            "invalid arguments for get_weather: \
             the arguments must be a JSON object of named parameters; got [\"Lima\"]",
        ),
    ];
    for (input, expected) in cases {
        let result = registry.call("get_weather", input.clone()).await;
        assert_eq!(error(&result), expected, "{input}");
        assert!(matches!(
            result.error(),
            Some(CallError::InvalidArguments { .. })
        ));
        assert!(result.error().unwrap().is_caller_error());
    }
}

#[tokio::test]
async fn nested_problems_are_named_by_their_path() {
    let registry = registry();
    let cases = [
        (
            json!({"filter": {"limit": 300, "tags": []}, "count": 1}),
            "invalid arguments for filtered: 'filter.limit' must be an integer between 0 and 255; \
             got 300",
        ),
        (
            json!({"filter": {"limit": 1, "tags": ["a", 2]}, "count": 1}),
            "invalid arguments for filtered: 'filter.tags[1]' must be a string; got 2",
        ),
        (
            json!({"filter": {"tags": []}, "count": -1}),
            "invalid arguments for filtered: 'count' must be an integer between 0 and 255; got -1. \
             'filter' is missing required field 'limit' (an integer between 0 and 255)",
        ),
    ];
    for (input, expected) in cases {
        let result = registry.call("filtered", input.clone()).await;
        assert_eq!(error(&result), expected, "{input}");
    }
    // Whole numbers written as floats are integers, as JSON means them.
    let result = registry
        .call(
            "filtered",
            json!({"filter": {"limit": 3.0, "tags": ["a"]}, "count": 2.0}),
        )
        .await;
    assert_eq!(result.output(), Some(&json!("3 1 2")));
}

#[tokio::test]
async fn missing_arguments_are_accepted_when_nothing_is_required() {
    let registry = registry();
    let result = registry.call("explode", Value::Null).await;
    assert!(matches!(result.error(), Some(CallError::Panicked { .. })));
    let result = registry.call("get_weather", Value::Null).await;
    assert_eq!(
        error(&result),
        "invalid arguments for get_weather: missing required parameter 'city' (a string)"
    );
}

#[tokio::test]
async fn an_unknown_tool_is_named_with_the_closest_known_one() {
    let registry = registry();
    let result = registry.call("get_wether", json!({})).await;
    assert_eq!(
        error(&result),
        "unknown tool 'get_wether'; did you mean 'get_weather'?"
    );
    assert_eq!(
        result.error(),
        Some(&CallError::UnknownTool {
            name: "get_wether".into(),
            suggestion: Some("get_weather".into())
        })
    );
    let result = registry.call("qqqqqqqq", json!({})).await;
    assert_eq!(error(&result), "unknown tool 'qqqqqqqq'");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_tool_is_an_error_result_and_the_process_carries_on() {
    let registry = registry();
    for name in ["explode", "explode_later"] {
        let result = registry.call(name, json!({})).await;
        let text = error(&result);
        assert_eq!(
            text,
            format!("tool '{name}' failed unexpectedly; the details were logged on the server")
        );
        assert!(
            !text.contains("secret"),
            "the panic message must not reach the caller"
        );
    }
    let result = registry.call("get_weather", json!({"city": "Oslo"})).await;
    assert_eq!(result.output(), Some(&json!("Oslo Metric false")));
}

#[tokio::test(flavor = "current_thread")]
async fn sync_tools_do_not_block_the_executor() {
    // On a single-threaded runtime, the sync tool waits for the async one. If the sync tool
    // ran on the executor's thread, the async tool could never run and the wait would fail.
    let registry = std::sync::Arc::new(registry());
    let waiting = {
        let registry = std::sync::Arc::clone(&registry);
        tokio::spawn(async move { registry.call("wait_for_release", json!({})).await })
    };
    tokio::task::yield_now().await;
    let released = registry.call("release", json!({})).await;
    assert_eq!(released.output(), Some(&json!("sent")));
    let waited = waiting.await.unwrap();
    assert_eq!(waited.output(), Some(&json!("released")));
}

#[tokio::test]
async fn state_is_injected_and_never_in_the_schema() {
    let registry = registry();
    let tool = registry.get("count_call").unwrap();
    assert_eq!(
        tool.input_schema(),
        &json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert!(tool.params().iter().all(|p| p.is_injected()));
    for expected in 1..=3 {
        let result = registry.call("count_call", json!({})).await;
        assert_eq!(result.output(), Some(&json!(expected)));
    }
    let result = registry.call("count_call", json!({"counter": 5})).await;
    assert_eq!(
        error(&result),
        "invalid arguments for count_call: unexpected parameter 'counter'; \
         this tool takes no parameters"
    );
}

#[test]
fn a_registry_without_the_state_a_tool_needs_refuses_to_build() {
    let error = Registry::new().unwrap_err();
    assert!(matches!(error, RegistryError::MissingState { .. }));
    let text = error.to_string();
    assert!(
        text.contains("takes State<dispatch::Counter>")
            || text.contains("takes State<dispatch::Release>"),
        "{text}"
    );
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct ListArgs {
    /// Only names starting with this.
    prefix: Option<String>,
}

fn list_products_tool(name: &str, products: Vec<&'static str>) -> DynamicTool {
    let products = std::sync::Arc::new(products);
    DynamicTool::new(
        name,
        "List product names.\n\nFrom the captured catalog.",
        move |args: ListArgs| {
            let products = std::sync::Arc::clone(&products);
            async move {
                let prefix = args.prefix.unwrap_or_default();
                let found: Vec<&str> = products
                    .iter()
                    .copied()
                    .filter(|p| p.starts_with(&prefix))
                    .collect();
                if found.is_empty() {
                    return Err(format!("no product starts with '{prefix}'"));
                }
                Ok(found)
            }
        },
    )
    .expect("a valid tool")
}

#[tokio::test]
async fn run_time_tools_capture_their_context_and_are_called_like_static_ones() {
    let registry = registry();
    let mut changes = registry.changes();
    registry
        .add_tool(list_products_tool(
            "list_products",
            vec!["apple", "avocado", "banana"],
        ))
        .unwrap();
    assert!(changes.has_changed());
    assert!(!changes.has_changed(), "a change is seen once");

    let tool = registry.get("list_products").unwrap();
    assert_eq!(tool.summary(), "List product names.");
    assert_eq!(
        tool.input_schema(),
        &json!({
            "type": "object",
            "properties": {"prefix": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "description": "Only names starting with this."
            }},
            "additionalProperties": false
        })
    );
    let result = registry.call("list_products", json!({"prefix": "a"})).await;
    assert_eq!(result.output(), Some(&json!(["apple", "avocado"])));
    let result = registry.call("list_products", json!({"prefix": "z"})).await;
    assert_eq!(error(&result), "no product starts with 'z'");
    let result = registry.call("list_products", json!({"prefix": 3})).await;
    assert_eq!(
        error(&result),
        "invalid arguments for list_products: 'prefix' must be a string or null; got 3"
    );

    assert!(registry.remove_tool("list_products"));
    assert!(changes.has_changed());
    assert!(!registry.remove_tool("list_products"));
    assert!(!registry.remove_tool("get_weather"), "static tools stay");
    let result = registry.call("list_products", json!({})).await;
    assert!(matches!(
        result.error(),
        Some(CallError::UnknownTool { .. })
    ));
}

#[tokio::test]
async fn clashing_names_are_refused_with_what_holds_the_name() {
    let registry = registry();
    let clash = registry
        .add_tool(list_products_tool("get_weather", vec!["x"]))
        .unwrap_err();
    match &clash {
        RegistryError::AlreadyExists { name, existing, .. } => {
            assert_eq!(name, "get_weather");
            assert!(
                existing.starts_with("a #[tool] at tests/tests/dispatch.rs:"),
                "{existing}"
            );
        }
        other => panic!("expected AlreadyExists, got {other:?}"),
    }
    registry
        .add_tool(list_products_tool("products", vec!["x"]))
        .unwrap();
    let again = registry
        .add_tool(list_products_tool("products", vec!["y"]))
        .unwrap_err();
    assert_eq!(
        again.to_string(),
        "a tool named `products` already exists (a tool added at run time)"
    );

    let invalid =
        DynamicTool::new("bad name", "x", |_: ListArgs| async { Ok::<_, String>(1) }).unwrap_err();
    assert!(matches!(invalid, RegistryError::InvalidName { .. }));
}

#[tokio::test]
async fn groups_are_added_under_a_prefix_all_or_none() {
    let registry = registry();
    registry
        .add_group(
            "shop",
            [
                list_products_tool("list", vec!["apple"]),
                list_products_tool("search", vec!["pear"]),
            ],
        )
        .unwrap();
    let names: Vec<String> = registry
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert!(names.contains(&"shop_list".to_owned()) && names.contains(&"shop_search".to_owned()));
    let result = registry.call("shop_search", json!({})).await;
    assert_eq!(result.output(), Some(&json!(["pear"])));

    // One clash refuses the whole group.
    let refused = registry
        .add_group(
            "shop",
            [
                list_products_tool("new_one", vec![]),
                list_products_tool("list", vec![]),
            ],
        )
        .unwrap_err();
    assert!(
        matches!(refused, RegistryError::AlreadyExists { ref name, .. } if name == "shop_list")
    );
    assert!(registry.get("shop_new_one").is_none());

    let built = Registry::builder()
        .state(Counter {
            calls: AtomicUsize::new(0),
        })
        .state(Release {
            receiver: std::sync::Mutex::new(mpsc::channel().1),
            sender: std::sync::Mutex::new(mpsc::channel().0),
        })
        .group("gh", [list_products_tool("issues", vec!["#1"])])
        .tool(list_products_tool("standalone", vec!["s"]))
        .build()
        .unwrap();
    assert!(built.get("gh_issues").is_some() && built.get("standalone").is_some());
}

/// Says which thread it ran on, after sleeping `sleep_ms`.
#[tool]
fn where_am_i(sleep_ms: u64) -> String {
    std::thread::sleep(Duration::from_millis(sleep_ms));
    std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_owned()
}

/// On a runtime of the caller's own (not one `serve` drives in turns), every run of a sync
/// tool is on the blocking pool, however quick it proves: never on the caller's thread.
#[tokio::test(flavor = "current_thread")]
async fn on_a_runtime_of_ones_own_sync_tools_run_on_the_blocking_pool() {
    let registry = registry();
    let here = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_owned();
    for _ in 0..20 {
        let result = registry.call("where_am_i", json!({"sleep_ms": 0})).await;
        let thread = result.output().unwrap()["result"].clone();
        assert_ne!(
            thread,
            here.as_str(),
            "a sync tool ran on the caller's thread"
        );
    }
}

/// A code, whose rule needs look-ahead: a pattern the validator does not run.
#[derive(Deserialize, schemars::JsonSchema)]
struct Coded {
    /// A code that starts with Z.
    #[schemars(regex(pattern = r"^(?=Z)\w+$"))]
    code: String,
}

#[test]
fn a_tool_whose_schema_cannot_be_checked_is_refused_when_added() {
    let registry = registry();
    let good = DynamicTool::new("good", "Lists.", |args: ListArgs| async move {
        Ok::<_, String>(args.prefix.unwrap_or_default())
    })
    .unwrap();
    let coded = DynamicTool::new("coded", "Takes a code.", |value: Coded| async move {
        Ok::<_, String>(value.code)
    })
    .unwrap();
    let error = registry.add_group("set", [good, coded]).unwrap_err();
    assert!(
        matches!(error, RegistryError::SchemaNotCheckable { .. }),
        "{error:?}"
    );
    let said = error.to_string();
    assert!(
        said.starts_with(
            "tool `set_coded`: its input schema cannot be checked: the schema at \
             `/properties/code` has the pattern `^(?=Z)\\w+$`: it uses look-around"
        ),
        "{said}"
    );
    assert!(registry.get("set_good").is_none(), "all or none: {said}");
}
