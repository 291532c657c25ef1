//! Tower layers around tool calls: a call is a [`tower::Service`] request, so what a
//! service of yours does around each call (an audit trail, a retry, a deny rule, a limit)
//! is a [`tower::Layer`], and the layers `tower` ships work on it unchanged.
//!
//! A call reaches the layers once the registry has admitted it (the caller's scopes, rate
//! limits, budget) and its arguments fit the tool's schema. It is a [`CallRequest`]: the tool,
//! the arguments, the caller (transport, session, authenticated subject and scopes) and the
//! call's context. Its answer is a [`ToolAnswer`], or the [`CallError`](crate::CallError) a
//! model reads. Innermost, the tool runs under its own time limit.
//!
//! # The registry's own layers, and where yours sit
//!
//! What the registry does around a call is made of layers of this same kind, and every
//! call goes through them all in one order, the first outermost:
//!
//! 1. **the record**: one audit event (target [`AUDIT_TARGET`](crate::ops::AUDIT_TARGET))
//!    and the metrics per call; it records what any layer inside it refused;
//! 2. **admission**: the caller's scopes, then the client's rate limit, the tool's, the
//!    client's budget. What it can decide when the call arrives it decides then, before the
//!    arguments are checked, so that a refusal is answered at once (a `403` for missing
//!    scopes over HTTP, a `429` on REST) and never as a task; the counts kept in the store
//!    replicas share are made as the call starts running, after the arguments were
//!    checked, and the answer's tokens are charged to the budget;
//! 3. **the layers given**, in the order given;
//! 4. **the cache** of read-only tools' answers (`#[tool(read_only, cache = "30s")]`), so
//!    that what your layers do holds for a kept answer as for any other;
//! 5. **the time limit** ([`CallRequest::time_limit`]) around the run of the tool, never
//!    around a kept answer.
//!
//! Each of the registry's applies only to the tools it has work for (a tool with a time
//! limit; every tool while audit events or metrics are recorded), and a call of a tool no
//! layer applies to runs with none, paying nothing for them. A call of an unknown tool, one
//! admission refuses when it arrives, and one with arguments that do not fit never reach a
//! layer: each is answered at once and recorded all the same. A call dropped before it
//! started running (its request cancelled at once) is not recorded.
//!
//! Layers are given to the [`RegistryBuilder`](crate::registry::RegistryBuilder):
//! [`layer`](crate::registry::RegistryBuilder::layer) for every tool,
//! [`layer_for`](crate::registry::RegistryBuilder::layer_for) for one tool or a group
//! ([`Tools`]), and [`named_layer`](crate::registry::RegistryBuilder::named_layer) for the
//! tools that ask for it by name with `#[tool(layers = ["name"])]`. Each is made into one
//! service, shared by every tool it applies to: a `ConcurrencyLimitLayer` given for a group
//! bounds the calls of the group together. A call goes through the layers that apply to
//! its tool in the order they were given, the first outermost.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use std::task::{Context, Poll};
//! use tool_runtime::layers::{CallRequest, ToolAnswer};
//! use tool_runtime::{tool, CallError, Registry};
//!
//! /// Add two integers.
//! #[tool]
//! fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! /// Writes each call's tool and caller to a sink of the application's: an audit trail.
//! #[derive(Clone)]
//! struct Audit<S> { inner: S, sink: Arc<Mutex<Vec<String>>> }
//!
//! impl<S> tower::Service<CallRequest> for Audit<S>
//! where
//!     S: tower::Service<CallRequest, Response = ToolAnswer, Error = CallError>,
//!     S::Future: Send + 'static,
//! {
//!     type Response = ToolAnswer;
//!     type Error = CallError;
//!     type Future = futures_util::future::BoxFuture<'static, Result<ToolAnswer, CallError>>;
//!
//!     fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CallError>> {
//!         self.inner.poll_ready(cx)
//!     }
//!
//!     fn call(&mut self, call: CallRequest) -> Self::Future {
//!         let line = format!("{} by {}", call.tool().name(), call.caller().transport());
//!         let sink = Arc::clone(&self.sink);
//!         let answer = self.inner.call(call);
//!         Box::pin(async move {
//!             let answer = answer.await;
//!             let outcome = if answer.is_ok() { "ok" } else { "failed" };
//!             sink.lock().unwrap().push(format!("{line}: {outcome}"));
//!             answer
//!         })
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let sink = Arc::new(Mutex::new(Vec::new()));
//! let trail = Arc::clone(&sink);
//! let registry = Registry::builder()
//!     .layer(tower::layer::layer_fn(move |inner| Audit { inner, sink: Arc::clone(&trail) }))
//!     .build()
//!     .unwrap();
//! let result = registry.call("add", serde_json::json!({"a": 2, "b": 3})).await;
//! assert_eq!(result.output(), Some(&serde_json::json!(5)));
//! assert_eq!(*sink.lock().unwrap(), ["add by direct: ok"]);
//! # });
//! ```
//!
//! # A deny rule by the caller's subject
//!
//! A layer refuses a call with [`CallError::refused`](crate::CallError::refused): the tool
//! does not run, and the model reads why.
//!
//! ```
//! use std::task::{Context, Poll};
//! use tool_runtime::context::Caller;
//! use tool_runtime::layers::{ToolAnswer, CallRequest};
//! use tool_runtime::{tool, CallError, Registry};
//!
//! /// Delete a file.
//! #[tool(destructive)]
//! fn delete_file(path: String) -> String { format!("deleted {path}") }
//!
//! /// Refuses every call made by a subject on the list.
//! #[derive(Clone)]
//! struct Deny<S> { inner: S, subjects: &'static [&'static str] }
//!
//! impl<S> tower::Service<CallRequest> for Deny<S>
//! where
//!     S: tower::Service<CallRequest, Response = ToolAnswer, Error = CallError>,
//!     S::Future: Send + 'static,
//! {
//!     type Response = ToolAnswer;
//!     type Error = CallError;
//!     type Future = futures_util::future::BoxFuture<'static, Result<ToolAnswer, CallError>>;
//!
//!     fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), CallError>> {
//!         self.inner.poll_ready(cx)
//!     }
//!
//!     fn call(&mut self, call: CallRequest) -> Self::Future {
//!         let subject = call.caller().subject().unwrap_or_default();
//!         if self.subjects.contains(&subject) {
//!             let reason = format!("{subject} may not delete files; ask an administrator");
//!             let refusal = CallError::refused(call.tool().name(), reason);
//!             return Box::pin(async move { Err(refusal) });
//!         }
//!         Box::pin(self.inner.call(call))
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let registry = Registry::builder()
//!     .layer_for("delete_file", tower::layer::layer_fn(|inner| Deny { inner, subjects: &["eve"] }))
//!     .build()
//!     .unwrap();
//! let eve = Caller::http(None).with_subject("eve", ["files"]);
//! let result = registry.call_for(eve, "delete_file", serde_json::json!({"path": "a"})).await;
//! assert_eq!(result.error().unwrap().status(), "refused");
//! # });
//! ```
//!
//! # A retry of an idempotent tool
//!
//! `tower`'s `Retry` makes a call again (a [`CallRequest`] clones); here, up to twice, when the
//! tool failed and says calling it again is harmless.
//!
//! ```
//! use tool_runtime::layers::{ToolAnswer, CallRequest};
//! use tool_runtime::{tool, CallError, Registry};
//!
//! /// Fetch the exchange rate from a service that sometimes drops a request.
//! #[tool(idempotent)]
//! async fn exchange_rate(currency: String) -> Result<f64, String> {
//!     Ok(1.08)
//! }
//!
//! /// How many more times a call may be made; each call starts with the layer's count.
//! #[derive(Clone)]
//! struct Retries(u8);
//!
//! impl tower::retry::Policy<CallRequest, ToolAnswer, CallError> for Retries {
//!     type Future = std::future::Ready<()>;
//!
//!     fn retry(
//!         &mut self,
//!         call: &mut CallRequest,
//!         result: &mut Result<ToolAnswer, CallError>,
//!     ) -> Option<Self::Future> {
//!         let failed = matches!(result, Err(CallError::Failed { .. }));
//!         let harmless = call.tool().annotations().idempotent == Some(true);
//!         if !(failed && harmless) || self.0 == 0 {
//!             return None;
//!         }
//!         self.0 -= 1;
//!         Some(std::future::ready(()))
//!     }
//!
//!     fn clone_request(&mut self, call: &CallRequest) -> Option<CallRequest> {
//!         Some(call.clone())
//!     }
//! }
//!
//! let registry = Registry::builder()
//!     .layer_for("exchange_rate", tower::retry::RetryLayer::new(Retries(2)))
//!     .build()
//!     .unwrap();
//! # let _ = registry;
//! ```
//!
//! A layer's error becomes the call's: a [`CallError`](crate::CallError) as it is (make
//! one with [`CallError::refused`](crate::CallError::refused)), `tower`'s time limit and
//! load shedding as a refusal saying to call again, any other error as a refusal with its
//! message (a model reads it: say what happened and what to do).
//!
//! # Around every request
//!
//! Layers around every MCP request (a listing, a read, a prompt, a call, a task method) are
//! given to the server with
//! [`ServerOptions::request_layer`](crate::mcp::ServerOptions::request_layer) and see an
//! [`McpRequest`]. A request passes, the first outermost:
//!
//! 1. **the in-flight caps** ([`max_in_flight`](crate::mcp::ServerOptions::max_in_flight)
//!    per connection, [`max_in_flight_total`](crate::mcp::ServerOptions::max_in_flight_total)
//!    on the server): a request that runs work (a call, a prompt, a read, a completion, a
//!    stream, a task method, a REST call) counts from its arrival until it is answered.
//!    Past a cap it is answered busy at once, before any layer sees it or anything but its
//!    id is checked, never queued; a request a layer holds (in a `ConcurrencyLimit`'s queue,
//!    say) counts while it waits, and a cancellation that arrives meanwhile takes it out of
//!    the layer at once, its place and id free: it is never handled nor answered. The caps
//!    are first because they keep the requests by id, which a duplicate and a
//!    cancellation are checked against;
//! 2. **the request layers given**, in the order given;
//! 3. **the server's handling** of the method; for a call, the call's layers above.
//!
//! A request layer's refusal that says when to send the request again (`tower`'s load
//! shedding and time limit, [`CallError::retry_after`](crate::CallError::retry_after)) is
//! answered as the caps answer: the server-busy error (`-32000`, `data.retryAfterMs`; over
//! HTTP, `503` with `Retry-After`); any other with the request's error (`-32600`).

mod cache;
mod errors;
mod request;
mod requests;
mod route;
mod selection;
mod shared;
mod stage;

pub use crate::call::ToolAnswer;
pub use cache::CacheLimits;
pub(crate) use cache::{cached, ResultCache};
pub(crate) use errors::{into_call_error, into_call_error_named};
pub use request::CallRequest;
pub(crate) use requests::{Handling, RequestFacts, RequestStage, RequestStages};
pub use requests::{McpRequest, NextRequest};
pub use route::Next;
pub(crate) use route::{AnswerFuture, Layered, Stages};
pub use selection::Tools;

/// The error a layer may answer with: anything that is an error. `tower`'s own layers
/// answer with it.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
