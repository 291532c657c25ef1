//! `list_dirs`: the directories under a path, a few levels deep.

use crate::paths::Workspace;
use serde::Serialize;
use tool_runtime::{tool, State};

/// How deep `list_dirs` may go (as its `depth` parameter's range says).
pub const MAX_DEPTH: u8 = 3;
const DEFAULT_LIMIT: u32 = 50;

/// One directory found.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DirEntry {
    /// Path from the workspace root, with `/`.
    pub path: String,
    /// Levels below the listed directory (1 = a direct child).
    pub depth: u8,
}

/// The directories found.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DirListing {
    /// Sorted by path.
    pub dirs: Vec<DirEntry>,
    /// Whether more directories exist than `limit` allowed.
    pub truncated: bool,
}

/// List the directories under a path (directories only, no files).
///
/// Skips what `.gitignore` ignores and hidden directories, and never follows symbolic links.
///
/// Example: {"path": "src", "depth": 2, "limit": 50}
/// Example: {}
#[tool(read_only, idempotent, open_world = false)]
pub fn list_dirs(
    /// Directory to list, relative to the workspace root (default: the root).
    path: Option<String>,
    /// How many levels down, from 1 to 3 (default 1).
    #[arg(range(min = 1, max = 3))]
    depth: Option<u8>,
    /// At most this many directories, from 1 to 500 (default 50).
    #[arg(range(min = 1, max = 500))]
    limit: Option<u32>,
    workspace: State<Workspace>,
) -> Result<DirListing, String> {
    // The ranges are enforced before the call: depth is 1 to 3, limit 1 to 500.
    let depth = depth.unwrap_or(1);
    let limit = limit.unwrap_or(DEFAULT_LIMIT) as usize;
    let start = workspace
        .directory(path.as_deref().unwrap_or(""))
        .map_err(|e| e.to_string())?;
    let walker = ignore::WalkBuilder::new(&start)
        .max_depth(Some(usize::from(depth)))
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| entry.file_type().is_some_and(|t| t.is_dir()))
        .build();
    let mut dirs = Vec::new();
    let mut truncated = false;
    for entry in walker.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        if dirs.len() == limit {
            truncated = true;
            break;
        }
        dirs.push(DirEntry {
            path: workspace.display(entry.path()),
            depth: u8::try_from(entry.depth()).unwrap_or(MAX_DEPTH),
        });
    }
    dirs.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(DirListing { dirs, truncated })
}
