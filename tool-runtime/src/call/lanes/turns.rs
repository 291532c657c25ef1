//! A current-thread runtime we drive ourselves, so that the sync tools proven quick its calls
//! submit run on its own thread between its turns: such a call crosses no thread at all.
//!
//! On a lane, a call costs two wake-ups of sleeping threads when the server is otherwise
//! idle (the lane's, then the runtime's): more than the rest of a small call over HTTP. When
//! the runtime is ours (`serve` builds it), [`drive`] runs it in turns instead: a turn is a
//! `Runtime::block_on` that ends once the runtime's ready tasks have run and a call has
//! submitted a job; the thread then runs the turn's jobs itself and starts the next turn,
//! whose first step wakes the calls those jobs answered (from the runtime's own thread, so
//! without a system call).
//!
//! While a job runs, the runtime stands still, as it would if the tool ran inside a task, and
//! a tool that was quick a thousand times can still block on the next call. So a watchdog
//! looks every millisecond while jobs run; when one has run for [`STUCK_AFTER`], it sends
//! the tool back to the blocking pool and starts another thread, which drives the runtime
//! from then on (any thread may drive a current-thread runtime while no other does): the
//! calls' time limits fire, that call's included, and other requests are served. The stuck
//! thread finishes its job and ends.

use super::{Job, STUCK_AFTER};
use crate::call::invoke::{CatchUnwind, Pace};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::panic::resume_unwind;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use tokio::runtime::{Runtime, RuntimeFlavor};

/// How often the watchdog looks while jobs run.
const WATCH_EVERY: Duration = Duration::from_millis(1);
/// How long after the last job started the watchdog still looks; then it sleeps until the
/// next job starts.
const BUSY_FOR: Duration = Duration::from_millis(50);
/// A bound on the threads driving the runtime or stuck in a job, so a flood of stuck tools
/// cannot start threads without end.
const MAX_DRIVERS: usize = 64;

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
    if runtime.handle().runtime_flavor() != RuntimeFlavor::CurrentThread {
        let output = runtime.block_on(future);
        runtime.shutdown_timeout(shutdown);
        return output;
    }
    let driven = Arc::new(Driven {
        handle: runtime.handle().clone(),
        runtime: Mutex::new(None),
        state: Mutex::new(State {
            jobs: VecDeque::new(),
            driver: 0,
            last_driver: 0,
            helpers: 0,
            running: None,
            last_run: None,
            turn: None,
            finished: false,
            watchdog: Watchdog::NotStarted,
        }),
        finished: Condvar::new(),
        watch: Condvar::new(),
    });
    let outcome = Arc::new(Mutex::new(None));
    let ending = Arc::clone(&driven);
    let stored = Arc::clone(&outcome);
    drop(runtime.spawn(async move {
        let result = CatchUnwind(Box::pin(future)).await;
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
        state = driven
            .finished
            .wait(state)
            .unwrap_or_else(|poison| poison.into_inner());
    }
    drop(state);
    // Whoever drove last has left `block_on` (the end ends every turn): the runtime is free.
    if let Some(runtime) = lock(&driven.runtime).take() {
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

/// Queues a quick sync tool's `job` to run between turns of the runtime this thread drives;
/// gives it back when this thread drives none (another runtime, or no runtime: a lane then
/// takes it). `pace` is the tool's, sent back to the pool if the job gets stuck.
pub(crate) fn defer(job: Job, pace: &Arc<Pace>) -> Result<(), Job> {
    DRIVING.with(|driving| match driving.borrow().as_ref() {
        Some(driven) => {
            let mut state = lock(&driven.state);
            state.jobs.push_back((job, Arc::clone(pace)));
            if let Some(turn) = &state.turn {
                // From the runtime's own thread: a flag, no system call.
                turn.wake_by_ref();
            }
            Ok(())
        }
        None => Err(job),
    })
}

/// Holds the waker of a call that a job run between turns just answered, to be woken at the
/// start of the next turn; gives it back when no such job runs on this thread.
pub(super) fn hold_wake(waker: Waker) -> Option<Waker> {
    if !RUNNING_JOBS.get() {
        return Some(waker);
    }
    ANSWERED.with(|answered| answered.borrow_mut().push(waker));
    None
}

thread_local! {
    /// The runtime this thread drives, during its turns.
    static DRIVING: RefCell<Option<Arc<Driven>>> = const { RefCell::new(None) };
    /// Whether this thread runs jobs between turns right now.
    static RUNNING_JOBS: Cell<bool> = const { Cell::new(false) };
    /// The wakers of the calls answered by the jobs this thread ran since its last turn.
    static ANSWERED: RefCell<Vec<Waker>> = const { RefCell::new(Vec::new()) };
}

struct Driven {
    /// Entered while jobs run, as tokio's blocking pool does for sync work: a tool can reach
    /// the runtime (`Handle::current`).
    handle: tokio::runtime::Handle,
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
    /// Jobs submitted and not yet started, with their tools' pace.
    jobs: VecDeque<(Job, Arc<Pace>)>,
    /// The number of the thread that drives the runtime (0: the one that called [`drive`],
    /// which drives only when no thread of its own could start).
    driver: u64,
    /// The highest number given to a thread so far.
    last_driver: u64,
    /// Threads started to drive the runtime and not yet ended.
    helpers: usize,
    /// The job the driver runs now: since when, and its tool's pace.
    running: Option<(Instant, Arc<Pace>)>,
    /// When the last job started.
    last_run: Option<Instant>,
    /// The waker of the driver's turn: a submitted job or the end ends the turn.
    turn: Option<Waker>,
    /// The driven future has ended.
    finished: bool,
    watchdog: Watchdog,
}

#[derive(PartialEq)]
enum Watchdog {
    NotStarted,
    /// Waiting for a job to start.
    Asleep,
    Watching,
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
        // No turn of this thread will wake them.
        for waker in ANSWERED.with(|answered| std::mem::take(&mut *answered.borrow_mut())) {
            waker.wake();
        }
    }

    /// The future of one turn, polled first when the turn starts and then whenever a call
    /// submits a job (after the runtime's other ready tasks have run).
    fn poll_turn(&self, me: u64, cx: &mut Context<'_>) -> Poll<Turn> {
        let answered = ANSWERED.with(|answered| std::mem::take(&mut *answered.borrow_mut()));
        for waker in answered {
            waker.wake();
        }
        let mut state = lock(&self.state);
        if state.finished || state.driver != me {
            return Poll::Ready(Turn::Over);
        }
        if !state.jobs.is_empty() {
            return Poll::Ready(Turn::Jobs);
        }
        if !state.turn.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            state.turn = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// Runs the waiting jobs, one at a time, while thread `me` drives; `false` once another
    /// thread does.
    fn run_jobs(self: &Arc<Self>, me: u64) -> bool {
        RUNNING_JOBS.set(true);
        let entered = self.handle.enter();
        let mut state = lock(&self.state);
        let still_driving = loop {
            if state.driver != me {
                break false;
            }
            let Some((job, pace)) = state.jobs.pop_front() else {
                state.running = None;
                break true;
            };
            let now = Instant::now();
            state.running = Some((now, pace));
            state.last_run = Some(now);
            self.wake_watchdog(&mut state);
            drop(state);
            job();
            state = lock(&self.state);
        };
        drop(state);
        drop(entered);
        RUNNING_JOBS.set(false);
        still_driving
    }

    /// Makes sure the watchdog looks: started on the first job, woken after a quiet spell.
    fn wake_watchdog(self: &Arc<Self>, state: &mut State) {
        match state.watchdog {
            Watchdog::Watching => {}
            Watchdog::Asleep => {
                state.watchdog = Watchdog::Watching;
                self.watch.notify_one();
            }
            Watchdog::NotStarted => {
                let watched = Arc::clone(self);
                let started = std::thread::Builder::new()
                    .name("tool-runtime-watchdog".to_owned())
                    .spawn(move || watched.watch());
                match started {
                    Ok(_) => state.watchdog = Watchdog::Watching,
                    Err(error) => tracing::error!(%error, "cannot start a watchdog thread"),
                }
            }
        }
    }

    /// The watchdog: hands the runtime to a new thread when a job has run for too long.
    fn watch(self: Arc<Self>) {
        let mut state = lock(&self.state);
        loop {
            if state.finished {
                return;
            }
            let now = Instant::now();
            let stuck = state
                .running
                .as_ref()
                .is_some_and(|(since, _)| now.duration_since(*since) >= STUCK_AFTER);
            if stuck {
                self.hand_over(&mut state);
            } else if state.running.is_none()
                && state
                    .last_run
                    .is_none_or(|last| now.duration_since(last) >= BUSY_FOR)
            {
                state.watchdog = Watchdog::Asleep;
                state = self
                    .watch
                    .wait(state)
                    .unwrap_or_else(|poison| poison.into_inner());
                continue;
            }
            state = self
                .watch
                .wait_timeout(state, WATCH_EVERY)
                .unwrap_or_else(|poison| poison.into_inner())
                .0;
        }
    }

    /// Sends the stuck job's tool back to the pool and starts a thread that drives the
    /// runtime from now on.
    fn hand_over(self: &Arc<Self>, state: &mut State) {
        let Some((_, pace)) = state.running.take() else {
            return;
        };
        pace.demote();
        if state.helpers >= MAX_DRIVERS {
            tracing::error!(
                stuck = MAX_DRIVERS,
                "sync tools are stuck between turns of the runtime; it waits for one to return"
            );
            return;
        }
        self.start_driver(state);
    }

    /// Starts a thread that drives the runtime from now on; `false` when none can start
    /// (the current driver goes on).
    fn start_driver(self: &Arc<Self>, state: &mut State) -> bool {
        let next = state.last_driver + 1;
        let driven = Arc::clone(self);
        let started = std::thread::Builder::new()
            .name("tool-runtime".to_owned())
            .spawn(move || {
                driven.drive_from(next);
                lock(&driven.state).helpers -= 1;
            });
        match started {
            Ok(_) => {
                state.last_driver = next;
                state.driver = next;
                state.helpers += 1;
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

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

#[cfg(test)]
mod tests {
    use super::super::returns::pair;
    use super::*;
    use std::sync::mpsc;
    use std::thread::ThreadId;

    fn current_thread() -> Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    }

    fn quick() -> Arc<Pace> {
        Arc::new(Pace::proven_quick("add"))
    }

    /// Defers a job that runs `work` and answers with its result and thread.
    async fn run_between_turns<T: Send + 'static>(
        pace: &Arc<Pace>,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> (T, ThreadId) {
        let (answer, answered) = pair();
        let job: Job = Box::new(move || answer.send((work(), std::thread::current().id())));
        assert!(
            defer(job, pace).is_ok(),
            "a task of a driven runtime defers its job"
        );
        answered.await.expect("the job answered")
    }

    #[test]
    fn jobs_run_on_the_thread_that_drives_the_runtime() {
        let (ran, driver) = drive(
            current_thread(),
            async {
                let pace = quick();
                let mut ran = Vec::new();
                for n in 0..3 {
                    let work = move || (n * 2, tokio::runtime::Handle::try_current().is_ok());
                    ran.push(run_between_turns(&pace, work).await);
                }
                (ran, std::thread::current().id())
            },
            Duration::from_secs(1),
        );
        assert_ne!(
            driver,
            std::thread::current().id(),
            "a thread of its own drives"
        );
        assert_eq!(
            ran,
            vec![
                ((0, true), driver),
                ((2, true), driver),
                ((4, true), driver)
            ],
            "each job ran on the driving thread, in the runtime's context, and answered its call"
        );
    }

    #[test]
    fn a_job_stuck_between_turns_hands_the_runtime_to_another_thread() {
        let (release, released) = mpsc::channel::<()>();
        let pace = quick();
        let tool = Arc::clone(&pace);
        let (job_thread, after) = drive(
            current_thread(),
            async move {
                let (answer, answered) = pair();
                let job: Job = Box::new(move || {
                    // Blocks until the runtime has moved on without it (or fails the test).
                    let outcome = released.recv_timeout(Duration::from_secs(20));
                    answer.send((outcome, std::thread::current().id()));
                });
                assert!(defer(job, &tool).is_ok());
                // A timer fires only if another thread drives the runtime meanwhile.
                tokio::time::sleep(Duration::from_millis(10)).await;
                let after = std::thread::current().id();
                release.send(()).expect("the job waits");
                let (outcome, job_thread) = answered.await.expect("the job answered");
                assert_eq!(outcome, Ok(()), "the runtime stood still behind the job");
                (job_thread, after)
            },
            Duration::from_secs(1),
        );
        assert_ne!(job_thread, after, "another thread drove past the stuck job");
        assert!(
            !pace.runs_in_place(),
            "the stuck tool goes back to the pool"
        );
    }

    #[test]
    fn the_end_does_not_wait_for_a_stuck_job() {
        let (release, released) = mpsc::channel::<()>();
        let (done, finished) = mpsc::channel();
        drive(
            current_thread(),
            async move {
                let job: Job = Box::new(move || {
                    let _ = released.recv_timeout(Duration::from_secs(20));
                    let _ = done.send("finished");
                });
                assert!(defer(job, &quick()).is_ok());
                tokio::time::sleep(Duration::from_millis(10)).await;
            },
            Duration::from_secs(1),
        );
        // Here while the job still waits for its release.
        release.send(()).expect("the job still runs");
        assert_eq!(
            finished.recv_timeout(Duration::from_secs(20)),
            Ok("finished")
        );
    }

    #[test]
    fn outside_a_driven_runtime_a_job_is_given_back() {
        let given_back = |runtime: Runtime| {
            drive(
                runtime,
                async {
                    tokio::task::spawn_blocking(|| defer(Box::new(|| {}), &quick()).is_err())
                        .await
                        .expect("no panic")
                },
                Duration::from_secs(1),
            )
        };
        assert!(
            given_back(current_thread()),
            "a blocking-pool thread drives nothing"
        );
        let multi_thread = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .expect("a runtime");
        assert!(
            drive(
                multi_thread,
                async { defer(Box::new(|| {}), &quick()).is_err() },
                Duration::from_secs(1)
            ),
            "a multi-thread runtime is not driven in turns"
        );
        assert!(defer(Box::new(|| {}), &quick()).is_err(), "no runtime");
    }

    #[test]
    fn a_panic_of_the_driven_future_is_resumed() {
        let caught = std::panic::catch_unwind(|| {
            drive(
                current_thread(),
                async { panic!("the future failed") },
                Duration::from_secs(1),
            )
        });
        let payload = caught.expect_err("the panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the future failed"));
    }
}
