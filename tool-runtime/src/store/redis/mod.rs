//! The store in Redis, one server or a cluster (`endpoint`): one multiplexed connection
//! (that reconnects with backoff) for commands, one subscription for the replicas' events
//! (`bus`), one blocking connection for this replica's inbox, and a Lua script wherever a
//! change must be atomic (`tasks`, `sessions`, `limits`, `keys`).
//!
//! Keys are `<prefix>:<kind>:{<id>}`: the braces make the id the hash tag, so that every
//! key of one session or one task lands in one slot of a Redis Cluster.

mod answers;
mod bus;
mod endpoint;
mod keys;
mod limits;
mod messages;
mod outputs;
mod sessions;
mod tasks;

use super::events::{Event, Handler, InboxHandler};
use super::sessions::{Change, SessionRecord};
use super::{Backend, BudgetAdmission, Later, SealingKey, StoreBuilder, StoreError, TaskMessage};
use crate::catalog::time::Rate;
use crate::tasks::{StoreFuture, TaskStore};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How many writes may wait for the store before more are dropped (a store down for long).
const MOST_LATER: usize = 4096;

/// The store, in Redis.
pub(crate) struct RedisBackend {
    shared: Arc<Shared>,
    bus: Arc<bus::Bus>,
    tasks: Arc<tasks::RedisTasks>,
    sealing_key: SealingKey,
    /// Writes made after their request is answered, in order.
    later: mpsc::Sender<Later>,
    /// The loops this backend runs (events, inbox, key refresh), stopped with it.
    loops: Vec<JoinHandle<()>>,
}

/// What every part of the backend uses: the connection, the names.
pub(super) struct Shared {
    pub(super) endpoint: endpoint::Endpoint,
    pub(super) connection: endpoint::Commands,
    pub(super) prefix: String,
    pub(super) replica: String,
}

impl Shared {
    /// The key of `kind` for `id`, with `id` as its hash tag.
    pub(super) fn key(&self, kind: &str, id: &str) -> String {
        format!("{}:{kind}:{{{id}}}", self.prefix)
    }

    /// A connection handle to run commands on (clones share the connection).
    pub(super) fn connection(&self) -> endpoint::Commands {
        self.connection.clone()
    }
}

/// A new replica's name: `r` and 12 hex digits of OS randomness (a name two replicas
/// never share, short enough to ride in every question id).
fn replica_name() -> String {
    let secret = super::keys::random_secret();
    let digits: String = secret[..6]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("r{digits}")
}

/// A Redis error as a store error.
pub(super) fn failed(error: ::redis::RedisError) -> StoreError {
    StoreError::new(error)
}

impl RedisBackend {
    pub(crate) async fn connect(builder: StoreBuilder) -> Result<RedisBackend, StoreError> {
        if builder.url.starts_with("rediss") || builder.url.starts_with("valkeys") {
            // rustls needs a process-wide crypto provider; ring needs no C toolchain. One
            // installed already (by the application) is kept.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let endpoint = endpoint::Endpoint::parse(&builder.url)?;
        let connection = endpoint
            .commands(builder.response_timeout)
            .await
            .map_err(failed)?;
        let shared = Arc::new(Shared {
            endpoint,
            connection,
            prefix: builder.prefix,
            replica: replica_name(),
        });
        let bus = bus::Bus::new(Arc::clone(&shared));
        let mut loops = vec![bus.listen(), bus.read_inbox()];
        bus.wait_until_listening(Duration::from_secs(2)).await;
        let tasks = tasks::RedisTasks::new(Arc::clone(&shared), &bus);
        let (later, writes) = mpsc::channel(MOST_LATER);
        loops.push(tokio::spawn(write_later(
            Arc::clone(&shared),
            Arc::clone(&bus),
            writes,
        )));
        let sealing_key = match builder.sealing_key {
            Some(key) => key,
            None => {
                let key = keys::shared_key(&shared).await?;
                loops.push(keys::refresh(Arc::clone(&shared), key.clone()));
                key
            }
        };
        Ok(RedisBackend {
            shared,
            bus,
            tasks,
            sealing_key,
            later,
            loops,
        })
    }
}

/// Makes the writes queued with [`Backend::later`], one after another.
async fn write_later(shared: Arc<Shared>, bus: Arc<bus::Bus>, mut writes: mpsc::Receiver<Later>) {
    while let Some(write) = writes.recv().await {
        let written = match &write {
            Later::Publish(event) => bus.publish(event.clone(), false).await,
            Later::TaskMessage {
                session,
                task,
                message,
                question,
            } => match messages::push(&shared, task, message, *question).await {
                Ok(()) => {
                    let event = Event::TaskMessages {
                        session: session.clone(),
                        task: task.clone(),
                    };
                    bus.publish(event, false).await
                }
                Err(error) => Err(error),
            },
            Later::Charge { key, tokens } => limits::charge(&shared, key, *tokens).await,
            Later::Output {
                uri,
                text,
                mime_type,
                ttl,
            } => outputs::put(&shared, uri, text, mime_type, *ttl).await,
        };
        if let Err(error) = written {
            tracing::warn!(%error, write = write.kind(), "the store refused a write");
        }
    }
}

impl Drop for RedisBackend {
    fn drop(&mut self) {
        for task in &self.loops {
            task.abort();
        }
    }
}

impl Backend for RedisBackend {
    fn replica(&self) -> &str {
        &self.shared.replica
    }

    fn ping(&self) -> StoreFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            let mut connection = self.shared.connection();
            ::redis::cmd("PING")
                .query_async::<String>(&mut connection)
                .await
                .map(drop)
                .map_err(failed)
        })
    }

    fn publish(&self, event: Event) -> StoreFuture<'_, Result<(), StoreError>> {
        Box::pin(self.bus.publish(event, false))
    }

    fn on_event(&self, handler: Handler) {
        self.bus.on_event(handler);
    }

    fn hears_events(&self) -> bool {
        self.bus.hears_events()
    }

    fn events_epoch(&self) -> u64 {
        self.bus.epoch()
    }

    fn deliver<'a>(
        &'a self,
        replica: &'a str,
        message: Vec<u8>,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        Box::pin(self.bus.deliver(replica, message))
    }

    fn on_inbox(&self, handler: InboxHandler) {
        self.bus.on_inbox(handler);
    }

    fn session_open<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        Box::pin(sessions::open(&self.shared, id, record, ttl))
    }

    fn session_get<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> StoreFuture<'a, Result<Option<SessionRecord>, StoreError>> {
        Box::pin(sessions::get(&self.shared, id, ttl))
    }

    fn session_change<'a>(
        &'a self,
        id: &'a str,
        change: Change,
    ) -> StoreFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let changed = sessions::change(&self.shared, id, change).await?;
            if changed {
                let event = Event::SessionChanged { id: id.to_owned() };
                self.bus.publish(event, true).await?;
            }
            Ok(changed)
        })
    }

    fn session_end<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let ended = sessions::end(&self.shared, id).await?;
            // Told even when the store had no such session: a replica may still hold it.
            let event = Event::SessionEnded { id: id.to_owned() };
            self.bus.publish(event, true).await?;
            Ok(ended)
        })
    }

    fn task_message_take<'a>(
        &'a self,
        task: &'a str,
    ) -> StoreFuture<'a, Result<Option<TaskMessage>, StoreError>> {
        Box::pin(messages::take(&self.shared, task))
    }

    fn sealing_key(&self) -> SealingKey {
        self.sealing_key.clone()
    }

    fn output_get<'a>(
        &'a self,
        uri: &'a str,
    ) -> StoreFuture<'a, Result<Option<(String, String)>, StoreError>> {
        Box::pin(outputs::get(&self.shared, uri))
    }

    fn answer_get<'a>(
        &'a self,
        key: &'a str,
    ) -> StoreFuture<'a, Result<Option<(String, Duration)>, StoreError>> {
        Box::pin(answers::get(&self.shared, key))
    }

    fn answer_claim<'a>(
        &'a self,
        key: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<bool, StoreError>> {
        Box::pin(answers::claim(&self.shared, key, lease))
    }

    fn answer_put<'a>(
        &'a self,
        key: &'a str,
        answer: Option<(String, Duration)>,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        Box::pin(answers::put(&self.shared, key, answer))
    }

    fn rate_check<'a>(
        &'a self,
        key: &'a str,
        rate: Rate,
    ) -> StoreFuture<'a, Result<Result<(), Duration>, StoreError>> {
        Box::pin(limits::check_rate(&self.shared, key, rate))
    }

    fn budget_admit<'a>(
        &'a self,
        key: &'a str,
        calls: Option<u64>,
        tokens: Option<u64>,
    ) -> StoreFuture<'a, Result<BudgetAdmission, StoreError>> {
        Box::pin(limits::admit(&self.shared, key, calls, tokens))
    }

    fn later(&self, write: Later) {
        if let Err(error) = self.later.try_send(write) {
            tracing::warn!(%error, "too many writes wait for the store; one is dropped");
        }
    }

    fn tasks(&self) -> Arc<dyn TaskStore> {
        Arc::clone(&self.tasks) as Arc<dyn TaskStore>
    }
}
