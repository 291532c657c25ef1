//! The protocol side of prompts, resources and completion: `prompts/get`, `resources/read` and
//! `completion/complete`, which run user code and so are handed back as work, like a tool call.

use super::asking::retry::RetryAsker;
use super::asking::{settle, verdict};
use super::era::Era;
use super::jsonrpc::{code, RequestId};
use super::outputs::OutputStore;
use super::params::{CompleteParams, Reference};
use super::responses::{error_message, result_message};
use super::work::{InFlightGuard, RequestSink, Work};
use super::{ServerMessage, Shared};
use crate::call::complete::CompletionContext;
use crate::call::context::CallContext;
use crate::registry::{CompletionTarget, SurfaceError};
use serde_json::{json, Map, Value};
use std::future::Future;
use std::sync::Arc;

/// What `completion/complete` asks: which argument of which prompt or template, the text
/// typed so far, and the arguments already given.
pub(crate) struct CompletionAsked {
    of: Reference,
    argument: String,
    typed: String,
    context: CompletionContext,
}

/// What a request for a prompt, a resource or a completion needs to run as work.
pub(super) struct Request {
    pub(super) shared: Arc<Shared>,
    pub(super) guard: InFlightGuard,
    pub(super) context: CallContext,
    pub(super) cancellation: crate::call::scope::Cancellation,
    /// Where its notifications and its answer go.
    pub(super) notifier: Arc<RequestSink>,
    pub(super) era: Era,
    /// At 2026-07-28, the round of asking whose verdict shapes the answer.
    pub(super) retry: Option<Arc<RetryAsker>>,
}

impl Request {
    /// `prompts/get`, as work.
    pub(super) fn get_prompt(self, name: String, arguments: Value) -> Work {
        // A request state the prompt gets is bound to its arguments (small strings).
        let bound = match self.retry {
            Some(_) => arguments.clone(),
            None => Value::Null,
        };
        self.into_work(bound, |shared, context, _| async move {
            let messages = shared
                .registry
                .get_prompt_in(&name, arguments, &context)
                .await?;
            let mut body = Map::new();
            body.insert("messages".to_owned(), Value::Array(messages));
            Ok(body)
        })
    }

    /// `resources/read`, as work.
    pub(super) fn read_resource(self, uri: String) -> Work {
        self.into_work(Value::Null, |shared, context, era| async move {
            let contents = if OutputStore::owns(&uri) {
                let stored = shared.outputs.read_anywhere(&uri).await;
                vec![json!(stored.ok_or_else(|| {
                    SurfaceError::UnknownResource { uri: uri.clone() }
                })?)]
            } else {
                shared.registry.read_resource_in(&uri, &context).await?
            };
            let mut body = Map::new();
            body.insert("contents".to_owned(), Value::Array(contents));
            if era == Era::PerRequest {
                let (ttl, scope) = shared.cache.read_hints();
                body.insert("ttlMs".to_owned(), ttl.into());
                body.insert("cacheScope".to_owned(), scope.into());
            }
            Ok(body)
        })
    }

    /// `completion/complete`, as work: a completion function is user code, run on the
    /// blocking pool like any sync function of unknown pace.
    pub(super) fn complete(self, asked: CompletionAsked) -> Work {
        self.into_work(Value::Null, |shared, _, _| async move {
            let CompletionAsked {
                of,
                argument,
                typed,
                context,
            } = asked;
            let completion = crate::call::blocking::run_sync(move || {
                let target = match &of {
                    Reference::Prompt { name } => CompletionTarget::Prompt(name),
                    Reference::Resource { uri } => CompletionTarget::Resource(uri),
                };
                shared
                    .registry
                    .complete(target, &argument, &typed, &context)
            })
            .await
            .map_err(|()| {
                SurfaceError::Internal("Internal error: the completion failed".to_owned())
            })??;
            let mut body = Map::new();
            body.insert(
                "completion".to_owned(),
                json!({
                    "values": completion.values,
                    "total": completion.total,
                    "hasMore": completion.has_more(),
                }),
            );
            Ok(body)
        })
    }

    /// Runs `produce` as the request's work: it ends at once when the request is
    /// cancelled, and answers with the result body (or the error) unless the request was
    /// cancelled meanwhile. `bound` is what a request state it gets is bound to besides the
    /// method and the target.
    fn into_work<F, Fut>(self, bound: Value, produce: F) -> Work
    where
        F: FnOnce(Arc<Shared>, CallContext, Era) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Map<String, Value>, SurfaceError>> + Send + 'static,
    {
        Work::stream(async move {
            let Request {
                shared,
                guard,
                context,
                cancellation,
                notifier,
                era,
                retry,
            } = self;
            let produced = produce(Arc::clone(&shared), context, era);
            let outcome = tokio::select! {
                biased;
                () = cancellation.cancelled() => return,
                outcome = produced => outcome,
            };
            guard.answer(&notifier.sink, || {
                let verdict = verdict(retry.as_deref(), outcome.is_err(), &bound);
                settle(&guard.id, verdict, || match outcome {
                    Ok(body) => result_message(&shared, &guard.id, body, era),
                    Err(error) => surface_error(&guard.id, &error, era),
                })
            });
        })
    }
}

impl From<CompleteParams> for CompletionAsked {
    fn from(params: CompleteParams) -> Self {
        let arguments = params.context.and_then(|context| context.arguments);
        CompletionAsked {
            of: params.reference,
            argument: params.argument.name,
            typed: params.argument.value,
            context: crate::registry::completion_context(arguments.as_ref()),
        }
    }
}

/// The JSON-RPC error for a prompt or resource that could not be served. A resource not
/// found is -32602 at 2026-07-28 (which requires it) and -32002 before (as earlier
/// versions recommend); both carry the URI. An error the function returned refuses the
/// request as asked (a day count of 0, a path outside the workspace): -32602, which a
/// client neither retries nor reports as the server's fault. Only what the function could
/// not help (a panic, its time limit, missing state) is -32603.
fn surface_error(id: &RequestId, error: &SurfaceError, era: Era) -> ServerMessage {
    let (code, data) = match error {
        SurfaceError::UnknownResource { uri } => (
            match era {
                Era::PerRequest => code::INVALID_PARAMS,
                Era::Handshake => code::RESOURCE_NOT_FOUND,
            },
            Some(json!({"uri": uri})),
        ),
        SurfaceError::UnknownPrompt { .. }
        | SurfaceError::InvalidArguments(_)
        | SurfaceError::Failed(_) => (code::INVALID_PARAMS, None),
        _ => (code::INTERNAL_ERROR, None),
    };
    error_message(Some(id), code, &error.to_string(), data)
}
