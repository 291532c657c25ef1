use tool_runtime::tool;

pub struct Report {
    pub lines: usize,
}

/// Make a report.
#[tool]
fn report(lines: usize) -> Report {
    Report { lines }
}

fn main() {}
