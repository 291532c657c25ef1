//! A gate across processes, made of files: a tool run by a server in another process (or
//! in this one) says it has entered and waits until the test opens the gate, so a test
//! knows a call is running, and for how long, without sleeping.
//!
//! The test side is [`FileGate`]; the tool side is [`hold`] (async tools) or
//! [`hold_blocking`] (sync tools), given [`FileGate::path`] as an argument.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The name of the file whose appearance opens the gate.
const RELEASE: &str = "release";

/// How long a tool waits at a gate nobody opens before it goes on by itself: it must not
/// outlive a test that failed, yet must outwait any test that is still waiting.
fn hold_at_most() -> Duration {
    Duration::from_secs(60).max(*crate::PATIENCE * 2)
}

/// How often a waiting tool looks for the release.
const LOOK_EVERY: Duration = Duration::from_millis(10);

/// The test's side of a gate: a directory of its own, where each run of a tool creates
/// `entered-<pid>-<n>` and then waits for `release`. Dropping it opens the gate (so no
/// tool is left waiting) and removes the directory.
#[derive(Debug)]
pub struct FileGate {
    dir: PathBuf,
}

impl FileGate {
    /// A new, closed gate; `name` says what it is for (it appears in the directory's name).
    pub fn new(name: &str) -> FileGate {
        static MADE: AtomicU32 = AtomicU32::new(0);
        let made = MADE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "tool-tests-gate-{name}-{}-{made}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|error| panic!("a gate directory at {}: {error}", dir.display()));
        FileGate { dir }
    }

    /// The gate's directory, as the argument a tool is given.
    pub fn path(&self) -> &str {
        self.dir.to_str().expect("temporary paths are text")
    }

    /// The process ids of the runs that have entered so far, in ascending order (one
    /// entry per run).
    pub fn entered_pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = std::fs::read_dir(&self.dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter_map(|entry| {
                        let name = entry.file_name().into_string().ok()?;
                        let rest = name.strip_prefix("entered-")?;
                        rest.split('-').next()?.parse().ok()
                    })
                    .collect()
            })
            .unwrap_or_default();
        pids.sort_unstable();
        pids
    }

    /// Waits until `runs` runs have entered (fails the test past [`crate::PATIENCE`]);
    /// their process ids, as [`entered_pids`](FileGate::entered_pids) gives them.
    #[track_caller]
    pub fn wait_entered(&self, runs: usize) -> Vec<u32> {
        crate::wait_until_some(&format!("{runs} run(s) entering {}", self.path()), || {
            let pids = self.entered_pids();
            (pids.len() >= runs).then_some(pids)
        })
    }

    /// [`wait_entered`](FileGate::wait_entered), for an async test: the runtime goes on
    /// meanwhile (the server under test may run on it).
    pub async fn wait_entered_async(&self, runs: usize) -> Vec<u32> {
        let what = format!("{runs} run(s) entering {}", self.path());
        let mut pids = Vec::new();
        crate::wait_for(&what, async || {
            pids = self.entered_pids();
            pids.len() >= runs
        })
        .await;
        pids
    }

    /// Opens the gate: every run waiting at it goes on, and so will any later one.
    pub fn release(&self) {
        std::fs::write(self.dir.join(RELEASE), b"")
            .unwrap_or_else(|error| panic!("opening the gate {}: {error}", self.path()));
    }

    /// Closes the gate again, for the next runs.
    pub fn close(&self) {
        let _ = std::fs::remove_file(self.dir.join(RELEASE));
    }
}

impl Drop for FileGate {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join(RELEASE), b"");
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Numbers the runs of this process at a gate, so each enters under a name of its own.
static RUNS: AtomicU32 = AtomicU32::new(0);

/// Says this run has entered the gate at `dir`; true when it may go on at once.
fn enter(dir: &Path) -> bool {
    let run = RUNS.fetch_add(1, Ordering::Relaxed);
    let entered = dir.join(format!("entered-{}-{run}", std::process::id()));
    // A gate already gone (its test ended) lets every run through.
    std::fs::write(entered, b"").is_err()
}

/// Whether the gate at `dir` is open (or gone with its test).
fn open(dir: &Path) -> bool {
    dir.join(RELEASE).exists() || !dir.exists()
}

/// The tool's side, for an async tool: enters the gate at `dir` ([`FileGate::path`]) and
/// waits until the test opens it (a minute at most).
pub async fn hold(dir: &str) {
    let dir = Path::new(dir);
    if enter(dir) {
        return;
    }
    let until = tokio::time::Instant::now() + hold_at_most();
    while !open(dir) && tokio::time::Instant::now() < until {
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

/// [`hold`], for a sync tool: blocks its thread.
pub fn hold_blocking(dir: &str) {
    let dir = Path::new(dir);
    if enter(dir) {
        return;
    }
    let until = Instant::now() + hold_at_most();
    while !open(dir) && Instant::now() < until {
        std::thread::sleep(LOOK_EVERY);
    }
}
