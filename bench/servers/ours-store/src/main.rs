//! The benchmark tools of `bench-ours`, and a tool that runs as a task, in a binary with the
//! shared store built in: run with `serve --http ADDR` (state in memory) or with
//! `--store redis://...` too (state in Redis), to compare the two.

#[path = "../../ours/src/tools.rs"]
mod tools;

use tool_runtime::tool;

/// Wait, as a task.
#[tool(task = "optional")]
async fn wait_task(
    /// How long to wait, in milliseconds.
    ms: u64,
) -> u64 {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    ms
}

fn main() -> std::process::ExitCode {
    tool_runtime::cli::Cli::new()
        .name("bench-ours-store")
        .version("0.1.0")
        .run()
}
