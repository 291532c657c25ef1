//! A tool binary with the standard command line, for the tests of operating a server:
//! audit events, metrics, rate limits, budgets and authorization, and bounds under load
//! (`hold` keeps a call running until the test releases it).

use tool_runtime::tool;

/// Say back what was said.
#[tool(read_only)]
fn echo(
    /// The text to say back.
    text: String,
) -> String {
    text
}

/// Wait, then answer.
#[tool]
async fn wait(
    /// How long to wait, in milliseconds.
    ms: u64,
) -> u64 {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    ms
}

/// Wait until released: enters the gate (a directory a test holds, see `tool_tests::gate`)
/// and waits until the test opens it.
#[tool]
async fn hold(
    /// The gate's directory.
    gate: String,
) -> &'static str {
    tool_tests::gate::hold(&gate).await;
    "released"
}

/// The message of the day: the same for everyone, kept a minute.
#[tool(read_only, cache = "1m", same_for_everyone)]
fn motd() -> &'static str {
    "ship on friday"
}

/// Read the team's notes.
#[tool(read_only, scopes = ["notes:read"])]
fn read_notes() -> &'static str {
    "ship on friday"
}

/// Add to the team's notes.
#[tool(scopes = ["notes:read", "notes:write"])]
fn write_notes(
    /// What to add.
    line: String,
) -> usize {
    line.len()
}

/// Who is calling, as the server knows it: the token's subject and scopes.
#[tool(read_only)]
fn whoami(context: tool_runtime::CallContext) -> serde_json::Value {
    let caller = context.caller();
    serde_json::json!({"subject": caller.subject(), "scopes": caller.scopes()})
}

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
