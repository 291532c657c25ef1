//! Examples are checked against the limits of `#[arg]` at compile time.

use tool_runtime::tool;

/// List a directory tree.
///
/// Example: {"depth": 5, "name": "src", "tags": ["a"]}
/// Example: {"depth": 0.5, "name": "", "tags": ["a", "b", "c", "d"]}
/// Example: {"depth": 2, "name": "Src", "tags": []}
/// Example: {"dept": 2, "name": "src", "tags": []}
#[tool]
fn tree(
    /// Levels.
    #[arg(range(min = 1, max = 3))]
    depth: f64,
    /// A lowercase name.
    #[arg(length(min = 1, max = 20), pattern = "^[a-z]+$")]
    name: String,
    /// At most three tags.
    #[arg(length(max = 3))]
    tags: Vec<String>,
) -> String {
    format!("{depth} {name} {tags:?}")
}

fn main() {}
