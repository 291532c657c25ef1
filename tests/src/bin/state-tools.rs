//! A binary whose `main` only runs the standard command line over a tool that needs shared
//! state nobody registered: describing the tools works, running them says how to fix it.

use tool_runtime::{tool, State};

/// Settings the conversion needs.
struct Units {
    name: String,
}

/// Convert meters to the configured unit.
#[tool]
fn convert(
    /// The length in meters.
    meters: f64,
    units: State<Units>,
) -> String {
    format!("{meters} m in {}", units.name)
}

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
