use tool_runtime::tool;

/// Read a file.
#[tool(scopes = "files:read")]
fn read_file() -> String {
    String::new()
}

/// Write a file.
#[tool(scopes = ["files write"])]
fn write_file() -> String {
    String::new()
}

/// Delete a file.
#[tool(scopes = ["files:delete", "files:delete"])]
fn delete_file() -> String {
    String::new()
}

/// Move a file.
#[tool(scopes = [files_move])]
fn move_file() -> String {
    String::new()
}

/// Copy a file.
#[tool(scopes = [""])]
fn copy_file() -> String {
    String::new()
}

fn main() {}
