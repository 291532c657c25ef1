//! A handshake-era session as the store keeps it: what any replica needs to serve the
//! session's requests (who opened it, what was negotiated, its log level, its resource
//! subscriptions). What runs in it (calls, questions, streams) stays on the replica that
//! runs it.

use serde_json::Value;

/// The most resource subscriptions one session keeps, so a session's record stays small.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1_000;

/// One session, as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SessionRecord {
    /// The access token subject that opened it, when tokens are checked.
    pub(crate) owner: Option<String>,
    /// The protocol version `initialize` negotiated.
    pub(crate) version: String,
    /// The capabilities the client declared.
    pub(crate) capabilities: Value,
    /// Its log level (`logging/setLevel`), as the runtime numbers levels.
    pub(crate) log_level: u8,
    /// The resources it subscribed to.
    pub(crate) subscriptions: Vec<String>,
}

/// A change of a session.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// `logging/setLevel`.
    LogLevel(u8),
    /// `resources/subscribe` (`true`) or `resources/unsubscribe` of a URI.
    Subscription(String, bool),
}
