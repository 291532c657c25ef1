//! A tool's error type must say itself to the model: `Display` (a `String`, a `thiserror`
//! enum), not only `Debug`.

use tool_runtime::tool;

#[derive(Debug)]
pub struct Oops;

/// Fail, with an error that cannot be shown.
#[tool]
fn fails() -> Result<u8, Oops> {
    Err(Oops)
}

fn main() {}
