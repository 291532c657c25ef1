//! Who made a call: the transport, the session, the authenticated subject, the peer
//! address and the scopes the caller was granted, as far as the transport knows them.

use super::error::CallError;
use std::net::SocketAddr;
use std::sync::Arc;

/// The client behind a request, as far as its transport knows it. Rate limits and budgets
/// per client are kept by its [`key`](Caller::key), audit events name it, and a tool can
/// read it from its [`CallContext`](crate::CallContext::caller).
///
/// ```
/// use tool_runtime::context::Caller;
///
/// let caller = Caller::http(Some("203.0.113.7:52100".parse().unwrap()))
///     .with_session("b1946ac9")
///     .with_subject("user-42", ["files:read"]);
/// assert_eq!(caller.key(), "subject:user-42");
/// assert!(caller.has_scope("files:read") && !caller.has_scope("files:write"));
///
/// // Without a token, a session is the client; without a session, its address.
/// assert_eq!(Caller::http(Some("203.0.113.7:52100".parse().unwrap())).key(), "peer:203.0.113.7");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    transport: &'static str,
    session: Option<Arc<str>>,
    subject: Option<Arc<str>>,
    peer: Option<SocketAddr>,
    /// The scopes granted to the caller's token, when the server checks tokens.
    scopes: Option<Arc<[String]>>,
}

impl Default for Caller {
    /// A call made directly on a registry, by the program itself.
    fn default() -> Self {
        Caller::DIRECT
    }
}

impl Caller {
    /// A call made directly on a registry, by the program itself.
    pub(crate) const DIRECT: Caller = Caller::of_transport("direct");

    const fn of_transport(transport: &'static str) -> Self {
        Caller {
            transport,
            session: None,
            subject: None,
            peer: None,
            scopes: None,
        }
    }

    /// The one client of a process's standard input and output.
    pub fn stdio() -> Self {
        Caller::of_transport("stdio")
    }

    /// A client over HTTP, from `peer` when the server knows the address.
    pub fn http(peer: Option<SocketAddr>) -> Self {
        Caller {
            peer,
            ..Caller::of_transport("http")
        }
    }

    /// The same caller, in the session `id`.
    pub fn with_session(mut self, id: impl Into<Arc<str>>) -> Self {
        self.session = Some(id.into());
        self
    }

    /// The same caller, authenticated as `subject` with a token granting `scopes`.
    pub fn with_subject(
        mut self,
        subject: impl Into<Arc<str>>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.subject = Some(subject.into());
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// How the call came: `"stdio"`, `"http"`, or `"direct"` (a call on the registry).
    pub fn transport(&self) -> &'static str {
        self.transport
    }

    /// The session the call belongs to, if the transport keeps sessions.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The subject of the caller's access token (`sub`), when tokens are checked.
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The caller's network address, when it came over a network.
    pub fn peer(&self) -> Option<SocketAddr> {
        self.peer
    }

    /// The scopes the caller's token grants; `None` when no token was checked.
    pub fn scopes(&self) -> Option<&[String]> {
        self.scopes.as_deref()
    }

    /// Whether the caller's token grants `scope` (false when no token was checked).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes()
            .is_some_and(|granted| granted.iter().any(|s| s == scope))
    }

    /// Whether the caller may call `tool`: always when no token was checked (stdio, a call
    /// on the registry, HTTP without OAuth: whoever reaches the server has every
    /// permission), else when its token grants every scope the tool requires.
    pub fn may_call(&self, tool: &crate::catalog::Tool) -> bool {
        self.scopes.is_none() || tool.scopes().iter().all(|scope| self.has_scope(scope))
    }

    /// The refusal of a call of `tool` the caller's token does not permit (`None` when
    /// [`may_call`](Caller::may_call)): it names every scope the tool requires, as a new
    /// authorization must ask for them all.
    pub(crate) fn scope_refusal(&self, tool: &crate::catalog::Tool) -> Option<CallError> {
        (!self.may_call(tool)).then(|| CallError::InsufficientScope {
            tool: tool.name().to_owned(),
            scopes: tool.scopes().to_vec(),
        })
    }

    /// What limits and budgets per client are kept by: the authenticated subject, else the
    /// session, else the peer's IP address (not its port: one host's connections are one
    /// client), else the transport (the one client of stdio).
    pub fn key(&self) -> String {
        if let Some(subject) = &self.subject {
            format!("subject:{subject}")
        } else if let Some(session) = &self.session {
            format!("session:{session}")
        } else if let Some(peer) = self.peer {
            format!("peer:{}", peer.ip())
        } else {
            self.transport.to_owned()
        }
    }
}
