//! What a registry does around every call, as layers of the same kind an application
//! gives, and the one order a call goes through them all:
//!
//! 1. **the record** (`Record`): one audit event and the metrics per call. Outermost, so it
//!    records what every layer inside it refused;
//! 2. **admission** (`Admit`): the caller's scopes, then the client's rate limit, the
//!    tool's, the client's budget (counted in the store replicas share, when there is
//!    one); once the call answers, its output's tokens are charged to the budget;
//! 3. **the layers given**, in the order given;
//! 4. **the cache** of read-only tools' answers, so that what the layers given do holds
//!    for a kept answer as for any other;
//! 5. **the time limit** (`Limit`), innermost: it bounds each run of the tool (a retry
//!    runs again with a time limit of its own) and never a kept answer.
//!
//! Each picks only the tools it has something to do for (a tool with a rate limit, every
//! tool while audit events or metrics are recorded), so a call of a tool none picks runs
//! with no layer at all.

use super::admission::Limits;
use crate::call::error::CallError;
use crate::catalog::Tool;
use crate::layers::{CacheLayer, CallRequest, Next, ResultCache, Stages, ToolAnswer, Tools};
use crate::ops::budget::Budgets;
use crate::ops::watch::Observer;
use futures_util::future::BoxFuture;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::Service;

/// What the registry's own layers are made of.
pub(super) struct Operations {
    pub(super) observer: Observer,
    pub(super) limits: Arc<Limits>,
    pub(super) cache: Arc<ResultCache>,
    /// The time limit of a tool that has none of its own.
    pub(super) default_timeout: Option<Duration>,
}

impl Operations {
    /// Every layer a call goes through, in order: the registry's own around and inside the
    /// layers `given`.
    pub(super) fn around(self, given: Stages) -> Stages {
        let Operations {
            observer,
            limits,
            cache,
            default_timeout,
        } = self;
        let mut stages = Stages::default();
        stages.push(
            Tools::matching(move |_| observer.records()),
            tower::layer::layer_fn(move |next| Record { observer, next }),
        );
        let picker = Arc::clone(&limits);
        stages.push(
            Tools::matching(move |tool| picker.apply_to(tool)),
            tower::layer::layer_fn(move |next| Admit {
                limits: Arc::clone(&limits),
                next,
            }),
        );
        stages.append(given);
        stages.push(
            Tools::matching(|tool| tool.cache().is_some()),
            CacheLayer(cache),
        );
        stages.push(
            Tools::matching(move |tool| limit_of(tool, default_timeout).is_some()),
            tower::layer::layer_fn(|next| Limit { next }),
        );
        stages
    }
}

/// A tool's time limit: its own, else the registry's default.
pub(super) fn limit_of(tool: &Tool, default_timeout: Option<Duration>) -> Option<Duration> {
    tool.timeout().or(default_timeout)
}

/// The answer a layer gives at once.
fn at_once(
    outcome: Result<ToolAnswer, CallError>,
) -> BoxFuture<'static, Result<ToolAnswer, CallError>> {
    Box::pin(std::future::ready(outcome))
}

/// Records each call once it ends: one audit event, the metrics.
struct Record {
    observer: Observer,
    next: Next,
}

impl Service<CallRequest> for Record {
    type Response = ToolAnswer;
    type Error = CallError;
    type Future = BoxFuture<'static, Result<ToolAnswer, CallError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), CallError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: CallRequest) -> Self::Future {
        let watch = self
            .observer
            .watch(call.tool().name(), true, call.arguments(), call.caller());
        let answer = self.next.call(call);
        // A call dropped before it answers (its client cancelled it) drops the watch,
        // which records it as cancelled.
        Box::pin(async move {
            let outcome = answer.await;
            watch.finish(
                outcome.as_ref().err(),
                outcome.as_ref().ok().map(ToolAnswer::value),
            );
            outcome
        })
    }
}

/// Lets a call through when the caller's token permits its tool and the limits and the
/// budget that count it let it through; charges its output to the budget.
struct Admit {
    limits: Arc<Limits>,
    next: Next,
}

impl Service<CallRequest> for Admit {
    type Response = ToolAnswer;
    type Error = CallError;
    type Future = BoxFuture<'static, Result<ToolAnswer, CallError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), CallError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: CallRequest) -> Self::Future {
        let limits = &self.limits;
        // Output tokens are charged only by a budget that counts them.
        let charging = limits
            .budgets
            .as_ref()
            .filter(|budgets| budgets.counts_tokens())
            .map(Arc::clone);
        if let Some(admission) = limits.shared_admission(call.tool(), call.caller()) {
            let admission = match admission {
                Ok(admission) => admission,
                Err(refusal) => return at_once(Err(refusal)),
            };
            let charged = charging.zip(admission.key());
            let mut next = self.next.clone();
            return Box::pin(async move {
                admission.run().await?;
                charge(charged, next.call(call).await)
            });
        }
        let key = match limits.admit(call.tool(), call.caller()) {
            Ok(key) => key,
            Err(refusal) => return at_once(Err(refusal)),
        };
        let answer = self.next.call(call);
        match charging.zip(key) {
            Some(charged) => Box::pin(async move { charge(Some(charged), answer.await) }),
            None => answer,
        }
    }
}

/// Charges the text of an answer to the client's budget, as a model reads it.
fn charge(
    charged: Option<(Arc<Budgets>, String)>,
    outcome: Result<ToolAnswer, CallError>,
) -> Result<ToolAnswer, CallError> {
    if let (Some((budgets, key)), Ok(answer)) = (charged, &outcome) {
        let text = crate::call::result::text_for_model(answer.value(), answer.content());
        let tokens = crate::tokens::count(&text);
        budgets.charge(&key, u64::try_from(tokens).unwrap_or(u64::MAX));
    }
    outcome
}

/// Bounds each run of a tool by its time limit.
struct Limit {
    next: Next,
}

impl Service<CallRequest> for Limit {
    type Response = ToolAnswer;
    type Error = CallError;
    type Future = BoxFuture<'static, Result<ToolAnswer, CallError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), CallError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: CallRequest) -> Self::Future {
        let Some(limit) = call.time_limit() else {
            return self.next.call(call);
        };
        let tool = call.tool_ref().clone();
        let context = call.context().clone();
        let run = self.next.call(call);
        Box::pin(async move { crate::call::within(&tool, limit, &context, run).await })
    }
}
