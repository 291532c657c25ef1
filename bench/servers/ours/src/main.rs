//! The four benchmark tools with tool-runtime: `serve` on stdio, `serve --http ADDR`.

mod tools;

fn main() -> std::process::ExitCode {
    tool_runtime::cli::Cli::new()
        .name("bench-ours")
        .version("0.1.0")
        .run()
}
