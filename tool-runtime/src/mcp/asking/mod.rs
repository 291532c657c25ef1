//! How a call's questions to its client travel, by protocol era: `live` (handshake era: a
//! request to the client, answered while the call waits) and `retry` (2026-07-28: an
//! `input_required` answer, and the call runs again when the client retries with the
//! answers), with the retry's state `sealed`.

pub(crate) mod live;
pub(crate) mod retry;
pub(crate) mod sealed;

use super::jsonrpc::{self, code, RequestId};
use super::responses::error_message;
use super::ServerMessage;
use crate::call::ask::UrlElicitation;
use crate::call::error::CallError;
use retry::{RetryAsker, Verdict};
use serde_json::{json, Value};

/// How a request that may have asked its client ends: the round's verdict at 2026-07-28
/// (`failed` says whether the request's own answer is a failure, which makes a missing
/// capability the reason; `arguments` are what a new request state is bound to), else
/// complete.
pub(crate) fn verdict(retry: Option<&RetryAsker>, failed: bool, arguments: &Value) -> Verdict {
    retry.map_or(Verdict::Complete, |r| r.verdict(failed, arguments))
}

/// The answer a round's `verdict` gives, else `complete()`.
pub(crate) fn settle(
    id: &RequestId,
    verdict: Verdict,
    complete: impl FnOnce() -> ServerMessage,
) -> ServerMessage {
    match verdict {
        Verdict::Complete => complete(),
        Verdict::InputRequired(body) => {
            ServerMessage::result(jsonrpc::response(id, &Value::Object(body)))
        }
        Verdict::Invalid(why) => error_message(Some(id), code::INVALID_PARAMS, &why, None),
        Verdict::Missing(required) => missing_capability(id, &missing_message(&required), required),
    }
}

/// The -32042 error (code, message, data) a handshake-era call answers when its tool said
/// the user must visit pages first, listing them as URL elicitations.
pub(crate) fn url_elicitation_required(result: &crate::ToolResult) -> Option<(i64, String, Value)> {
    let error @ CallError::UrlElicitationRequired { pages, .. } = result.error()? else {
        return None;
    };
    let elicitations: Vec<Value> = pages.iter().map(UrlElicitation::params).collect();
    Some((
        code::URL_ELICITATION_REQUIRED,
        format!("URL elicitation required: {error}"),
        json!({"elicitations": elicitations}),
    ))
}

/// What -32021 says of `required` (a client capabilities object).
pub(crate) fn missing_message(required: &Value) -> String {
    let names: Vec<&str> = required
        .as_object()
        .into_iter()
        .flat_map(|r| r.keys().map(String::as_str))
        .collect();
    format!(
        "Missing required client capability: this request needs {}, which the client did \
         not declare",
        names.join(" and ")
    )
}

/// The -32021 error of a request that needs `required` (a client capabilities object),
/// which the client did not declare.
pub(crate) fn missing_capability(id: &RequestId, message: &str, required: Value) -> ServerMessage {
    error_message(
        Some(id),
        code::MISSING_CAPABILITY,
        message,
        Some(json!({"requiredCapabilities": required})),
    )
}
