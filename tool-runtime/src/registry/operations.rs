//! What a registry does around every call, as layers of the same kind an application
//! gives, and the one order a call goes through them all:
//!
//! 1. **the record** (`record`): one audit event and the metrics per call. Outermost, so it
//!    records what every layer inside it refused;
//! 2. **admission** (`admit`): the caller's scopes, then the client's rate limit, the
//!    tool's, the client's budget. What can be decided when the call arrives is decided
//!    then (`admission`), so that a refusal is answered at once, with its HTTP status, and
//!    never becomes a task; this layer finishes the rest: the counts kept in the store
//!    replicas share, and, once the call answers, its tokens charged to the budget;
//! 3. **the layers given**, in the order given;
//! 4. **the cache** of read-only tools' answers, so that what the layers given do holds
//!    for a kept answer as for any other;
//! 5. **the time limit** (`limit`), innermost, around the run of the tool; never around
//!    a kept answer.
//!
//! Each picks only the tools it has something to do for (a tool with a time limit, every
//! tool while audit events or metrics are recorded), so a call of a tool none picks runs
//! with no layer at all. They are plain functions of a call and the rest of its way, always
//! ready, so no call waits on another to be handed to them.

use super::admission::{Admitted, Limits};
use crate::call::error::CallError;
use crate::catalog::Tool;
use crate::layers::{
    cached, AnswerFuture, CallRequest, Next, ResultCache, Stages, ToolAnswer, Tools,
};
use crate::ops::budget::Budgets;
use crate::ops::watch::Observer;
use std::sync::Arc;
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
            move |call, next| record(observer, call, next),
        );
        let picker = Arc::clone(&limits);
        stages.push_free(
            Tools::matching(move |tool| picker.finish_later(tool)),
            move |call, next| admit(&limits, call, next),
        );
        stages.append(given);
        stages.push_free(
            Tools::matching(|tool| tool.cache().is_some()),
            move |call, next| cached(&cache, call, next),
        );
        stages.push_free(
            Tools::matching(move |tool| limit_of(tool, default_timeout).is_some()),
            limit,
        );
        stages
    }
}

/// A tool's time limit: its own, else the registry's default.
pub(super) fn limit_of(tool: &Tool, default_timeout: Option<Duration>) -> Option<Duration> {
    tool.timeout().or(default_timeout)
}

/// Records each call once it ends: one audit event, the metrics.
fn record(observer: Observer, call: CallRequest, mut next: Next) -> AnswerFuture {
    let watch = observer.watch(call.tool().name(), true, call.arguments(), call.caller());
    let answer = next.call(call);
    // A call dropped before it answers (its client cancelled it) drops the watch, which
    // records it as cancelled.
    Box::pin(async move {
        let outcome = answer.await;
        watch.finish(outcome.as_ref().err(), || {
            outcome.as_ref().map_or(0, ToolAnswer::output_len)
        });
        outcome
    })
}

/// Finishes a call's admission: counts it in the store replicas share (when that is where
/// its limits are kept) before it goes on, and charges its answer's tokens to the client's
/// budget. A call that arrived with nothing decided is counted in the store now if one
/// applies to it (a store can be attached after the call arrived), so that nothing a shared
/// limit counts goes unlimited.
fn admit(limits: &Limits, call: CallRequest, mut next: Next) -> AnswerFuture {
    let (shared, key) = match call.decided::<Admitted>() {
        Some(admitted) => (admitted.shared.clone(), admitted.key.clone()),
        None => match limits.shared_admission(call.tool(), call.caller()) {
            None => return next.call(call),
            Some(Err(refusal)) => return Box::pin(std::future::ready(Err(refusal))),
            Some(Ok(shared)) => (Some(shared), None),
        },
    };
    // Output tokens are charged only by a budget that counts them.
    let charged = limits
        .budgets
        .as_ref()
        .filter(|budgets| budgets.counts_tokens())
        .map(Arc::clone)
        .zip(key);
    if shared.is_none() && charged.is_none() {
        return next.call(call);
    }
    Box::pin(async move {
        if let Some(shared) = shared {
            shared.run().await?;
        }
        charge(charged, next.call(call).await)
    })
}

/// Charges the text of an answer to the client's budget, as a model reads it.
fn charge(
    charged: Option<(Arc<Budgets>, String)>,
    outcome: Result<ToolAnswer, CallError>,
) -> Result<ToolAnswer, CallError> {
    if let (Some((budgets, key)), Ok(answer)) = (charged, &outcome) {
        let text = crate::call::result::text_for_model(answer.content(), || answer.value());
        let tokens = crate::tokens::count(&text);
        budgets.charge(&key, u64::try_from(tokens).unwrap_or(u64::MAX));
    }
    outcome
}

/// Bounds the run of a tool by its time limit.
fn limit(call: CallRequest, mut next: Next) -> AnswerFuture {
    let Some(limit) = call.time_limit() else {
        return next.call(call);
    };
    let tool = call.tool_ref().clone();
    let context = call.context().clone();
    let run = next.call(call);
    Box::pin(async move { crate::call::within(&tool, limit, &context, run).await })
}
