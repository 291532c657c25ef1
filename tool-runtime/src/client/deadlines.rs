//! The time limits of one connection's requests, kept by one timer.
//!
//! A timer per request (`tokio::time::timeout`) makes the runtime's driver move its next
//! wake earlier at each request whenever no other timer is due sooner, which is every
//! request when they come one at a time: a system call to wake the driver, and a turn of
//! the runtime spent on nothing, per request. Here a connection's requests put their
//! deadlines in one list, and one task sleeps until the earliest. Left as it is when
//! requests end, that timer is moved only for a deadline earlier than the time it wakes at;
//! with one time limit for every request, a later request's deadline never is.

use crate::sync::lock;
use std::collections::BTreeSet;
use std::sync::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

/// The deadlines of a connection's requests, and when its timer wakes.
#[derive(Default)]
pub(crate) struct Deadlines {
    state: Mutex<State>,
    /// Told when the timer must wake earlier than it sleeps until.
    moved: Notify,
}

#[derive(Default)]
struct State {
    /// Each waiting request's deadline, with its id.
    due: BTreeSet<(Instant, u64)>,
    /// When the timer wakes next; `None` while it waits for a deadline.
    wakes_at: Option<Instant>,
}

impl Deadlines {
    /// Request `id` has its answer due by `deadline`.
    pub(crate) fn add(&self, id: u64, deadline: Instant) {
        let mut state = lock(&self.state);
        state.due.insert((deadline, id));
        if state.wakes_at.is_none_or(|wakes_at| deadline < wakes_at) {
            state.wakes_at = Some(deadline);
            drop(state);
            self.moved.notify_one();
        }
    }

    /// Request `id` (due by `deadline`) no longer waits. The timer is left as it is: when it
    /// wakes for nothing, it sleeps until the earliest deadline left.
    pub(crate) fn remove(&self, id: u64, deadline: Instant) {
        lock(&self.state).due.remove(&(deadline, id));
    }

    /// The timer: calls `expire` with the id of each request whose deadline passed, as it
    /// passes. Runs until dropped.
    pub(crate) async fn run(&self, expire: impl Fn(u64)) {
        loop {
            let wakes_at = lock(&self.state).wakes_at;
            let Some(wakes_at) = wakes_at else {
                self.moved.notified().await;
                continue;
            };
            tokio::select! {
                () = tokio::time::sleep_until(wakes_at) => {}
                // Asked to wake earlier: sleep again, until then.
                () = self.moved.notified() => continue,
            }
            for id in self.take_expired(Instant::now()) {
                expire(id);
            }
        }
    }

    /// The requests due by `now`, taken out; the timer set to wake at the earliest left.
    fn take_expired(&self, now: Instant) -> Vec<u64> {
        let mut state = lock(&self.state);
        let later = match now.checked_add(std::time::Duration::from_nanos(1)) {
            Some(just_after) => state.due.split_off(&(just_after, 0)),
            None => BTreeSet::new(),
        };
        let expired = std::mem::replace(&mut state.due, later);
        state.wakes_at = state.due.first().map(|(deadline, _)| *deadline);
        expired.into_iter().map(|(_, id)| id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    /// Deadlines with their timer running until the test ends, the ids expired so far, and
    /// the time the test starts at.
    fn running() -> (Arc<Deadlines>, Arc<Mutex<Vec<u64>>>, Instant) {
        let deadlines = Arc::new(Deadlines::default());
        let expired = Arc::new(Mutex::new(Vec::new()));
        let (timer, seen) = (Arc::clone(&deadlines), Arc::clone(&expired));
        tokio::spawn(async move { timer.run(|id| lock(&seen).push(id)).await });
        (deadlines, expired, Instant::now())
    }

    #[tokio::test(start_paused = true)]
    async fn requests_expire_at_their_deadlines_in_order_and_answered_ones_never() {
        let (deadlines, expired, start) = running();
        deadlines.add(1, start + Duration::from_secs(60));
        deadlines.add(2, start + Duration::from_secs(10));
        deadlines.add(3, start + Duration::from_secs(30));
        deadlines.remove(3, start + Duration::from_secs(30));

        tokio::time::sleep(Duration::from_millis(9_999)).await;
        assert!(
            lock(&expired).is_empty(),
            "nothing is due before its deadline"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
        assert_eq!(*lock(&expired), [2], "the earliest deadline comes first");
        tokio::time::sleep(Duration::from_secs(50)).await;
        assert_eq!(
            *lock(&expired),
            [2, 1],
            "the answered request never expires"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_deadline_earlier_than_the_sleeping_timer_wakes_it_sooner() {
        let (deadlines, expired, start) = running();
        deadlines.add(1, start + Duration::from_secs(60));
        // The timer is asleep until the first deadline when the earlier one comes.
        tokio::time::sleep(Duration::from_secs(1)).await;
        deadlines.add(2, start + Duration::from_secs(6));
        tokio::time::sleep(Duration::from_millis(5_001)).await;
        assert_eq!(*lock(&expired), [2]);

        // Every request answered, the timer wakes for nothing and waits; a new deadline
        // sets it again.
        deadlines.remove(1, start + Duration::from_secs(60));
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(lock(&deadlines.state).wakes_at, None);
        deadlines.add(3, Instant::now() + Duration::from_secs(1));
        tokio::time::sleep(Duration::from_millis(1_001)).await;
        assert_eq!(*lock(&expired), [2, 3]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_later_deadline_leaves_the_timer_where_it_is() {
        let (deadlines, expired, start) = running();
        // Requests one at a time, each answered before the next: the timer is set by the
        // first and not moved by the others.
        for id in 1..=3 {
            let deadline = Instant::now() + Duration::from_secs(60);
            deadlines.add(id, deadline);
            assert_eq!(
                lock(&deadlines.state).wakes_at,
                Some(start + Duration::from_secs(60))
            );
            tokio::time::sleep(Duration::from_secs(1)).await;
            if id < 3 {
                deadlines.remove(id, deadline);
            }
        }
        // Woken for the first request's deadline, the timer finds only the last's left.
        tokio::time::sleep(Duration::from_secs(58)).await;
        assert!(lock(&expired).is_empty());
        assert_eq!(
            lock(&deadlines.state).wakes_at,
            Some(start + Duration::from_secs(62))
        );
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert_eq!(*lock(&expired), [3]);
    }
}
