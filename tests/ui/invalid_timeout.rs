use tool_runtime::tool;

/// Wait a while.
#[tool(timeout = "5 fortnights")]
async fn wait() {}

fn main() {}
