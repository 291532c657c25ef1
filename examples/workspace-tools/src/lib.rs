//! A coding agent's tools as an MCP server over a local directory: `list_dirs`,
//! `list_files`, `read_file`, `search_code`, `todo_manager` and `validate_output`, each
//! written with `#[tool]`, and the workspace's files as the resource template
//! `workspace:///{+path}`. `read_file` and `search_code` answer a preview and a link when
//! their output is over 10 KB. Every path stays inside the workspace root.

pub mod paths;
pub mod tools;

use paths::Workspace;
use tool_runtime::cli::Cli;
use tools::plan::PlanBoard;

/// The standard command line of the `workspace-tools` binary, with `--root DIR`.
pub fn cli() -> Cli {
    Cli::new()
        .name("workspace-tools")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Agent tools over a local directory: list, read and search files, and keep a plan.")
        .arg(
            clap::Arg::new("root")
                .long("root")
                .value_name("DIR")
                .default_value(".")
                .help("The directory the tools work in; nothing outside it is reachable"),
        )
        .setup(|options, registry| {
            let root = options
                .get_one::<String>("root")
                .map_or(".", String::as_str);
            let workspace =
                Workspace::new(root).map_err(|error| format!("--root {root}: {error}"))?;
            Ok(registry.state(workspace).state(PlanBoard::default()))
        })
}
