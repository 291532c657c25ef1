//! Running a tool's work: async tools on the caller's executor, sync tools off it, and a
//! panic in either caught and logged.
//!
//! A hand-off to tokio's blocking pool costs thread wake-ups, more than many sync tools take
//! (`add(a, b)`), and a thread per concurrent call. So a sync tool that has finished quickly
//! several times in a row on the pool is then run closer: in place by a transport that can
//! afford it (the stdio reader, which hands its role to another thread when a run takes
//! long), between the turns of a runtime we drive (which moves to another thread when a run
//! takes long), else on a lane (see [`lanes`](super::lanes)), a thread of ours; the caller
//! awaits it like any future, so timeouts and cancellation always apply. If such a run ever
//! takes long, the tool goes back to the pool until it proves quick again.

use super::output::{Produced, ToolError};
use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// What a tool returns when its work finishes.
pub(crate) type ToolFuture = Pin<Box<dyn Future<Output = Result<Produced, ToolError>> + Send>>;

/// The work of one call, ready to run.
#[doc(hidden)]
pub enum Invocation {
    /// An `async fn` tool.
    Async(ToolFuture),
    /// A plain `fn` tool; it may block, so it never runs on the executor.
    Blocking(BlockingWork),
}

/// The work of a plain `fn` tool.
pub(crate) type BlockingWork = Box<dyn FnOnce() -> Result<Produced, ToolError> + Send>;

/// How a run ended when it produced no value.
pub(crate) enum RunFailure {
    Failed(ToolError),
    /// The panic message, for the log only.
    Panicked(String),
}

/// A sync tool counts as quick below this.
const QUICK: Duration = Duration::from_micros(100);
/// Quick runs on the pool in a row before a tool runs in place or on a lane; each time it
/// was sent back, it takes this many more.
const QUICK_STREAK: u32 = 8;
/// The most quick runs in a row a tool sent back many times needs.
const LONGEST_STREAK: u32 = 1024;
/// A run in place or on a lane longer than this sends the tool back to the pool.
const TOO_SLOW_IN_PLACE: Duration = Duration::from_millis(1);

/// How fast one sync tool has been, to decide where it runs.
#[derive(Debug)]
pub(crate) struct Pace {
    /// The tool's name, for the log.
    tool: Box<str>,
    quick_streak: AtomicU32,
    in_place: AtomicBool,
    /// How many times a run in place took long. Wall-clock time cannot tell a tool that
    /// blocks from a thread the system preempted on a busy machine, so being sent back is
    /// not for good: the tool may prove quick again, over more runs each time.
    demotions: AtomicU32,
}

impl Pace {
    pub(crate) fn new(tool: &str) -> Pace {
        Pace {
            tool: tool.into(),
            quick_streak: AtomicU32::new(0),
            in_place: AtomicBool::new(false),
            demotions: AtomicU32::new(0),
        }
    }

    /// A tool already proven quick.
    #[cfg(test)]
    pub(crate) fn proven_quick(tool: &str) -> Pace {
        let pace = Pace::new(tool);
        pace.in_place.store(true, Ordering::Relaxed);
        pace
    }

    /// Whether the tool runs in place or on a lane rather than on the blocking pool.
    pub(crate) fn runs_in_place(&self) -> bool {
        self.in_place.load(Ordering::Relaxed)
    }

    fn record_pooled(&self, took: Duration) {
        if took < QUICK {
            let demotions = self.demotions.load(Ordering::Relaxed);
            let needed = QUICK_STREAK
                .saturating_mul(demotions.saturating_add(1))
                .min(LONGEST_STREAK);
            if self.quick_streak.fetch_add(1, Ordering::Relaxed) + 1 >= needed {
                self.in_place.store(true, Ordering::Relaxed);
            }
        } else {
            self.quick_streak.store(0, Ordering::Relaxed);
        }
    }

    /// Sends the tool back to the pool at once (a run in place is taking long), until it
    /// proves quick again.
    pub(crate) fn demote(&self) {
        if !self.in_place.swap(false, Ordering::Relaxed) {
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

    fn record_in_place(&self, took: Duration) {
        if took > TOO_SLOW_IN_PLACE {
            self.demote();
        }
    }
}

/// Runs a sync tool's work here and now, on a thread whose stalling holds up no one (the
/// stdio transport's reader, which hands its role to another thread when a run takes long).
pub(crate) fn run_in_place(
    work: BlockingWork,
    pace: &Pace,
    started: Instant,
) -> Result<Produced, RunFailure> {
    settle(run_timed(work, pace, started))
}

/// Runs sync work, catching a panic, and records how long it took since `started` (just
/// before; the caller's own reading of the clock, where it has one): a tool that turned
/// slow goes back to the pool.
fn run_timed(
    work: BlockingWork,
    pace: &Pace,
    started: Instant,
) -> Result<Result<Produced, ToolError>, Box<dyn Any + Send>> {
    let outcome = catch_unwind(AssertUnwindSafe(work));
    pace.record_in_place(started.elapsed());
    outcome
}

/// Runs a sync tool's work between turns of the runtime, where we drive it, else on a lane,
/// and awaits it; the run records how long it took, even when the caller stopped waiting (a
/// timeout), so a tool that turned slow is sent back to the pool.
async fn run_quick(
    work: BlockingWork,
    pace: Arc<Pace>,
) -> Result<Result<Produced, ToolError>, Box<dyn Any + Send>> {
    let (answer, answered) = super::lanes::returns::pair();
    let tool = Arc::clone(&pace);
    let job: super::lanes::Job = Box::new(move || {
        answer.send(run_timed(work, &pace, Instant::now()));
    });
    // Between turns of the runtime, where we drive it; else on a lane.
    if let Err(job) = super::lanes::turns::defer(job, &tool) {
        super::lanes::submit(job);
    }
    match answered.await {
        Some(outcome) => outcome,
        // Dropped unrun only when the server stops first (or a lane's thread died, which
        // catch_unwind prevents).
        None => Ok(Err(ToolError::new("the server is shutting down"))),
    }
}

pub(crate) async fn run(invocation: Invocation, pace: &Arc<Pace>) -> Result<Produced, RunFailure> {
    let outcome = match invocation {
        Invocation::Async(future) => CatchUnwind(future).await,
        Invocation::Blocking(work) if pace.runs_in_place() => {
            run_quick(work, Arc::clone(pace)).await
        }
        Invocation::Blocking(work) => match tokio::runtime::Handle::try_current() {
            Ok(_) => {
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
            // Outside a runtime (a plain test, a CLI): run in place.
            Err(_) => catch_unwind(AssertUnwindSafe(work)),
        },
    };
    settle(outcome)
}

fn settle(
    outcome: Result<Result<Produced, ToolError>, Box<dyn Any + Send>>,
) -> Result<Produced, RunFailure> {
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(RunFailure::Failed(error)),
        Err(payload) => Err(RunFailure::Panicked(panic_message(payload.as_ref()))),
    }
}

pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-text payload".to_owned()
    }
}

/// Polls a future, turning a panic into an error. (futures-util has the same combinator;
/// for one small wrapper we do not take the dependency.)
pub(crate) struct CatchUnwind<F>(pub(crate) F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match catch_unwind(AssertUnwindSafe(|| Pin::new(&mut self.0).poll(cx))) {
            Ok(Poll::Ready(result)) => Poll::Ready(Ok(result)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

/// Runs a sync function of user code that is not a tool's (a completion function, say)
/// where such code runs: on the blocking pool, so it never holds up the executor; in place
/// outside a runtime. `Err` when it panicked (the panic is logged, as a tool's is).
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
        tracing::error!(panic = %panic_message(payload.as_ref()), "user code panicked");
    })
}
