//! The protocol side of prompts, resources and completion: list entries, `prompts/get`,
//! `resources/read`, `completion/complete`, and resource subscriptions (handshake era).
//! Getting a prompt and reading a resource run user code, so they are handed back as work,
//! like a tool call.

use super::jsonrpc::{self, code, RequestId};
use super::outbox::Outgoing;
use super::pages::stateless_result;
use super::session::{lock, send};
use super::work::{InFlightGuard, Work};
use super::{Message, Shared};
use crate::call::context::CallContext;
use crate::catalog::{Prompt, Resource};
use crate::registry::{CompletionTarget, SurfaceError};
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};

/// One prompt as `prompts/list` shows it.
pub(super) fn prompt_entry(prompt: &Prompt) -> Value {
    let mut entry = Map::new();
    entry.insert("name".to_owned(), prompt.name().into());
    if let Some(title) = prompt.title() {
        entry.insert("title".to_owned(), title.into());
    }
    entry.insert("description".to_owned(), prompt.description().into());
    let arguments: Vec<Value> = prompt
        .arguments()
        .map(|argument| {
            let mut entry = Map::new();
            entry.insert("name".to_owned(), argument.name().into());
            if let Some(description) = argument.description() {
                entry.insert("description".to_owned(), description.into());
            }
            entry.insert("required".to_owned(), argument.is_required().into());
            Value::Object(entry)
        })
        .collect();
    if !arguments.is_empty() {
        entry.insert("arguments".to_owned(), Value::Array(arguments));
    }
    Value::Object(entry)
}

/// One resource as `resources/list` shows it, or one template as
/// `resources/templates/list` does.
pub(super) fn resource_entry(resource: &Resource) -> Value {
    let mut entry = Map::new();
    let key = if resource.is_template() {
        "uriTemplate"
    } else {
        "uri"
    };
    entry.insert(key.to_owned(), resource.uri().into());
    entry.insert("name".to_owned(), resource.name().into());
    if let Some(title) = resource.title() {
        entry.insert("title".to_owned(), title.into());
    }
    if !resource.description().is_empty() {
        entry.insert("description".to_owned(), resource.description().into());
    }
    if let Some(mime_type) = resource.mime_type() {
        entry.insert("mimeType".to_owned(), mime_type.into());
    }
    if let (Some(size), false) = (resource.size(), resource.is_template()) {
        entry.insert("size".to_owned(), size.into());
    }
    Value::Object(entry)
}

/// What a request for a prompt or a resource needs to run as work.
pub(super) struct Request {
    pub(super) shared: Arc<Shared>,
    pub(super) guard: InFlightGuard,
    pub(super) context: CallContext,
    pub(super) cancellation: crate::call::scope::Cancellation,
    /// Where the answer goes; shared with the request's notifier.
    pub(super) sink: Arc<Mutex<Outgoing>>,
    pub(super) stateless: bool,
}

impl Request {
    /// `prompts/get`, as work.
    pub(super) fn get_prompt(self, name: String, arguments: Value) -> Work {
        let sink = Arc::clone(&self.sink);
        let out = Arc::clone(&sink);
        Work::stream(
            async move {
                let Request {
                    shared,
                    guard,
                    context,
                    cancellation,
                    stateless,
                    ..
                } = self;
                let outcome = tokio::select! {
                    biased;
                    () = cancellation.cancelled() => return,
                    outcome = shared.registry.get_prompt_in(&name, arguments, &context) => outcome,
                };
                if lock(&guard.state.in_flight).remove(&guard.id).is_none() {
                    return;
                }
                let message = match outcome {
                    Ok(messages) => {
                        let mut body = Map::new();
                        body.insert("messages".to_owned(), Value::Array(messages));
                        result(&shared, &guard.id, body, stateless)
                    }
                    Err(error) => surface_error(&guard.id, &error, stateless),
                };
                send(&lock(&out), message);
            },
            Some(sink),
        )
    }

    /// `resources/read`, as work.
    pub(super) fn read_resource(self, uri: String) -> Work {
        let sink = Arc::clone(&self.sink);
        let out = Arc::clone(&sink);
        Work::stream(
            async move {
                let Request {
                    shared,
                    guard,
                    context,
                    cancellation,
                    stateless,
                    ..
                } = self;
                let outcome = tokio::select! {
                    biased;
                    () = cancellation.cancelled() => return,
                    outcome = shared.registry.read_resource_in(&uri, &context) => outcome,
                };
                if lock(&guard.state.in_flight).remove(&guard.id).is_none() {
                    return;
                }
                let message = match outcome {
                    Ok(contents) => {
                        let mut body = Map::new();
                        body.insert("contents".to_owned(), json!(contents));
                        if stateless {
                            let (ttl, scope) = shared.cache.read_hints();
                            body.insert("ttlMs".to_owned(), ttl.into());
                            body.insert("cacheScope".to_owned(), scope.into());
                        }
                        result(&shared, &guard.id, body, stateless)
                    }
                    Err(error) => surface_error(&guard.id, &error, stateless),
                };
                send(&lock(&out), message);
            },
            Some(sink),
        )
    }
}

/// `completion/complete`: answered at once (completion functions are expected to be quick;
/// a panic in one is caught and answered as an internal error).
pub(super) fn complete(
    shared: &Shared,
    id: &RequestId,
    params: Option<&Map<String, Value>>,
    stateless: bool,
) -> Message {
    let invalid = |message: &str| {
        Message::error(
            code::INVALID_PARAMS,
            jsonrpc::error_response(Some(id), code::INVALID_PARAMS, message, None),
        )
    };
    let reference = params.and_then(|p| p.get("ref"));
    let target = match reference
        .and_then(|r| r.get("type"))
        .and_then(Value::as_str)
    {
        Some("ref/prompt") => match reference
            .and_then(|r| r.get("name"))
            .and_then(Value::as_str)
        {
            Some(name) => CompletionTarget::Prompt(name),
            None => return invalid("Invalid params: \"ref.name\" (the prompt's name) is missing"),
        },
        Some("ref/resource") => {
            match reference.and_then(|r| r.get("uri")).and_then(Value::as_str) {
                Some(uri) => CompletionTarget::Resource(uri),
                None => {
                    return invalid(
                        "Invalid params: \"ref.uri\" (the resource template) is missing",
                    )
                }
            }
        }
        _ => {
            return invalid(
                "Invalid params: \"ref\" must be {\"type\": \"ref/prompt\", \"name\": ...} or \
                 {\"type\": \"ref/resource\", \"uri\": ...}",
            )
        }
    };
    let argument = params.and_then(|p| p.get("argument"));
    let (Some(name), Some(typed)) = (
        argument.and_then(|a| a.get("name")).and_then(Value::as_str),
        argument
            .and_then(|a| a.get("value"))
            .and_then(Value::as_str),
    ) else {
        return invalid(
            "Invalid params: \"argument\" must be {\"name\": <the argument>, \"value\": <the text typed so far>}",
        );
    };
    let context = crate::registry::completion_context(
        params
            .and_then(|p| p.get("context"))
            .and_then(|c| c.get("arguments"))
            .and_then(Value::as_object),
    );
    match shared.registry.complete(target, name, typed, &context) {
        Ok(completion) => {
            let mut body = Map::new();
            body.insert(
                "completion".to_owned(),
                json!({
                    "values": completion.values,
                    "total": completion.total,
                    "hasMore": completion.has_more(),
                }),
            );
            result(shared, id, body, stateless)
        }
        Err(error) => surface_error(id, &error, stateless),
    }
}

fn result(shared: &Shared, id: &RequestId, body: Map<String, Value>, stateless: bool) -> Message {
    let body = if stateless {
        stateless_result(body, &shared.info)
    } else {
        Value::Object(body)
    };
    Message::result(jsonrpc::response(id, &body))
}

/// The JSON-RPC error for a prompt or resource that could not be served. A resource not
/// found is -32602 at 2026-07-28 (which requires it) and -32002 before (as earlier
/// versions recommend); both carry the URI.
fn surface_error(id: &RequestId, error: &SurfaceError, stateless: bool) -> Message {
    let (code, data) = match error {
        SurfaceError::UnknownResource { uri } => (
            if stateless {
                code::INVALID_PARAMS
            } else {
                code::RESOURCE_NOT_FOUND
            },
            Some(json!({"uri": uri})),
        ),
        SurfaceError::UnknownPrompt { .. } | SurfaceError::InvalidArguments(_) => {
            (code::INVALID_PARAMS, None)
        }
        _ => (code::INTERNAL_ERROR, None),
    };
    Message::error(
        code,
        jsonrpc::error_response(Some(id), code, &error.to_string(), data),
    )
}
