//! A tool binary for the stall tests over real stdio: `turns_slow` is quick for 20 calls,
//! then sleeps for 2 s with a 500 ms time limit; `quick` is always quick.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tool_runtime::tool;

static CALLS: AtomicU32 = AtomicU32::new(0);

/// Quick for 20 calls, then sleeps for 2 s.
#[tool(timeout = "500ms")]
fn turns_slow() -> u32 {
    let call = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if call > 20 {
        std::thread::sleep(Duration::from_secs(2));
    }
    call
}

/// Always quick.
#[tool]
fn quick(a: i64) -> i64 {
    a + 1
}

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
