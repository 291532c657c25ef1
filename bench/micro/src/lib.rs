//! A catalog of 1,002 tools: `add`, `open_window` (nested parameters), and 1,000 generated ones.

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

/// A window's size and title.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Window {
    /// Width in pixels.
    pub width: u16,
    /// Height in pixels.
    pub height: u16,
    /// The title, if any.
    pub title: Option<String>,
}

/// What to do with a window, told apart by `kind`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Action {
    /// Move it to a point.
    Move {
        /// Left edge.
        x: i32,
        /// Top edge.
        y: i32,
    },
    /// Close it.
    Close,
}

/// Open a window and act on it: nested parameters, so its arguments are checked by the
/// validator of whole schemas rather than the one of simple parameters.
#[tool_runtime::tool(read_only)]
pub async fn open_window(
    /// The window.
    window: Window,
    /// What to do with it.
    action: Action,
    /// Labels for it.
    tags: Vec<String>,
) -> u32 {
    let moved = matches!(action, Action::Move { .. });
    u32::from(window.width) + u32::from(window.height) + tags.len() as u32 + u32::from(moved)
}

/// Links this crate (and so its tools) into a binary.
pub fn link() {}
