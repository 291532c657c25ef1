//! The default task store: tasks in this process's memory, dropped after their time to
//! live, at most a fixed number at once.

use super::{StoreError, StoreFuture, Task, TaskStore};
use crate::sync::lock;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};
use tokio::sync::watch;

/// Tasks kept in this process's memory: fine for one server; replicas need a shared store.
/// Keeps at most 10 000 tasks: past that, the oldest ended task makes room, and when none
/// has ended a new task is refused (running tasks are never dropped to make room).
#[derive(Default)]
pub struct InMemoryTasks {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, Stored>,
    /// When each task expires, soonest first, so a sweep reads only the expired ones.
    expiries: BTreeSet<(SystemTime, u64)>,
    /// Ended tasks, oldest first: the ones that make room.
    ended: BTreeSet<u64>,
    /// Ids by creation number.
    ids: BTreeMap<u64, String>,
    next: u64,
}

struct Stored {
    task: Task,
    /// Its creation number.
    number: u64,
    /// Counts the task's changes; a receiver made before a change sees it.
    changed: watch::Sender<u64>,
}

const MOST_TASKS: usize = 10_000;

impl std::fmt::Debug for InMemoryTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryTasks")
            .field("tasks", &lock(&self.inner).tasks.len())
            .finish()
    }
}

fn expiry(task: &Task) -> SystemTime {
    task.created_at
        .checked_add(task.ttl)
        .unwrap_or(SystemTime::UNIX_EPOCH + Duration::from_secs(u64::MAX >> 2))
}

impl Inner {
    /// Drops the tasks whose time to live has passed.
    fn sweep(&mut self, now: SystemTime) {
        while let Some(&(expires, number)) = self.expiries.first() {
            if expires >= now {
                break;
            }
            self.remove(number);
        }
    }

    /// Drops the task `number` (dropping its sender wakes every waiter).
    fn remove(&mut self, number: u64) {
        if let Some(id) = self.ids.remove(&number) {
            if let Some(stored) = self.tasks.remove(&id) {
                self.expiries.remove(&(expiry(&stored.task), number));
            }
        }
        self.ended.remove(&number);
    }
}

// The store's work, done at once under its lock; the trait wraps each in a ready future.
impl InMemoryTasks {
    fn insert_now(&self, task: Task) -> bool {
        let mut inner = lock(&self.inner);
        inner.sweep(SystemTime::now());
        if inner.tasks.len() >= MOST_TASKS {
            match inner.ended.first().copied() {
                Some(oldest) => inner.remove(oldest),
                None => return false,
            }
        }
        let number = inner.next;
        inner.next += 1;
        inner.expiries.insert((expiry(&task), number));
        if task.status.is_terminal() {
            inner.ended.insert(number);
        }
        inner.ids.insert(number, task.id.clone());
        let id = task.id.clone();
        inner.tasks.insert(
            id,
            Stored {
                task,
                number,
                changed: watch::Sender::new(0),
            },
        );
        true
    }

    fn get_now(&self, id: &str) -> Option<Task> {
        let inner = lock(&self.inner);
        let stored = inner.tasks.get(id)?;
        (!stored.task.is_expired(SystemTime::now())).then(|| stored.task.clone())
    }

    fn contains_now(&self, id: &str) -> bool {
        let inner = lock(&self.inner);
        inner
            .tasks
            .get(id)
            .is_some_and(|stored| !stored.task.is_expired(SystemTime::now()))
    }

    fn update_now(&self, id: &str, change: &mut dyn FnMut(&mut Task)) -> Option<Task> {
        let mut inner = lock(&self.inner);
        let stored = inner.tasks.get_mut(id)?;
        if stored.task.is_expired(SystemTime::now()) {
            return None;
        }
        let before = expiry(&stored.task);
        change(&mut stored.task);
        stored.changed.send_modify(|version| *version += 1);
        let (task, number, after) = (stored.task.clone(), stored.number, expiry(&stored.task));
        if after != before {
            inner.expiries.remove(&(before, number));
            inner.expiries.insert((after, number));
        }
        if task.status.is_terminal() {
            inner.ended.insert(number);
        }
        Some(task)
    }
}

impl TaskStore for InMemoryTasks {
    fn insert(&self, task: Task) -> StoreFuture<'_, Result<bool, StoreError>> {
        Box::pin(std::future::ready(Ok(self.insert_now(task))))
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<Option<Task>, StoreError>> {
        Box::pin(std::future::ready(Ok(self.get_now(id))))
    }

    fn contains<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<bool, StoreError>> {
        Box::pin(std::future::ready(Ok(self.contains_now(id))))
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: &'a mut (dyn FnMut(&mut Task) + Send),
    ) -> StoreFuture<'a, Result<Option<Task>, StoreError>> {
        Box::pin(std::future::ready(Ok(self.update_now(id, change))))
    }

    fn orphaned(
        &self,
        now: SystemTime,
        most: usize,
    ) -> StoreFuture<'_, Result<Vec<String>, StoreError>> {
        let inner = lock(&self.inner);
        let orphaned = inner
            .tasks
            .values()
            .filter(|stored| stored.task.is_orphaned(now) && !stored.task.is_expired(now))
            .map(|stored| stored.task.id.clone())
            .take(most)
            .collect();
        Box::pin(std::future::ready(Ok(orphaned)))
    }

    fn changed(&self, id: &str) -> StoreFuture<'static, ()> {
        // Subscribed now, not when first polled: a change between this call and the
        // first poll is not missed.
        let receiver = lock(&self.inner)
            .tasks
            .get(id)
            .map(|s| s.changed.subscribe());
        Box::pin(async move {
            if let Some(mut receiver) = receiver {
                let _ = receiver.changed().await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::TaskStatus;

    fn task(id: &str, ttl: Duration) -> Task {
        Task::new(id.to_owned(), ttl, Duration::from_millis(100))
    }

    #[test]
    fn expired_tasks_go_and_running_ones_are_never_pushed_out() {
        let store = InMemoryTasks::default();
        assert!(store.insert_now(task("short", Duration::ZERO)));
        std::thread::sleep(Duration::from_millis(5));
        assert!(store.get_now("short").is_none(), "past its time to live");
        assert!(!store.contains_now("short") && !store.contains_now("unknown"));
        assert!(store.insert_now(task("kept", Duration::from_secs(60))));
        assert_eq!(
            lock(&store.inner).tasks.len(),
            1,
            "the expired one was swept"
        );

        // Full of running tasks: a new one is refused; once one ends, it makes room.
        for n in 1..MOST_TASKS {
            assert!(store.insert_now(task(&format!("t{n}"), Duration::from_secs(60))));
        }
        assert!(!store.insert_now(task("one too many", Duration::from_secs(60))));
        store.update_now("t5", &mut |t| t.end(TaskStatus::Completed, None));
        assert!(store.insert_now(task("room", Duration::from_secs(60))));
        assert!(store.get_now("t5").is_none() && store.get_now("kept").is_some());
        assert!(!store.contains_now("t5") && store.contains_now("kept"));
        // An ended task stays as it ended.
        assert!(store
            .update_now("room", &mut |t| t.end(TaskStatus::Cancelled, None))
            .is_some());
        let ended = store
            .update_now("room", &mut |t| t.end(TaskStatus::Completed, None))
            .unwrap();
        assert_eq!(ended.status, TaskStatus::Cancelled);
    }
}
