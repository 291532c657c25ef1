//! What can go wrong talking to a server, told apart so a caller can act on each: the
//! transport is down (retry later), a time limit passed, the server broke the protocol,
//! the server answered with an error of its own (its code says which), or the server wants
//! what this client cannot give (a version, a capability, credentials).

use std::fmt;
use std::time::Duration;

/// An error of a [`Client`](super::Client).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientError {
    /// The server cannot be reached, or the connection to it ended: a process that did not
    /// start or exited, a refused or broken HTTP connection. Worth retrying later.
    TransportDown {
        /// The server, as it was named.
        server: String,
        /// What happened.
        reason: String,
    },
    /// No answer came within the time limit.
    TimedOut {
        /// The request that waited.
        method: String,
        /// The limit.
        after: Duration,
    },
    /// The server sent something the protocol does not allow (a malformed message, a
    /// message over the size limit, an unexpected status).
    Protocol {
        /// What was wrong.
        reason: String,
    },
    /// The server answered the request with an error.
    Server {
        /// The request.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// The server's message.
        message: String,
        /// The server's data, if any.
        data: Option<serde_json::Value>,
    },
    /// The server speaks no protocol version this client speaks.
    UnsupportedVersion {
        /// What the server offered.
        offered: Vec<String>,
    },
    /// The server needs authorization this client could not get.
    Unauthorized {
        /// Why it failed.
        reason: String,
    },
    /// What the server sent does not match what it said it would send (a skill's file
    /// whose size, digest or frontmatter differs from its listing): it is not used.
    Unverified {
        /// What was read.
        uri: String,
        /// How it differs.
        reason: String,
    },
    /// The request was cancelled by the caller.
    Cancelled,
}

impl ClientError {
    /// Whether trying again later may succeed: the transport was down, or a time limit
    /// passed, or the server said it was busy or unreachable for now.
    pub fn is_retryable(&self) -> bool {
        match self {
            ClientError::TransportDown { .. } | ClientError::TimedOut { .. } => true,
            ClientError::Server { code, .. } => *code == crate::mcp::jsonrpc::code::SERVER_BUSY,
            _ => false,
        }
    }

    /// The server's JSON-RPC error code, when the server answered with an error.
    pub fn code(&self) -> Option<i64> {
        match self {
            ClientError::Server { code, .. } => Some(*code),
            _ => None,
        }
    }

    pub(crate) fn protocol(reason: impl Into<String>) -> ClientError {
        ClientError::Protocol {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::TransportDown { server, reason } => {
                write!(f, "the MCP server {server} cannot be reached: {reason}")
            }
            ClientError::TimedOut { method, after } => write!(
                f,
                "the MCP server did not answer {method} within {}",
                crate::catalog::time::show_duration(*after)
            ),
            ClientError::Protocol { reason } => {
                write!(f, "the MCP server broke the protocol: {reason}")
            }
            ClientError::Server {
                method,
                code,
                message,
                ..
            } => write!(f, "the MCP server refused {method} ({code}): {message}"),
            ClientError::UnsupportedVersion { offered } => write!(
                f,
                "the MCP server speaks no protocol version this client speaks (it offered {})",
                offered.join(", ")
            ),
            ClientError::Unauthorized { reason } => {
                write!(f, "the MCP server needs authorization: {reason}")
            }
            ClientError::Unverified { uri, reason } => {
                write!(
                    f,
                    "{uri} does not match what the server listed ({reason}): it is not used"
                )
            }
            ClientError::Cancelled => f.write_str("the request was cancelled"),
        }
    }
}

impl std::error::Error for ClientError {}
