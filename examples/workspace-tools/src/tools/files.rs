//! `list_files` and `read_file`: one directory's files, and one file's text.

use crate::paths::{Kind, Workspace};
use serde::Serialize;
use std::io::Read;
use tool_runtime::result::EmbeddedResource;
use tool_runtime::{resource, tool, State};

const DEFAULT_LIMIT: u32 = 100;
/// `read_file` returns at most this much content.
pub const MAX_CONTENT: usize = 100 * 1024;

/// One file found.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FileEntry {
    /// Path from the workspace root, with `/`.
    pub path: String,
    /// File name.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
}

/// The files found.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FileListing {
    /// Sorted by name.
    pub files: Vec<FileEntry>,
    /// Whether more files matched than `limit` allowed.
    pub truncated: bool,
}

/// List the files of one directory (not recursive), optionally matching a glob.
///
/// Example: {"path": "src", "pattern": "*.rs"}
/// Example: {"pattern": "*.md", "limit": 10}
#[tool(read_only, idempotent, open_world = false)]
pub fn list_files(
    /// Directory to list, relative to the workspace root (default: the root).
    path: Option<String>,
    /// A glob on file names, such as `*.rs` or `test_*.py`.
    pattern: Option<String>,
    /// At most this many files, from 1 to 1000 (default 100).
    #[arg(range(min = 1, max = 1000))]
    limit: Option<u32>,
    workspace: State<Workspace>,
) -> Result<FileListing, String> {
    // The range is enforced before the call.
    let limit = limit.unwrap_or(DEFAULT_LIMIT) as usize;
    let shown = path.as_deref().unwrap_or("");
    let dir = workspace.directory(shown).map_err(|e| e.to_string())?;
    let matcher = match &pattern {
        Some(pattern) => Some(
            globset::Glob::new(pattern)
                .map_err(|e| format!("pattern '{pattern}' is not a valid glob: {}", e.kind()))?
                .compile_matcher(),
        ),
        None => None,
    };
    let entries = std::fs::read_dir(&dir).map_err(|_| format!("'{shown}' cannot be read"))?;
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| matcher.as_ref().is_none_or(|m| m.is_match(name)))
        .collect();
    names.sort();
    let mut files = Vec::new();
    let mut truncated = false;
    for name in names {
        let relative = if shown.is_empty() {
            name.clone()
        } else {
            format!("{}/{name}", shown.trim_end_matches('/'))
        };
        // Symbolic links are followed only when they stay inside; devices are left out.
        let Ok((real, Kind::File)) = workspace.resolve(&relative) else {
            continue;
        };
        if files.len() == limit {
            truncated = true;
            break;
        }
        let size = std::fs::metadata(&real).map(|m| m.len()).unwrap_or(0);
        files.push(FileEntry {
            path: workspace.display(&dir.join(&name)),
            name,
            size,
        });
    }
    Ok(FileListing { files, truncated })
}

/// A file's content.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FileContent {
    /// Path from the workspace root, with `/`.
    pub path: String,
    /// The text, cut at 100 KB; absent for binary files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The full size in bytes.
    pub size: u64,
    /// Whether `content` was cut.
    pub truncated: bool,
    /// Whether the file is binary (its content is then not shown).
    pub binary: bool,
}

/// Read a text file; content over 100 KB is cut, and binary files are reported, not dumped.
/// An answer over 10 KB is a preview and a link to the whole, read with `resources/read`.
///
/// Example: {"path": "README.md"}
/// Example: {"path": "src/main.rs"}
#[tool(read_only, idempotent, open_world = false, large_output = "resource")]
pub fn read_file(
    /// The file, relative to the workspace root.
    path: String,
    workspace: State<Workspace>,
) -> Result<FileContent, String> {
    let real = workspace.file(&path).map_err(|e| e.to_string())?;
    let unreadable = || format!("'{path}' cannot be read");
    let file = std::fs::File::open(&real).map_err(|_| unreadable())?;
    let size = file.metadata().map_err(|_| unreadable())?.len();
    let mut bytes = Vec::with_capacity(MAX_CONTENT.min(size as usize) + 1);
    file.take(MAX_CONTENT as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| unreadable())?;
    let truncated = bytes.len() > MAX_CONTENT;
    bytes.truncate(MAX_CONTENT);
    let display = workspace.display(&real);
    if bytes.contains(&0) {
        return Ok(FileContent {
            path: display,
            content: None,
            size,
            truncated: false,
            binary: true,
        });
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // A cut in the middle of a character is not binary: drop the partial character.
        Err(error) if truncated && error.utf8_error().error_len().is_none() => {
            let valid = error.utf8_error().valid_up_to();
            let mut bytes = error.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
        Err(_) => {
            return Ok(FileContent {
                path: display,
                content: None,
                size,
                truncated: false,
                binary: true,
            })
        }
    };
    Ok(FileContent {
        path: display,
        content: Some(text),
        size,
        truncated,
        binary: false,
    })
}

/// The most a file resource reads: larger files are refused, not cut, since a resource's
/// contents are the whole file.
pub const MAX_RESOURCE: u64 = 10 * 1024 * 1024;

/// A file of the workspace, by its path from the root: text as text, anything else as
/// base64.
#[resource("workspace:///{+path}", name = "workspace file")]
pub fn workspace_file(
    /// The file, relative to the workspace root.
    path: String,
    workspace: State<Workspace>,
) -> Result<EmbeddedResource, String> {
    let real = workspace.file(&path).map_err(|e| e.to_string())?;
    let unreadable = || format!("'{path}' cannot be read");
    let size = std::fs::metadata(&real).map_err(|_| unreadable())?.len();
    if size > MAX_RESOURCE {
        return Err(format!(
            "'{path}' is {size} bytes; files over {MAX_RESOURCE} bytes are not read as resources"
        ));
    }
    let bytes = std::fs::read(&real).map_err(|_| unreadable())?;
    let resource = match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => EmbeddedResource {
            uri: String::new(),
            mime_type: Some("text/plain".to_owned()),
            text: Some(text),
            blob: None,
        },
        Ok(text) => binary(text.into_bytes()),
        Err(error) => binary(error.into_bytes()),
    };
    Ok(resource)
}

fn binary(bytes: Vec<u8>) -> EmbeddedResource {
    use base64::Engine;
    EmbeddedResource {
        uri: String::new(),
        mime_type: Some("application/octet-stream".to_owned()),
        text: None,
        blob: Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
    }
}
