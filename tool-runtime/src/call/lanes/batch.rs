//! Jobs submitted while a current-thread runtime runs its ready tasks go to the lanes
//! together, once those tasks have run: one wake-up of a lane for the whole turn rather than
//! one per job.
//!
//! Under load a runtime finds several requests ready at once (one `epoll_wait` returns them
//! all) and starts each one's call in turn; a lane woken by the first job would often finish
//! it before the second comes and go back to sleep, to be woken again. A task of the runtime,
//! woken (a queue push, no system call) by the first job of a turn, runs after the tasks
//! that were ready before it and hands the turn's jobs over in one go. Alone, a job waits
//! for nothing: the task runs as soon as the call that submitted it yields.

use super::gather::{Gathered, Slot};
use super::Job;
use std::cell::RefCell;
use tokio::runtime::{Handle, RuntimeFlavor};

thread_local! {
    /// The jobs of the current turn of the current-thread runtime this thread runs.
    static TURN: Slot<Job> = const { RefCell::new(None) };
}

/// Holds `job` for the end of this turn of the current-thread runtime the thread runs; gives
/// it back when there is none (no runtime, or a multi-thread one, where a job has no turn
/// to wait for).
pub(super) fn defer(job: Job) -> Result<(), Job> {
    let Ok(handle) = Handle::try_current() else {
        return Err(job);
    };
    if handle.runtime_flavor() != RuntimeFlavor::CurrentThread {
        return Err(job);
    }
    Gathered::here(&TURN, &handle, super::enqueue).push(job);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
    }

    fn held() -> usize {
        TURN.with(|slot| slot.borrow().as_ref().map_or(0, |turn| turn.waiting()))
    }

    #[test]
    fn the_jobs_of_a_turn_wait_for_its_end_then_all_run() {
        let (done, finished) = mpsc::channel();
        runtime().block_on(async {
            for job in 0..8 {
                let done = done.clone();
                super::super::submit(Box::new(move || {
                    let _ = done.send(job);
                }));
            }
            assert_eq!(held(), 8, "the turn's jobs are held until it ends");
            tokio::task::yield_now().await;
            assert_eq!(held(), 0, "handed over once the submitting task yielded");
        });
        let mut ran: Vec<i32> = (0..8)
            .map(|_| {
                finished
                    .recv_timeout(Duration::from_secs(5))
                    .expect("a job ran")
            })
            .collect();
        ran.sort_unstable();
        assert_eq!(ran, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn a_job_held_when_its_runtime_shuts_down_still_runs() {
        let (done, finished) = mpsc::channel();
        let runtime = runtime();
        runtime.block_on(async {
            super::super::submit(Box::new(move || {
                let _ = done.send("ran");
            }));
            assert_eq!(held(), 1);
        });
        drop(runtime);
        assert_eq!(finished.recv_timeout(Duration::from_secs(5)), Ok("ran"));
    }

    #[test]
    fn outside_a_current_thread_runtime_a_job_is_queued_at_once() {
        let (done, finished) = mpsc::channel();
        super::super::submit(Box::new(move || {
            let _ = done.send("ran");
        }));
        assert_eq!(held(), 0);
        assert_eq!(finished.recv_timeout(Duration::from_secs(5)), Ok("ran"));
    }
}
