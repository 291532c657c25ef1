//! The handshake era's HTTP sessions: one connection per `Mcp-Session-Id`, ended by the
//! client (DELETE) or, after a time without requests, by the server.

use crate::mcp::Connection;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Every open session.
pub(super) struct Sessions {
    idle_timeout: Duration,
    open: Mutex<HashMap<String, Session>>,
}

struct Session {
    connection: Arc<Connection>,
    last_used: Instant,
}

impl Session {
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
    pub(super) fn open(&self, id: String, connection: Arc<Connection>) {
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
            },
        );
    }

    /// The session's connection, marked as used now; `None` when there is no such session
    /// or it has expired (it is then ended).
    pub(super) fn get(&self, id: &str) -> Option<Arc<Connection>> {
        let now = Instant::now();
        let mut open = self.lock();
        let session = open.get_mut(id)?;
        if session.expired(now, self.idle_timeout) {
            if let Some(session) = open.remove(id) {
                session.connection.close();
            }
            return None;
        }
        session.last_used = now;
        Some(Arc::clone(&session.connection))
    }

    /// Ends a session; `false` when there was none.
    pub(super) fn remove(&self, id: &str) -> bool {
        match self.lock().remove(id) {
            Some(session) => {
                session.connection.close();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        self.open
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}
