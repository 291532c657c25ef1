use tool_runtime::{prompt, tool};

/// A mode that does not exist.
#[tool(task = "always")]
async fn long_job() -> String {
    String::new()
}

/// Prompts never run as tasks.
#[prompt(task = "optional")]
fn greet() -> String {
    String::new()
}

fn main() {}
