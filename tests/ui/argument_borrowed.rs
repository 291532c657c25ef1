use tool_runtime::tool;

/// Count the letters of a word.
#[tool]
fn letters(word: &str) -> usize {
    word.len()
}

fn main() {}
