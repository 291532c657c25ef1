//! A current-thread runtime we drive ourselves, so that the work of quick sync tools its
//! calls submit runs on its own thread between its turns: such a call crosses no thread.
//!
//! [`drive`] runs the runtime in turns: a turn is a `Runtime::block_on` of a future that a
//! call wakes when it submits work, and that tokio polls once it has run the ready tasks it
//! took up (at most its `event_interval`) and looked at timers and I/O. The thread then
//! runs the waiting work itself and starts the next turn, whose first step wakes the calls
//! that work answered, from the runtime's own thread (so without a system call).
//!
//! While work runs, the runtime stands still, as it would if the tools ran inside a task.
//! So work runs for [`TURN_BUDGET`] at most before the runtime gets a turn, and a watchdog
//! looks while work runs: when the run in progress would be stuck, and every
//! [`stuck_after`](super::Limits::stuck_after) at most (so a run that starts between two
//! looks is caught on time). When a run has lasted that long, the watchdog sends its tool
//! back to the blocking pool and starts another thread, which drives the runtime from then
//! on (any thread may drive a current-thread runtime while no other does): time limits
//! fire, that call's included, and other requests are served. The stuck thread finishes
//! its run and ends; the waiting work of the tool sent back goes to the pool.
//!
//! Work that waits on the runtime it interrupts (a sync tool calling
//! `Handle::current().block_on(..)`) waits for that hand-over, and its tool then goes back
//! to the pool like any tool that got stuck.

use super::{BlockingWork, Limits, Pace, Ran};
use crate::sync::lock;
use futures_util::FutureExt;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use tokio::runtime::{Runtime, RuntimeFlavor};

/// How long jobs run in a row before the runtime gets a turn.
pub(super) const TURN_BUDGET: Duration = Duration::from_millis(1);
/// How long after the last job started the watchdog still looks; then it sleeps until the
/// next job starts.
const BUSY_FOR: Duration = Duration::from_millis(50);
/// The shortest wait between looks, so that rounding never makes the watchdog spin.
const SHORTEST_WAIT: Duration = Duration::from_micros(50);
/// A bound on the threads driving the runtime or stuck in a job, so a flood of stuck tools
/// cannot start threads without end.
const MAX_DRIVERS: usize = 64;
/// The stack of a driving thread: a main thread's, where the runtime used to run.
const DRIVER_STACK: usize = 8 << 20;

/// Runs `future` to its end on `runtime`, as `Runtime::block_on` would, then shuts the
/// runtime down, waiting at most `shutdown` for its blocking work. On a current-thread
/// runtime, the quick sync tools its calls submit run on the driving thread between turns;
/// a multi-thread runtime is simply blocked on (its workers are not ours to use).
///
/// A panic of `future` is resumed here.
pub(crate) fn drive<F>(runtime: Runtime, future: F, shutdown: Duration) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    drive_with(runtime, future, shutdown, Limits::DEFAULT)
}

/// [`drive`], with work between turns held to `limits`.
fn drive_with<F>(runtime: Runtime, future: F, shutdown: Duration, limits: Limits) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let blocked_on = |runtime: Runtime, future: F| {
        let output = runtime.block_on(future);
        runtime.shutdown_timeout(shutdown);
        output
    };
    if runtime.handle().runtime_flavor() != RuntimeFlavor::CurrentThread {
        return blocked_on(runtime, future);
    }
    let driven = Arc::new(Driven {
        handle: runtime.handle().clone(),
        limits,
        runtime: Mutex::new(None),
        state: Mutex::new(State {
            jobs: VecDeque::new(),
            answered: Vec::new(),
            driver: 0,
            last_driver: 0,
            threads: 0,
            running: None,
            last_run: None,
            runtime_first: false,
            turn: None,
            finished: false,
            watchdog_asleep: false,
        }),
        finished: Condvar::new(),
        watch: Condvar::new(),
    });
    // No job may run between turns without the watchdog.
    let watched = Arc::clone(&driven);
    let watchdog = std::thread::Builder::new()
        .name("tool-runtime-watchdog".to_owned())
        .spawn(move || watched.watch());
    if let Err(error) = watchdog {
        tracing::error!(%error, "cannot start a watchdog thread; sync tools run on the blocking pool");
        return blocked_on(runtime, future);
    }
    let outcome = Arc::new(Mutex::new(None));
    let ending = Arc::clone(&driven);
    let stored = Arc::clone(&outcome);
    drop(runtime.spawn(async move {
        let result = AssertUnwindSafe(future).catch_unwind().await;
        *lock(&stored) = Some(result);
        ending.finish();
    }));
    *lock(&driven.runtime) = Some(runtime);

    // A thread of its own drives the runtime, so that this one, which waits for the end,
    // is never the one stuck in a tool.
    let started = driven.start_driver(&mut lock(&driven.state));
    if !started {
        driven.drive_from(0);
    }
    let mut state = lock(&driven.state);
    while !state.finished {
        state = crate::sync::wait(&driven.finished, state);
    }
    drop(state);
    // Whoever drove last has left `block_on` (the end ends every turn): the runtime is free.
    let runtime = lock(&driven.runtime).take();
    if let Some(runtime) = runtime {
        runtime.shutdown_timeout(shutdown);
    }
    let result = lock(&outcome).take();
    match result {
        Some(Ok(output)) => output,
        Some(Err(panic)) => resume_unwind(panic),
        // The future's outcome is stored before its end is signalled.
        None => unreachable!("a driven future ended without an outcome"),
    }
}

/// Queues a quick sync tool's `work` to run between turns of the runtime this thread
/// drives, and gives what its call awaits; gives the work back when this thread drives none
/// (another runtime, or no runtime). `pace` is the tool's, sent back to the pool if the run
/// gets stuck.
pub(crate) fn defer(work: BlockingWork, pace: &Arc<Pace>) -> Result<Answered, BlockingWork> {
    DRIVING.with(|driving| match driving.borrow().as_ref() {
        Some(driven) => {
            let (answer, answered) = slot();
            let mut state = lock(&driven.state);
            state.jobs.push_back(Job {
                work,
                pace: Arc::clone(pace),
                answer,
            });
            if let Some(turn) = &state.turn {
                // From the runtime's own thread: a flag, no system call.
                turn.wake_by_ref();
            }
            Ok(answered)
        }
        None => Err(work),
    })
}

/// A sync tool's work waiting to run between turns, and where its outcome goes.
struct Job {
    work: BlockingWork,
    pace: Arc<Pace>,
    answer: Answer,
}

impl Job {
    /// Runs the work here (between turns), timed from `started` for its tool's pace:
    /// longer than `too_slow` sends the tool back to the pool. Gives the time it ended,
    /// which the next job starts from: one reading of the clock per job, not three.
    fn run(self, started: Instant, too_slow: Duration) -> Instant {
        let ran = catch_unwind(AssertUnwindSafe(self.work));
        let ended = Instant::now();
        self.pace
            .record_between_turns(ended.saturating_duration_since(started), too_slow);
        self.answer.send(ran);
        ended
    }

    /// Runs the work on the blocking pool: its tool got stuck since it was queued.
    fn run_on_pool(self, handle: &tokio::runtime::Handle) {
        let Job { work, answer, .. } = self;
        drop(handle.spawn_blocking(move || answer.send(catch_unwind(AssertUnwindSafe(work)))));
    }
}

/// Where a run's outcome goes, and what its call awaits: `None` once the run was dropped
/// unrun (the runtime shut down).
fn slot() -> (Answer, Answered) {
    let slot = Arc::new(Mutex::new(Slot {
        ran: None,
        waker: None,
        dropped: false,
    }));
    (Answer(Some(Arc::clone(&slot))), Answered(slot))
}

struct Slot {
    ran: Option<Ran>,
    waker: Option<Waker>,
    dropped: bool,
}

/// The sending half of [`slot`].
struct Answer(Option<Arc<Mutex<Slot>>>);

impl Answer {
    fn send(mut self, ran: Ran) {
        if let Some(slot) = self.0.take() {
            let waker = {
                let mut slot = lock(&slot);
                slot.ran = Some(ran);
                slot.waker.take()
            };
            wake(waker);
        }
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        if let Some(slot) = self.0.take() {
            let waker = {
                let mut slot = lock(&slot);
                slot.dropped = true;
                slot.waker.take()
            };
            wake(waker);
        }
    }
}

/// Wakes a call whose run just ended: at the start of the next turn when the run happened
/// between turns on this thread (from the runtime's own thread, a queue push), else now.
fn wake(waker: Option<Waker>) {
    let Some(waker) = waker else {
        return;
    };
    if RUNNING_JOBS.get() {
        ANSWERED.with(|answered| answered.borrow_mut().push(waker));
    } else {
        waker.wake();
    }
}

/// What a call whose work was deferred awaits.
pub(crate) struct Answered(Arc<Mutex<Slot>>);

impl Future for Answered {
    type Output = Option<Ran>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Ran>> {
        let mut slot = lock(&self.0);
        if let Some(ran) = slot.ran.take() {
            return Poll::Ready(Some(ran));
        }
        if slot.dropped {
            return Poll::Ready(None);
        }
        if !slot.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            slot.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

thread_local! {
    /// The runtime this thread drives, during its turns.
    static DRIVING: RefCell<Option<Arc<Driven>>> = const { RefCell::new(None) };
    /// Whether this thread runs jobs between turns right now.
    static RUNNING_JOBS: Cell<bool> = const { Cell::new(false) };
    /// The wakers of the calls answered by the job this thread just ran.
    static ANSWERED: RefCell<Vec<Waker>> = const { RefCell::new(Vec::new()) };
}

struct Driven {
    /// Entered while jobs run, as tokio's blocking pool does for sync work: a tool can reach
    /// the runtime (`Handle::current`).
    handle: tokio::runtime::Handle,
    /// How long work may run between turns.
    limits: Limits,
    /// The runtime, held by the thread driving it for the length of a turn; `None` before
    /// the first turn and after the end.
    runtime: Mutex<Option<Runtime>>,
    state: Mutex<State>,
    /// The thread that called [`drive`] waits here when another one drives to the end.
    finished: Condvar,
    /// The watchdog waits here.
    watch: Condvar,
}

struct State {
    /// Work submitted and not yet started.
    jobs: VecDeque<Job>,
    /// The wakers of calls answered between turns, for the next turn to wake (whichever
    /// thread drives it).
    answered: Vec<Waker>,
    /// The number of the thread that drives the runtime (0: the one that called [`drive`],
    /// which drives only when no thread of its own could start).
    driver: u64,
    /// The highest number given to a thread so far.
    last_driver: u64,
    /// Threads started to drive the runtime and not yet ended: the driver, and any still
    /// stuck in a job.
    threads: usize,
    /// The job the driver runs now: since when, and its tool's pace.
    running: Option<(Instant, Arc<Pace>)>,
    /// When the last job started.
    last_run: Option<Instant>,
    /// The next turn runs the runtime's ready tasks before any job (jobs ran out of time, or
    /// the runtime just changed threads).
    runtime_first: bool,
    /// The waker of the driver's turn: a submitted job or the end ends the turn.
    turn: Option<Waker>,
    /// The driven future has ended.
    finished: bool,
    /// Whether the watchdog sleeps until the next job starts.
    watchdog_asleep: bool,
}

/// How a turn ended.
enum Turn {
    /// Jobs wait to run.
    Jobs,
    /// The driven future has ended, or another thread drives now.
    Over,
}

impl Driven {
    /// Drives the runtime as thread number `me` until the end, or until another thread
    /// drives it.
    fn drive_from(self: &Arc<Self>, me: u64) {
        loop {
            let turn = {
                let runtime = lock(&self.runtime);
                let Some(runtime) = runtime.as_ref() else {
                    break;
                };
                let _driving = Driving::set(self);
                runtime.block_on(poll_fn(|cx| self.poll_turn(me, cx)))
            };
            match turn {
                Turn::Jobs if self.run_jobs(me) => {}
                _ => break,
            }
        }
    }

    /// The future of one turn: polled first when the turn starts, then when a call has
    /// submitted a job (or the end came) and the runtime's ready tasks have run.
    fn poll_turn(&self, me: u64, cx: &mut Context<'_>) -> Poll<Turn> {
        let mut state = lock(&self.state);
        let answered = std::mem::take(&mut state.answered);
        let turn = if state.finished || state.driver != me {
            Poll::Ready(Turn::Over)
        } else if !state.jobs.is_empty() && !std::mem::take(&mut state.runtime_first) {
            Poll::Ready(Turn::Jobs)
        } else {
            if !state.turn.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                state.turn = Some(cx.waker().clone());
            }
            if !state.jobs.is_empty() {
                // Polled again once the runtime's ready tasks have run.
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        };
        drop(state);
        // From the runtime's own thread: each a queue push.
        for waker in answered {
            waker.wake();
        }
        turn
    }

    /// Runs the waiting jobs, one at a time, while thread `me` drives and for the turn
    /// budget at most; `false` once another thread drives.
    fn run_jobs(self: &Arc<Self>, me: u64) -> bool {
        RUNNING_JOBS.set(true);
        let entered = self.handle.enter();
        let began = Instant::now();
        // When the job about to run starts: when the turn began, then when the last ended.
        let mut now = began;
        let mut state = lock(&self.state);
        let (still_driving, left_over) = loop {
            let answered = ANSWERED.with(|answered| std::mem::take(&mut *answered.borrow_mut()));
            if state.driver != me {
                // No turn of this thread will wake them.
                break (false, answered);
            }
            state.answered.extend(answered);
            let Some(job) = state.jobs.pop_front() else {
                state.running = None;
                break (true, Vec::new());
            };
            if !job.pace.is_quick() {
                // Its tool got stuck meanwhile: this run goes where blocking does no harm.
                job.run_on_pool(&self.handle);
                // Handing it over may start a thread: the next job starts from after that.
                now = Instant::now();
                continue;
            }
            if now.duration_since(began) >= self.limits.turn_budget {
                state.jobs.push_front(job);
                state.running = None;
                state.runtime_first = true;
                break (true, Vec::new());
            }
            state.running = Some((now, Arc::clone(&job.pace)));
            state.last_run = Some(now);
            if std::mem::take(&mut state.watchdog_asleep) {
                self.watch.notify_one();
            }
            drop(state);
            // A run catches its tool's panics.
            now = job.run(now, self.limits.too_slow);
            state = lock(&self.state);
        };
        drop(state);
        drop(entered);
        RUNNING_JOBS.set(false);
        for waker in left_over {
            waker.wake();
        }
        still_driving
    }

    /// The watchdog: hands the runtime to a new thread when a job has run for too long.
    fn watch(self: Arc<Self>) {
        let stuck_after = self.limits.stuck_after;
        let mut state = lock(&self.state);
        loop {
            if state.finished {
                return;
            }
            let now = Instant::now();
            let stuck = state
                .running
                .as_ref()
                .is_some_and(|(since, _)| now.duration_since(*since) >= stuck_after);
            if stuck {
                self.hand_over(&mut state);
            }
            // When the job running now would be stuck; else, while jobs keep coming, a
            // `stuck_after` from now, so one that starts meanwhile is caught on time.
            let wait = match &state.running {
                Some((since, _)) => stuck_after.saturating_sub(now.duration_since(*since)),
                None if state
                    .last_run
                    .is_some_and(|last| now.duration_since(last) < BUSY_FOR) =>
                {
                    stuck_after
                }
                None => {
                    state.watchdog_asleep = true;
                    state = crate::sync::wait(&self.watch, state);
                    continue;
                }
            };
            state = crate::sync::wait_timeout(&self.watch, state, wait.max(SHORTEST_WAIT)).0;
        }
    }

    /// Sends the stuck job's tool back to the pool and starts a thread that drives the
    /// runtime from now on, letting the runtime's waiting tasks run first.
    fn hand_over(self: &Arc<Self>, state: &mut State) {
        let Some((_, pace)) = state.running.take() else {
            return;
        };
        pace.demote();
        if state.threads >= MAX_DRIVERS {
            tracing::error!(
                stuck = MAX_DRIVERS,
                "sync tools are stuck between turns of the runtime; it waits for one to return"
            );
            return;
        }
        state.runtime_first = true;
        self.start_driver(state);
    }

    /// Starts a thread that drives the runtime from now on; `false` when none can start
    /// (the current driver goes on).
    fn start_driver(self: &Arc<Self>, state: &mut State) -> bool {
        let next = state.last_driver + 1;
        let driven = Arc::clone(self);
        let started = std::thread::Builder::new()
            .name("tool-runtime".to_owned())
            .stack_size(DRIVER_STACK)
            .spawn(move || {
                let _thread = DriverThread(&driven);
                driven.drive_from(next);
            });
        match started {
            Ok(_) => {
                state.last_driver = next;
                state.driver = next;
                state.threads += 1;
                true
            }
            Err(error) => {
                tracing::error!(%error, "cannot start a thread to drive the runtime");
                false
            }
        }
    }

    /// The driven future has ended: every turn ends, and the caller of [`drive`] is told.
    fn finish(&self) {
        let mut state = lock(&self.state);
        state.finished = true;
        if let Some(turn) = state.turn.take() {
            turn.wake();
        }
        self.finished.notify_all();
        self.watch.notify_all();
    }
}

/// Counts a driving thread out when it ends, however it ends.
struct DriverThread<'a>(&'a Driven);

impl Drop for DriverThread<'_> {
    fn drop(&mut self) {
        lock(&self.0.state).threads -= 1;
    }
}

/// Marks this thread as driving a runtime for the length of a turn.
struct Driving;

impl Driving {
    fn set(driven: &Arc<Driven>) -> Driving {
        DRIVING.with(|driving| *driving.borrow_mut() = Some(Arc::clone(driven)));
        Driving
    }
}

impl Drop for Driving {
    fn drop(&mut self) {
        DRIVING.with(|driving| driving.borrow_mut().take());
    }
}

#[cfg(test)]
mod tests;
