//! The workspace tools (search, read, plan, tree, validate), over a local directory.

pub mod files;
pub mod plan;
pub mod search;
pub mod tree;
pub mod validate;
