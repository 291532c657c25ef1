//! How a request came: in which era (with what the era says of it: at 2026-07-28 the
//! capabilities and the log level each request's `_meta` names), from whom, and the log
//! level its messages are held to.

use super::{Connection, State};
use crate::call::caller::Caller;
use crate::call::scope::LogLevel;
use crate::mcp::era::Era;
use crate::mcp::params::{self, PerRequestMeta};
use crate::mcp::tasks;
use serde_json::{Map, Value};
use std::sync::atomic::AtomicU8;
use std::sync::Arc;

/// A log level no message reaches: 2026-07-28 requests without a level get no logs.
pub(crate) const NO_LOGS: u8 = u8::MAX;

/// How a request came: in which era (with what the era says of it), from whom, and the log
/// level its messages are held to.
pub(crate) struct Origin<'a> {
    pub(in crate::mcp) era: Era,
    /// Whether the request came to a REST endpoint (served as the handshake era is).
    rest: bool,
    pub(in crate::mcp) log_level: Arc<AtomicU8>,
    /// At 2026-07-28, the capabilities the request declares.
    pub(in crate::mcp) capabilities: Option<Map<String, Value>>,
    pub(in crate::mcp) caller: &'a Caller,
}

impl<'a> Origin<'a> {
    /// A request in a handshake-era session, at the session's log level.
    pub(in crate::mcp) fn handshake(state: &State, caller: &'a Caller) -> Self {
        Origin {
            era: Era::Handshake,
            rest: false,
            log_level: Arc::clone(&state.log_level),
            capabilities: None,
            caller,
        }
    }

    /// A 2026-07-28 request, at the level its `_meta` names, with the capabilities it
    /// declares.
    pub(in crate::mcp) fn per_request(
        level: u8,
        capabilities: Map<String, Value>,
        caller: &'a Caller,
    ) -> Self {
        Origin {
            era: Era::PerRequest,
            rest: false,
            log_level: Arc::new(AtomicU8::new(level)),
            capabilities: Some(capabilities),
            caller,
        }
    }

    /// A call of a REST endpoint: no session, no log messages (nothing could carry them).
    #[cfg(feature = "http")]
    pub(in crate::mcp) fn rest(caller: &'a Caller) -> Self {
        Origin {
            era: Era::Handshake,
            rest: true,
            log_level: Arc::new(AtomicU8::new(NO_LOGS)),
            capabilities: None,
            caller,
        }
    }

    /// How the request came, as a call it makes says.
    pub(in crate::mcp) fn protocol(&self) -> crate::call::scope::Protocol {
        use crate::call::scope::Protocol;
        match (self.rest, self.era) {
            (true, _) => Protocol::Rest,
            (false, Era::Handshake) => Protocol::McpHandshake,
            (false, Era::PerRequest) => Protocol::McpPerRequest,
        }
    }

    /// Whether the request declares the tasks extension (2026-07-28).
    pub(in crate::mcp) fn declares_tasks(&self) -> bool {
        tasks::declares_extension(self.capabilities.as_ref())
    }
}

impl Connection {
    /// How a 2026-07-28 request came: the capabilities and the log level its `_meta`
    /// names; else why it is refused (-32602).
    pub(in crate::mcp) fn per_request_origin<'a>(
        &self,
        meta: Option<&Map<String, Value>>,
        caller: &'a Caller,
    ) -> Result<Origin<'a>, String> {
        let declared: PerRequestMeta = params::read_meta(meta)?;
        let level = match declared.log_level {
            None => NO_LOGS,
            Some(level) => match LogLevel::from_name(&level) {
                Some(level) => level as u8,
                None => {
                    return Err(format!(
                        "Invalid params: _meta[\"io.modelcontextprotocol/logLevel\"] is not a \
                         log level; got {level:?}"
                    ))
                }
            },
        };
        Ok(Origin::per_request(level, declared.capabilities, caller))
    }
}
