//! The handshake era's HTTP sessions: one connection per `Mcp-Session-Id`, ended by the
//! client (DELETE) or, after a time without requests, by the server. A session opened with
//! an access token belongs to its subject: another token cannot use it, even knowing its id.
//!
//! With a store shared by replicas, the session lives in the store and any replica serves
//! it: `initialize` writes its record before it is answered, another replica makes its own
//! copy of the connection from the record at the session's first request there. A copy is
//! trusted without asking the store while this replica hears the replicas' events and has
//! confirmed it lately (a session that changed or ended elsewhere is announced, and the
//! announcement acknowledged, before the client hears of the change); otherwise the store
//! is asked. What runs in a session (calls, their questions, a GET stream) stays on the
//! replica that runs it: a client's answer or cancellation that reaches another replica is
//! handed over through the store.

use crate::call::caller::Caller;
use crate::mcp::{Connection, McpServer};
use crate::store::{Event, Store};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;
// The runtime's clock: what the tests of idle sessions pause and advance.
use tokio::time::Instant;

/// How long a replica trusts its copy of a shared session without asking the store (while
/// it hears the replicas' events, which announce every change).
const TRUST_FOR: Duration = Duration::from_secs(1);

/// The store could not be asked about a session: the client should retry.
#[derive(Debug)]
pub(super) struct Unreachable;

/// Why a session was not opened.
#[derive(Debug)]
pub(super) enum NotOpened {
    /// The store could not be asked: the client should retry.
    Unreachable,
    /// As many sessions as allowed are open, and none is idle: the client should retry.
    Full(usize),
}

/// Every open session.
pub(super) struct Sessions {
    idle_timeout: Duration,
    /// The most sessions open at once.
    most: usize,
    open: Mutex<HashMap<String, Session>>,
    /// The store sessions are shared through, with the server that restores them.
    shared: Option<(Store, McpServer)>,
}

struct Session {
    connection: Arc<Connection>,
    last_used: Instant,
    /// The subject of the token that opened it, when tokens are checked.
    owner: Option<Arc<str>>,
    /// When the store last confirmed the session, and in which subscription to the
    /// replicas' events (an event missed between two subscriptions voids the trust).
    confirmed: Option<(Instant, u64)>,
    /// When this replica last extended the session's life in the store.
    extended: Instant,
}

impl Session {
    /// Whether `caller` may use the session: its owner's subject, if it has an owner.
    fn owned_by(&self, caller: &Caller) -> bool {
        self.owner.as_deref() == caller.subject()
    }

    /// Idle: no request for `timeout`, and nothing still being worked on.
    fn expired(&self, now: Instant, timeout: Duration) -> bool {
        now.duration_since(self.last_used) >= timeout && self.connection.in_flight() == 0
    }

    /// Whether this copy can be used without asking the store.
    fn trusted(&self, store: &Store, now: Instant) -> bool {
        let backend = &store.backend;
        self.confirmed.is_some_and(|(at, epoch)| {
            backend.hears_events()
                && epoch == backend.events_epoch()
                && now.duration_since(at) < TRUST_FOR
        })
    }
}

/// A client's answer to a question of another replica, handed over through its inbox.
#[derive(Serialize, Deserialize)]
struct HandedAnswer {
    /// The session.
    s: String,
    /// The question's id.
    i: Value,
    /// The answer's result, or its error's code and message.
    o: Result<Value, (i64, String)>,
}

impl Sessions {
    /// Sessions of `server`, shared through its store when it has one.
    pub(super) fn new(idle_timeout: Duration, most: usize, server: &McpServer) -> Arc<Sessions> {
        let shared = server.store().map(|store| (store.clone(), server.clone()));
        let sessions = Arc::new(Sessions {
            idle_timeout,
            most,
            open: Mutex::new(HashMap::new()),
            shared,
        });
        if let Some((store, _)) = &sessions.shared {
            let weak = Arc::downgrade(&sessions);
            store.backend.on_event(Arc::new(move |event, _| {
                if let Some(sessions) = weak.upgrade() {
                    sessions.heard(event);
                }
            }));
            let weak = Arc::downgrade(&sessions);
            store.backend.on_inbox(Arc::new(move |message| {
                if let Some(sessions) = Weak::upgrade(&weak) {
                    sessions.handed(message);
                }
            }));
        }
        sessions
    }

    /// What another replica announced of a session.
    fn heard(&self, event: &Event) {
        match event {
            Event::SessionEnded { id } => {
                if let Some(session) = self.lock().remove(id) {
                    session.connection.close();
                }
            }
            Event::SessionChanged { id } => {
                let Some(connection) = self.lock().get_mut(id).map(|session| {
                    session.confirmed = None;
                    Arc::clone(&session.connection)
                }) else {
                    return;
                };
                // Read again now, not at the session's next request here: this replica
                // may hold its GET stream, whose notifications follow its subscriptions.
                let Some((store, _)) = &self.shared else {
                    return;
                };
                let (store, id, ttl) = (store.clone(), id.clone(), self.idle_timeout);
                tokio::spawn(async move {
                    if let Ok(Some(record)) = store.backend.session_get(&id, ttl).await {
                        if let Some(work) = connection.refresh(&record) {
                            tokio::spawn(work.run());
                        }
                    }
                });
            }
            Event::TaskMessages { session, task } => {
                let connection = self.lock().get(session).map(|s| Arc::clone(&s.connection));
                if let Some(work) = connection.and_then(|c| c.task_messages_arrived(task)) {
                    tokio::spawn(work.run());
                }
            }
            Event::Cancelled { session, request } => {
                let connection = self.lock().get(session).map(|s| Arc::clone(&s.connection));
                if let Some(connection) = connection {
                    connection.cancel(&crate::mcp::connection::RequestId::from_value(request));
                }
            }
            _ => {}
        }
    }

    /// An answer another replica handed over.
    fn handed(&self, message: &[u8]) {
        let Ok(handed) = serde_json::from_slice::<HandedAnswer>(message) else {
            return;
        };
        let connection = self
            .lock()
            .get(&handed.s)
            .map(|s| Arc::clone(&s.connection));
        match connection {
            Some(connection) => {
                let id = crate::mcp::connection::RequestId::from_value(&handed.i);
                connection.answer_question(id, handed.o);
            }
            None => tracing::debug!("an answer came for a session this replica does not hold"),
        }
    }

    /// Opens a session; sessions gone idle are ended first, so idle ones never pile up, and
    /// at the cap the one idle longest (with nothing in flight) ends to make room. With a
    /// shared store, the session is kept there before this returns.
    pub(super) async fn open(
        &self,
        id: String,
        connection: Arc<Connection>,
        caller: &Caller,
    ) -> Result<(), NotOpened> {
        self.make_room(Instant::now())?;
        let mut confirmed = None;
        if let Some((store, _)) = &self.shared {
            connection.share(id.clone(), store.clone());
            let record = connection.session_record(caller.subject());
            store
                .backend
                .session_open(&id, &record, self.idle_timeout)
                .await
                .map_err(|error| {
                    unreachable(&error);
                    NotOpened::Unreachable
                })?;
            confirmed = Some((Instant::now(), store.backend.events_epoch()));
        }
        let now = Instant::now();
        let mut open = self.lock();
        self.sweep(&mut open, now);
        open.insert(
            id,
            Session {
                connection,
                last_used: now,
                owner: caller.subject().map(Arc::from),
                confirmed,
                extended: now,
            },
        );
        Ok(())
    }

    /// Room for one more session: idle ones ended, and at the cap the one idle longest
    /// with nothing in flight; `Full` when every session is busy.
    fn make_room(&self, now: Instant) -> Result<(), NotOpened> {
        let mut open = self.lock();
        if open.len() < self.most {
            return Ok(());
        }
        self.sweep(&mut open, now);
        if open.len() < self.most {
            return Ok(());
        }
        let longest_idle = open
            .iter()
            .filter(|(_, session)| session.connection.in_flight() == 0)
            .min_by_key(|(_, session)| session.last_used)
            .map(|(id, _)| id.clone());
        match longest_idle.and_then(|id| open.remove(&id)) {
            Some(session) => {
                tracing::debug!("ended the session idle longest to open another");
                session.connection.close();
                Ok(())
            }
            None => Err(NotOpened::Full(self.most)),
        }
    }

    /// Ends the sessions gone idle on this replica (with a store, only this replica's copy:
    /// the store's copy expires on its own).
    fn sweep(&self, open: &mut HashMap<String, Session>, now: Instant) {
        open.retain(|_, session| {
            let expired = session.expired(now, self.idle_timeout);
            if expired {
                session.connection.close();
            }
            !expired
        });
    }

    /// The session's connection, marked as used now; `None` when there is no such session,
    /// it belongs to another subject, or it has expired (it is then ended).
    pub(super) async fn get(
        &self,
        id: &str,
        caller: &Caller,
    ) -> Result<Option<Arc<Connection>>, Unreachable> {
        let now = Instant::now();
        {
            let mut open = self.lock();
            if let Some(session) = open.get_mut(id) {
                if !session.owned_by(caller) {
                    return Ok(None);
                }
                match &self.shared {
                    None if session.expired(now, self.idle_timeout) => {
                        if let Some(session) = open.remove(id) {
                            session.connection.close();
                        }
                        return Ok(None);
                    }
                    None => {
                        session.last_used = now;
                        return Ok(Some(Arc::clone(&session.connection)));
                    }
                    Some((store, _)) if session.trusted(store, now) => {
                        session.last_used = now;
                        self.extend(id, session, store, now);
                        return Ok(Some(Arc::clone(&session.connection)));
                    }
                    Some(_) => {}
                }
            }
        }
        let Some((store, server)) = &self.shared else {
            return Ok(None);
        };
        self.confirm(id, caller, store, server).await
    }

    /// Asks the store for the session `id` and brings this replica's copy up to it.
    async fn confirm(
        &self,
        id: &str,
        caller: &Caller,
        store: &Store,
        server: &McpServer,
    ) -> Result<Option<Arc<Connection>>, Unreachable> {
        let epoch = store.backend.events_epoch();
        let found = store
            .backend
            .session_get(id, self.idle_timeout)
            .await
            .map_err(|error| unreachable(&error))?;
        let now = Instant::now();
        let mut open = self.lock();
        let Some(record) = found else {
            if let Some(session) = open.remove(id) {
                session.connection.close();
            }
            return Ok(None);
        };
        if record.owner.as_deref() != caller.subject() {
            return Ok(None);
        }
        let (connection, work) = match open.get_mut(id) {
            Some(session) => {
                let work = session.connection.refresh(&record);
                session.last_used = now;
                session.confirmed = Some((now, epoch));
                session.extended = now;
                (Arc::clone(&session.connection), work.into_iter().collect())
            }
            None => {
                let (connection, work) =
                    server.restored_connection(id.to_owned(), store.clone(), &record);
                let connection = Arc::new(connection);
                self.sweep(&mut open, now);
                open.insert(
                    id.to_owned(),
                    Session {
                        connection: Arc::clone(&connection),
                        last_used: now,
                        owner: record.owner.as_deref().map(Arc::from),
                        confirmed: Some((now, epoch)),
                        extended: now,
                    },
                );
                (connection, work)
            }
        };
        drop(open);
        for work in work {
            tokio::spawn(work.run());
        }
        Ok(Some(connection))
    }

    /// Extends the session's life in the store now and then (a quarter of its idle
    /// timeout), without making the request wait: the store's copy must not expire while
    /// the session is used.
    fn extend(&self, id: &str, session: &mut Session, store: &Store, now: Instant) {
        if now.duration_since(session.extended) < self.idle_timeout / 4 {
            return;
        }
        session.extended = now;
        let (store, id, ttl) = (store.clone(), id.to_owned(), self.idle_timeout);
        tokio::spawn(async move {
            if let Err(error) = store.backend.session_get(&id, ttl).await {
                tracing::warn!(%error, "could not extend a session's life in the store");
            }
        });
    }

    /// Ends a session; `false` when there was none (that `caller` may end). With a shared
    /// store, it is ended on every replica before this returns.
    pub(super) async fn remove(&self, id: &str, caller: &Caller) -> Result<bool, Unreachable> {
        let Some((store, _)) = &self.shared else {
            let mut open = self.lock();
            if !open.get(id).is_some_and(|session| session.owned_by(caller)) {
                return Ok(false);
            }
            if let Some(session) = open.remove(id) {
                session.connection.close();
            }
            return Ok(true);
        };
        let owner = self
            .lock()
            .get(id)
            .map(|session| session.owner.as_deref().map(str::to_owned));
        let owner = match owner {
            Some(owner) => owner,
            None => match store.backend.session_get(id, self.idle_timeout).await {
                Ok(Some(record)) => record.owner,
                Ok(None) => return Ok(false),
                Err(error) => return Err(unreachable(&error)),
            },
        };
        if owner.as_deref() != caller.subject() {
            return Ok(false);
        }
        let ended = store
            .backend
            .session_end(id)
            .await
            .map_err(|error| unreachable(&error))?;
        if let Some(session) = self.lock().remove(id) {
            session.connection.close();
        }
        Ok(ended)
    }

    /// Hands the client's answer to question `id` of session `session` over to the
    /// replica that asked it; `false` when the id names no other replica (this one
    /// handles it).
    pub(super) async fn hand_over(
        &self,
        session: &str,
        id: &Value,
        outcome: &Result<Value, (i64, String)>,
    ) -> Result<bool, Unreachable> {
        let Some((store, _)) = &self.shared else {
            return Ok(false);
        };
        let Some(replica) = crate::mcp::asking_replica(id).filter(|r| *r != store.replica()) else {
            return Ok(false);
        };
        let handed = HandedAnswer {
            s: session.to_owned(),
            i: id.clone(),
            o: outcome.clone(),
        };
        let message = serde_json::to_vec(&handed).unwrap_or_default();
        store
            .backend
            .deliver(replica, message)
            .await
            .map_err(|error| unreachable(&error))?;
        Ok(true)
    }

    /// Tells every replica that the client of `session` cancelled `request` (it runs on
    /// one of them, not this one).
    pub(super) async fn cancel_elsewhere(
        &self,
        session: &str,
        request: &Value,
    ) -> Result<(), Unreachable> {
        let Some((store, _)) = &self.shared else {
            return Ok(());
        };
        let event = Event::Cancelled {
            session: session.to_owned(),
            request: request.clone(),
        };
        store
            .backend
            .publish(event)
            .await
            .map_err(|error| unreachable(&error))
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        crate::sync::lock(&self.open)
    }
}

fn unreachable(error: &crate::tasks::StoreError) -> Unreachable {
    tracing::warn!(%error, "the session store did not answer");
    Unreachable
}
