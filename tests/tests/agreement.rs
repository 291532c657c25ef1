//! The schema accepts exactly what dispatch accepts: the `jsonschema` crate, given each
//! tool's published schema, must agree with `Registry::call` over a table of cases.

use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};
use tool_runtime::{tool, CallError, Registry};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Fast,
    Safe,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Window {
    width: u16,
    height: u16,
    title: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Action {
    Move { x: i32, y: i32 },
    Close,
}

/// Exercises many parameter types at once.
#[tool]
#[allow(clippy::too_many_arguments)]
fn mixed(
    name: String,
    level: u8,
    ratio: f64,
    mode: Mode,
    tags: HashSet<String>,
    window: Window,
    action: Action,
    scores: BTreeMap<String, i32>,
    letter: Option<char>,
    #[arg(default = 3)] retries: u32,
) -> bool {
    let _ = (
        name, level, ratio, mode, tags, action, scores, letter, retries,
    );
    window.width > 0 || window.height > 0 || window.title.is_some()
}

fn base() -> Value {
    json!({
        "name": "n", "level": 3, "ratio": 0.5, "mode": "fast", "tags": ["a", "b"],
        "window": {"width": 10, "height": 20}, "action": {"kind": "close"}, "scores": {"a": 1}
    })
}

fn with(key: &str, value: Value) -> Value {
    let mut input = base();
    input[key] = value;
    input
}

fn without(key: &str) -> Value {
    let mut input = base();
    input.as_object_mut().unwrap().remove(key);
    input
}

#[tokio::test]
async fn the_schema_and_dispatch_agree() {
    let registry = Registry::new().unwrap();
    let schema = registry.get("mixed").unwrap().input_schema().clone();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let cases: Vec<(&str, Value, bool)> = vec![
        ("all fields", base(), true),
        ("optional given", with("letter", json!("x")), true),
        ("default given", with("retries", json!(7)), true),
        ("missing required", without("name"), false),
        ("unknown parameter", with("extra", json!(1)), false),
        ("u8 too big", with("level", json!(256)), false),
        ("u8 negative", with("level", json!(-1)), false),
        ("u8 as string", with("level", json!("3")), false),
        (
            "whole float for an integer",
            with("level", json!(3.0)),
            true,
        ),
        ("fraction for an integer", with("level", json!(3.5)), false),
        (
            "u32 past its range",
            with("retries", json!(4294967296u64)),
            false,
        ),
        ("integer for a float", with("ratio", json!(2)), true),
        ("enum value", with("mode", json!("safe")), true),
        (
            "enum value in the wrong case",
            with("mode", json!("Safe")),
            false,
        ),
        ("enum value unknown", with("mode", json!("turbo")), false),
        (
            "set with a duplicate",
            with("tags", json!(["a", "a"])),
            false,
        ),
        ("set of the wrong items", with("tags", json!([1])), false),
        ("empty set", with("tags", json!([])), true),
        (
            "struct with an optional field",
            with("window", json!({"width": 1, "height": 2, "title": "t"})),
            true,
        ),
        (
            "struct with a null optional field",
            with("window", json!({"width": 1, "height": 2, "title": null})),
            true,
        ),
        (
            "struct missing a field",
            with("window", json!({"width": 1})),
            false,
        ),
        (
            "struct with an unknown field",
            with("window", json!({"width": 1, "height": 2, "depth": 3})),
            false,
        ),
        (
            "struct field out of range",
            with("window", json!({"width": 70000, "height": 2})),
            false,
        ),
        (
            "tagged enum variant",
            with("action", json!({"kind": "move", "x": 1, "y": -1})),
            true,
        ),
        (
            "tagged enum without its fields",
            with("action", json!({"kind": "move"})),
            false,
        ),
        (
            "tagged enum unknown tag",
            with("action", json!({"kind": "jump"})),
            false,
        ),
        (
            "map of integers",
            with("scores", json!({"x": -5, "y": 7})),
            true,
        ),
        (
            "map with a wrong value",
            with("scores", json!({"x": "high"})),
            false,
        ),
        ("map that is an array", with("scores", json!([1])), false),
        ("char of one letter", with("letter", json!("é")), true),
        ("char of two letters", with("letter", json!("ab")), false),
        ("empty string for a char", with("letter", json!("")), false),
        ("string given a number", with("name", json!(12)), false),
        ("bool for a string", with("name", json!(true)), false),
    ];
    let mut disagreements = Vec::new();
    for (label, input, expected) in &cases {
        let schema_accepts = validator.is_valid(input);
        let result = registry.call("mixed", input.clone()).await;
        let dispatch_accepts = match result.error() {
            None => true,
            Some(CallError::InvalidArguments { .. }) => false,
            Some(other) => panic!("{label}: unexpected error {other}"),
        };
        if schema_accepts != *expected || dispatch_accepts != *expected {
            disagreements.push(format!(
                "{label}: expected {expected}, schema says {schema_accepts}, \
                 dispatch says {dispatch_accepts} ({:?})",
                result.error().map(ToString::to_string)
            ));
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}

#[tokio::test]
async fn null_for_a_parameter_means_absent() {
    // The one deliberate difference: strict-mode clients send `null` for optional
    // parameters they leave out, so dispatch reads `null` as absent.
    let registry = Registry::new().unwrap();
    let accepted = registry.call("mixed", with("letter", Value::Null)).await;
    assert!(accepted.error().is_none(), "{:?}", accepted.error());
    let defaulted = registry.call("mixed", with("retries", Value::Null)).await;
    assert!(defaulted.error().is_none());
    let required = registry.call("mixed", with("name", Value::Null)).await;
    assert_eq!(
        required.error().unwrap().to_string(),
        "invalid arguments for mixed: missing required parameter 'name' (a string)"
    );
}

/// Only simple parameters: checked by the runtime's own validator, not `jsonschema`.
#[tool]
fn simple(
    count: u8,
    ratio: f32,
    letter: char,
    tags: HashSet<String>,
    weights: BTreeMap<String, i16>,
    flags: Vec<bool>,
    note: Option<String>,
) -> usize {
    let _ = (ratio, letter, tags, weights, flags, note);
    usize::from(count)
}

#[tokio::test]
async fn the_schema_and_dispatch_agree_for_simple_parameters() {
    let registry = Registry::new().unwrap();
    let schema = registry.get("simple").unwrap().input_schema().clone();
    assert!(
        schema.get("$defs").is_none(),
        "a tool of simple parameters only"
    );
    let validator = jsonschema::validator_for(&schema).unwrap();
    let base = json!({
        "count": 1, "ratio": 0.5, "letter": "a", "tags": ["x"], "weights": {"k": 2}, "flags": [true]
    });
    let with = |key: &str, value: Value| {
        let mut input = base.clone();
        input[key] = value;
        input
    };
    let cases: Vec<(&str, Value, bool)> = vec![
        ("all fields", base.clone(), true),
        ("u8 max", with("count", json!(255)), true),
        ("u8 past max", with("count", json!(256)), false),
        ("u8 negative", with("count", json!(-1)), false),
        ("u8 whole float", with("count", json!(7.0)), true),
        ("u8 fraction", with("count", json!(7.5)), false),
        ("u8 as string", with("count", json!("7")), false),
        ("f32 integer", with("ratio", json!(3)), true),
        ("f32 string", with("ratio", json!("0.5")), false),
        ("char of two", with("letter", json!("ab")), false),
        ("char empty", with("letter", json!("")), false),
        ("char multi-byte", with("letter", json!("ñ")), true),
        ("set duplicate", with("tags", json!(["x", "x"])), false),
        ("set of numbers", with("tags", json!([1])), false),
        (
            "map value out of range",
            with("weights", json!({"k": 40000})),
            false,
        ),
        ("map value ok", with("weights", json!({"k": -32768})), true),
        ("map as array", with("weights", json!([1])), false),
        ("vec of strings", with("flags", json!(["yes"])), false),
        ("vec empty", with("flags", json!([])), true),
        ("optional given", with("note", json!("n")), true),
        ("optional wrong type", with("note", json!(5)), false),
    ];
    let mut disagreements = Vec::new();
    for (label, input, expected) in &cases {
        let schema_accepts = validator.is_valid(input);
        let result = registry.call("simple", input.clone()).await;
        let dispatch_accepts = result.error().is_none();
        if schema_accepts != *expected || dispatch_accepts != *expected {
            disagreements.push(format!(
                "{label}: expected {expected}, schema {schema_accepts}, \
                 dispatch {dispatch_accepts} ({:?})",
                result.error().map(ToString::to_string)
            ));
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}
