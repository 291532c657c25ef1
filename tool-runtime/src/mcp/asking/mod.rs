//! How a call's questions to its client travel, by protocol era: `live` (handshake era: a
//! request to the client, answered while the call waits) and `retry` (2026-07-28: an
//! `input_required` answer, and the call runs again when the client retries with the
//! answers), with the retry's state `sealed`.

pub(crate) mod live;
pub(crate) mod retry;
pub(crate) mod sealed;

use super::jsonrpc::{self, code, RequestId};
use super::Message;
use retry::{RetryAsker, Verdict};
use serde_json::json;

/// The answer to a request that may have asked its client at 2026-07-28: as the round's
/// verdict says, else `complete()` (the request's own answer; `failed` says whether it is
/// a failure, which makes a missing capability the reason).
pub(crate) fn settle(
    id: &RequestId,
    retry: Option<&RetryAsker>,
    failed: bool,
    complete: impl FnOnce() -> Message,
) -> Message {
    let Some(retry) = retry else {
        return complete();
    };
    settle_verdict(id, retry.verdict(failed), complete)
}

/// The answer a round's `verdict` gives, else `complete()`.
pub(crate) fn settle_verdict(
    id: &RequestId,
    verdict: Verdict,
    complete: impl FnOnce() -> Message,
) -> Message {
    match verdict {
        Verdict::Complete => complete(),
        Verdict::InputRequired(body) => {
            Message::result(jsonrpc::response(id, &serde_json::Value::Object(body)))
        }
        Verdict::Invalid(why) => Message::error(
            code::INVALID_PARAMS,
            jsonrpc::error_response(Some(id), code::INVALID_PARAMS, &why, None),
        ),
        Verdict::Missing(required) => {
            let names: Vec<&String> = required
                .as_object()
                .into_iter()
                .flat_map(|r| r.keys())
                .collect();
            let message = format!(
                "Missing required client capability: this request needs {}, which the client did not declare",
                names.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(" and ")
            );
            Message::error(
                code::MISSING_CAPABILITY,
                jsonrpc::error_response(
                    Some(id),
                    code::MISSING_CAPABILITY,
                    &message,
                    Some(json!({"requiredCapabilities": required})),
                ),
            )
        }
    }
}
