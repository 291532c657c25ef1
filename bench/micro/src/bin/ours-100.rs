//! A 101-tool catalog (`add` and 100 generated ones) served with the standard command
//! line: start-up time against the number of tools. It does not link the library's
//! 1,002 tools.

include!(concat!(env!("OUT_DIR"), "/tools_100.rs"));

/// Add two integers.
#[tool_runtime::tool(read_only)]
pub async fn add(
    /// First addend.
    a: i64,
    /// Second addend.
    b: i64,
) -> i64 {
    a + b
}

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
