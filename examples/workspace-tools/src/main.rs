//! `workspace-tools`: serve the workspace tools over MCP, or list, call and check them.

fn main() -> std::process::ExitCode {
    workspace_tools::cli().run()
}
