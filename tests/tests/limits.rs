//! Limits on parameters (`#[arg(range(..), length(..), pattern = "..")]`): in the published
//! schema, narrowing what the type says, and enforced before the tool runs, with errors
//! that name the parameter, the limit and the value.

use serde_json::{json, Value};
use tool_runtime::{tool, Registry};

/// A name, through an alias: the limit applies to what the alias names.
type Label = String;

/// Make a directory listing.
///
/// Example: {"depth": 2, "name": "src", "tags": ["a"], "ratio": 0.5, "code": "ab1"}
#[tool]
fn listing(
    /// Levels down.
    #[arg(range(min = 1, max = 3))]
    depth: u8,
    /// A lowercase name.
    #[arg(length(min = 1, max = 8), pattern = "^[a-z]+$")]
    name: Label,
    /// Up to three tags.
    #[arg(length(max = 3))]
    tags: Vec<String>,
    /// A ratio, when given.
    #[arg(range(min = 0.0, max = 1.0))]
    ratio: Option<f64>,
    /// An offset that may be negative.
    #[arg(range(min = -10), default = 0)]
    offset: i32,
    /// A code with at least one digit: ECMA-262's `\d` is ASCII, and the macro reads the
    /// pattern as the validator does.
    #[arg(pattern = "^[a-z]*\\d[a-z\\d]*$")]
    code: Option<String>,
    /// A level, bounded wider than its type: the type's own bounds stand.
    #[arg(range(min = -5, max = 1000), default = 7)]
    level: u8,
) -> String {
    let _ = level;
    format!("{depth} {name} {tags:?} {ratio:?} {offset} {code:?}")
}

fn schema() -> Value {
    let registry = Registry::new().unwrap();
    registry.get("listing").unwrap().input_schema().clone()
}

#[test]
fn limits_are_in_the_schema_and_narrow_the_types_own() {
    let properties = &schema()["properties"];
    assert_eq!(properties["depth"]["minimum"], json!(1));
    assert_eq!(properties["depth"]["maximum"], json!(3), "not u8's 255");
    assert_eq!(properties["name"]["minLength"], json!(1));
    assert_eq!(properties["name"]["maxLength"], json!(8));
    assert_eq!(properties["name"]["pattern"], json!("^[a-z]+$"));
    assert_eq!(properties["tags"]["maxItems"], json!(3));
    assert!(properties["tags"].get("maxLength").is_none());
    assert_eq!(properties["ratio"]["type"], json!("number"));
    assert_eq!(properties["ratio"]["minimum"], json!(0.0));
    assert_eq!(properties["ratio"]["maximum"], json!(1.0));
    assert_eq!(properties["offset"]["minimum"], json!(-10));
    assert_eq!(
        properties["level"]["minimum"],
        json!(0),
        "not below what a u8 holds"
    );
    assert_eq!(
        properties["level"]["maximum"],
        json!(255),
        "not above what a u8 holds"
    );
}

#[tokio::test]
async fn calls_outside_the_limits_are_refused_before_the_tool_runs() {
    let registry = Registry::new().unwrap();
    let good = json!({"depth": 2, "name": "src", "tags": ["a"]});
    let result = registry.call("listing", good.clone()).await;
    assert!(!result.is_error(), "{:?}", result.error());
    let mut with_code = good.clone();
    with_code["code"] = json!("ab1");
    let result = registry.call("listing", with_code).await;
    assert!(
        !result.is_error(),
        "a look-ahead is matched: {:?}",
        result.error()
    );

    let cases = [
        (json!({"depth": 4}), "'depth'", "between 1 and 3", "got 4"),
        (json!({"depth": 0}), "'depth'", "between 1 and 3", "got 0"),
        (json!({"name": ""}), "'name'", "1 to 8", "got \"\""),
        (
            json!({"name": "abcdefghi"}),
            "'name'",
            "1 to 8",
            "abcdefghi",
        ),
        (json!({"name": "Src"}), "'name'", "^[a-z]+$", "Src"),
        (
            json!({"tags": ["a", "b", "c", "d"]}),
            "'tags'",
            "at most 3 items",
            r#""d"]"#,
        ),
        (
            json!({"ratio": 1.5}),
            "'ratio'",
            "between 0.0 and 1.0",
            "1.5",
        ),
        (
            json!({"code": "abc"}),
            "'code'",
            r"^[a-z]*\d[a-z\d]*$",
            "abc",
        ),
        (json!({"code": "ab٣"}), "'code'", r"\d[a-z\d]", "ab٣"),
        (json!({"offset": -11}), "'offset'", "-10", "-11"),
    ];
    for (change, parameter, limit, value) in cases {
        let mut arguments = good.clone();
        for (key, changed) in change.as_object().unwrap() {
            arguments[key] = changed.clone();
        }
        let result = registry.call("listing", arguments.clone()).await;
        let message = result
            .error()
            .unwrap_or_else(|| panic!("{arguments} must be refused"))
            .to_string();
        for part in ["listing", parameter, limit, value] {
            assert!(
                message.contains(part),
                "{arguments}: `{message}` should say {part}"
            );
        }
    }
}
