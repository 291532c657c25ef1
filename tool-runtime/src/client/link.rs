//! The transport under a session: a child process's stdin and stdout, or Streamable HTTP.
//! It moves messages and nothing else; what they mean is the session's.

use super::error::ClientError;
use super::session::Session;
use crate::mcp::era::Era;
use std::sync::Arc;

/// A session's transport.
pub(crate) enum Link {
    /// Boxed: a child process's handles outweigh an HTTP link's one pointer by far.
    Stdio(Box<super::stdio::Stdio>),
    Http(super::http::Http),
}

/// An HTTP exchange under way: polled beside the wait for the answer it brings. Boxed: it
/// holds a POST and the reading of its answer, and inline it would make every future that
/// waits for an answer that much larger, and each move of one that much dearer.
pub(crate) type Exchange<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>>;

impl Link {
    /// Starts reading what the server sends, into `session`.
    pub(crate) fn start(&self, session: &Arc<Session>) {
        match self {
            Link::Stdio(stdio) => stdio.start(session),
            Link::Http(_) => {}
        }
    }

    /// Whether requests carry HTTP headers (`Mcp-Name`, `Mcp-Param-*`): over HTTP only.
    pub(crate) fn carries_headers(&self) -> bool {
        matches!(self, Link::Http(_))
    }

    /// Sends request `id` of `method` (its bytes), with `headers` for HTTP and the era and
    /// version its bytes were written in (`spoken`, which HTTP headers name). A process's
    /// link has written it when this returns; over HTTP what is returned is the exchange,
    /// which brings the answer as it is polled (dropped, it is closed, which at 2026-07-28
    /// cancels the request).
    pub(crate) fn send_request<'a>(
        &'a self,
        session: &'a Arc<Session>,
        spoken: Option<super::http::Spoken>,
        id: u64,
        method: &'a str,
        bytes: Vec<u8>,
        headers: super::http::RequestHeaders<'a>,
    ) -> Result<Option<Exchange<'a>>, ClientError> {
        match self {
            Link::Stdio(stdio) => {
                let _ = (spoken, id, method, headers);
                stdio.send(bytes).map_err(|reason| session.down(reason))?;
                Ok(None)
            }
            Link::Http(http) => Ok(Some(Box::pin(http.send_request(
                session,
                spoken.unwrap_or_else(|| super::http::Spoken::now(session)),
                id,
                method,
                bytes,
                headers,
            )))),
        }
    }

    /// Sends a notification of `method`.
    pub(crate) async fn send_notification(
        &self,
        session: &Arc<Session>,
        method: &str,
        bytes: Vec<u8>,
    ) -> Result<(), ClientError> {
        match self {
            Link::Stdio(stdio) => {
                let _ = method;
                stdio.send(bytes).map_err(|reason| session.down(reason))
            }
            Link::Http(http) => http.send_one_way(session, Some(method), bytes).await,
        }
    }

    /// Sends our answer to a request of the server's.
    pub(crate) async fn send_response(
        &self,
        session: &Arc<Session>,
        bytes: Vec<u8>,
    ) -> Result<(), ClientError> {
        match self {
            Link::Stdio(stdio) => stdio.send(bytes).map_err(|reason| session.down(reason)),
            Link::Http(http) => http.send_one_way(session, None, bytes).await,
        }
    }

    /// How many HTTP connections to the server are idle now (none for a process).
    #[cfg(test)]
    pub(crate) fn idle_connections(&self) -> usize {
        match self {
            Link::Stdio(_) => 0,
            Link::Http(http) => http.idle_connections(),
        }
    }

    /// Forgets the session an `initialize` at `version` opened, which lost to
    /// `server/discover` (over HTTP; a process has no session apart from itself).
    pub(crate) fn forget_session(&self, session: &Arc<Session>, version: &str) {
        match self {
            Link::Stdio(_) => {}
            Link::Http(http) => http.forget_session(session, version),
        }
    }

    /// Whether a cancelled request is cancelled with `notifications/cancelled` (else by
    /// closing its exchange, as 2026-07-28 does over HTTP).
    pub(crate) fn cancels_by_notification(&self, era: Era) -> bool {
        match self {
            Link::Stdio(_) => true,
            Link::Http(_) => era == Era::Handshake,
        }
    }

    /// Ends the connection: the child process is told (its input closes) and stopped, or
    /// the HTTP session is deleted.
    pub(crate) async fn close(&self, session: &Arc<Session>) {
        match self {
            Link::Stdio(stdio) => stdio.close().await,
            Link::Http(http) => http.close(session).await,
        }
        session.die("closed");
    }
}
