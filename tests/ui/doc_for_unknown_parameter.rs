use tool_runtime::tool;

/// Search the index.
///
/// # Arguments
///
/// * `query` - What to look for.
/// * `limit` - At most this many hits.
#[tool]
fn search(query: String) -> Vec<String> {
    vec![query]
}

fn main() {}
