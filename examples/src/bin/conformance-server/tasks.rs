//! The fixtures that run as tasks: a client that can follow tasks gets one and polls it,
//! answers its questions and cancels it; any other waits for the answer (or, for a tool
//! that runs only as a task, is told what it lacks).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tool_runtime::ask::{AskError, Elicited};
use tool_runtime::{tool, CallContext, Cancellation};

/// Greet someone, at once (never a task).
#[tool(read_only)]
fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Compute slowly: a client that can follow tasks gets one.
#[tool(read_only, task = "optional")]
async fn slow_compute(
    /// How long to work, in seconds.
    seconds: f64,
    /// A label for the result.
    #[arg(default)]
    label: String,
) -> String {
    tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.0, 3600.0))).await;
    format!("Computed {label} after {seconds}s")
}

/// A job that always fails (its result says so); it runs only as a task.
#[tool(task = "required")]
async fn failing_job(cancellation: Cancellation) -> Result<String, String> {
    tokio::select! {
        () = cancellation.cancelled() => Err("cancelled".to_owned()),
        () = tokio::time::sleep(Duration::from_millis(300)) =>
            Err("failing_job always fails".to_owned()),
    }
}

/// A job whose code breaks: its task fails with an internal error, and no details.
#[tool(task = "optional")]
async fn protocol_error_job() -> String {
    tokio::time::sleep(Duration::from_millis(300)).await;
    panic!("protocol_error_job breaks on purpose");
}

/// Whether to go ahead.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Confirm {
    /// Go ahead?
    confirm: bool,
}

/// Delete a file, once the user confirms.
#[tool(destructive, task = "optional")]
async fn confirm_delete(
    /// The file to delete.
    filename: String,
    ctx: CallContext,
) -> Result<String, AskError> {
    // Looking the file up takes a moment, so the call is a task by the time it asks.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let answer = ctx
        .elicit::<Confirm>(format!("Delete {filename}?"))
        .key("confirm")
        .await?;
    Ok(match answer {
        Elicited::Accepted(Confirm { confirm: true }) => format!("Deleted {filename}"),
        _ => format!("Kept {filename}"),
    })
}

/// A name.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Named {
    /// Your name
    name: String,
}

/// Ask two questions at once, answered one at a time.
#[tool(task = "optional")]
async fn multi_input(ctx: CallContext) -> Result<String, AskError> {
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (name, confirm) = tokio::join!(
        ctx.elicit::<Named>("What is your name?").key("name"),
        ctx.elicit::<Confirm>("Go ahead?").key("confirm"),
    );
    let name = name?.accepted().map_or_else(String::new, |n| n.name);
    let confirmed = matches!(confirm?, Elicited::Accepted(Confirm { confirm: true }));
    Ok(format!("{name} confirmed: {confirmed}"))
}

/// Ask the user's name first (answered before any task exists), then work as a task.
#[tool(task = "required")]
async fn test_tool_with_task(ctx: CallContext) -> Result<String, AskError> {
    let answer = ctx
        .elicit::<Named>("What is your name?")
        .key("user_name")
        .await?;
    let name = answer
        .accepted()
        .map_or_else(|| "stranger".to_owned(), |n| n.name);
    Ok(format!("Hello, {name}!"))
}
