//! Waiting for time to pass: the one place work waits on the runtime's timers (a call's
//! time limit, a moment before a call becomes a task, patience with a slow store), so the
//! layers above never name the runtime.

use std::future::Future;
use std::time::Duration;

/// A moment as the runtime's clock reads it (which a test may pause and advance); outside
/// a runtime, the system's monotonic clock.
pub(crate) use tokio::time::Instant;

/// Resolves once `duration` has passed.
pub(crate) async fn sleep(duration: Duration) {
    tokio::time::sleep(duration).await;
}

/// Resolves at `deadline`.
pub(crate) async fn sleep_until(deadline: Instant) {
    tokio::time::sleep_until(deadline).await;
}

/// What `work` gives, if it gives it within `limit`; `None` once the limit has passed (the
/// work is then dropped).
pub(crate) async fn within<F: Future>(limit: Duration, work: F) -> Option<F::Output> {
    tokio::time::timeout(limit, work).await.ok()
}
