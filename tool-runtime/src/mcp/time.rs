//! Time as the protocol layer knows it: told, never read, never waited on with the
//! runtime's timers.
//!
//! Work that must wait (a call that becomes a task after a moment, patience with a slow
//! store) asks for a [`Sleep`] of some length. A driver outside this layer (see
//! `transport::maintenance`) tells the server the time with
//! [`McpServer::on_time`](super::McpServer::on_time): that fixes the deadline of every sleep
//! asked for since (the time told plus its length), ends the sleeps whose deadline has
//! passed, and hands out the periodic work that is due (the look for tasks whose worker was
//! lost, the renewal of this replica's leases). [`McpServer::next_wake`] says when the
//! driver must tell it the time next, and [`McpServer::wake_changed`] when that moved
//! earlier. So everything that depends on time can be driven by a test's own clock.
//!
//! What is stamped into records (a lease's end, a request state's expiry) takes the wall
//! clock's time from the server's [`Clock`](crate::mcp::Clock), the system's unless the
//! server was given another.
//!
//! [`McpServer::next_wake`]: super::McpServer::next_wake
//! [`McpServer::wake_changed`]: super::McpServer::wake_changed

use crate::sync::lock;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// The sleeps waiting for their deadline, and the time as last told.
#[derive(Default)]
pub(crate) struct Timers {
    state: Mutex<State>,
    /// Told when a sleep is asked for: the driver fixes its deadline at once.
    changed: Notify,
    /// Whether a driver tells the time.
    driven: AtomicBool,
    /// Whether a wait without a driver was logged (once is enough).
    warned: AtomicBool,
}

#[derive(Default)]
struct State {
    /// The time told last.
    now: Option<Instant>,
    next_id: u64,
    /// Sleeps asked for since the time was told last: their deadline is fixed when it is.
    unfixed: HashMap<u64, (Duration, Option<Waker>)>,
    /// Sleeps with a deadline, by deadline.
    waiting: BTreeMap<(Instant, u64), Option<Waker>>,
    /// Where each sleep with a deadline is in `waiting`.
    deadlines: HashMap<u64, Instant>,
}

impl Timers {
    /// A sleep of `length`, from when the driver next tells the time (at once, while it
    /// runs).
    pub(crate) fn sleep(self: &Arc<Self>, length: Duration) -> Sleep {
        if !self.driven.load(Ordering::Acquire) && !self.warned.swap(true, Ordering::AcqRel) {
            tracing::warn!(
                "work of this server waits for time to pass, and no driver tells it the \
                 time: run `transport::maintenance` beside a transport of your own"
            );
        }
        let id = {
            let mut state = lock(&self.state);
            let id = state.next_id;
            state.next_id += 1;
            state.unfixed.insert(id, (length, None));
            id
        };
        self.changed.notify_one();
        Sleep {
            timers: Arc::clone(self),
            id,
            done: false,
        }
    }

    /// Whether this is the first driver to ask: one is enough.
    pub(crate) fn claim_driver(&self) -> bool {
        !self.driven.swap(true, Ordering::AcqRel)
    }

    /// The time is `now`: fixes the deadlines of the sleeps asked for since the time was
    /// told last, and ends those whose deadline has passed.
    pub(crate) fn tell(&self, now: Instant) {
        let woken = {
            let mut state = lock(&self.state);
            let now = state.now.map_or(now, |before| before.max(now));
            state.now = Some(now);
            let unfixed: Vec<_> = state.unfixed.drain().collect();
            for (id, (length, waker)) in unfixed {
                let deadline = now + length;
                state.deadlines.insert(id, deadline);
                state.waiting.insert((deadline, id), waker);
            }
            let later = state.waiting.split_off(&(now, u64::MAX));
            let passed = std::mem::replace(&mut state.waiting, later);
            for (_, id) in passed.keys() {
                state.deadlines.remove(id);
            }
            passed.into_values().flatten().collect::<Vec<_>>()
        };
        for waker in woken {
            waker.wake();
        }
    }

    /// The earliest deadline waiting, if any; `None` also while a sleep waits for its
    /// deadline to be fixed (see [`Timers::changed`]).
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        lock(&self.state)
            .waiting
            .keys()
            .next()
            .map(|(deadline, _)| *deadline)
    }

    /// Whether a sleep waits for the time to be told to fix its deadline.
    pub(crate) fn has_unfixed(&self) -> bool {
        !lock(&self.state).unfixed.is_empty()
    }

    /// Resolves once a sleep was asked for (then the time must be told).
    pub(crate) async fn changed(&self) {
        let changed = self.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        if self.has_unfixed() {
            return;
        }
        changed.await;
    }
}

/// A wait of some length, on time as the server is told it; dropping it forgets it.
#[must_use = "a sleep waits only when awaited"]
pub(crate) struct Sleep {
    timers: Arc<Timers>,
    id: u64,
    done: bool,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.done {
            return Poll::Ready(());
        }
        let mut state = lock(&self.timers.state);
        let id = self.id;
        if let Some((_, waker)) = state.unfixed.get_mut(&id) {
            set_waker(waker, cx.waker());
            return Poll::Pending;
        }
        let Some(deadline) = state.deadlines.get(&id).copied() else {
            drop(state);
            self.done = true;
            return Poll::Ready(());
        };
        if let Some(waker) = state.waiting.get_mut(&(deadline, id)) {
            set_waker(waker, cx.waker());
        }
        Poll::Pending
    }
}

fn set_waker(slot: &mut Option<Waker>, waker: &Waker) {
    if !slot.as_ref().is_some_and(|held| held.will_wake(waker)) {
        *slot = Some(waker.clone());
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut state = lock(&self.timers.state);
        state.unfixed.remove(&self.id);
        if let Some(deadline) = state.deadlines.remove(&self.id) {
            state.waiting.remove(&(deadline, self.id));
        }
    }
}

/// What `work` gives, if it gives it within `length` of the time as told; `None` once that
/// has passed (the work is then dropped).
pub(crate) async fn within<F: Future>(
    timers: &Arc<Timers>,
    length: Duration,
    work: F,
) -> Option<F::Output> {
    tokio::select! {
        biased;
        output = work => Some(output),
        () = timers.sleep(length) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Wake;

    /// A waker that counts its wake-ups.
    #[derive(Default)]
    struct Counted(std::sync::atomic::AtomicUsize);

    impl Wake for Counted {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    fn poll(sleep: &mut Sleep, waker: &Arc<Counted>) -> Poll<()> {
        let waker = Waker::from(Arc::clone(waker));
        Pin::new(sleep).poll(&mut Context::from_waker(&waker))
    }

    #[test]
    fn a_sleep_ends_once_the_time_told_passes_its_deadline() {
        let timers = Arc::new(Timers::default());
        let start = Instant::now();
        let woken = Arc::new(Counted::default());
        let mut sleep = timers.sleep(Duration::from_millis(100));
        assert_eq!(poll(&mut sleep, &woken), Poll::Pending);
        assert!(timers.has_unfixed(), "its deadline waits for the time");
        assert_eq!(timers.next_deadline(), None);

        timers.tell(start);
        assert_eq!(
            timers.next_deadline(),
            Some(start + Duration::from_millis(100))
        );
        assert_eq!(poll(&mut sleep, &woken), Poll::Pending);
        timers.tell(start + Duration::from_millis(99));
        assert_eq!(poll(&mut sleep, &woken), Poll::Pending);
        assert_eq!(woken.0.load(std::sync::atomic::Ordering::SeqCst), 0);

        timers.tell(start + Duration::from_millis(100));
        assert_eq!(woken.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(poll(&mut sleep, &woken), Poll::Ready(()));
        assert_eq!(timers.next_deadline(), None);
    }

    #[test]
    fn a_sleep_dropped_is_forgotten_and_time_never_goes_back() {
        let timers = Arc::new(Timers::default());
        let start = Instant::now();
        timers.tell(start + Duration::from_secs(1));
        let sleep = timers.sleep(Duration::from_secs(5));
        // Told an earlier time, the server keeps the later one.
        timers.tell(start);
        assert_eq!(timers.next_deadline(), Some(start + Duration::from_secs(6)));
        drop(sleep);
        assert_eq!(timers.next_deadline(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn within_gives_up_when_the_length_passes() {
        let timers = Arc::new(Timers::default());
        let told = Arc::clone(&timers);
        let driver = tokio::spawn(async move {
            loop {
                told.changed().await;
                told.tell(tokio::time::Instant::now().into_std());
                if let Some(deadline) = told.next_deadline() {
                    tokio::time::sleep_until(deadline.into()).await;
                    told.tell(tokio::time::Instant::now().into_std());
                }
            }
        });
        let never = std::future::pending::<()>();
        assert_eq!(within(&timers, Duration::from_secs(5), never).await, None);
        assert_eq!(
            within(&timers, Duration::from_secs(5), async { 7 }).await,
            Some(7)
        );
        driver.abort();
    }
}
