//! Calls made directly on a `Registry` (no client): a time limit fires the item's
//! `Cancellation`, for tools, prompts and resources alike.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tool_runtime::{prompt, resource, tool, Cancellation, Registry};
use tool_tests::{wait_for, PATIENCE};

/// Waits until cancelled ([`PATIENCE`] at most, so a missing cancellation fails the test
/// instead of hanging it); says in `flag` whether it was.
fn wait_for_cancel(cancellation: &Cancellation, flag: &AtomicBool) {
    let deadline = std::time::Instant::now() + *PATIENCE;
    while !cancellation.is_cancelled() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    flag.store(cancellation.is_cancelled(), Ordering::SeqCst);
}

static TOOL_CANCELLED: AtomicBool = AtomicBool::new(false);
static PROMPT_CANCELLED: AtomicBool = AtomicBool::new(false);
static RESOURCE_CANCELLED: AtomicBool = AtomicBool::new(false);

/// Runs until cancelled.
#[tool(timeout = "100ms")]
fn slow_tool(cancellation: Cancellation) -> bool {
    wait_for_cancel(&cancellation, &TOOL_CANCELLED);
    true
}

/// Makes its messages only once cancelled.
#[prompt(timeout = "100ms")]
fn slow_prompt(cancellation: Cancellation) -> String {
    wait_for_cancel(&cancellation, &PROMPT_CANCELLED);
    "late".to_owned()
}

/// Reads only once cancelled.
#[resource("slow://thing", timeout = "100ms")]
fn slow_resource(cancellation: Cancellation) -> String {
    wait_for_cancel(&cancellation, &RESOURCE_CANCELLED);
    "late".to_owned()
}

/// Waits until `flag` is set (the item stops soon after its cancellation); fails the test,
/// saying that `what` did not happen, past [`PATIENCE`].
async fn set_soon(flag: &AtomicBool, what: &str) {
    wait_for(what, async || flag.load(Ordering::SeqCst)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_limit_cancels_tools_prompts_and_resources_called_directly() {
    let registry = Registry::new().unwrap();

    let result = registry.call("slow_tool", serde_json::json!({})).await;
    assert!(result.error().unwrap().to_string().contains("100ms"));
    set_soon(&TOOL_CANCELLED, "the tool seeing its cancellation").await;

    let error = registry
        .get_prompt("slow_prompt", serde_json::json!({}))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("100ms"), "{error}");
    set_soon(&PROMPT_CANCELLED, "the prompt seeing its cancellation").await;

    let error = registry.read_resource("slow://thing").await.unwrap_err();
    assert!(error.to_string().contains("100ms"), "{error}");
    set_soon(&RESOURCE_CANCELLED, "the resource seeing its cancellation").await;
}
