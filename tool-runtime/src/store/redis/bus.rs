//! How replicas hear each other: every replica subscribes to `<prefix>:events` (and to its
//! own channel of acknowledgements), and reads its inbox, a list only it pops.
//!
//! An event is delivered at most once (Redis pub/sub), so it only ever says "look again":
//! what must not be lost is in keys. A sender that must know every replica has handled an
//! event (a session that ended must be gone everywhere before the client hears so) waits
//! for as many acknowledgements as `PUBLISH` counted receivers, for a short while at most.
//! Answers to questions go to the asking replica's inbox, a list, which keeps them while
//! that replica reconnects.

use super::{failed, Shared};
use crate::store::events::{Envelope, Event, Handler, InboxHandler};
use crate::sync::{lock, read, write};
use crate::tasks::StoreError;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{oneshot, Notify};
use tokio::task::JoinHandle;

/// How long a sender waits for every replica to acknowledge an event; a replica that died
/// after receiving it is not waited for longer.
const ACK_PATIENCE: Duration = Duration::from_millis(500);
/// How often the subscription is checked with a ping, so a store that hangs is noticed.
const PING_EVERY: Duration = Duration::from_secs(1);
/// The longest pause between two attempts to subscribe again.
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// How long a message waits in an inbox whose replica never reads it (it died).
const INBOX_TTL_MS: u64 = 10 * 60 * 1000;
/// How long one inbox read blocks before it is made again.
const INBOX_BLOCK_SECONDS: u64 = 5;

pub(super) struct Bus {
    shared: Arc<Shared>,
    events_channel: String,
    handlers: RwLock<Vec<Handler>>,
    inbox_handlers: RwLock<Vec<InboxHandler>>,
    /// Whether the subscription is live now.
    listening: AtomicBool,
    /// Told when the subscription becomes live.
    listening_changed: Notify,
    /// How many times the subscription was (re)established.
    epoch: AtomicU64,
    next_nonce: AtomicU64,
    /// Senders waiting for acknowledgements, by nonce.
    waiting: Mutex<HashMap<u64, Acks>>,
}

/// Acknowledgements of one event.
struct Acks {
    /// How many receivers `PUBLISH` counted, once known.
    needed: Option<u64>,
    got: u64,
    done: Option<oneshot::Sender<()>>,
}

impl Acks {
    fn settle(&mut self) {
        if self.needed.is_some_and(|needed| self.got >= needed) {
            if let Some(done) = self.done.take() {
                let _ = done.send(());
            }
        }
    }
}

impl Bus {
    pub(super) fn new(shared: Arc<Shared>) -> Arc<Bus> {
        Arc::new(Bus {
            events_channel: format!("{}:events", shared.prefix),
            shared,
            handlers: RwLock::new(Vec::new()),
            inbox_handlers: RwLock::new(Vec::new()),
            listening: AtomicBool::new(false),
            listening_changed: Notify::new(),
            epoch: AtomicU64::new(0),
            next_nonce: AtomicU64::new(1),
            waiting: Mutex::new(HashMap::new()),
        })
    }

    fn acks_channel(&self, replica: &str) -> String {
        format!("{}:acks:{replica}", self.shared.prefix)
    }

    pub(super) fn on_event(&self, handler: Handler) {
        write(&self.handlers).push(handler);
    }

    pub(super) fn on_inbox(&self, handler: InboxHandler) {
        write(&self.inbox_handlers).push(handler);
    }

    pub(super) fn hears_events(&self) -> bool {
        self.listening.load(Ordering::Acquire)
    }

    pub(super) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Waits until the subscription is live, for `most` at most (a store that is down at
    /// start does not stop the server from starting).
    pub(super) async fn wait_until_listening(&self, most: Duration) {
        let live = async {
            loop {
                // Registered before the flag is read, so the change cannot slip between.
                let changed = self.listening_changed.notified();
                tokio::pin!(changed);
                changed.as_mut().enable();
                if self.hears_events() {
                    return;
                }
                changed.await;
            }
        };
        let _ = tokio::time::timeout(most, live).await;
    }

    /// Publishes `event`; with `acked`, waits until every replica that received it has
    /// handled it (or a short while has passed).
    pub(super) async fn publish(&self, event: Event, acked: bool) -> Result<(), StoreError> {
        let nonce = acked.then(|| self.next_nonce.fetch_add(1, Ordering::Relaxed));
        let envelope = Envelope {
            from: self.shared.replica.clone(),
            nonce,
            event,
        };
        let payload = serde_json::to_vec(&envelope).map_err(StoreError::new)?;
        let done = nonce.map(|nonce| {
            let (done, handled) = oneshot::channel();
            let acks = Acks {
                needed: None,
                got: 0,
                done: Some(done),
            };
            lock(&self.waiting).insert(nonce, acks);
            (nonce, handled)
        });
        let mut connection = self.shared.connection();
        let published = self
            .shared
            .endpoint
            .publish(
                &mut connection,
                &self.shared.prefix,
                &self.events_channel,
                &payload,
            )
            .await;
        let Some((nonce, handled)) = done else {
            return published.map(drop).map_err(failed);
        };
        let receivers = match published {
            Ok(receivers) => receivers,
            Err(error) => {
                lock(&self.waiting).remove(&nonce);
                return Err(failed(error));
            }
        };
        if let Some(acks) = lock(&self.waiting).get_mut(&nonce) {
            acks.needed = Some(receivers);
            acks.settle();
        }
        if tokio::time::timeout(ACK_PATIENCE, handled).await.is_err() {
            tracing::warn!(
                receivers,
                "not every replica acknowledged an event in time; going on"
            );
        }
        lock(&self.waiting).remove(&nonce);
        Ok(())
    }

    /// Starts the loop that keeps the subscription live and hands each event to the
    /// handlers.
    pub(super) fn listen(self: &Arc<Self>) -> JoinHandle<()> {
        let bus = Arc::clone(self);
        tokio::spawn(async move {
            let mut backoff = Duration::from_millis(50);
            loop {
                match bus.listen_once().await {
                    Ok(()) => backoff = Duration::from_millis(50),
                    Err(error) => {
                        tracing::warn!(%error, "lost the store's events; subscribing again")
                    }
                }
                bus.listening.store(false, Ordering::Release);
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        })
    }

    /// One subscription, until it breaks.
    async fn listen_once(&self) -> Result<(), ::redis::RedisError> {
        let mut connection = self.shared.connection();
        let server = self
            .shared
            .endpoint
            .subscriber(&mut connection, &self.shared.prefix)
            .await?;
        let mut pubsub = server.get_async_pubsub().await?;
        let acks = self.acks_channel(&self.shared.replica);
        pubsub.subscribe(&self.events_channel).await?;
        pubsub.subscribe(&acks).await?;
        let (mut sink, mut stream) = pubsub.split();
        self.epoch.fetch_add(1, Ordering::AcqRel);
        self.listening.store(true, Ordering::Release);
        self.listening_changed.notify_waiters();
        let mut ping = tokio::time::interval(PING_EVERY);
        loop {
            tokio::select! {
                message = stream.next() => {
                    let Some(message) = message else { return Ok(()) };
                    if message.get_channel_name() == acks {
                        self.acknowledged(message.get_payload_bytes());
                    } else {
                        self.received(message.get_payload_bytes()).await;
                    }
                }
                _ = ping.tick() => {
                    // In subscribed mode the answer is an array, not a simple string.
                    let pong =
                        tokio::time::timeout(PING_EVERY, sink.ping::<::redis::Value>()).await;
                    match pong {
                        Ok(Ok(_)) => {}
                        Ok(Err(error)) => return Err(error),
                        Err(_) => return Ok(()),
                    }
                }
            }
        }
    }

    /// An event from a replica: handled here, then acknowledged when its sender waits.
    async fn received(&self, payload: &[u8]) {
        let envelope: Envelope = match serde_json::from_slice(payload) {
            Ok(envelope) => envelope,
            Err(error) => {
                tracing::debug!(%error, "ignored an event this version cannot read");
                return;
            }
        };
        let handlers = read(&self.handlers).clone();
        let from_here = envelope.from == self.shared.replica;
        for handler in handlers {
            handler(&envelope.event, from_here);
        }
        if let Some(nonce) = envelope.nonce {
            let mut connection = self.shared.connection();
            let channel = self.acks_channel(&envelope.from);
            let acked = self
                .shared
                .endpoint
                .publish(
                    &mut connection,
                    &self.shared.prefix,
                    &channel,
                    nonce.to_string().as_bytes(),
                )
                .await;
            if let Err(error) = acked {
                tracing::debug!(%error, "could not acknowledge an event");
            }
        }
    }

    fn acknowledged(&self, payload: &[u8]) {
        let Some(nonce) = std::str::from_utf8(payload)
            .ok()
            .and_then(|text| text.parse::<u64>().ok())
        else {
            return;
        };
        if let Some(acks) = lock(&self.waiting).get_mut(&nonce) {
            acks.got += 1;
            acks.settle();
        }
    }

    fn inbox_key(&self, replica: &str) -> String {
        self.shared.key("inbox", replica)
    }

    /// Queues `message` in the inbox of `replica`.
    pub(super) async fn deliver(&self, replica: &str, message: Vec<u8>) -> Result<(), StoreError> {
        let key = self.inbox_key(replica);
        let mut connection = self.shared.connection();
        ::redis::pipe()
            .cmd("RPUSH")
            .arg(&key)
            .arg(message)
            .ignore()
            .cmd("PEXPIRE")
            .arg(&key)
            .arg(INBOX_TTL_MS)
            .ignore()
            .query_async::<()>(&mut connection)
            .await
            .map_err(failed)
    }

    /// Starts the loop that reads this replica's inbox, on a connection of its own (a
    /// blocking read would hold up every command sharing its connection).
    pub(super) fn read_inbox(self: &Arc<Self>) -> JoinHandle<()> {
        let bus = Arc::clone(self);
        tokio::spawn(async move {
            let key = bus.inbox_key(&bus.shared.replica);
            let mut backoff = Duration::from_millis(50);
            loop {
                if let Err(error) = bus.read_inbox_once(&key).await {
                    tracing::warn!(%error, "lost the store's inbox connection; reconnecting");
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        })
    }

    async fn read_inbox_once(&self, key: &str) -> Result<(), ::redis::RedisError> {
        let mut connection = self
            .shared
            .endpoint
            .blocking(Duration::from_secs(INBOX_BLOCK_SECONDS + 2))
            .await?;
        loop {
            let popped: Option<(String, Vec<u8>)> = ::redis::cmd("BLPOP")
                .arg(key)
                .arg(INBOX_BLOCK_SECONDS)
                .query_async(&mut connection)
                .await?;
            if let Some((_, message)) = popped {
                let handlers = read(&self.inbox_handlers).clone();
                for handler in handlers {
                    handler(&message);
                }
            }
        }
    }
}
