//! Where a sync tool's work runs: never inside a task, so that a tool that blocks holds up
//! no other request and its time limit always fires. One rule, whatever the transport:
//!
//! - **On tokio's blocking pool** (`spawn_blocking`), by default.
//! - **Between the turns of a runtime we drive**, for a tool proven quick: the runtime that
//!   `serve` builds runs on one thread, in turns ([`turns`]); a quick tool's work runs on
//!   that thread between two turns, so its call crosses no thread at all. A hand-off to the
//!   pool and back costs two wake-ups of sleeping threads, more than a small tool and the
//!   rest of its call together. A watchdog looks while such work runs: when one run lasts
//!   [`STUCK_AFTER`] (one of its [`Limits`]), it hands the runtime to a new thread (the
//!   other requests go on, time limits fire, that call's included) and the tool goes back
//!   to the pool.
//! - **In place**, outside any runtime (a plain test, a direct call from sync code).
//!
//! A tool is *proven quick* once its last [`QUICK_STREAK`] runs on the pool each took less
//! than [`QUICK`] (its [`Pace`]). Wall-clock time cannot tell a tool that blocks from a
//! thread the system preempted on a busy machine, so a tool sent back is not sent back for
//! good: it may prove quick again, over more runs each time.

// Only `serve` (the command line) drives a runtime in turns; without it, every sync tool
// runs on the pool and what serves the turns is never reached.
#[cfg_attr(
    not(any(feature = "cli", test)),
    expect(
        dead_code,
        reason = "only the command line's serve drives a runtime in turns"
    )
)]
pub(crate) mod turns;

use super::output::{Produced, ToolError};
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The work of a plain `fn` tool.
pub(crate) type BlockingWork = Box<dyn FnOnce() -> Result<Produced, ToolError> + Send>;

/// What a sync tool's run gave: its outcome, or the payload of its panic.
pub(crate) type Ran = Result<Result<Produced, ToolError>, Box<dyn Any + Send>>;

/// A run on the pool shorter than this counts as quick.
const QUICK: Duration = Duration::from_micros(100);
/// Quick runs in a row on the pool before a tool runs between turns; each time it was sent
/// back, it needs this many more.
const QUICK_STREAK: u32 = 8;
/// The most quick runs in a row a tool sent back many times needs.
const LONGEST_STREAK: u32 = 1024;
/// A run between turns longer than this sends the tool back to the pool once it returns.
const TOO_SLOW: Duration = Duration::from_millis(1);
/// A run between turns this long counts as stuck: the watchdog moves the runtime on.
const STUCK_AFTER: Duration = Duration::from_millis(2);

/// The wall-clock thresholds of running work between turns ([`turns`]). A server uses
/// [`Limits::DEFAULT`]; the unit tests of what does not depend on them use seconds, since a
/// thread preempted on a busy machine would otherwise count as slow or stuck.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// A run longer than this sends its tool back to the pool once it returns.
    pub(crate) too_slow: Duration,
    /// A run this long counts as stuck: the watchdog moves the runtime on.
    pub(crate) stuck_after: Duration,
    /// How long jobs run in a row before the runtime gets a turn.
    pub(crate) turn_budget: Duration,
}

impl Limits {
    /// The thresholds a server runs with.
    pub(crate) const DEFAULT: Limits = Limits {
        too_slow: TOO_SLOW,
        stuck_after: STUCK_AFTER,
        turn_budget: turns::TURN_BUDGET,
    };
}

/// Runs a sync tool's work where the rule above says, and gives what it returned (or its
/// panic). The caller awaits it like any future, so its time limit and cancellation apply.
pub(crate) async fn run(work: BlockingWork, pace: &Arc<Pace>) -> Ran {
    #[cfg(feature = "otel")]
    let work = in_current_span(work);
    let work = if pace.is_quick() {
        match turns::defer(work, pace) {
            Ok(answer) => {
                return match answer.await {
                    Some(ran) => ran,
                    // Dropped unrun only when the server stops first.
                    None => Ok(Err(ToolError::new("the server is shutting down"))),
                };
            }
            Err(work) => work,
        }
    } else {
        work
    };
    if tokio::runtime::Handle::try_current().is_err() {
        return catch_unwind(AssertUnwindSafe(work));
    }
    let timed = move || {
        let started = Instant::now();
        let result = work();
        (result, started.elapsed())
    };
    match tokio::task::spawn_blocking(timed).await {
        Ok((result, took)) => {
            pace.record_pooled(took);
            Ok(result)
        }
        Err(join_error) if join_error.is_panic() => Err(join_error.into_panic()),
        // Cancelled only when the runtime shuts down under us.
        Err(_) => Ok(Err(ToolError::new("the server is shutting down"))),
    }
}

/// The work, run inside the span current where it was handed over (the request's), so
/// that a sync tool's own spans nest there on whichever thread it runs: a thread of the
/// blocking pool does not carry the caller's span.
#[cfg(feature = "otel")]
fn in_current_span(work: BlockingWork) -> BlockingWork {
    if !crate::otel::active() {
        return work;
    }
    let span = tracing::Span::current();
    if span.is_disabled() {
        return work;
    }
    Box::new(move || span.in_scope(work))
}

/// Runs a sync function of user code that is not a tool's (a completion function, say) on
/// the blocking pool, so it never holds up the executor; in place outside a runtime. `Err`
/// when it panicked (the panic is logged, as a tool's is).
pub(crate) async fn run_sync<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ()> {
    let outcome = match tokio::runtime::Handle::try_current() {
        Ok(_) => match tokio::task::spawn_blocking(work).await {
            Ok(value) => Ok(value),
            Err(join_error) if join_error.is_panic() => Err(join_error.into_panic()),
            // Cancelled only when the runtime shuts down under us.
            Err(_) => return Err(()),
        },
        Err(_) => catch_unwind(AssertUnwindSafe(work)),
    };
    outcome.map_err(|payload| {
        tracing::error!(panic = %super::invoke::panic_message(payload.as_ref()), "user code panicked");
    })
}

/// How fast one sync tool has been, to decide where it runs.
#[derive(Debug)]
pub(crate) struct Pace {
    /// The tool's name, for the log.
    tool: Box<str>,
    quick_streak: AtomicU32,
    quick: AtomicBool,
    /// How many times the tool was sent back to the pool.
    demotions: AtomicU32,
}

impl Pace {
    pub(crate) fn new(tool: &str) -> Pace {
        Pace {
            tool: tool.into(),
            quick_streak: AtomicU32::new(0),
            quick: AtomicBool::new(false),
            demotions: AtomicU32::new(0),
        }
    }

    /// A tool already proven quick.
    #[cfg(test)]
    pub(crate) fn proven_quick(tool: &str) -> Pace {
        let pace = Pace::new(tool);
        pace.quick.store(true, Ordering::Relaxed);
        pace
    }

    /// Whether the tool has proven quick (and runs between turns where it can).
    pub(crate) fn is_quick(&self) -> bool {
        self.quick.load(Ordering::Relaxed)
    }

    fn record_pooled(&self, took: Duration) {
        if took >= QUICK {
            self.quick_streak.store(0, Ordering::Relaxed);
            return;
        }
        let demotions = self.demotions.load(Ordering::Relaxed);
        let needed = QUICK_STREAK
            .saturating_mul(demotions.saturating_add(1))
            .min(LONGEST_STREAK);
        if self.quick_streak.fetch_add(1, Ordering::Relaxed) + 1 >= needed {
            self.quick.store(true, Ordering::Relaxed);
        }
    }

    /// Records a run between turns: one that took longer than `too_slow` sends the tool
    /// back to the pool.
    fn record_between_turns(&self, took: Duration, too_slow: Duration) {
        if took > too_slow {
            self.demote();
        }
    }

    /// Sends the tool back to the pool at once, until it proves quick again.
    fn demote(&self) {
        if !self.quick.swap(false, Ordering::Relaxed) {
            return;
        }
        self.quick_streak.store(0, Ordering::Relaxed);
        let tool = &*self.tool;
        if self.demotions.fetch_add(1, Ordering::Relaxed) == 0 {
            tracing::warn!(
                tool,
                "a sync tool proven quick ran long; it runs on the blocking pool until it proves \
                quick again"
            );
        } else {
            tracing::debug!(tool, "a sync tool proven quick ran long again");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_proves_quick_after_a_streak_and_needs_a_longer_one_once_sent_back() {
        let pace = Pace::new("add");
        for _ in 0..QUICK_STREAK - 1 {
            pace.record_pooled(Duration::from_micros(5));
        }
        assert!(!pace.is_quick(), "not before the streak is whole");
        pace.record_pooled(Duration::from_micros(5));
        assert!(pace.is_quick());

        pace.record_between_turns(Duration::from_millis(3), Limits::DEFAULT.too_slow);
        assert!(!pace.is_quick(), "a long run between turns sends it back");
        for _ in 0..QUICK_STREAK {
            pace.record_pooled(Duration::from_micros(5));
        }
        assert!(!pace.is_quick(), "once sent back, it needs a longer streak");
        pace.record_pooled(Duration::from_millis(1));
        for _ in 0..2 * QUICK_STREAK {
            pace.record_pooled(Duration::from_micros(5));
        }
        assert!(
            pace.is_quick(),
            "a slow run restarts the streak, which then completes"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_tool_not_proven_quick_runs_on_the_pool_and_its_panic_comes_back() {
        let pace = Arc::new(Pace::new("boom"));
        let here = std::thread::current().id();
        let work: BlockingWork = Box::new(move || {
            assert_ne!(std::thread::current().id(), here, "off the caller's thread");
            panic!("the tool failed")
        });
        let payload = run(work, &pace).await.expect_err("the panic comes back");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the tool failed"));
    }
}
