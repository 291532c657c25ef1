//! Where the child processes of the tests (servers, replicas, Redis, HAProxy) write their
//! logs: files under cargo's target directory, one per process, so that a failing test
//! can say where to look.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::OnceLock;

/// The directory of this test binary's logs: `test-logs/<binary>` in cargo's target
/// directory, as cargo resolves it (`CARGO_TARGET_DIR`, a config file, or the default).
/// A run removes the logs a day old; each file is named for its process and a count.
pub fn dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let binary = std::env::current_exe()
            .ok()
            .and_then(|exe| {
                exe.file_stem()
                    .map(|stem| stem.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "tests".to_owned());
        // The binary's name ends in cargo's hash: the same tests log to the same place.
        let binary = match binary.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_owned(),
            _ => binary,
        };
        let dir = target_dir().join("test-logs").join(binary);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|error| panic!("a log directory at {}: {error}", dir.display()));
        // Each test may run in a process of its own (nextest), all at once: emptying the
        // directory here would unlink the logs of servers other tests are still reading.
        // Their files are named apart (process id and count); only stale ones go.
        remove_older_than(&dir, STALE);
        dir
    })
}

/// How old a log file is before a new run removes it.
const STALE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Removes the files in `dir` last written longer than `age` ago.
fn remove_older_than(dir: &Path, age: std::time::Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry
            .metadata()
            .and_then(|metadata| metadata.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|elapsed| elapsed > age);
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Cargo's target directory, asked of cargo (the temporary directory when cargo cannot
/// say).
fn target_dir() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let asked = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .args(["--manifest-path", manifest])
        .stderr(std::process::Stdio::null())
        .output();
    asked
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| serde_json::from_slice::<serde_json::Value>(&output.stdout).ok())
        .and_then(|metadata| metadata["target_directory"].as_str().map(PathBuf::from))
        .unwrap_or_else(std::env::temp_dir)
}

/// A new log file for `what` (a replica, a Redis, ...): named after it, this process and a
/// count, so that runs never share one.
pub fn file(what: &str) -> PathBuf {
    static MADE: AtomicU32 = AtomicU32::new(0);
    let made = MADE.fetch_add(1, Ordering::Relaxed);
    let name: String = what
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    dir().join(format!("{name}-{}-{made}.log", std::process::id()))
}

/// A file for a child's stdout or stderr, created empty.
pub fn stdio_to(path: &Path) -> std::process::Stdio {
    std::fs::File::create(path)
        .unwrap_or_else(|error| panic!("a log file at {}: {error}", path.display()))
        .into()
}

/// Copies what `from` says, line by line, into the file at `path` as it comes, and hands
/// the first line `sought` picks (mapped) to the receiver. The thread ends with `from`.
pub fn tee<T: Send + 'static>(
    from: impl Read + Send + 'static,
    path: &Path,
    sought: impl Fn(&str) -> Option<T> + Send + 'static,
) -> (std::thread::JoinHandle<()>, mpsc::Receiver<T>) {
    let mut file = std::fs::File::create(path)
        .unwrap_or_else(|error| panic!("a log file at {}: {error}", path.display()));
    let (found, receiver) = mpsc::channel();
    let copying = std::thread::spawn(move || {
        let mut found = Some(found);
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            let _ = writeln!(file, "{line}");
            if let Some(sender) = &found {
                if let Some(value) = sought(&line) {
                    let _ = sender.send(value);
                    found = None;
                }
            }
        }
    });
    (copying, receiver)
}

/// The file at `path`, as far as written (empty when there is none).
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Its last `lines` lines, for a failure message.
pub fn tail(path: &Path, lines: usize) -> String {
    let text = read(path);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The events of the audit trail in `logs`, a server's JSON log lines (`--log-format
/// json`); a line that is not JSON fails the test.
pub fn audit_events(logs: &str) -> Vec<serde_json::Value> {
    logs.lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line)
                .unwrap_or_else(|_| panic!("a log line that is not JSON: {line}"))
        })
        .filter(|event| event["target"] == "tool_runtime::audit")
        .collect()
}
