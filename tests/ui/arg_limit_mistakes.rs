//! `range`, `length` and `pattern` in `#[arg]`: written wrong, or on a type they do not fit.

use tool_runtime::tool;

type Name = String;

/// Limits written wrong.
#[tool]
fn written_wrong(
    /// No bound at all.
    #[arg(range())]
    a: u32,
    /// No value fits.
    #[arg(range(min = 5, max = 1))]
    b: u32,
    /// A length is never negative.
    #[arg(length(min = -1))]
    c: String,
    /// Not a regular expression.
    #[arg(pattern = "([a-z]")]
    d: String,
    /// Look-around, which the validator does not run.
    #[arg(pattern = "^(?=.*[0-9])[a-z0-9]+$")]
    d2: String,
    /// Not a bound name.
    #[arg(range(least = 1))]
    e: u32,
    /// Not a literal.
    #[arg(range(max = LIMIT))]
    f: u32,
) -> u32 {
    a + b + f + c.len() as u32 + d.len() as u32 + e
}

const LIMIT: u32 = 3;

/// Limits on types they do not fit, seen through an alias too.
#[tool]
fn wrong_types(
    /// A range on a string.
    #[arg(range(max = 3))]
    name: Name,
    /// A length on a number.
    #[arg(length(max = 3))]
    count: u32,
    /// A pattern on a list.
    #[arg(pattern = "^a")]
    tags: Vec<String>,
) -> usize {
    name.len() + count as usize + tags.len()
}

fn main() {}
