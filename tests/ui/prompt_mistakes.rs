use tool_runtime::{prompt, tool};

/// Greets someone.
#[prompt(read_only)]
fn greet(name: String) -> String {
    format!("Hello {name}")
}

/// Returns a number, which is no message.
#[prompt]
fn count() -> u32 {
    3
}

#[prompt]
fn undocumented() -> String {
    String::new()
}

fn cities(typed: &str) -> Vec<String> {
    vec![typed.to_owned()]
}

/// Tools do not complete arguments.
#[tool]
fn weather(#[arg(complete = cities)] city: String) -> String {
    city
}

fn main() {}
