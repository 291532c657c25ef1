//! Smoke test of the `weather` example binary: it lists its tools and answers calls.

use serde_json::{json, Value};
use std::process::Command;

fn weather(args: &[&str]) -> (i32, Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_weather"))
        .args(args)
        .output()
        .expect("the example runs");
    let stdout: Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    (output.status.code().unwrap_or(-1), stdout)
}

#[test]
fn lists_its_tools() {
    let (code, tools) = weather(&["list", "--format", "mcp"]);
    assert_eq!(code, 0);
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get_weather", "list_cities"]);
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["city"]));
    assert_eq!(
        tools[0]["inputSchema"]["examples"][0],
        json!({"city": "London"})
    );
    let (code, catalog) = weather(&["list"]);
    assert_eq!(code, 0);
    assert_eq!(catalog["count"], 2);
}

#[test]
fn calls_a_tool_and_reports_errors_with_a_failing_exit_code() {
    let (code, result) = weather(&["call", "get_weather", r#"{"city": "Oslo"}"#]);
    assert_eq!(code, 0);
    assert_eq!(result["output"]["temperature"], json!(6.0));
    let (code, result) = weather(&[
        "call",
        "get_weather",
        r#"{"city": "Oslo", "units": "kelvin"}"#,
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        result["error"],
        "invalid arguments for get_weather: 'units' must be one of \"metric\", \"imperial\"; \
         got \"kelvin\""
    );
}
