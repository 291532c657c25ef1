use tool_runtime::tool;

/// Too many mistakes.
///
/// Example: {"b": 1}
#[tool(name = "9lives", colour = "red")]
fn many(a: i64, (b, c): (i64, i64)) -> i64 {
    a + b + c
}

// The function itself is still emitted, so calling it compiles.
fn main() {
    let _ = many(1, (2, 3));
}
