//! The responses every method writes: results framed as their era frames them, errors with
//! their codes, and a call's answer in the format it was asked in (MCP of either era, or
//! one of the REST endpoints), with the refusal a transport may have a status for.

use super::asking::retry::RetryAsker;
use super::connection::Refusal;
use super::era::Era;
use super::jsonrpc::{self, RequestId};
use super::outbox::Outbox;
use super::pages::stateless_result;
use super::tools::{self, CallAnswer};
use super::work::Work;
use super::{ServerMessage, Shared};
use crate::call::error::CallError;
use crate::call::result::ToolResult;
use serde_json::{Map, Value};

/// The shape a call's answer takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AnswerFormat {
    /// MCP, in its era.
    Mcp(Era),
    /// The REST `execute` endpoint: the call's result as `{"name", "input", "output"}` or
    /// `{"name", "input", "error"}`.
    #[cfg(feature = "http")]
    Rest,
    /// The JSON-RPC `tools/call` endpoint beside REST: MCP's result, except that an unknown
    /// tool and arguments that do not fit are -32602 errors, and an output is never a link
    /// (its callers cannot read resources).
    #[cfg(feature = "http")]
    RestRpc,
}

/// An error response, typed with its code so a transport can choose a status without
/// reading the bytes again.
pub(crate) fn error_message(
    id: Option<&RequestId>,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> ServerMessage {
    #[cfg(feature = "otel")]
    crate::otel::outcome::error_response(code);
    ServerMessage::error(code, jsonrpc::error_response(id, code, message, data))
}

/// A result body as the answer to `id`; at 2026-07-28 with the fields every result carries.
pub(crate) fn result_message(
    shared: &Shared,
    id: &RequestId,
    body: Map<String, Value>,
    era: Era,
) -> ServerMessage {
    let body = match era {
        Era::PerRequest => stateless_result(body, &shared.info),
        Era::Handshake => Value::Object(body),
    };
    ServerMessage::result(jsonrpc::response(id, &body))
}

/// An empty result (`{}`), as `ping` and the acknowledgements answer.
pub(crate) fn empty_result(id: &RequestId) -> ServerMessage {
    ServerMessage::result(jsonrpc::response_raw(id, "{}"))
}

/// A request answered where it was handled: it leaves no work.
pub(crate) fn answered(sink: &Outbox, message: ServerMessage) -> Option<Work> {
    // Its id is free before the client can read the answer and use the id again.
    crate::mcp::connection::in_flight::let_go_before_answering();
    sink.send(message);
    None
}

/// The answer to a finished call, in `format`.
pub(crate) fn answer(
    shared: &Shared,
    id: &RequestId,
    result: ToolResult,
    format: AnswerFormat,
) -> ServerMessage {
    match format {
        #[cfg(feature = "http")]
        AnswerFormat::Rest => rest_answer(&result),
        #[cfg(feature = "http")]
        AnswerFormat::RestRpc => match result.error() {
            Some(error @ (CallError::UnknownTool { .. } | CallError::InvalidArguments { .. })) => {
                error_message(
                    Some(id),
                    jsonrpc::code::INVALID_PARAMS,
                    &error.to_string(),
                    None,
                )
            }
            _ => mcp_answer(shared, id, result, None),
        },
        AnswerFormat::Mcp(era) => mcp_answer(shared, id, result, Some(era)),
    }
}

/// The answer to a finished call in MCP (`era`), or REST's JSON-RPC endpoint (`None`),
/// which never links an output.
fn mcp_answer(
    shared: &Shared,
    id: &RequestId,
    result: ToolResult,
    era: Option<Era>,
) -> ServerMessage {
    // In the handshake era the protocol has an error of its own for a call that needs the
    // user at a page first; at 2026-07-28 it is a tool error (the tool's question, had the
    // client declared URL elicitation, would have made it `input_required`).
    let pages_as_error = era.is_some_and(Era::has_url_elicitation_error);
    let outputs = era.map(|_| &shared.outputs);
    let refusal = match result.error() {
        Some(error @ CallError::InsufficientScope { scopes, .. }) => {
            Some(Refusal::InsufficientScope {
                scopes: scopes.clone(),
                description: error.to_string(),
            })
        }
        _ => None,
    };
    // Structured content is any JSON value at 2026-07-28, an object before (and on REST's
    // JSON-RPC endpoint, which answers as the handshake era does).
    let objects_only = era != Some(Era::PerRequest);
    match tools::answer(
        result,
        shared.max_output_bytes,
        outputs,
        pages_as_error,
        objects_only,
    ) {
        CallAnswer::Result(body) => {
            #[cfg(feature = "otel")]
            if body.is_error() {
                crate::otel::outcome::tool_error();
            }
            let info = era.filter(|era| era.types_results()).map(|_| &shared.info);
            ServerMessage::result(jsonrpc::response_written(id, |out| {
                body.framed(info).write(out)
            }))
        }
        CallAnswer::Error {
            code,
            message,
            data,
        } => error_message(Some(id), code, &message, data).refused(refusal),
    }
}

/// REST's answer: the result as it serializes, refused (for a status of the transport's)
/// when the call did not run to a result of the tool's.
#[cfg(feature = "http")]
fn rest_answer(result: &ToolResult) -> ServerMessage {
    #[cfg(feature = "otel")]
    if result.is_error() {
        crate::otel::outcome::tool_error();
    }
    let refusal = match result.error() {
        None | Some(CallError::Failed { .. } | CallError::UrlElicitationRequired { .. }) => None,
        Some(CallError::UnknownTool { .. }) => Some(Refusal::NotFound),
        Some(CallError::InvalidArguments { .. }) => Some(Refusal::Invalid),
        Some(CallError::TimedOut { .. }) => Some(Refusal::TimedOut),
        Some(error @ CallError::InsufficientScope { scopes, .. }) => {
            Some(Refusal::InsufficientScope {
                scopes: scopes.clone(),
                description: error.to_string(),
            })
        }
        Some(CallError::RateLimited { retry_after, .. }) => Some(Refusal::RateLimited {
            retry_after: Some(*retry_after),
        }),
        Some(CallError::BudgetExceeded { .. }) => Some(Refusal::RateLimited { retry_after: None }),
        Some(CallError::LimitsUnreachable { retry_after, .. }) => Some(Refusal::Unavailable {
            retry_after: *retry_after,
        }),
        Some(CallError::Refused {
            retry_after: Some(wait),
            ..
        }) => Some(Refusal::Unavailable { retry_after: *wait }),
        Some(CallError::Refused {
            retry_after: None, ..
        }) => Some(Refusal::Forbidden),
        Some(_) => Some(Refusal::Internal),
    };
    let bytes = serde_json::to_vec(result).unwrap_or_else(|error| {
        tracing::error!(%error, "a result could not be serialized");
        br#"{"error":"Internal error"}"#.to_vec()
    });
    ServerMessage::result(bytes).refused(refusal)
}

/// The answer to a call once it ended: settled by the round's verdict at 2026-07-28 (an
/// `input_required` result while questions are open), else its result or error.
pub(crate) fn settled_answer(
    shared: &Shared,
    id: &RequestId,
    retry: Option<&RetryAsker>,
    result: ToolResult,
    format: AnswerFormat,
) -> ServerMessage {
    let verdict = super::asking::verdict(retry, result.is_error(), result.input());
    super::asking::settle(id, verdict, || answer(shared, id, result, format))
}
