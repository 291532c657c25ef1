//! How a lane's answer gets back to the call that waits for it, without waking the runtime
//! once per answer.
//!
//! A task woken from a thread outside its runtime costs the runtime a wake-up (on Linux, a
//! write to an eventfd, and the runtime's return from `epoll_wait`) even when the runtime is
//! busy and would have come to the task anyway. So answers go to the runtime's collector
//! instead: a task of the runtime, woken once for every answer that arrives before it runs,
//! which then wakes each waiting call from the runtime's own thread, at the cost of a queue
//! push. Under load many answers share one wake-up; alone, an answer costs what it did.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
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
    collector: Option<Arc<Collector>>,
}

struct SlotState<T> {
    value: Option<T>,
    waker: Option<Waker>,
    /// The job was dropped without an answer (its lane died).
    dropped: bool,
}

/// A runtime's collector of answers.
struct Collector {
    /// The wakers of calls whose answers came, to wake from the runtime's thread.
    ready: Mutex<Vec<Waker>>,
    /// Whether the collector task has been woken and has not run since.
    woken: AtomicBool,
    /// The collector task's waker, once it has run.
    task: Mutex<Option<Waker>>,
    /// Whether the collector task still runs (its runtime may have shut down).
    alive: AtomicBool,
}

impl Collector {
    /// Hands `waker` to the runtime's thread to wake.
    fn hand(&self, waker: Waker) {
        lock(&self.ready).push(waker);
        if !self.woken.swap(true, Ordering::AcqRel) {
            if let Some(task) = lock(&self.task).as_ref() {
                task.wake_by_ref();
            }
        }
    }
}

/// The collector task: wakes the calls whose answers came, each time it is woken.
struct Collecting(Arc<Collector>);

impl Future for Collecting {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let collector = &self.0;
        {
            let mut task = lock(&collector.task);
            if !task.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *task = Some(cx.waker().clone());
            }
        }
        // Cleared before draining: an answer that comes after wakes the task again.
        collector.woken.store(false, Ordering::Release);
        let ready = std::mem::take(&mut *lock(&collector.ready));
        for waker in ready {
            waker.wake();
        }
        Poll::Pending
    }
}

impl Drop for Collecting {
    fn drop(&mut self) {
        self.0.alive.store(false, Ordering::Release);
    }
}

thread_local! {
    /// The collector of the runtime this thread runs, once a call has needed it.
    static COLLECTOR: RefCell<Option<Arc<Collector>>> = const { RefCell::new(None) };
}

/// The collector of the runtime the current thread runs, started on first use; none
/// outside a runtime.
fn collector() -> Option<Arc<Collector>> {
    let handle = tokio::runtime::Handle::try_current().ok()?;
    COLLECTOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        if let Some(collector) = slot.as_ref().filter(|c| c.alive.load(Ordering::Acquire)) {
            return Some(Arc::clone(collector));
        }
        let collector = Arc::new(Collector {
            ready: Mutex::new(Vec::new()),
            woken: AtomicBool::new(false),
            task: Mutex::new(None),
            alive: AtomicBool::new(true),
        });
        handle.spawn(Collecting(Arc::clone(&collector)));
        *slot = Some(Arc::clone(&collector));
        Some(collector)
    })
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
    let Some(waker) = waker else {
        return;
    };
    match &slot.collector {
        Some(collector) if collector.alive.load(Ordering::Acquire) => collector.hand(waker),
        _ => waker.wake(),
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

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
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
