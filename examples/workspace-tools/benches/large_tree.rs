//! `search_code` and `list_dirs` on a tree of 100,000 files: time per call and the
//! process's peak memory, through the same registry the server uses.
//!
//! Run with `cargo bench -p workspace-tools --bench large_tree`. Not part of the test run.

use serde_json::json;
use std::time::{Duration, Instant};
use tool_runtime::Registry;
use workspace_tools::paths::Workspace;
use workspace_tools::tools::plan::PlanBoard;

const DIRS: usize = 100;
const SUBDIRS: usize = 10;
const FILES: usize = 100;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmHWM:"))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let dir = std::env::temp_dir().join(format!("large-tree-{}", std::process::id()));
    let started = Instant::now();
    for d in 0..DIRS {
        for s in 0..SUBDIRS {
            let path = dir.join(format!("module{d:03}/part{s:02}"));
            std::fs::create_dir_all(&path).unwrap();
            for f in 0..FILES {
                let body = format!("// file {d}/{s}/{f}\npub fn function_{f}() -> u32 {{ {f} }}\n");
                std::fs::write(path.join(format!("file{f:03}.rs")), body).unwrap();
            }
        }
    }
    std::fs::write(
        dir.join("module099/part09/needle.rs"),
        "// the rare needle\n",
    )
    .unwrap();
    let files = DIRS * SUBDIRS * FILES + 1;
    println!(
        "built a tree of {files} files in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let registry = Registry::builder()
        .state(Workspace::new(&dir).unwrap())
        .state(PlanBoard::default())
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let baseline = peak_rss_kib();
    println!(
        "{:<44} {:>10} {:>10} {:>14}",
        "call", "median", "max", "results"
    );
    let cases = [
        (
            "search_code, common word, limit 20",
            "search_code",
            json!({"query": "pub fn", "limit": 20}),
        ),
        (
            "search_code, common word, limit 200",
            "search_code",
            json!({"query": "pub fn", "limit": 200}),
        ),
        (
            "search_code, rare word (whole tree)",
            "search_code",
            json!({"query": "rare needle"}),
        ),
        (
            "search_code, filePattern, limit 20",
            "search_code",
            json!({"query": "function_7", "filePattern": "module05*/**/*.rs"}),
        ),
        (
            "list_dirs, depth 3, limit 50",
            "list_dirs",
            json!({"depth": 3}),
        ),
        (
            "list_dirs, depth 3, limit 500",
            "list_dirs",
            json!({"depth": 3, "limit": 500}),
        ),
    ];
    for (label, tool, arguments) in cases {
        let mut times: Vec<Duration> = Vec::new();
        let mut count = 0;
        for _ in 0..5 {
            let start = Instant::now();
            let result = runtime.block_on(registry.call(tool, arguments.clone()));
            times.push(start.elapsed());
            let output = result.output().cloned().unwrap_or_default();
            count = output
                .get("result")
                .or_else(|| output.get("dirs"))
                .and_then(|v| v.as_array())
                .map_or(0, Vec::len);
        }
        times.sort();
        println!(
            "{label:<44} {:>8.1}ms {:>8.1}ms {count:>14}",
            times[2].as_secs_f64() * 1000.0,
            times[4].as_secs_f64() * 1000.0
        );
    }
    println!(
        "peak RSS: {} KiB before the calls, {} KiB after ({} KiB for the calls)",
        baseline,
        peak_rss_kib(),
        peak_rss_kib().saturating_sub(baseline)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
