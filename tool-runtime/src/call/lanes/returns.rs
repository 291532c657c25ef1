//! How a lane's answer gets back to the call that waits for it, without waking the runtime
//! once per answer.
//!
//! A task woken from a thread outside its runtime costs the runtime a wake-up (on Linux, a
//! write to an eventfd, and the runtime's return from `epoll_wait`) even when the runtime is
//! busy and would have come to the task anyway. So answers go to the runtime's collector
//! instead: a task of the runtime, woken once for every answer that arrives before it runs,
//! which then wakes each waiting call from the runtime's own thread, at the cost of a queue
//! push. Under load many answers share one wake-up; alone, an answer costs what it did.

use super::gather::{Gathered, Slot as GatherSlot};
use crate::sync::lock;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// The answer of one job, and the call that waits for it.
pub(crate) struct Return<T> {
    inner: Arc<Slot<T>>,
}

/// Where a job's answer goes: read by the waiting call once the job has run.
pub(crate) struct Answer<T> {
    /// Taken by the answer; still there when the job is dropped without one.
    inner: Option<Arc<Slot<T>>>,
}

struct Slot<T> {
    state: Mutex<SlotState<T>>,
    /// The collector of the runtime the call runs on, if it has one.
    collector: Option<Arc<Gathered<Waker>>>,
}

struct SlotState<T> {
    value: Option<T>,
    waker: Option<Waker>,
    /// The job was dropped without an answer (its lane died).
    dropped: bool,
}

thread_local! {
    /// The collector of the runtime this thread runs, once a call has needed it: the wakers
    /// of calls whose answers came, woken from the runtime's own thread.
    static COLLECTOR: GatherSlot<Waker> = const { RefCell::new(None) };
}

/// Wakes each call whose answer came.
fn wake_all(wakers: Vec<Waker>) {
    for waker in wakers {
        waker.wake();
    }
}

/// The collector of the runtime the current thread runs, started on first use; none
/// outside a runtime.
fn collector() -> Option<Arc<Gathered<Waker>>> {
    let handle = tokio::runtime::Handle::try_current().ok()?;
    Some(Gathered::here(&COLLECTOR, &handle, wake_all))
}

/// A new pair: the [`Answer`] a job fills in, and the [`Return`] its caller awaits.
pub(crate) fn pair<T>() -> (Answer<T>, Return<T>) {
    let inner = Arc::new(Slot {
        state: Mutex::new(SlotState {
            value: None,
            waker: None,
            dropped: false,
        }),
        collector: collector(),
    });
    (
        Answer {
            inner: Some(Arc::clone(&inner)),
        },
        Return { inner },
    )
}

impl<T> Answer<T> {
    /// Gives the answer: the waiting call is woken through its runtime's collector.
    pub(crate) fn send(mut self, value: T) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        let waker = {
            let mut state = lock(&inner.state);
            state.value = Some(value);
            state.waker.take()
        };
        wake(&inner, waker);
    }
}

impl<T> Drop for Answer<T> {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        let waker = {
            let mut state = lock(&inner.state);
            state.dropped = true;
            state.waker.take()
        };
        wake(&inner, waker);
    }
}

/// Wakes the call waiting on `slot`, through its collector while that still runs.
fn wake<T>(slot: &Slot<T>, waker: Option<Waker>) {
    // A job run between turns of its runtime: woken at the start of the next turn.
    let Some(waker) = waker.and_then(super::turns::hold_wake) else {
        return;
    };
    match &slot.collector {
        Some(collector) => collector.push(waker),
        None => waker.wake(),
    }
}

impl<T> Future for Return<T> {
    /// The answer; `None` when the job was dropped without one.
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = lock(&self.inner.state);
        if let Some(value) = state.value.take() {
            return Poll::Ready(Some(value));
        }
        if state.dropped {
            return Poll::Ready(None);
        }
        if !state
            .waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            state.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_from_another_thread_reaches_its_call() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut waiting = Vec::new();
            for n in 0..100u32 {
                let (answer, returned) = pair();
                std::thread::spawn(move || answer.send(n));
                waiting.push(returned);
            }
            for (n, returned) in waiting.into_iter().enumerate() {
                assert_eq!(returned.await, Some(n as u32));
            }
            // A job dropped without an answer says so.
            let (answer, returned) = pair::<u32>();
            std::thread::spawn(move || drop(answer));
            assert_eq!(returned.await, None);
        });
    }
}
