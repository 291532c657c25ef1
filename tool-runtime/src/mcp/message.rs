//! What the server sends its client: one message, as bytes with what it is (a notification,
//! a response with its code, a request of ours), and why a request was refused where a
//! transport may have a status of its own for it.

use super::backlog;
use std::sync::Arc;

/// One outgoing message, and what it is: a notification, or the response that ends its
/// request (a result or an error, with its code).
///
/// A notification holds a place in its connection's bounded backlog until the message is
/// dropped: a transport drops it once written.
#[derive(Debug, Clone)]
pub struct ServerMessage {
    /// The JSON-RPC message, without a trailing newline.
    pub bytes: Vec<u8>,
    /// What the message is.
    pub kind: ServerMessageKind,
    /// Held only to be dropped with the message, which gives the place back.
    #[allow(dead_code)]
    place: Option<Arc<backlog::Place>>,
    /// Why the request was refused, when a transport may have a status of its own for it.
    refusal: Option<Box<Refusal>>,
}

/// Two messages are equal when they say the same.
impl PartialEq for ServerMessage {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes && self.kind == other.kind
    }
}

impl Eq for ServerMessage {}

/// What an outgoing message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerMessageKind {
    /// A notification (progress, a log line); the request it belongs to goes on.
    Notification,
    /// A success response: it ends its request.
    Result,
    /// An error response with this JSON-RPC code: it ends its request.
    Error(i64),
    /// A request of ours to the client (a question while a call runs); the call goes on.
    Request,
}

impl ServerMessage {
    pub(crate) fn notification(bytes: Vec<u8>) -> ServerMessage {
        ServerMessage {
            bytes,
            kind: ServerMessageKind::Notification,
            place: None,
            refusal: None,
        }
    }

    /// A notification that holds `place` in its connection's backlog until dropped.
    pub(crate) fn queued_notification(bytes: Vec<u8>, place: backlog::Place) -> ServerMessage {
        ServerMessage {
            bytes,
            kind: ServerMessageKind::Notification,
            place: Some(Arc::new(place)),
            refusal: None,
        }
    }

    pub(crate) fn request(bytes: Vec<u8>) -> ServerMessage {
        ServerMessage {
            bytes,
            kind: ServerMessageKind::Request,
            place: None,
            refusal: None,
        }
    }

    pub(crate) fn result(bytes: Vec<u8>) -> ServerMessage {
        ServerMessage {
            bytes,
            kind: ServerMessageKind::Result,
            place: None,
            refusal: None,
        }
    }

    pub(crate) fn error(code: i64, bytes: Vec<u8>) -> ServerMessage {
        ServerMessage {
            bytes,
            kind: ServerMessageKind::Error(code),
            place: None,
            refusal: None,
        }
    }

    /// Whether this message answers (and so ends) a request.
    pub fn is_response(&self) -> bool {
        matches!(
            self.kind,
            ServerMessageKind::Result | ServerMessageKind::Error(_)
        )
    }

    /// Why the request this message answers was refused, when the protocol layer knows a
    /// reason a transport may have a status of its own for (HTTP: 403, 429, 404...).
    pub fn refusal(&self) -> Option<&Refusal> {
        self.refusal.as_deref()
    }

    /// The same message, answering a request refused for `refusal`.
    pub(crate) fn refused(mut self, refusal: Option<Refusal>) -> ServerMessage {
        self.refusal = refusal.map(Box::new);
        self
    }
}

/// Why a request was refused (or its call did not run to a result of the tool's), where a
/// transport may have a status of its own for it: HTTP answers 403 with an
/// `insufficient_scope` challenge, 429 with `Retry-After`, 404, 400, 504, 500, or 503 with
/// `Retry-After`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The caller's access token does not grant these scopes, every one the tool needs.
    InsufficientScope {
        /// The scopes to ask for.
        scopes: Vec<String>,
        /// Why, in words (for a challenge's `error_description`).
        description: String,
    },
    /// Past a rate limit or a budget; when a retry would pass, if it ever would.
    RateLimited {
        /// How long until a retry would pass; `None` for a budget spent.
        retry_after: Option<std::time::Duration>,
    },
    /// It names nothing the server has.
    NotFound,
    /// Its arguments do not fit.
    Invalid,
    /// It ran out of time.
    TimedOut,
    /// A rule of the server's refused it.
    Forbidden,
    /// It failed on the server's side.
    Internal,
    /// Something the server needs for it (the store it shares with its replicas) did not
    /// answer; a retry after a while may pass.
    Unavailable {
        /// How long to wait before retrying.
        retry_after: std::time::Duration,
    },
}
