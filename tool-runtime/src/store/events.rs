//! What replicas tell each other through the store: a list changed, a resource was
//! updated, a task changed, a session changed or ended, a request is cancelled. Events are
//! notifications, delivered at most once: whatever must not be lost is written to the
//! store first, and an event only tells the replicas to look.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// One event, as every replica receives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub(crate) enum Event {
    /// The tools, prompts or resources list changed (`list`: `tools`, `prompts`,
    /// `resources`).
    ListChanged { list: String },
    /// The resource `uri` changed.
    ResourceUpdated { uri: String },
    /// The task `id` changed.
    TaskChanged { id: String },
    /// The handshake-era session `id` changed (its log level, its subscriptions): replicas
    /// that cached it read it again.
    SessionChanged { id: String },
    /// The handshake-era session `id` ended: replicas drop it and what runs in it.
    SessionEnded { id: String },
    /// The client of session `session` cancelled its request `request`, wherever it runs.
    Cancelled { session: String, request: Value },
    /// Messages of the 2025-11-25 task `task` of session `session` wait in the store for
    /// a stream of the session to take them.
    TaskMessages { session: String, task: String },
}

/// An event as it travels: who sent it, and the number its acknowledgements carry when the
/// sender waits for them.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Envelope {
    /// The sending replica.
    #[serde(rename = "f")]
    pub(crate) from: String,
    /// Set when the sender waits for every replica to have handled it.
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    pub(crate) nonce: Option<u64>,
    #[serde(rename = "e")]
    pub(crate) event: Event,
}

/// Called with every event, on the replica's listener, before the event is acknowledged;
/// the flag says whether this replica sent it.
pub(crate) type Handler = Arc<dyn Fn(&Event, bool) + Send + Sync>;

/// Called with every message another replica delivers to this one.
pub(crate) type InboxHandler = Arc<dyn Fn(&[u8]) + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_reads_back_as_written() {
        let envelope = Envelope {
            from: "r1".into(),
            nonce: Some(7),
            event: Event::Cancelled {
                session: "s".into(),
                request: serde_json::json!(3),
            },
        };
        let bytes = serde_json::to_vec(&envelope).unwrap();
        let back: Envelope = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back.from, "r1");
        assert_eq!(back.nonce, Some(7));
        assert_eq!(back.event, envelope.event);
    }
}
