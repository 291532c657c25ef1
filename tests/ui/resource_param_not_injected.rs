use tool_runtime::resource;

type Limit = u32;

/// A user's profile.
#[resource("users://{id}")]
fn profile(id: u32, limit: Limit) -> String {
    format!("{id} {limit}")
}

fn main() {}
