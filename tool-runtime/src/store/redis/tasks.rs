//! Tasks in Redis: one hash per task (`v` its version, `b` the task as JSON), living for
//! the task's time to live. A change is a compare-and-swap on the version, so a replica
//! recording progress and another recording a cancellation never overwrite each other;
//! each change is published, so waiters on any replica read the task again. Tasks whose
//! worker holds a lease are indexed by the lease's end (`<prefix>:leases`), so replicas
//! find those whose worker was lost.

use super::bus::Bus;
use super::{failed, Shared};
use crate::store::events::Event;
use crate::sync::lock;
use crate::tasks::{StoreError, StoreFuture, Task, TaskStore};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::Notify;

/// How long a waiter waits for an event before it reads the task again anyway (events
/// are delivered at most once).
const POLL_EVERY: Duration = Duration::from_secs(1);
/// How many times a change is tried against newer versions before it fails.
const MOST_TRIES: usize = 16;

/// Writes a task's new version if its version is still `ARGV[1]`: 1 when written, 0 on a
/// conflict, -1 when the task is gone; publishes the change. A task is kept as its version,
/// a newline, then the task as JSON. (The lease index is another key, kept by a command of
/// its own: a script touches the keys of one slot only.)
const UPDATE_SCRIPT: &str = r"
local current = redis.call('GET', KEYS[1])
if not current then return -1 end
local newline = string.find(current, '\n', 1, true)
local version = string.sub(current, 1, newline - 1)
if version ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], tostring(tonumber(version) + 1) .. '\n' .. ARGV[2], 'KEEPTTL')
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
";

pub(super) struct RedisTasks {
    shared: Arc<Shared>,
    /// Waiters on a task's next change, by task id.
    waiters: Arc<Mutex<HashMap<String, Arc<Notify>>>>,
}

impl RedisTasks {
    pub(super) fn new(shared: Arc<Shared>, bus: &Arc<Bus>) -> Arc<RedisTasks> {
        let waiters: Arc<Mutex<HashMap<String, Arc<Notify>>>> = Arc::default();
        let woken = Arc::clone(&waiters);
        bus.on_event(Arc::new(move |event, _| {
            if let Event::TaskChanged { id } = event {
                if let Some(notify) = lock(&woken).remove(id) {
                    notify.notify_waiters();
                }
            }
        }));
        Arc::new(RedisTasks { shared, waiters })
    }

    fn key(&self, id: &str) -> String {
        self.shared.key("task", id)
    }

    fn leases(&self) -> String {
        format!("{}:leases", self.shared.prefix)
    }

    /// The task `id` and its version, unless unknown or expired.
    async fn read(&self, id: &str) -> Result<Option<(Task, String)>, StoreError> {
        let mut connection = self.shared.connection();
        let kept: Option<String> = ::redis::cmd("GET")
            .arg(self.key(id))
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        let Some((version, body)) = kept.as_deref().and_then(|kept| kept.split_once('\n')) else {
            return Ok(None);
        };
        let task: Task = serde_json::from_str(body).map_err(StoreError::new)?;
        if task.is_expired(SystemTime::now()) {
            return Ok(None);
        }
        Ok(Some((task, version.to_owned())))
    }

    /// Keeps a new task, and indexes its lease: the client is told of the task once both
    /// are written. (Two commands, not one pipeline: in a cluster the task and the index
    /// of leases live in different slots.)
    async fn insert_task(&self, task: Task) -> Result<bool, StoreError> {
        let body = serde_json::to_string(&task).map_err(StoreError::new)?;
        let score = lease_score(&task);
        let mut connection = self.shared.connection();
        let kept: Option<String> = ::redis::cmd("SET")
            .arg(self.key(&task.id))
            .arg(format!("1\n{body}"))
            .arg("NX")
            .arg("PX")
            .arg(remaining_millis(&task))
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        if kept.is_some() && !score.is_empty() {
            ::redis::cmd("ZADD")
                .arg(self.leases())
                .arg(&score)
                .arg(&task.id)
                .query_async::<u64>(&mut connection)
                .await
                .map_err(failed)?;
        }
        Ok(kept.is_some())
    }

    /// Keeps the lease index right for `task`, which had a lease before its change or not.
    async fn index_lease(&self, task: &Task, had_lease: bool) -> Result<(), StoreError> {
        let score = lease_score(task);
        let mut connection = self.shared.connection();
        let indexed = match (score.is_empty(), had_lease) {
            (false, _) => {
                ::redis::cmd("ZADD")
                    .arg(self.leases())
                    .arg(score)
                    .arg(&task.id)
                    .query_async::<u64>(&mut connection)
                    .await
            }
            (true, true) => {
                ::redis::cmd("ZREM")
                    .arg(self.leases())
                    .arg(&task.id)
                    .query_async::<u64>(&mut connection)
                    .await
            }
            (true, false) => return Ok(()),
        };
        indexed.map(drop).map_err(failed)
    }

    async fn update_task(
        &self,
        id: &str,
        change: &mut (dyn FnMut(&mut Task) + Send),
    ) -> Result<Option<Task>, StoreError> {
        let event = serde_json::to_string(&crate::store::events::Envelope {
            from: self.shared.replica.clone(),
            nonce: None,
            event: Event::TaskChanged { id: id.to_owned() },
        })
        .map_err(StoreError::new)?;
        let channel = format!("{}:events", self.shared.prefix);
        for _ in 0..MOST_TRIES {
            let Some((mut task, version)) = self.read(id).await? else {
                return Ok(None);
            };
            let had_lease = !lease_score(&task).is_empty();
            let lease_before = task.lease_until;
            change(&mut task);
            let body = serde_json::to_string(&task).map_err(StoreError::new)?;
            let mut connection = self.shared.connection();
            let written: i64 = ::redis::Script::new(UPDATE_SCRIPT)
                .key(self.key(id))
                .arg(&version)
                .arg(body)
                .arg(&channel)
                .arg(&event)
                .invoke_async(&mut connection)
                .await
                .map_err(failed)?;
            match written {
                1 => {
                    let lease_now = !lease_score(&task).is_empty();
                    if lease_now != had_lease || task.lease_until != lease_before {
                        self.index_lease(&task, had_lease).await?;
                    }
                    return Ok(Some(task));
                }
                -1 => return Ok(None),
                // Another replica changed it meanwhile: apply the change to its version.
                _ => continue,
            }
        }
        Err(StoreError::new(format!(
            "task {id} kept changing under {MOST_TRIES} attempts to change it"
        )))
    }

    async fn orphaned_tasks(
        &self,
        now: SystemTime,
        most: usize,
    ) -> Result<Vec<String>, StoreError> {
        let mut connection = self.shared.connection();
        let ids: Vec<String> = ::redis::cmd("ZRANGEBYSCORE")
            .arg(self.leases())
            .arg("-inf")
            .arg(format!("({}", epoch_millis(now)))
            .arg("LIMIT")
            .arg(0)
            .arg(most)
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        let mut orphaned = Vec::with_capacity(ids.len());
        for id in ids {
            match self.read(&id).await? {
                Some((task, _)) if task.is_orphaned(now) => orphaned.push(id),
                Some(_) => {}
                // Expired or gone: its entry in the index goes too.
                None => {
                    let _: Result<u64, _> = ::redis::cmd("ZREM")
                        .arg(self.leases())
                        .arg(&id)
                        .query_async(&mut connection)
                        .await;
                }
            }
        }
        Ok(orphaned)
    }
}

impl TaskStore for RedisTasks {
    fn insert(&self, task: Task) -> StoreFuture<'_, Result<bool, StoreError>> {
        Box::pin(self.insert_task(task))
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<Option<Task>, StoreError>> {
        Box::pin(async move { Ok(self.read(id).await?.map(|(task, _)| task)) })
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        change: &'a mut (dyn FnMut(&mut Task) + Send),
    ) -> StoreFuture<'a, Result<Option<Task>, StoreError>> {
        Box::pin(self.update_task(id, change))
    }

    fn changed(&self, id: &str) -> StoreFuture<'static, ()> {
        let notify = Arc::clone(lock(&self.waiters).entry(id.to_owned()).or_default());
        // Registered now, not at the first poll: a change in between is not missed.
        let mut notified = Box::pin(notify.notified_owned());
        notified.as_mut().enable();
        let waiters = Arc::clone(&self.waiters);
        let id = id.to_owned();
        Box::pin(async move {
            // Without events, the poll is all there is; with them, it covers one lost.
            let _ = tokio::time::timeout(POLL_EVERY, notified).await;
            // A waiter that timed out leaves its entry; the last one removes it.
            let mut waiting = lock(&waiters);
            if waiting.get(&id).is_some_and(|n| Arc::strong_count(n) == 1) {
                waiting.remove(&id);
            }
        })
    }

    fn orphaned(
        &self,
        now: SystemTime,
        most: usize,
    ) -> StoreFuture<'_, Result<Vec<String>, StoreError>> {
        Box::pin(self.orphaned_tasks(now, most))
    }
}

/// The task's time left to live, in milliseconds (at least one).
fn remaining_millis(task: &Task) -> u64 {
    let ends = task.created_at + task.ttl;
    let left = ends
        .duration_since(SystemTime::now())
        .unwrap_or(Duration::from_millis(1));
    u64::try_from(left.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// The task's place in the lease index: when its lease ends, or `""` (not indexed) when it
/// has no lease or has ended.
fn lease_score(task: &Task) -> String {
    match task.lease_until {
        Some(until) if !task.status.is_terminal() => epoch_millis(until).to_string(),
        _ => String::new(),
    }
}

fn epoch_millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
