//! A task of one runtime that takes, each time it runs, what other code gathered for it since:
//! the shape both hand-overs between the lanes and a runtime share (the jobs a turn submits,
//! on their way out; the wakers of answered calls, on their way back). Gathering is a queue
//! push; the task is woken once for everything gathered before it runs.

use crate::sync::lock;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread::LocalKey;
use tokio::runtime::Handle;

/// What is gathered for one runtime's task, and what the task does with it.
pub(super) struct Gathered<T> {
    items: Mutex<Vec<T>>,
    /// Whether the task has been woken and has not run since.
    woken: AtomicBool,
    /// The task's waker, once it has run.
    task: Mutex<Option<Waker>>,
    /// Whether the task still runs (its runtime may have shut down).
    alive: AtomicBool,
    /// What the task does with what it takes.
    take: fn(Vec<T>),
}

/// The thread-local slot of the [`Gathered`] of the runtime a thread runs.
pub(super) type Slot<T> = RefCell<Option<Arc<Gathered<T>>>>;

impl<T: Send + 'static> Gathered<T> {
    /// The gathering of the runtime of `handle`, which this thread keeps in `slot`: started,
    /// with its task, on first use (and again after its runtime shut down).
    pub(super) fn here(
        slot: &'static LocalKey<Slot<T>>,
        handle: &Handle,
        take: fn(Vec<T>),
    ) -> Arc<Self> {
        slot.with(|slot| {
            let mut slot = slot.borrow_mut();
            if let Some(gathered) = slot.as_ref().filter(|g| g.alive.load(Ordering::Acquire)) {
                return Arc::clone(gathered);
            }
            let gathered = Arc::new(Gathered {
                items: Mutex::new(Vec::new()),
                // The task runs once spawned: nothing needs to wake it before.
                woken: AtomicBool::new(true),
                task: Mutex::new(None),
                alive: AtomicBool::new(true),
                take,
            });
            *slot = Some(Arc::clone(&gathered));
            drop(handle.spawn(Taking(Arc::clone(&gathered))));
            gathered
        })
    }
}

impl<T> Gathered<T> {
    /// Gathers `item` for the task, waking it unless it is already woken; takes it at once
    /// when the task no longer runs (its runtime shut down).
    pub(super) fn push(&self, item: T) {
        lock(&self.items).push(item);
        if !self.alive.load(Ordering::Acquire) {
            return self.take_all();
        }
        if !self.woken.swap(true, Ordering::AcqRel) {
            if let Some(task) = lock(&self.task).as_ref() {
                task.wake_by_ref();
            }
        }
    }

    /// How many items wait for the task.
    #[cfg(test)]
    pub(super) fn waiting(&self) -> usize {
        lock(&self.items).len()
    }

    fn take_all(&self) {
        let items = std::mem::take(&mut *lock(&self.items));
        if !items.is_empty() {
            (self.take)(items);
        }
    }
}

/// The task: takes what was gathered, each time it is woken.
struct Taking<T>(Arc<Gathered<T>>);

impl<T> Future for Taking<T> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let gathered = &self.0;
        {
            let mut task = lock(&gathered.task);
            if !task.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *task = Some(cx.waker().clone());
            }
        }
        // Cleared before taking: what is gathered after wakes the task again.
        gathered.woken.store(false, Ordering::Release);
        gathered.take_all();
        Poll::Pending
    }
}

impl<T> Drop for Taking<T> {
    fn drop(&mut self) {
        self.0.alive.store(false, Ordering::Release);
        // What was gathered for a runtime that shut down is still taken.
        self.0.take_all();
    }
}
