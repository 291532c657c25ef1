//! Which protocol era a request belongs to: the one place that decides it, for every
//! transport, once per request.
//!
//! - A request whose `params._meta` names a protocol version
//!   (`io.modelcontextprotocol/protocolVersion`) is served on its own, without a handshake,
//!   under that version (2026-07-28). This holds for every method, `initialize` included:
//!   at 2026-07-28 `initialize`, `ping` and `logging/setLevel` no longer exist and are
//!   answered "method not found".
//! - A request the transport says was sent at a per-request version (over HTTP, an
//!   `MCP-Protocol-Version: 2026-07-28` header) but whose `_meta` does not name it is
//!   malformed: it is refused with "invalid params" (-32602), never served as a
//!   handshake-era request.
//! - A request the transport says was sent at a version this server does not speak at all
//!   is refused with "invalid request" (-32600).
//! - Anything else follows the handshake era: `initialize` first, then requests on the
//!   negotiated version.

use super::{HANDSHAKE_VERSIONS, STATELESS_VERSIONS, SUPPORTED_VERSIONS};
use serde_json::{Map, Value};

/// The `_meta` key naming a request's protocol version.
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The protocol era a request is served in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// `initialize` first, then requests on the version it negotiated, in a session that
    /// remembers what the client declared.
    Handshake,
    /// 2026-07-28: every request names its version and the client's capabilities, and is
    /// served on its own.
    PerRequest,
}

impl Era {
    /// Whether results carry `resultType` and the server's identity.
    pub(crate) fn types_results(self) -> bool {
        self == Era::PerRequest
    }

    /// Whether the protocol answers a call whose tool needs the user at a page first with
    /// an error of its own (-32042), rather than with the tool's error result.
    pub(crate) fn has_url_elicitation_error(self) -> bool {
        self == Era::Handshake
    }
}

/// What the decision says of one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision {
    /// The handshake era.
    Handshake,
    /// Served on its own at the version `_meta` names, one this server speaks.
    PerRequest(&'static str),
    /// `_meta` names a version this server does not serve per request (the value it
    /// named), answered -32022.
    UnsupportedVersion(Value),
    /// Claimed to be per-request by the transport, without the `_meta` that makes it so.
    MissingMeta,
    /// The transport saw a version claimed that this server does not speak at all.
    UnsupportedClaim(String),
}

impl Decision {
    /// Decides the era of a request from its `params._meta` and the version the transport
    /// saw claimed outside the body (an HTTP header), if any.
    pub(crate) fn of(meta: Option<&Map<String, Value>>, claimed: Option<&str>) -> Decision {
        if let Some(version) = meta.and_then(|meta| meta.get(META_VERSION)) {
            let served = STATELESS_VERSIONS
                .iter()
                .find(|served| version.as_str() == Some(served));
            return match served {
                Some(version) => Decision::PerRequest(version),
                None => Decision::UnsupportedVersion(version.clone()),
            };
        }
        match claimed {
            Some(version) if STATELESS_VERSIONS.contains(&version) => Decision::MissingMeta,
            Some(version) if !HANDSHAKE_VERSIONS.contains(&version) => {
                Decision::UnsupportedClaim(version.to_owned())
            }
            _ => Decision::Handshake,
        }
    }

    /// The era the request is answered in (a refused one too: its error takes that era's
    /// shape).
    pub(crate) fn era(&self) -> Era {
        match self {
            Decision::Handshake | Decision::UnsupportedClaim(_) => Era::Handshake,
            Decision::PerRequest(_) | Decision::UnsupportedVersion(_) | Decision::MissingMeta => {
                Era::PerRequest
            }
        }
    }

    /// The version `_meta` names, when it names one as a string (served or not).
    #[cfg(feature = "http")]
    pub(crate) fn named_version(&self) -> Option<&str> {
        match self {
            Decision::PerRequest(version) => Some(version),
            Decision::UnsupportedVersion(version) => version.as_str(),
            _ => None,
        }
    }

    /// Why the request is refused before its method is looked at: the error's code,
    /// message and data.
    pub(crate) fn refusal(&self) -> Option<(i64, String, Option<Value>)> {
        use super::jsonrpc::code;
        match self {
            Decision::Handshake | Decision::PerRequest(_) => None,
            Decision::UnsupportedVersion(requested) => Some((
                code::UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version".to_owned(),
                Some(serde_json::json!({"supported": SUPPORTED_VERSIONS, "requested": requested})),
            )),
            Decision::MissingMeta => Some((
                code::INVALID_PARAMS,
                format!(
                    "Invalid params: a request at a per-request protocol version needs \
                     _meta[\"{META_VERSION}\"] and _meta[\"{}\"]",
                    super::params::META_CAPABILITIES
                ),
                None,
            )),
            Decision::UnsupportedClaim(version) => Some((
                code::INVALID_REQUEST,
                format!(
                    "Bad Request: unsupported MCP-Protocol-Version {version:?}; this server \
                     speaks {}",
                    SUPPORTED_VERSIONS.join(", ")
                ),
                None,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn meta_decides_then_the_claimed_version() {
        let with_version = meta(json!({META_VERSION: "2026-07-28"}));
        assert_eq!(
            Decision::of(Some(&with_version), None),
            Decision::PerRequest("2026-07-28")
        );
        // `_meta` wins over any header: a mismatch is the transport's to report.
        assert_eq!(
            Decision::of(Some(&with_version), Some("2025-11-25")),
            Decision::PerRequest("2026-07-28")
        );
        let unserved = meta(json!({META_VERSION: "2025-11-25"}));
        assert_eq!(
            Decision::of(Some(&unserved), None),
            Decision::UnsupportedVersion(json!("2025-11-25"))
        );
        let without = meta(json!({"progressToken": 1}));
        assert_eq!(
            Decision::of(Some(&without), Some("2026-07-28")),
            Decision::MissingMeta
        );
        assert_eq!(
            Decision::of(None, Some("2026-07-28")),
            Decision::MissingMeta
        );
        assert_eq!(Decision::of(None, Some("2025-11-25")), Decision::Handshake);
        assert_eq!(Decision::of(Some(&without), None), Decision::Handshake);
        assert_eq!(
            Decision::of(None, Some("1999-01-01")),
            Decision::UnsupportedClaim("1999-01-01".to_owned())
        );
    }

    #[test]
    fn a_refused_request_is_answered_in_the_era_it_claimed() {
        assert_eq!(Decision::MissingMeta.era(), Era::PerRequest);
        assert_eq!(
            Decision::UnsupportedClaim("x".to_owned()).era(),
            Era::Handshake
        );
        assert!(Decision::Handshake.refusal().is_none());
        let (code, message, _) = Decision::UnsupportedClaim("x".to_owned())
            .refusal()
            .unwrap();
        assert_eq!(code, super::super::jsonrpc::code::INVALID_REQUEST);
        assert!(
            message.contains("unsupported MCP-Protocol-Version \"x\""),
            "{message}"
        );
    }
}
