//! A binary whose `main` only runs the standard command line while its tools live in a
//! library crate (`extra-tools`) it depends on but never names: the linker leaves the
//! library out, and the command line must say so.

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
