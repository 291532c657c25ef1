//! A tool binary with the standard command line, run as several replicas behind a load
//! balancer by the tests of shared state: quick calls, and tasks whose replica a test
//! kills. The tasks' tools wait at a gate the test holds (`tool_tests::gate`): each run
//! enters it under its process id, so the test knows which replica runs it, and ends when
//! the test opens it.

use tool_runtime::tool;

/// Add two integers.
#[tool(read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Works until told to stop; running it twice would do the work twice.
#[tool(task = "optional")]
async fn slow_job(
    /// The gate at which it works until the test opens it (a directory).
    gate: String,
) -> String {
    tool_tests::gate::hold(&gate).await;
    "worked".to_owned()
}

/// Looks something up slowly; running it again gives the same answer.
#[tool(task = "optional", idempotent)]
async fn slow_lookup(
    /// The gate at which the lookup waits until the test opens it (a directory).
    gate: String,
) -> String {
    tool_tests::gate::hold(&gate).await;
    "found it".to_owned()
}

/// Looks a topic up once for every replica: its answer is kept ten minutes, for everyone,
/// and names the process that made it. It waits at its gate first.
#[tool(read_only, cache = "10m", same_for_everyone)]
async fn shared_lookup(
    /// What to look up.
    topic: String,
    /// The gate at which the lookup waits until the test opens it (a directory).
    gate: String,
) -> String {
    tool_tests::gate::hold(&gate).await;
    format!("{topic}: looked up by process {}", std::process::id())
}

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
