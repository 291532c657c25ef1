//! The default task store: tasks in this process's memory, dropped after their time to
//! live, at most a fixed number at once.

use super::{StoreFuture, Task, TaskStore};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::SystemTime;
use tokio::sync::watch;

/// Tasks kept in this process's memory: fine for one server; replicas need a shared store.
/// Keeps at most 10 000 tasks: past that, the oldest ended task (or, if none has ended, the
/// oldest) makes room.
#[derive(Default)]
pub struct InMemoryTasks {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, Stored>,
    /// Ids in creation order.
    order: VecDeque<String>,
}

struct Stored {
    task: Task,
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

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

impl Inner {
    /// Drops expired tasks, and makes room for one more.
    fn sweep(&mut self) {
        let now = SystemTime::now();
        let expired: Vec<String> = self
            .tasks
            .iter()
            .filter(|(_, stored)| stored.task.is_expired(now))
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            self.remove(&id);
        }
        while self.tasks.len() >= MOST_TASKS {
            let victim = self
                .order
                .iter()
                .find(|id| {
                    self.tasks
                        .get(*id)
                        .is_some_and(|s| s.task.status.is_terminal())
                })
                .or_else(|| self.order.front())
                .cloned();
            match victim {
                Some(id) => self.remove(&id),
                None => break,
            }
        }
    }

    fn remove(&mut self, id: &str) {
        // Dropping the sender wakes every waiter.
        self.tasks.remove(id);
        self.order.retain(|known| known != id);
    }
}

impl TaskStore for InMemoryTasks {
    fn insert(&self, task: Task) {
        let mut inner = lock(&self.inner);
        inner.sweep();
        inner.order.push_back(task.id.clone());
        let id = task.id.clone();
        inner.tasks.insert(
            id,
            Stored {
                task,
                changed: watch::Sender::new(0),
            },
        );
    }

    fn get(&self, id: &str) -> Option<Task> {
        let inner = lock(&self.inner);
        let stored = inner.tasks.get(id)?;
        (!stored.task.is_expired(SystemTime::now())).then(|| stored.task.clone())
    }

    fn update(&self, id: &str, change: &mut dyn FnMut(&mut Task)) -> Option<Task> {
        let mut inner = lock(&self.inner);
        let stored = inner.tasks.get_mut(id)?;
        if stored.task.is_expired(SystemTime::now()) {
            return None;
        }
        change(&mut stored.task);
        stored.changed.send_modify(|version| *version += 1);
        Some(stored.task.clone())
    }

    fn changed(&self, id: &str) -> StoreFuture {
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

    fn list(&self, after: Option<&str>, limit: usize) -> Vec<Task> {
        let inner = lock(&self.inner);
        let now = SystemTime::now();
        let start = match after {
            Some(after) => match inner.order.iter().position(|id| id == after) {
                Some(index) => index + 1,
                None => return Vec::new(),
            },
            None => 0,
        };
        inner
            .order
            .iter()
            .skip(start)
            .filter_map(|id| inner.tasks.get(id))
            .filter(|stored| !stored.task.is_expired(now))
            .take(limit)
            .map(|stored| stored.task.clone())
            .collect()
    }
}
