use tool_runtime::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct State<T> {
    pub inner: T,
}

/// Read my own State type.
#[tool]
fn read(state: State<u8>) -> u8 {
    state.inner
}

fn main() {}
