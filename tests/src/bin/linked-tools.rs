//! The same binary as `unlinked-tools`, with the one line that links the library of tools.

use extra_tools as _;

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
