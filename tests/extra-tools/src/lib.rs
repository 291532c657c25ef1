//! A second crate of tools: its tools must reach the catalog of any binary that links it.

use tool_runtime::tool;

/// Reverse a string, character by character.
///
/// Example: {"text": "abc"}
#[tool(read_only, idempotent)]
pub fn reverse(
    /// The text to reverse.
    text: String,
) -> String {
    text.chars().rev().collect()
}

pub mod nested {
    //! Tools in a nested module of the second crate.

    use tool_runtime::tool;

    /// Count the words in a text.
    #[tool(read_only)]
    pub async fn word_count(
        /// The text to count.
        text: String,
    ) -> usize {
        text.split_whitespace().count()
    }
}
