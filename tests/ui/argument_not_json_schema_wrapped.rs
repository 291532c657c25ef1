use tool_runtime::tool;

#[derive(serde::Deserialize)]
pub struct Point {
    pub x: i32,
}

/// Move points.
#[tool]
fn shift(points: Vec<Point>, first: Option<Point>) -> usize {
    points.len() + usize::from(first.is_some())
}

fn main() {}
