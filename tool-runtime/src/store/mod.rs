//! State that the replicas of one service share, so that any replica can serve any request:
//! handshake-era sessions, tasks, the keys that seal request states, large outputs kept as
//! resources, rate limits and budgets, and the notifications that must reach the replica
//! holding a client's stream.
//!
//! Without a [`Store`] a server keeps all of it in its own memory, which is right for one
//! process. Several replicas behind one load balancer share a store (Redis, with the
//! feature `redis`): give each replica the same URL and key prefix.
//!
//! ```no_run
//! # #[cfg(feature = "redis")]
//! # async fn run() -> Result<(), tool_runtime::tasks::StoreError> {
//! use tool_runtime::mcp::ServerOptions;
//! use tool_runtime::store::Store;
//!
//! let store = Store::builder("redis://127.0.0.1:6379/0").prefix("weather").connect().await?;
//! let options = ServerOptions::default().store(store);
//! # let _ = options;
//! # Ok(())
//! # }
//! ```
//!
//! What each kind of request costs in round trips to the store, and what a deployment
//! needs from Redis, is in the deployment guide (`examples/deploy/README.md`).

// Without a backend (the `redis` feature) no store can be made, so what serves one is
// unreachable; it is kept compiled, so a build without the feature checks it all the same.
#![cfg_attr(not(feature = "redis"), allow(dead_code))]

pub(crate) mod events;
mod keys;
#[cfg(feature = "redis")]
mod redis;
pub(crate) mod sessions;

use crate::tasks::StoreError;
pub(crate) use events::Event;
pub use keys::SealingKey;
pub(crate) use sessions::SessionRecord;

use crate::catalog::time::Rate;
use crate::tasks::{StoreFuture, TaskStore};
use std::sync::Arc;
use std::time::Duration;

/// What a rate limit kept in the store does while the store cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WhenUnreachable {
    /// Calls run, unlimited, until the store answers again: an outage of the store does not
    /// become an outage of the tools. The default.
    #[default]
    Admit,
    /// Calls a rate limit applies to are refused (a tool error that says to retry), so a
    /// limit that protects something costly holds whatever happens.
    Refuse,
}

/// State shared by the replicas of one service, in Redis. Cheap to clone: clones share
/// one connection.
///
/// Every key it writes starts with its prefix, carries a time to live, and is bounded in
/// size; the keys of one session or one task share a hash tag (`{...}`), so Redis Cluster
/// works unchanged.
#[derive(Clone)]
pub struct Store {
    pub(crate) backend: Arc<dyn Backend>,
    pub(crate) when_unreachable: WhenUnreachable,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("replica", &self.backend.replica())
            .field("when_unreachable", &self.when_unreachable)
            .finish_non_exhaustive()
    }
}

/// How to reach a store, before connecting: see [`Store::builder`].
#[derive(Debug, Clone)]
pub struct StoreBuilder {
    url: String,
    prefix: String,
    response_timeout: Duration,
    when_unreachable: WhenUnreachable,
    sealing_key: Option<SealingKey>,
}

impl Store {
    /// How to reach the store at `url`: `redis://[user[:password]@]host[:port][/db]`, or
    /// `rediss://...` for TLS; a Redis Cluster as
    /// `redis+cluster://[user[:password]@]host:port[,host:port...]` (any of its nodes: the
    /// others are found from them), or `rediss+cluster://...`.
    pub fn builder(url: impl Into<String>) -> StoreBuilder {
        StoreBuilder {
            url: url.into(),
            prefix: "mcp".to_owned(),
            response_timeout: Duration::from_millis(500),
            when_unreachable: WhenUnreachable::default(),
            sealing_key: None,
        }
    }

    /// The name of this replica in the store: random, new at each start.
    pub fn replica(&self) -> &str {
        self.backend.replica()
    }

    /// Whether the store answers now (what `GET /readyz` asks).
    pub async fn is_reachable(&self) -> bool {
        self.backend.ping().await.is_ok()
    }

    /// The tasks of every replica.
    pub(crate) fn tasks(&self) -> Arc<dyn TaskStore> {
        self.backend.tasks()
    }
}

impl StoreBuilder {
    /// The prefix of every key and channel (`mcp` unless set): services that share one
    /// Redis keep apart by prefix.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long a command may take before it counts as failed (500 ms unless set): a
    /// request that needs the store is answered "retry" rather than left hanging.
    pub fn response_timeout(mut self, timeout: Duration) -> Self {
        self.response_timeout = timeout;
        self
    }

    /// What a rate limit does while the store cannot be reached.
    pub fn when_unreachable(mut self, mode: WhenUnreachable) -> Self {
        self.when_unreachable = mode;
        self
    }

    /// The keys that seal request states, when the operator provides them (see
    /// [`SealingKey::from_file`]); without, the replicas share keys the store makes and
    /// rotates.
    pub fn sealing_key(mut self, key: SealingKey) -> Self {
        self.sealing_key = Some(key);
        self
    }

    /// Connects, subscribes to the notifications of the other replicas, and reads (or
    /// makes) the keys that seal request states.
    ///
    /// # Errors
    ///
    /// When the URL is not one of a supported store, or the store cannot be reached.
    pub async fn connect(self) -> Result<Store, StoreError> {
        #[cfg(feature = "redis")]
        if let Some((
            "redis" | "rediss" | "valkey" | "valkeys" | "redis+cluster" | "rediss+cluster"
            | "valkey+cluster" | "valkeys+cluster",
            _,
        )) = self.url.split_once("://")
        {
            let when_unreachable = self.when_unreachable;
            let backend = Arc::new(redis::RedisBackend::connect(self).await?);
            return Ok(Store {
                backend,
                when_unreachable,
            });
        }
        Err(StoreError::new(format!(
            "{:?} is not the URL of a supported store; expected redis://host:port/db, \
             rediss://... or redis+cluster://host:port,host:port (with the feature \"redis\")",
            redact(&self.url)
        )))
    }
}

/// `url` without its password, to show in messages.
fn redact(url: &str) -> String {
    match (url.split_once("://"), url.rfind('@')) {
        (Some((scheme, rest)), Some(at)) => {
            let host = &url[at + 1..];
            let user = rest.split(['@', ':']).next().unwrap_or("");
            format!("{scheme}://{user}:***@{host}")
        }
        _ => url.to_owned(),
    }
}

/// What a budget kept in the store says of one more call: admitted (and counted), or
/// refused with what the client spent (calls, output tokens).
pub(crate) type BudgetAdmission = Result<(), (u64, u64)>;

/// A message of a 2025-11-25 task as the store keeps it: its bytes, and whether it is a
/// question (else a notification).
pub(crate) type TaskMessage = (Vec<u8>, bool);

/// A write made once the request that caused it is answered.
#[derive(Debug)]
pub(crate) enum Later {
    /// Count `tokens` of output against the budget of the client `key`.
    Charge { key: String, tokens: u64 },
    /// Tell every replica.
    Publish(Event),
    /// Keep a message of a 2025-11-25 task (a question, or a notification) for a stream of
    /// its session, and tell the session's replicas.
    TaskMessage {
        session: String,
        task: String,
        message: Vec<u8>,
        question: bool,
    },
    /// Keep a large output under `uri` for `ttl`.
    Output {
        uri: String,
        text: Arc<str>,
        mime_type: &'static str,
        ttl: Duration,
    },
}

impl Later {
    /// What it writes, in a word for logs.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Later::Charge { .. } => "budget",
            Later::Publish(_) => "event",
            Later::TaskMessage { .. } => "task message",
            Later::Output { .. } => "large output",
        }
    }
}

/// What the runtime needs of a shared store; one implementation per kind of store.
pub(crate) trait Backend: Send + Sync + 'static {
    /// This replica's name.
    fn replica(&self) -> &str;
    /// One round trip, to tell whether the store answers.
    fn ping(&self) -> StoreFuture<'_, Result<(), StoreError>>;

    /// Sends `event` to every replica (this one included), without waiting for them.
    fn publish(&self, event: Event) -> StoreFuture<'_, Result<(), StoreError>>;
    /// Calls `handler` for every event any replica publishes, before the event is
    /// acknowledged; handlers must be quick.
    fn on_event(&self, handler: events::Handler);
    /// Whether this replica hears the other replicas' events now; while it does not, what
    /// it caches of shared state cannot be trusted.
    fn hears_events(&self) -> bool;
    /// How many times the subscription to events was (re)established: a cache filled in
    /// an earlier one may have missed events.
    fn events_epoch(&self) -> u64;

    /// Queues `message` for the replica `replica`, whose inbox handler gets it.
    fn deliver<'a>(
        &'a self,
        replica: &'a str,
        message: Vec<u8>,
    ) -> StoreFuture<'a, Result<(), StoreError>>;
    /// Calls `handler` with each message other replicas deliver to this one.
    fn on_inbox(&self, handler: events::InboxHandler);

    /// Keeps a new session for `ttl`.
    fn session_open<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> StoreFuture<'a, Result<(), StoreError>>;
    /// The session `id`, its life extended to `ttl` from now; `None` when it ended.
    fn session_get<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> StoreFuture<'a, Result<Option<SessionRecord>, StoreError>>;
    /// Changes the session `id` (its log level, its subscriptions); `false` when it ended.
    fn session_change<'a>(
        &'a self,
        id: &'a str,
        change: sessions::Change,
    ) -> StoreFuture<'a, Result<bool, StoreError>>;
    /// Ends the session `id`; `false` when there was none.
    fn session_end<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Result<bool, StoreError>>;

    /// The oldest message of the task `task` waiting for a stream (its bytes, and whether
    /// it is a question), taken: no other replica gets it.
    fn task_message_take<'a>(
        &'a self,
        task: &'a str,
    ) -> StoreFuture<'a, Result<Option<TaskMessage>, StoreError>>;

    /// The keys that seal request states, kept current.
    fn sealing_key(&self) -> SealingKey;

    /// The large output under `uri` (its text and type), while it is kept.
    fn output_get<'a>(
        &'a self,
        uri: &'a str,
    ) -> StoreFuture<'a, Result<Option<(String, String)>, StoreError>>;

    /// The kept answer of a read-only tool under `key` (as JSON), and how long it is still
    /// kept.
    fn answer_get<'a>(
        &'a self,
        key: &'a str,
    ) -> StoreFuture<'a, Result<Option<(String, Duration)>, StoreError>>;
    /// Claims the run of `key` for `lease`: `true` when no other replica holds it, which
    /// then runs the tool while the others wait for its answer.
    fn answer_claim<'a>(
        &'a self,
        key: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<bool, StoreError>>;
    /// Keeps `answer` (as JSON) under `key` for its time, if there is one (a run that
    /// failed keeps nothing), and ends the claim on `key`.
    fn answer_put<'a>(
        &'a self,
        key: &'a str,
        answer: Option<(String, Duration)>,
    ) -> StoreFuture<'a, Result<(), StoreError>>;

    /// Counts one event against `rate` for `key`: `Ok(Err(wait))` when it must wait.
    fn rate_check<'a>(
        &'a self,
        key: &'a str,
        rate: Rate,
    ) -> StoreFuture<'a, Result<Result<(), Duration>, StoreError>>;
    /// Counts one call against the budget of `key`, unless spent: the amounts spent
    /// (calls, output tokens) when it was admitted, or `Err` with them when refused.
    fn budget_admit<'a>(
        &'a self,
        key: &'a str,
        calls: Option<u64>,
        tokens: Option<u64>,
    ) -> StoreFuture<'a, Result<BudgetAdmission, StoreError>>;
    /// Makes `write` after the request that caused it is answered, in order, without
    /// holding anything up (a write the store refuses is logged).
    fn later(&self, write: Later);

    /// The tasks every replica sees.
    fn tasks(&self) -> Arc<dyn TaskStore>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_their_password() {
        assert_eq!(
            redact("redis://app:s3cret@cache:6379/0"),
            "redis://app:***@cache:6379/0"
        );
        assert_eq!(redact("redis://cache:6379/0"), "redis://cache:6379/0");
    }
}
