use tool_runtime::resource;

/// A file of the workspace.
#[resource("files:///{+path}/{revision}")]
fn file(path: String, lines: u32) -> String {
    format!("{path} {lines}")
}

fn main() {}
