//! The request state of a call that asks its client at 2026-07-28: what the call carries
//! from one round to the next (the answers it already has, what the tool chose to keep),
//! sealed with HMAC-SHA256 so a client cannot alter it, and bound to the request it was
//! issued for and to a time limit. Any replica of the server that has the same key can
//! continue the call.

use crate::export::canonical;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a request state can be used: a client answers within it, or starts again.
const LIFETIME: Duration = Duration::from_secs(60 * 60);

/// Why a request state that was altered, or sealed with another key, is refused.
const ALTERED: &str = "\"requestState\" failed its integrity check: it was altered, or \
                       issued by a server with another key; call again without it";
/// Why a request state issued to another token's subject is refused.
const OTHER_CLIENT: &str = "\"requestState\" was issued to another client (another access \
                            token's subject); call again without it";
/// Why an expired request state is refused.
const EXPIRED: &str = "\"requestState\" has expired; call again without it";

/// Why a request state issued for another request (`method`, another target or other
/// arguments) is refused.
fn other_request(method: &str) -> String {
    format!(
        "\"requestState\" was issued for another request; send it back only with the {method} \
         request it came with, unchanged"
    )
}

use crate::store::SealingKey;

/// What one round of a call hands to the next.
#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct RoundState {
    /// The method and what it names (tool, prompt, resource URI), and a digest of the
    /// arguments: a state is good only for the request it was issued for.
    #[serde(rename = "m")]
    method: String,
    #[serde(rename = "t")]
    target: String,
    #[serde(rename = "d")]
    digest: String,
    /// Seconds since the Unix epoch after which it is refused.
    #[serde(rename = "e")]
    expires: u64,
    /// The token subject it was issued to, if any.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    subject: Option<String>,
    /// Answers of earlier rounds, by key.
    #[serde(rename = "a", default)]
    pub(crate) answers: Map<String, Value>,
    /// What the tool kept, by key.
    #[serde(rename = "k", default)]
    pub(crate) kept: Map<String, Value>,
}

/// The request a state belongs to.
pub(crate) struct Bound<'a> {
    pub(crate) method: &'a str,
    pub(crate) target: &'a str,
    /// The subject of the access token the request came with, when tokens are checked: a
    /// state issued to one client is no good to another.
    pub(crate) subject: Option<&'a str>,
    pub(crate) arguments: &'a Value,
}

impl Bound<'_> {
    fn digest(&self) -> String {
        let digest = Sha256::digest(canonical::to_string(self.arguments).as_bytes());
        URL_SAFE_NO_PAD.encode(digest)
    }
}

impl SealingKey {
    fn mac(key: &[u8]) -> Hmac<Sha256> {
        // HMAC takes a key of any length.
        Hmac::<Sha256>::new_from_slice(key).expect("HMAC accepts keys of any length")
    }

    /// Seals `answers` and `kept` for the next round of `bound`, at `now`.
    pub(crate) fn seal(
        &self,
        now: SystemTime,
        bound: &Bound<'_>,
        answers: Map<String, Value>,
        kept: Map<String, Value>,
    ) -> String {
        self.seal_until(
            unix_seconds(now).saturating_add(LIFETIME.as_secs()),
            bound,
            answers,
            kept,
        )
    }

    /// [`seal`](SealingKey::seal), good until `expires` (seconds since the Unix epoch).
    fn seal_until(
        &self,
        expires: u64,
        bound: &Bound<'_>,
        answers: Map<String, Value>,
        kept: Map<String, Value>,
    ) -> String {
        let state = RoundState {
            method: bound.method.to_owned(),
            target: bound.target.to_owned(),
            digest: bound.digest(),
            expires,
            subject: bound.subject.map(str::to_owned),
            answers,
            kept,
        };
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&state).unwrap_or_default());
        let mut mac = SealingKey::mac(&self.sealing());
        mac.update(body.as_bytes());
        let tag = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        format!("{body}.{tag}")
    }

    /// Opens a state a client sent back for `bound`, at `now`; why not, in words for the
    /// client.
    pub(crate) fn open(
        &self,
        now: SystemTime,
        sealed: &str,
        bound: &Bound<'_>,
    ) -> Result<RoundState, String> {
        let (body, tag) = sealed.split_once('.').ok_or(ALTERED)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| ALTERED)?;
        // Any key of the ring opens it: one sealed before a rotation stays good.
        let opens = self.keys().iter().any(|key| {
            let mut mac = SealingKey::mac(key);
            mac.update(body.as_bytes());
            mac.verify_slice(&tag).is_ok()
        });
        if !opens {
            return Err(ALTERED.to_owned());
        }
        let state: RoundState = URL_SAFE_NO_PAD
            .decode(body)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or(ALTERED)?;
        if state.method != bound.method
            || state.target != bound.target
            || state.digest != bound.digest()
        {
            return Err(other_request(bound.method));
        }
        if state.subject.as_deref() != bound.subject {
            return Err(OTHER_CLIENT.to_owned());
        }
        if state.expires < unix_seconds(now) {
            return Err(EXPIRED.to_owned());
        }
        Ok(state)
    }
}

fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_state_sealed_before_a_rotation_opens_while_its_key_is_still_accepted() {
        let arguments = json!({});
        let bound = Bound {
            method: "tools/call",
            target: "t",
            subject: None,
            arguments: &arguments,
        };
        let (old, new) = ([1u8; 32], [2u8; 32]);
        let sealed = SealingKey::new(old).seal(SystemTime::now(), &bound, Map::new(), Map::new());
        let rotated = SealingKey::new(new).accepting([old]);
        assert!(
            rotated.open(SystemTime::now(), &sealed, &bound).is_ok(),
            "the previous key still opens"
        );
        let resealed = rotated.seal(SystemTime::now(), &bound, Map::new(), Map::new());
        assert!(
            SealingKey::new(new)
                .open(SystemTime::now(), &resealed, &bound)
                .is_ok(),
            "the new key seals"
        );
        assert_eq!(
            SealingKey::new(new)
                .open(SystemTime::now(), &sealed, &bound)
                .unwrap_err(),
            ALTERED,
            "once the previous key is dropped, its states are refused"
        );
        // A ring replaced in place (a shared store rotated it) seals with its new first key.
        let ring = SealingKey::new(old);
        ring.replace(vec![
            std::sync::Arc::from(&new[..]),
            std::sync::Arc::from(&old[..]),
        ]);
        assert!(SealingKey::new(new)
            .open(
                SystemTime::now(),
                &ring.seal(SystemTime::now(), &bound, Map::new(), Map::new()),
                &bound
            )
            .is_ok());
    }

    #[test]
    fn a_state_opens_only_unaltered_and_for_its_own_request() {
        let key = SealingKey::random();
        let arguments = json!({"b": 1, "a": [true]});
        let bound = Bound {
            method: "tools/call",
            target: "t",
            subject: None,
            arguments: &arguments,
        };
        let mut answers = Map::new();
        answers.insert("x".into(), json!({"action": "accept"}));
        let sealed = key.seal(SystemTime::now(), &bound, answers.clone(), Map::new());
        assert_eq!(
            key.open(SystemTime::now(), &sealed, &bound)
                .unwrap()
                .answers,
            answers
        );

        let reordered = json!({"a": [true], "b": 1});
        let same = Bound {
            arguments: &reordered,
            ..bound
        };
        assert!(
            key.open(SystemTime::now(), &sealed, &same).is_ok(),
            "key order does not matter"
        );

        let tampered = format!("{sealed}-TAMPERED");
        assert_eq!(
            key.open(SystemTime::now(), &tampered, &bound).unwrap_err(),
            ALTERED
        );
        assert_eq!(
            SealingKey::random()
                .open(SystemTime::now(), &sealed, &bound)
                .unwrap_err(),
            ALTERED
        );
        let other = json!({"b": 2, "a": [true]});
        let elsewhere = Bound {
            arguments: &other,
            ..bound
        };
        let another_request = other_request(bound.method);
        assert_eq!(
            key.open(SystemTime::now(), &sealed, &elsewhere)
                .unwrap_err(),
            another_request
        );
        let expired = key.seal_until(
            unix_seconds(SystemTime::now()) - 1,
            &bound,
            Map::new(),
            Map::new(),
        );
        assert_eq!(
            key.open(SystemTime::now(), &expired, &bound).unwrap_err(),
            EXPIRED
        );
        let other_tool = Bound {
            target: "u",
            ..bound
        };
        assert_eq!(
            key.open(SystemTime::now(), &sealed, &other_tool)
                .unwrap_err(),
            another_request
        );

        // A state issued to one token's subject opens only for that subject.
        let ada = Bound {
            subject: Some("ada"),
            ..bound
        };
        let for_ada = key.seal(SystemTime::now(), &ada, Map::new(), Map::new());
        assert!(key.open(SystemTime::now(), &for_ada, &ada).is_ok());
        // Nor does one issued without a subject open for a subject.
        for (state, other) in [
            (&for_ada, None),
            (&for_ada, Some("eve")),
            (&sealed, Some("ada")),
        ] {
            let caller = Bound {
                subject: other,
                ..bound
            };
            assert_eq!(
                key.open(SystemTime::now(), state, &caller).unwrap_err(),
                OTHER_CLIENT
            );
        }
    }
}
