//! What a registry does around every call, as layers of the same kind an application
//! gives, and the one order a call goes through them all:
//!
//! 1. **the record** (`Record`): one audit event and the metrics per call. Outermost, so it
//!    records what every layer inside it refused;
//! 2. **admission** (`Admit`): the caller's scopes, then the client's rate limit, the
//!    tool's, the client's budget. What can be decided when the call arrives is decided
//!    then (`admission`), so that a refusal is answered at once, with its HTTP status, and
//!    never becomes a task; this layer finishes the rest: the counts kept in the store
//!    replicas share, and, once the call answers, its tokens charged to the budget;
//! 3. **the layers given**, in the order given;
//! 4. **the cache** of read-only tools' answers, so that what the layers given do holds
//!    for a kept answer as for any other;
//! 5. **the time limit** (`Limit`), innermost, around the run of the tool; never around
//!    a kept answer.
//!
//! Each picks only the tools it has something to do for (a tool with a time limit, every
//! tool while audit events or metrics are recorded), so a call of a tool none picks runs
//! with no layer at all. They are always ready and cheap to clone, so no call waits on
//! another to be handed to them.

use super::admission::{Admitted, Limits};
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
        stages.push_free(
            Tools::matching(move |_| observer.records()),
            tower::layer::layer_fn(move |next| Record { observer, next }),
        );
        let picker = Arc::clone(&limits);
        stages.push_free(
            Tools::matching(move |tool| picker.finish_later(tool)),
            tower::layer::layer_fn(move |next| Admit {
                limits: Arc::clone(&limits),
                next,
            }),
        );
        stages.append(given);
        stages.push_free(
            Tools::matching(|tool| tool.cache().is_some()),
            CacheLayer(cache),
        );
        stages.push_free(
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

/// Records each call once it ends: one audit event, the metrics.
#[derive(Clone)]
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

/// Finishes a call's admission: counts it in the store replicas share (when that is where
/// its limits are kept) before it goes on, and charges its answer's tokens to the client's
/// budget.
#[derive(Clone)]
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
        let Some(admitted) = call.decided::<Admitted>() else {
            return self.counted_now(call);
        };
        // Output tokens are charged only by a budget that counts them.
        let charged = self
            .limits
            .budgets
            .as_ref()
            .filter(|budgets| budgets.counts_tokens())
            .map(Arc::clone)
            .zip(admitted.key.clone());
        if let Some(shared) = admitted.shared.clone() {
            let mut next = self.next.clone();
            return Box::pin(async move {
                shared.run().await?;
                charge(charged, next.call(call).await)
            });
        }
        let answer = self.next.call(call);
        match charged {
            Some(charged) => Box::pin(async move { charge(Some(charged), answer.await) }),
            None => answer,
        }
    }
}

impl Admit {
    /// A call that arrived with nothing left to admit: counted in the store replicas share
    /// now if one applies to it (a store can be attached after the call arrived), so that
    /// nothing goes unlimited that a shared limit counts.
    fn counted_now(
        &mut self,
        call: CallRequest,
    ) -> BoxFuture<'static, Result<ToolAnswer, CallError>> {
        match self.limits.shared_admission(call.tool(), call.caller()) {
            None => self.next.call(call),
            Some(Err(refusal)) => Box::pin(std::future::ready(Err(refusal))),
            Some(Ok(shared)) => {
                let mut next = self.next.clone();
                Box::pin(async move {
                    shared.run().await?;
                    next.call(call).await
                })
            }
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

/// Bounds the run of a tool by its time limit.
#[derive(Clone)]
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
