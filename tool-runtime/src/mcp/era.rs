//! Which protocol era a request belongs to: the one place that decides it, for every
//! transport.
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
//! - Anything else follows the handshake era: `initialize` first, then requests on the
//!   negotiated version.

use super::STATELESS_VERSIONS;
use serde_json::{Map, Value};

/// The `_meta` key naming a request's protocol version.
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The era of one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Era<'a> {
    /// The handshake era.
    Handshake,
    /// Served on its own under the version `_meta` names (checked later: it may be one we
    /// do not serve).
    PerRequest(&'a Value),
    /// Claimed to be per-request by the transport, without the `_meta` that makes it so.
    MissingMeta,
}

/// Decides the era of a request from its `params._meta` and the version the transport
/// saw claimed outside the body (an HTTP header), if any.
pub(crate) fn of_request<'a>(
    meta: Option<&'a Map<String, Value>>,
    claimed: Option<&str>,
) -> Era<'a> {
    if let Some(version) = meta.and_then(|meta| meta.get(META_VERSION)) {
        return Era::PerRequest(version);
    }
    match claimed {
        Some(version) if STATELESS_VERSIONS.contains(&version) => Era::MissingMeta,
        _ => Era::Handshake,
    }
}

/// The `_meta` object of a request's params, if it has one.
pub(crate) fn meta_of(params: Option<&Map<String, Value>>) -> Option<&Map<String, Value>> {
    params?.get("_meta")?.as_object()
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
            of_request(Some(&with_version), None),
            Era::PerRequest(&json!("2026-07-28"))
        );
        // `_meta` wins over any header: a mismatch is the transport's to report.
        assert_eq!(
            of_request(Some(&with_version), Some("2025-11-25")),
            Era::PerRequest(&json!("2026-07-28"))
        );
        let without = meta(json!({"progressToken": 1}));
        assert_eq!(
            of_request(Some(&without), Some("2026-07-28")),
            Era::MissingMeta
        );
        assert_eq!(of_request(None, Some("2026-07-28")), Era::MissingMeta);
        assert_eq!(of_request(None, Some("2025-11-25")), Era::Handshake);
        assert_eq!(of_request(Some(&without), None), Era::Handshake);
    }
}
