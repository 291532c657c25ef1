//! An example whose values do not fit the parameters' types is a compile error where the
//! macro can see the types: strings, numbers and their ranges, booleans, options and lists.

use tool_runtime::tool;

/// Get the forecast.
///
/// Example: {"city": 42}
/// Example: {"city": "Paris", "days": 300}
/// Example: {"city": "Paris", "tags": ["a", 1], "exact": "yes"}
/// Example: {"city": "Paris", "days": null, "tags": [], "exact": true}
#[tool]
fn forecast(
    /// The city.
    city: String,
    /// Days ahead.
    days: Option<u8>,
    /// Tags.
    #[arg(default)]
    tags: Vec<String>,
    /// Exact.
    #[arg(default)]
    exact: bool,
) -> String {
    format!("{city} {days:?} {tags:?} {exact}")
}

fn main() {}
