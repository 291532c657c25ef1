use tool_runtime::tool;

/// Add two numbers.
///
/// Example: {"a": 1, "b": }
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
