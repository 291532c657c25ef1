//! Where sync tools proven quick run, never inside a task. On a runtime we drive ourselves
//! (the one `serve` builds, on one thread), on the runtime's own thread between its turns,
//! so that the call crosses no thread; the runtime moves to another thread when a run gets
//! stuck (`turns`). Elsewhere, on lanes: a few threads of our own beside the async runtime,
//! fed from one queue. The jobs a runtime
//! submits in one turn reach the queue together (`batch`), and a lane's answer goes back
//! through its runtime's collector (`returns`): under load, many calls share one wake-up
//! each way.
//!
//! Running a quick tool inside the task that read its request would be cheapest, but nothing
//! stops a tool that was quick a thousand times from blocking on the next call; inside a
//! task, that would stall every other request, and its timeout could not fire. On a lane,
//! the caller awaits the answer like any other future (so the timeout and cancellation
//! apply), and a lane stuck in a slow call is replaced: when every lane has been on one job
//! for longer than [`STUCK_AFTER`] while work waits, a new lane is started for the waiting
//! work. A lane costs a hand-off to its thread and back per call (two wake-ups when both
//! sides were idle), less than tokio's blocking pool, which also starts a thread per
//! concurrent call.
//!
//! (tokio has no pool with this stuck-lane rule, and `block_in_place` hands the whole worker
//! to a new thread on every call; hence this small module.)

mod batch;
mod gather;
pub(crate) mod returns;
#[cfg_attr(
    not(any(feature = "cli", test)),
    expect(
        dead_code,
        reason = "only `serve` drives a runtime; without it, lanes run the jobs"
    )
)]
pub(crate) mod turns;

use crate::sync::lock;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// One unit of work; it catches its own panics.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// A lane on one job for this long counts as stuck: waiting work gets a new lane.
pub(crate) const STUCK_AFTER: Duration = Duration::from_millis(2);
/// Lanes beyond the first end after this long without work.
const IDLE_EXIT: Duration = Duration::from_secs(10);
/// A bound on lanes, so a flood of stuck tools cannot start threads without end.
const MAX_LANES: usize = 64;

struct Lanes {
    /// The origin of the busy-since timestamps.
    base: Instant,
    state: Mutex<State>,
    /// Idle lanes wait here for work.
    work: Condvar,
    /// The watchdog waits here while there is nothing to watch.
    watch: Condvar,
}

struct State {
    queue: VecDeque<Job>,
    /// Lanes waiting for work.
    idle: usize,
    /// Wake-ups sent to idle lanes and not yet taken: a burst of work wakes one lane once
    /// (each wake-up is a system call), and the lane takes the whole burst.
    notified: usize,
    /// Each lane's busy-since time, in nanoseconds after `base` plus one; 0 when idle.
    lanes: Vec<Arc<AtomicU64>>,
    /// Whether the watchdog is waiting with no deadline (and must be woken for new work).
    watchdog_asleep: bool,
    watchdog_started: bool,
}

fn lanes() -> &'static Lanes {
    static LANES: OnceLock<Lanes> = OnceLock::new();
    LANES.get_or_init(|| Lanes {
        base: Instant::now(),
        state: Mutex::new(State {
            queue: VecDeque::new(),
            idle: 0,
            notified: 0,
            lanes: Vec::new(),
            watchdog_asleep: false,
            watchdog_started: false,
        }),
        work: Condvar::new(),
        watch: Condvar::new(),
    })
}

/// Queues `job` on a lane: at the end of the runtime's turn, with the turn's other jobs,
/// when the caller runs on a current-thread runtime (see [`batch`]); at once otherwise.
pub(crate) fn submit(job: Job) {
    if let Err(job) = batch::defer(job) {
        enqueue(std::iter::once(job));
    }
}

/// Queues `jobs` on the lanes, waking or starting at most one lane for all of them.
fn enqueue(jobs: impl IntoIterator<Item = Job>) {
    let lanes = lanes();
    let mut state = lock(&lanes.state);
    state.queue.extend(jobs);
    if state.idle > state.notified {
        state.notified += 1;
        drop(state);
        lanes.work.notify_one();
        return;
    }
    if state.idle > 0 {
        return; // A lane is on its way and takes this work too.
    }
    if state.lanes.is_empty() || lanes.all_stuck(&state) {
        lanes.start_lane(&mut state);
        return;
    }
    // Every lane is busy and none is stuck yet: the watchdog checks again shortly.
    if !state.watchdog_started {
        state.watchdog_started = true;
        if std::thread::Builder::new()
            .name("tool-lane-watchdog".to_owned())
            .spawn(move || lanes.watchdog())
            .is_err()
        {
            state.watchdog_started = false;
        }
    } else if state.watchdog_asleep {
        state.watchdog_asleep = false;
        drop(state);
        lanes.watch.notify_one();
    }
}

impl Lanes {
    fn now(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX - 1) + 1
    }

    fn all_stuck(&self, state: &State) -> bool {
        let now = self.now();
        let stuck_after = u64::try_from(STUCK_AFTER.as_nanos()).unwrap_or(u64::MAX);
        state.lanes.iter().all(|busy| {
            let since = busy.load(Ordering::Relaxed);
            since != 0 && now.saturating_sub(since) >= stuck_after
        })
    }

    fn start_lane(&'static self, state: &mut State) {
        if state.lanes.len() >= MAX_LANES {
            return; // The work waits for a lane to come free.
        }
        let busy = Arc::new(AtomicU64::new(0));
        let mine = Arc::clone(&busy);
        let started = std::thread::Builder::new()
            .name("tool-lane".to_owned())
            .spawn(move || self.lane(&mine));
        match started {
            Ok(_) => state.lanes.push(busy),
            Err(error) => tracing::error!(%error, "cannot start a thread for quick sync tools"),
        }
    }

    fn lane(&'static self, busy: &Arc<AtomicU64>) {
        let mut state = lock(&self.state);
        loop {
            let Some(job) = state.queue.pop_front() else {
                state.idle += 1;
                let (next, waited) = crate::sync::wait_timeout(&self.work, state, IDLE_EXIT);
                state = next;
                state.idle -= 1;
                // Whatever woke it (a wake-up, a timeout), the lane now takes the work.
                state.notified = state.notified.saturating_sub(1);
                if waited.timed_out() && state.queue.is_empty() && state.lanes.len() > 1 {
                    state.lanes.retain(|lane| !Arc::ptr_eq(lane, busy));
                    return;
                }
                continue;
            };
            busy.store(self.now(), Ordering::Relaxed);
            drop(state);
            job();
            busy.store(0, Ordering::Relaxed);
            state = lock(&self.state);
        }
    }

    /// Starts a lane when work waits and every lane is stuck; sleeps while there is no
    /// waiting work.
    fn watchdog(&'static self) {
        let mut state = lock(&self.state);
        loop {
            if state.queue.is_empty() {
                state.watchdog_asleep = true;
                state = crate::sync::wait(&self.watch, state);
                continue;
            }
            if state.idle == 0 && self.all_stuck(&state) {
                self.start_lane(&mut state);
            }
            state = crate::sync::wait_timeout(&self.watch, state, STUCK_AFTER).0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn work_behind_a_stuck_lane_moves_to_a_new_lane() {
        let (done, finished) = mpsc::channel::<&str>();
        let slow_done = done.clone();
        submit(Box::new(move || {
            std::thread::sleep(Duration::from_millis(600));
            let _ = slow_done.send("slow");
        }));
        // Let the slow job start, then queue quick ones behind it.
        std::thread::sleep(Duration::from_millis(20));
        for _ in 0..3 {
            let done = done.clone();
            submit(Box::new(move || {
                let _ = done.send("quick");
            }));
        }
        for _ in 0..3 {
            assert_eq!(
                finished.recv_timeout(Duration::from_millis(400)),
                Ok("quick"),
                "quick work waited behind the stuck lane"
            );
        }
        assert_eq!(finished.recv_timeout(Duration::from_secs(2)), Ok("slow"));
    }
}
