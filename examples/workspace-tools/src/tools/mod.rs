//! The workspace tools (search, read, plan, tree, validate), over a local directory.

pub mod files;
pub mod plan;
pub mod search;
pub mod tree;
pub mod validate;

/// Checks a caller's `limit` against a tool's maximum, with an error that states it.
pub(crate) fn limit(given: Option<u32>, default: u32, max: u32) -> Result<usize, String> {
    match given {
        None => Ok(default as usize),
        Some(0) => Err("limit must be at least 1".to_owned()),
        Some(limit) if limit > max => Err(format!("limit must be at most {max}; got {limit}")),
        Some(limit) => Ok(limit as usize),
    }
}
