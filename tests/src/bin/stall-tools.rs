//! A tool binary over the stall fixture (`turns_slow`, `quick`), for the stall test over
//! real stdio.

#[path = "../../fixtures/stalls.rs"]
mod stalls;

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
