//! A tool binary with the standard command line, over the travel fixture catalog: the
//! CLI tests run it.

#[path = "../../fixtures/travel.rs"]
mod travel;

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
