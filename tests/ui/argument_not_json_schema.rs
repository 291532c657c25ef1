use tool_runtime::tool;

#[derive(serde::Deserialize)]
pub struct Point {
    pub x: i32,
}

/// Move a point.
#[tool]
fn shift(point: Point) -> i32 {
    point.x
}

fn main() {}
