//! The 1,002-tool catalog served with the standard command line: start-up time with a large
//! catalog.

fn main() -> std::process::ExitCode {
    micro::link();
    tool_runtime::cli::main()
}
