use tool_runtime::tool;

/// Count a visit.
#[tool(cache = "30s")]
fn count_visit() -> u64 {
    1
}

/// Read the time.
#[tool(read_only, cache = "soon")]
fn now() -> u64 {
    1
}

/// Read a setting.
#[tool(read_only, same_for_everyone)]
fn setting() -> u64 {
    1
}

fn main() {}
