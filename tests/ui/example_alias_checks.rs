use tool_runtime::{tool, State};

pub struct Pool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Query {
    text: String,
}

type Db = State<Pool>;

/// Search.
///
/// Example: {}
/// Example: {"query": {"text": "x"}, "db": null}
#[tool]
fn search(query: Query, db: Db) -> String {
    let _ = db;
    query.text
}

fn main() {}
