//! A catalog of 1,001 tools: `add`, and 1,000 generated ones.

include!(concat!(env!("OUT_DIR"), "/tools.rs"));

// An `async fn`, so the protocol benchmark runs it without a hand-off to another thread
// and measures the protocol layer alone.
/// Add two integers.
#[tool_runtime::tool(read_only)]
pub async fn add(
    /// First addend.
    a: i64,
    /// Second addend.
    b: i64,
) -> i64 {
    a + b
}

/// Links this crate (and so its tools) into a binary.
pub fn link() {}
