//! The handshake era's HTTP sessions: one connection per `Mcp-Session-Id`, ended by the
//! client (DELETE) or, after a time without requests, by the server. A session opened with
//! an access token belongs to its subject: another token cannot use it, even knowing its id.

use crate::call::caller::Caller;
use crate::mcp::Connection;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
// The runtime's clock: what the tests of idle sessions pause and advance.
use tokio::time::Instant;

/// Every open session.
pub(super) struct Sessions {
    idle_timeout: Duration,
    open: Mutex<HashMap<String, Session>>,
}

struct Session {
    connection: Arc<Connection>,
    last_used: Instant,
    /// The subject of the token that opened it, when tokens are checked.
    owner: Option<Arc<str>>,
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
}

impl Sessions {
    pub(super) fn new(idle_timeout: Duration) -> Sessions {
        Sessions {
            idle_timeout,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// Opens a session; sessions gone idle are ended first, so idle ones never pile up.
    pub(super) fn open(&self, id: String, connection: Arc<Connection>, caller: &Caller) {
        let now = Instant::now();
        let mut open = self.lock();
        open.retain(|_, session| {
            let expired = session.expired(now, self.idle_timeout);
            if expired {
                session.connection.close();
            }
            !expired
        });
        open.insert(
            id,
            Session {
                connection,
                last_used: now,
                owner: caller.subject().map(Arc::from),
            },
        );
    }

    /// The session's connection, marked as used now; `None` when there is no such session,
    /// it belongs to another subject, or it has expired (it is then ended).
    pub(super) fn get(&self, id: &str, caller: &Caller) -> Option<Arc<Connection>> {
        let now = Instant::now();
        let mut open = self.lock();
        let session = open
            .get_mut(id)
            .filter(|session| session.owned_by(caller))?;
        if session.expired(now, self.idle_timeout) {
            if let Some(session) = open.remove(id) {
                session.connection.close();
            }
            return None;
        }
        session.last_used = now;
        Some(Arc::clone(&session.connection))
    }

    /// Ends a session; `false` when there was none (that `caller` may end).
    pub(super) fn remove(&self, id: &str, caller: &Caller) -> bool {
        let mut open = self.lock();
        if !open.get(id).is_some_and(|session| session.owned_by(caller)) {
            return false;
        }
        if let Some(session) = open.remove(id) {
            session.connection.close();
        }
        true
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        self.open
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}
