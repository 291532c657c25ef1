//! A handshake-era session that replicas share through a store: what the connection writes
//! there (its record at `initialize`, each change of its log level or subscriptions,
//! before the change is answered), and how another replica's copy of the connection is made
//! from the record and kept current.

// Only the HTTP transport serves sessions replicas share.
#![cfg_attr(not(feature = "http"), allow(dead_code))]

use super::state::SharedSession;
use super::Connection;
use crate::mcp::asking::live::ClientAnswer;
use crate::mcp::jsonrpc::{code, RequestId};
use crate::mcp::outbox::Outbox;
use crate::mcp::responses::error_message;
use crate::mcp::work::Work;
use crate::mcp::{ServerMessage, Shared, HANDSHAKE_VERSIONS};
use crate::store::sessions::Change;
use crate::store::{SessionRecord, Store};
use crate::sync::lock;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What a change the store could not record is answered.
const STORE_UNREACHABLE: &str =
    "Internal error: the session's store did not answer; the change was not made, retry it";

impl Connection {
    /// Marks the connection as serving the session `id`, shared through `store`.
    pub(crate) fn share(&self, id: String, store: Store) {
        let _ = self.state.shared_session.set(SharedSession { id, store });
    }

    /// The session's record, as the store keeps it.
    pub(crate) fn session_record(&self, owner: Option<&str>) -> SessionRecord {
        SessionRecord {
            owner: owner.map(str::to_owned),
            version: self.negotiated_version().unwrap_or_default().to_owned(),
            capabilities: lock(&self.state.client_capabilities).clone(),
            log_level: self.state.log_level.load(Ordering::Relaxed),
            subscriptions: lock(&self.state.subscribed).iter().cloned().collect(),
        }
    }

    /// This replica's copy of a session another replica opened, from its record, and the
    /// work that sends its notifications (list changes, updates of subscribed resources)
    /// while it lasts.
    pub(crate) fn restored(
        shared: Arc<Shared>,
        id: String,
        store: Store,
        record: &SessionRecord,
    ) -> (Connection, Vec<Work>) {
        let connection = Connection::new(shared);
        *lock(&connection.state.handshake) = HANDSHAKE_VERSIONS
            .iter()
            .find(|version| **version == record.version)
            .copied();
        connection.share(id, store);
        let mut work = Vec::new();
        if connection.shared.list_changed.any() {
            work.extend(connection.watch_list_changes());
        }
        work.extend(connection.refresh(record));
        (connection, work)
    }

    /// Brings the connection up to `record` (another replica changed the session); the
    /// work that watches subscribed resources, when the first subscription came.
    pub(crate) fn refresh(&self, record: &SessionRecord) -> Option<Work> {
        let state = &self.state;
        *lock(&state.client_capabilities) = record.capabilities.clone();
        state.log_level.store(record.log_level, Ordering::Relaxed);
        *lock(&state.subscribed) = record.subscriptions.iter().cloned().collect();
        let first = !record.subscriptions.is_empty()
            && !state.watching_resources.swap(true, Ordering::SeqCst);
        first.then(|| self.watch_subscribed())
    }

    /// Hands the client's answer to a question this replica asked, which reached another.
    pub(crate) fn answer_question(&self, id: RequestId, outcome: ClientAnswer) {
        self.answered(Some(id), outcome);
    }

    /// Another replica put messages of the task `task` in the store for a stream of this
    /// session: the work that takes them onto this replica's stream, when one should.
    pub(crate) fn task_messages_arrived(&self, task: &str) -> Option<Work> {
        crate::mcp::remote_relay::arrived(&self.state, &self.shared.timers, task)
    }

    /// Whether the request `id` runs on this replica's copy of the connection.
    pub(crate) fn is_in_flight(&self, id: &RequestId) -> bool {
        self.state.is_in_flight(id)
    }

    /// The store of the session, when replicas share it.
    pub(crate) fn shared_session(&self) -> Option<(&str, &Store)> {
        self.state
            .shared_session
            .get()
            .map(|session| (session.id.as_str(), &session.store))
    }

    /// Answers `answer` to the request `id` once `change` is recorded in the session's
    /// store (every replica then sees it); at once when no store is shared.
    pub(in crate::mcp) fn recorded(
        &self,
        id: &RequestId,
        change: Change,
        answer: ServerMessage,
        sink: &Outbox,
    ) -> Option<Work> {
        let Some((session, store)) = self.shared_session() else {
            sink.send(answer);
            return None;
        };
        let (session, store, sink, id) =
            (session.to_owned(), store.clone(), sink.clone(), id.clone());
        let work = async move {
            let message = match store.backend.session_change(&session, change).await {
                Ok(_) => answer,
                Err(error) => {
                    tracing::warn!(%error, "could not record a session's change");
                    error_message(Some(&id), code::INTERNAL_ERROR, STORE_UNREACHABLE, None)
                }
            };
            sink.send(message);
        };
        Some(Work::stream(work))
    }
}
