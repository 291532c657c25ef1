use tool_runtime::resource;

/// Broken.
#[resource("files:///{path")]
fn file(path: String) -> String {
    path
}

/// No URI at all.
#[resource(mime_type = "text/plain")]
fn nothing() -> String {
    String::new()
}

/// No scheme.
#[resource("readme.txt")]
fn readme() -> String {
    String::new()
}

fn main() {}
