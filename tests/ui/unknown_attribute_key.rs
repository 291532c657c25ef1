use tool_runtime::tool;

/// Add two numbers.
#[tool(read_only, readonly)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
