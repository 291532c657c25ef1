use tool_runtime::tool;

/// Read a file.
#[tool(layers = "audit")]
fn read_file() -> String {
    String::new()
}

/// Write a file.
#[tool(layers = ["an audit"])]
fn write_file() -> String {
    String::new()
}

/// Delete a file.
#[tool(layers = ["audit", "audit"])]
fn delete_file() -> String {
    String::new()
}

/// Move a file.
#[tool(layers = [audit])]
fn move_file() -> String {
    String::new()
}

fn main() {}
