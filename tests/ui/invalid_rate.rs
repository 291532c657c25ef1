use tool_runtime::tool;

/// Say hi.
#[tool(rate = "fast")]
fn hi() -> String {
    "hi".to_owned()
}

/// Say bye.
#[tool(rate = "0/s")]
fn bye() -> String {
    "bye".to_owned()
}

fn main() {}
