//! What a server does now and then rather than for a request, due by the time its driver
//! tells it: with a store replicas share, renewing the leases of the tasks this replica
//! runs, and looking for tasks whose worker (another replica) was lost. Each is handed to
//! the driver as work when due, never two of a kind at once; a lost task found to run
//! again here is handed over at the driver's next turn.

use super::tasks::lease::{self, RENEW_EVERY, SWEEP_EVERY};
use super::work::Work;
use super::Shared;
use crate::sync::lock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::Notify;

/// When each duty is next due, and what they found to run.
#[derive(Default)]
pub(crate) struct Duties {
    due: Mutex<Due>,
    /// A renewal is running: the next waits for it.
    renewing: Arc<AtomicBool>,
    /// A look for lost tasks is running: the next waits for it.
    looking: Arc<AtomicBool>,
    /// Tasks found lost, to run again here: handed to the driver at its next turn.
    found: Arc<Mutex<Vec<Work>>>,
    /// Told when something was found: the driver comes for it.
    changed: Arc<Notify>,
}

#[derive(Default)]
struct Due {
    renewal: Option<Instant>,
    look: Option<Instant>,
}

impl Duties {
    /// The work due at `now` for the server `shared` (nothing without a shared store), and
    /// what earlier looks found to run again.
    pub(crate) fn at(&self, shared: &Arc<Shared>, now: Instant) -> Vec<Work> {
        let mut works = std::mem::take(&mut *lock(&self.found));
        let Some(worker) = lease::worker(shared).map(str::to_owned) else {
            return works;
        };
        let (renew, look) = {
            let mut due = lock(&self.due);
            let renew = take_due(&mut due.renewal, now, RENEW_EVERY);
            let look = take_due(&mut due.look, now, SWEEP_EVERY);
            (renew, look)
        };
        if renew && !self.renewing.swap(true, Ordering::AcqRel) {
            let (shared, renewing) = (Arc::clone(shared), Arc::clone(&self.renewing));
            works.push(Work::stream(async move {
                let wall = shared.clock.now();
                let store = Arc::clone(&shared.tasks.store);
                shared
                    .leased_runs
                    .renew_all(store.as_ref(), &worker, wall)
                    .await;
                renewing.store(false, Ordering::Release);
            }));
        }
        if look && !self.looking.swap(true, Ordering::AcqRel) {
            let (shared, looking) = (Arc::clone(shared), Arc::clone(&self.looking));
            let (found, changed) = (Arc::clone(&self.found), Arc::clone(&self.changed));
            works.push(Work::stream(async move {
                let wall = shared.clock.now();
                lease::look_for_lost(Arc::clone(&shared), wall, |rerun| {
                    lock(&found).push(rerun);
                    changed.notify_one();
                })
                .await;
                looking.store(false, Ordering::Release);
            }));
        }
        works
    }

    /// When a duty is next due, if the server has any.
    pub(crate) fn next_due(&self, shared: &Shared) -> Option<Instant> {
        lease::worker(shared)?;
        let due = lock(&self.due);
        match (due.renewal, due.look) {
            // Not told the time yet: due at once.
            (None, _) | (_, None) => None,
            (Some(renewal), Some(look)) => Some(renewal.min(look)),
        }
    }

    /// Whether a duty waits for the driver's next turn now (found work, or a duty never
    /// started).
    pub(crate) fn pending(&self, shared: &Shared) -> bool {
        if !lock(&self.found).is_empty() {
            return true;
        }
        lease::worker(shared).is_some() && {
            let due = lock(&self.due);
            due.renewal.is_none() || due.look.is_none()
        }
    }

    /// Resolves once work was found for the driver.
    pub(crate) async fn changed(&self) {
        self.changed.notified().await;
    }
}

/// Whether a duty whose next time is `next` is due at `now`; if so, its next time is set
/// `every` after `now`.
fn take_due(next: &mut Option<Instant>, now: Instant, every: std::time::Duration) -> bool {
    if next.is_some_and(|at| at > now) {
        return false;
    }
    *next = Some(now + every);
    true
}
