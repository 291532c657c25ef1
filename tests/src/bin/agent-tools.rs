//! A tool binary with the standard command line over the agent fixture: `answer` is run
//! on model messages built with the providers' own SDK types.

#[path = "../../fixtures/agent.rs"]
mod agent;

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
