//! Waiting for what a test is about: one patience for every hang guard, and polling for
//! what can only be learnt by asking again.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// How long a test waits for something that should happen before it calls it a hang and
/// fails: 30 s, or `TOOL_TESTS_PATIENCE_SECS` whole seconds (the test scripts read the same
/// variable the same way). It bounds only waits that end as soon as the awaited thing
/// happens, so it costs nothing when the tests pass and is generous for a busy machine.
/// A value that is not a whole number of seconds above zero fails the test rather than
/// being replaced by the default unnoticed.
pub static PATIENCE: LazyLock<Duration> = LazyLock::new(|| {
    let Ok(text) = std::env::var("TOOL_TESTS_PATIENCE_SECS") else {
        return Duration::from_secs(30);
    };
    match text.trim().parse::<u64>() {
        Ok(seconds) if seconds > 0 => Duration::from_secs(seconds),
        _ => panic!("TOOL_TESTS_PATIENCE_SECS is a whole number of seconds above 0, not {text:?}"),
    }
});

/// How often [`wait_until`] and [`wait_for`] ask again.
const POLL_EVERY: Duration = Duration::from_millis(15);

/// Asks `done` every 15 ms until it says true; past [`PATIENCE`], fails the test saying
/// that `what` did not happen.
#[track_caller]
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    wait_until_some(what, || done().then_some(()))
}

/// Asks `found` every 15 ms until it gives something, and gives it; past [`PATIENCE`],
/// fails the test saying that `what` did not happen.
#[track_caller]
pub fn wait_until_some<T>(what: &str, mut found: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + *PATIENCE;
    loop {
        if let Some(found) = found() {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not happen within {:?}",
            *PATIENCE
        );
        std::thread::sleep(POLL_EVERY);
    }
}

/// [`wait_until`] for an async question, on tokio's clock (so paused time passes as the
/// test polls).
pub async fn wait_for(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + *PATIENCE;
    while !done().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} did not happen within {:?}",
            *PATIENCE
        );
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// [`wait_until_some`] for an async question, on tokio's clock.
pub async fn wait_for_some<T>(what: &str, mut found: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + *PATIENCE;
    loop {
        if let Some(found) = found().await {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} did not happen within {:?}",
            *PATIENCE
        );
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// A wall clock that moves with tokio's clock: with paused time, it stands still until the
/// test advances it. For servers whose stamps (an output's expiry, a lease's end) are the
/// subject of a test under paused time.
#[derive(Debug)]
pub struct TokioClock {
    started: std::time::SystemTime,
    at: tokio::time::Instant,
}

impl TokioClock {
    /// A clock reading the system's time now, moving from now on as tokio's does.
    pub fn new() -> std::sync::Arc<TokioClock> {
        std::sync::Arc::new(TokioClock {
            started: std::time::SystemTime::now(),
            at: tokio::time::Instant::now(),
        })
    }
}

impl tool_runtime::mcp::Clock for TokioClock {
    fn now(&self) -> std::time::SystemTime {
        self.started + self.at.elapsed()
    }
}
