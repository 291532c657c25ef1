//! A tool binary with the standard command line, run as several replicas behind a load
//! balancer by the tests of shared state: quick calls, and tasks whose replica a test
//! kills (each run writes its process id to a file the test names, so the test knows
//! which replica to kill).

use std::io::Write;
use std::time::Duration;
use tool_runtime::tool;

/// Add two integers.
#[tool(read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Works for a while; running it twice would do the work twice.
#[tool(task = "optional")]
async fn slow_job(
    /// How long to work, in seconds.
    seconds: f64,
    /// A file to which each run appends the process id of the replica running it.
    pid_file: String,
) -> String {
    note_pid(&pid_file);
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    format!("worked {seconds}s")
}

/// Looks something up slowly; running it again gives the same answer.
#[tool(task = "optional", idempotent)]
async fn slow_lookup(
    /// How long the lookup takes, in seconds (at most, when it waits for `release_file`).
    seconds: f64,
    /// A file to which each run appends the process id of the replica running it.
    pid_file: String,
    /// A file whose appearance ends the lookup, so a test decides when it ends.
    release_file: Option<String>,
) -> String {
    note_pid(&pid_file);
    let until = tokio::time::Instant::now() + Duration::from_secs_f64(seconds);
    match release_file {
        Some(release) => {
            while !std::path::Path::new(&release).exists() && tokio::time::Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        None => tokio::time::sleep_until(until).await,
    }
    "found it".to_owned()
}

fn note_pid(path: &str) {
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(file, "{}", std::process::id());
    }
}

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
