//! Generated code names nothing from the caller's scope: tools compile with common names
//! shadowed, and under strict lints.
#![deny(warnings, missing_docs, unused_qualifications)]

#[allow(dead_code)]
type Result = ();
#[allow(dead_code)]
type Option = ();
#[allow(dead_code)]
type String = ();
#[allow(dead_code)]
type Vec = ();
#[allow(dead_code)]
type Box = ();
#[allow(dead_code)]
type Value = ();
#[allow(dead_code)]
mod serde {}
#[allow(dead_code)]
mod schemars {}
#[allow(dead_code)]
mod inventory {}

use tool_runtime::tool;

/// Greet someone.
///
/// Example: {"name": "Ada"}
#[tool]
pub fn greet(
    /// Who to greet.
    name: std::string::String,
    /// How many times.
    #[arg(default = 1)]
    times: u8,
    /// An optional suffix.
    suffix: std::option::Option<std::string::String>,
) -> std::result::Result<std::string::String, std::string::String> {
    Ok(format!(
        "hello {name} x{times}{}",
        suffix.unwrap_or_default()
    ))
}

/// Count asynchronously.
#[tool(read_only)]
pub async fn count_to(limit: u32) -> std::vec::Vec<u32> {
    (1..=limit).collect()
}

#[test]
fn tools_with_shadowed_names_work() {
    let runtime = tool_tests::runtime();
    let registry = tool_runtime::Registry::new().unwrap();
    let result = tool_tests::call(&registry, "greet", ::serde_json::json!({"name": "Ada"}));
    assert_eq!(result.output(), Some(&::serde_json::json!("hello Ada x1")));
    let result = runtime.block_on(registry.call("count_to", ::serde_json::json!({"limit": 3})));
    assert_eq!(result.output(), Some(&::serde_json::json!([1, 2, 3])));
}
