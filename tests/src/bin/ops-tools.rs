//! A tool binary with the standard command line, for the tests of operating a server:
//! audit events, metrics, rate limits, budgets and authorization.

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

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
