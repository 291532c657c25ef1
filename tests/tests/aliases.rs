//! Parameters are recognised by their type, not by how they are spelled: an alias of
//! `State<T>` is filled in by the runtime, an alias of `Option<T>` is optional, and both
//! count as such in the compile-time check of doc-comment examples.

use serde_json::json;
use tool_runtime::{tool, Registry, State};

pub struct Pool {
    prefix: &'static str,
}

type Db = State<Pool>;
type MaybeLimit = Option<u32>;

/// Look a user up.
///
/// Example: {"name": "ada"}
#[tool]
fn find_user(
    /// The user's name.
    name: String,
    /// At most this many matches.
    limit: MaybeLimit,
    db: Db,
) -> String {
    format!("{}{name} (limit {limit:?})", db.prefix)
}

#[test]
fn an_alias_of_state_is_filled_in_and_an_alias_of_option_is_optional() {
    let registry = Registry::builder()
        .state(Pool { prefix: "db:" })
        .build()
        .expect("the state is registered");
    let tool = registry.get("find_user").unwrap();
    let schema = tool.input_schema();
    assert_eq!(schema["required"], json!(["name"]));
    assert!(schema["properties"].get("db").is_none(), "{schema}");
    assert_eq!(schema["properties"]["limit"]["type"], json!("integer"));
    let injected: Vec<(&str, bool)> = tool
        .params()
        .iter()
        .map(|param| (param.name(), param.is_injected()))
        .collect();
    assert_eq!(injected, [("name", false), ("limit", false), ("db", true)]);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let result = runtime.block_on(registry.call("find_user", json!({"name": "ada"})));
    assert_eq!(result.output(), Some(&json!("db:ada (limit None)")));
}

#[test]
fn a_missing_state_behind_an_alias_is_refused_at_build() {
    let error = Registry::new().expect_err("no Pool was registered");
    assert!(
        error.to_string().contains("find_user") && error.to_string().contains("Pool"),
        "{error}"
    );
}
