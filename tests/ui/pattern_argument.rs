use tool_runtime::tool;

/// Add a pair.
#[tool]
fn add((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}
