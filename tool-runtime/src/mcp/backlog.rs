//! A connection's backlog of notifications: those sent but not yet written out by the
//! transport. It is bounded, so a tool that reports progress or logs in a loop to a client
//! that reads slowly (or not at all) cannot grow the server's memory without end.
//!
//! Responses are never held back: only notifications count, and past the bound a new
//! notification is dropped (progress is reported again anyway, and the response always
//! goes). Each message carries its place in the backlog and gives it back when the
//! transport has written (or dropped) it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Notifications one connection may have waiting to be written.
pub(crate) const MAX_QUEUED_NOTIFICATIONS: usize = 1024;

/// The backlog of one connection.
#[derive(Debug, Default)]
pub(crate) struct Backlog {
    queued: Arc<AtomicUsize>,
    dropped: AtomicU64,
}

/// A notification's place in the backlog, given back on drop.
#[derive(Debug)]
pub(crate) struct Place(Arc<AtomicUsize>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Backlog {
    /// A place for one more notification, or `None` when the backlog is full (the
    /// notification is then dropped and counted).
    pub(crate) fn admit(&self) -> Option<Place> {
        let admitted = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |queued| {
                (queued < MAX_QUEUED_NOTIFICATIONS).then_some(queued + 1)
            })
            .is_ok();
        if admitted {
            return Some(Place(Arc::clone(&self.queued)));
        }
        if self.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
            tracing::warn!(
                limit = MAX_QUEUED_NOTIFICATIONS,
                "a client is not reading notifications as fast as a tool sends them; \
                 notifications past the limit are dropped"
            );
        }
        None
    }

    /// Notifications waiting to be written.
    #[cfg(test)]
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backlog_is_bounded_and_places_come_back_on_drop() {
        let backlog = Backlog::default();
        let places: Vec<Place> = (0..MAX_QUEUED_NOTIFICATIONS)
            .map(|_| backlog.admit().expect("room"))
            .collect();
        assert!(backlog.admit().is_none(), "full");
        assert_eq!(backlog.queued(), MAX_QUEUED_NOTIFICATIONS);
        drop(places);
        assert_eq!(backlog.queued(), 0);
        assert!(backlog.admit().is_some());
    }
}
