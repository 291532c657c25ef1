//! `search_code`: a fast search over the workspace, with ripgrep's own crates (`ignore` to
//! walk the tree respecting `.gitignore`, `grep-searcher` and `grep-regex` to search).

use crate::paths::Workspace;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use serde::Serialize;
use std::time::{Duration, Instant};
use tool_runtime::{tool, State};

const DEFAULT_LIMIT: u32 = 20;
const MAX_SNIPPET: usize = 200;
/// A search stops after this long, whatever it found, so a huge tree cannot hold a call.
pub const TIME_BUDGET: Duration = Duration::from_secs(10);

/// One line that matched.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SearchMatch {
    /// Path from the workspace root, with `/`.
    pub path: String,
    /// Line number, from 1.
    pub line: u64,
    /// The line, trimmed and cut at 200 characters.
    pub snippet: String,
}

/// Search the workspace's files for text, respecting `.gitignore`; literal by default.
///
/// Returns at most `limit` matches, in path order; binary and hidden files are skipped. An
/// answer over 10 KB is a preview and a link to the whole, read with `resources/read`.
///
/// Example: {"query": "fn main"}
/// Example: {"query": "TODO", "filePattern": "*.rs", "limit": 10}
/// Example: {"query": "fn \\w+_test", "regex": true}
#[tool(read_only, idempotent, open_world = false, large_output = "resource")]
pub fn search_code(
    /// The text to find (a regular expression when `regex` is true).
    #[arg(length(min = 1, max = 1000))]
    query: String,
    /// A glob on paths from the root, such as `*.ts` or `src/**/*.rs`.
    #[arg(rename = "filePattern")]
    file_pattern: Option<String>,
    /// At most this many matches, from 1 to 200 (default 20).
    #[arg(range(min = 1, max = 200))]
    limit: Option<u32>,
    /// Read `query` as a regular expression.
    #[arg(default = false)]
    regex: bool,
    workspace: State<Workspace>,
) -> Result<Vec<SearchMatch>, String> {
    // The query's length (1 to 1000) and the limit's range are enforced before the call.
    let limit = limit.unwrap_or(DEFAULT_LIMIT) as usize;
    let matcher = if regex {
        RegexMatcherBuilder::new()
            .build(&query)
            .map_err(|e| format!("query is not a valid regular expression: {e}"))?
    } else {
        // Literal: every character stands for itself, metacharacters included.
        RegexMatcherBuilder::new()
            .fixed_strings(true)
            .build(&query)
            .map_err(|e| format!("query cannot be searched: {e}"))?
    };
    let glob = match &file_pattern {
        Some(pattern) => Some(
            globset::GlobBuilder::new(pattern)
                .literal_separator(false)
                .build()
                .map_err(|e| format!("filePattern '{pattern}' is not a valid glob: {}", e.kind()))?
                .compile_matcher(),
        ),
        None => None,
    };
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .line_number(true)
        .build();
    let started = Instant::now();
    let walker = ignore::WalkBuilder::new(workspace.root())
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    let mut matches = Vec::new();
    for entry in walker.flatten() {
        if matches.len() >= limit || started.elapsed() > TIME_BUDGET {
            break;
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = workspace.display(entry.path());
        if glob.as_ref().is_some_and(|g| !g.is_match(&path)) {
            continue;
        }
        let _ = searcher.search_path(
            &matcher,
            entry.path(),
            Lossy(|line, text| {
                let trimmed = text.trim();
                let snippet: String = trimmed.chars().take(MAX_SNIPPET).collect();
                matches.push(SearchMatch {
                    path: path.clone(),
                    line,
                    snippet,
                });
                Ok(matches.len() < limit)
            }),
        );
    }
    Ok(matches)
}
