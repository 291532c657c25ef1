//! Errors a model can act on, in the cases a new user met first: a union told apart by a
//! tag (serde's internally tagged enums) and several problems said at once.

use serde_json::json;
use tool_runtime::{tool, Registry};

/// A shape, told apart by its `kind`.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    Circle { radius: f64 },
    Square { side: f64 },
}

/// Draw a shape.
#[tool]
fn draw(shape: Shape) -> String {
    format!("{shape:?}")
}

async fn error_of(arguments: serde_json::Value) -> String {
    let registry = Registry::new().unwrap();
    let result = registry.call("draw", arguments.clone()).await;
    result
        .error()
        .unwrap_or_else(|| panic!("{arguments} must be refused"))
        .to_string()
}

#[tokio::test]
async fn a_tagged_union_is_described_by_its_tag_values_and_judged_by_the_tag_given() {
    let message = error_of(json!({})).await;
    assert!(
        message.contains(
            r#"an object whose 'kind' is "circle" (with radius) or "square" (with side)"#
        ),
        "{message}"
    );

    let message = error_of(json!({"shape": {"radius": 1.0}})).await;
    assert!(
        message.contains(r#"'shape' is missing its 'kind' ("circle" or "square")"#),
        "{message}"
    );

    let message = error_of(json!({"shape": {"kind": "circle"}})).await;
    assert!(
        message.contains(
            r#"'shape' with 'kind' "circle" is missing required field 'radius' (a number)"#
        ),
        "the branch the tag picks is the one judged: {message}"
    );
    assert!(!message.contains("side"), "{message}");

    let message = error_of(json!({"shape": {"kind": "circle", "radius": "big"}})).await;
    assert!(
        message
            .contains(r#"'shape' with 'kind' "circle" must be an object with fields kind, radius"#)
            && message.contains(r#"got {"kind":"circle","radius":"big"}"#),
        "a value with every field but one of the wrong type is described by its branch: {message}"
    );
    assert!(!message.contains("side"), "{message}");

    let message = error_of(json!({"shape": {"kind": "triangle"}})).await;
    assert!(
        message
            .contains(r#"'shape' has 'kind' "triangle", which is not one of "circle", "square""#),
        "{message}"
    );
}

#[tokio::test]
async fn problems_said_together_read_as_sentences() {
    let message = error_of(json!({"shap": {"kind": "circle", "radius": 1}})).await;
    assert!(
        message.contains("did you mean 'shape'? missing required parameter 'shape'"),
        "{message}"
    );
    assert!(!message.contains("?."), "{message}");
}

#[test]
fn a_registry_error_unwrapped_reads_as_its_message() {
    let rate = tool_runtime::ops::Rate::new(1, std::time::Duration::from_secs(1)).unwrap();
    let error = Registry::builder()
        .rate_limit("drawing", rate)
        .build()
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("drawing"), "{message}");
    assert_eq!(
        format!("{error:?}"),
        message,
        "what `expect` shows is the message"
    );
}
