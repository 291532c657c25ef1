use tool_runtime::{prompt, tool};

/// A bad mode.
#[tool(large_output = "link")]
fn report() -> String {
    String::new()
}

/// Not for prompts.
#[prompt(large_output = "resource")]
fn greet() -> String {
    String::new()
}

fn main() {}
