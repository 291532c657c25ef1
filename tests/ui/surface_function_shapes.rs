use tool_runtime::{prompt, resource};

/// A generic prompt.
#[prompt]
fn pick<T>() -> String {
    String::new()
}

/// A resource that borrows its variable.
#[resource("notes://{name}")]
fn note(name: &str) -> String {
    name.to_owned()
}

fn main() {}
