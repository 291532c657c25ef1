//! A binary over sync tools that run past their time limit: one stops when cancelled, one
//! ignores it. `call` must answer the timeout at once, fire the cancellation and not wait
//! for the tool.

use std::time::Duration;
use tool_runtime::{tool, Cancellation};

/// Wait until cancelled, then write `cancelled` to the file `marker`.
#[tool(timeout = "300ms")]
fn wait_for_cancel(
    /// The file to write when cancelled.
    marker: String,
    cancellation: Cancellation,
) -> bool {
    while !cancellation.is_cancelled() {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::write(marker, "cancelled").is_ok()
}

/// Sleep for a minute, whatever happens.
#[tool(timeout = "300ms")]
fn ignore_cancel() -> u8 {
    std::thread::sleep(Duration::from_secs(60));
    0
}

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
