//! Whether a call may run: its caller's token must permit the tool, and the client's rate
//! limit, the tool's own and the client's budget must let it through. What the admission
//! layer (`operations`) asks of every call of a tool it applies to, whatever way the call
//! came (a protocol, REST, a direct call).

use super::Registry;
use crate::call::caller::Caller;
use crate::call::error::CallError;
use crate::call::result::ToolResult;
use crate::call::runnable::ToolRef;
use crate::catalog::time::Rate;
use crate::catalog::Tool;
use crate::ops::budget::Budgets;
use crate::ops::rate::{ClientLimiter, Limiter};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

/// The limits a registry holds its calls to, shared with the admission layer.
pub(crate) struct Limits {
    /// The rate limits of tools, by name; they change as tools come and go.
    rate_limits: RwLock<HashMap<String, Arc<Limiter>>>,
    /// The rate limit of each client, when there is one.
    pub(super) client_limiter: Option<ClientLimiter>,
    /// What each client may spend, and has spent, when there is a budget.
    pub(super) budgets: Option<Arc<Budgets>>,
    /// The store shared with other replicas, when there is one: the counts are kept there.
    pub(super) shared: OnceLock<crate::store::Store>,
}

impl Limits {
    pub(super) fn new(client_limiter: Option<ClientLimiter>, budgets: Option<Budgets>) -> Self {
        Limits {
            rate_limits: RwLock::default(),
            client_limiter,
            budgets: budgets.map(Arc::new),
            shared: OnceLock::new(),
        }
    }

    /// Whether a call of `tool` has anything to be admitted by: scopes its caller's token
    /// must grant, or a limit or budget that counts it.
    pub(super) fn apply_to(&self, tool: &Tool) -> bool {
        !tool.scopes().is_empty()
            || self.client_limiter.is_some()
            || self.budgets.is_some()
            || crate::sync::read(&self.rate_limits).contains_key(tool.name())
    }

    /// The rate limit the tool `name` is held to now, if any.
    pub(super) fn rate_limit_of(&self, name: &str) -> Option<Rate> {
        crate::sync::read(&self.rate_limits)
            .get(name)
            .map(|limiter| limiter.rate())
    }

    /// Limits the tool `name` to `rate`, or lifts its limit.
    pub(super) fn set_rate_limit(&self, name: &str, rate: Option<Rate>) {
        let mut limits = crate::sync::write(&self.rate_limits);
        match rate {
            Some(rate) => limits.insert(name.to_owned(), Arc::new(Limiter::new(rate))),
            None => limits.remove(name),
        };
    }

    /// Refuses a call its caller's token does not permit, or that its client's rate limit,
    /// its tool's, or its client's budget does not let through, checked in that order.
    /// Scopes come first, so a call its token does not permit spends no allowance; one each
    /// limit lets through has spent that limit's allowance even when a later one refuses it.
    /// Admitted, it gives the client's key when a limit or a budget per client needs it
    /// (worked out once: the call's output is charged to it).
    pub(super) fn admit(&self, tool: &Tool, caller: &Caller) -> Result<Option<String>, CallError> {
        if let Some(refusal) = caller.scope_refusal(tool) {
            return Err(refusal);
        }
        let refused = |client: bool, rate: Rate, retry_after: Duration| CallError::RateLimited {
            tool: tool.name().to_owned(),
            client,
            rate,
            retry_after,
        };
        let client_limiter = self.client_limiter.as_ref();
        let key = (client_limiter.is_some() || self.budgets.is_some()).then(|| caller.key());
        if let (Some(limiter), Some(key)) = (client_limiter, &key) {
            limiter
                .check(key)
                .map_err(|wait| refused(true, limiter.rate(), wait))?;
        }
        let limits = crate::sync::read(&self.rate_limits);
        if let Some(limiter) = limits.get(tool.name()) {
            limiter
                .check()
                .map_err(|wait| refused(false, limiter.rate(), wait))?;
        }
        drop(limits);
        if let (Some(budgets), Some(key)) = (&self.budgets, &key) {
            budgets
                .admit(key)
                .map_err(|(spent, used, limit)| CallError::BudgetExceeded {
                    tool: tool.name().to_owned(),
                    spent,
                    used,
                    limit,
                })?;
        }
        Ok(key)
    }
}

impl Registry {
    /// A tool's rate limit: the one set on the builder, else the tool's own.
    pub(super) fn rate_for(&self, tool: &Tool) -> Option<Rate> {
        self.rate_overrides
            .get(tool.name())
            .copied()
            .or(tool.rate())
    }

    /// Limits the tool `name` to `rate`, or lifts its limit.
    pub(super) fn set_rate_limit(&self, name: &str, rate: Option<Rate>) {
        self.limits.set_rate_limit(name, rate);
    }

    /// A call refused before it reached its layers (`tool` is `None` when the name is
    /// unknown), recorded as every call is.
    pub(super) fn refused(
        &self,
        name: &str,
        tool: Option<ToolRef>,
        input: Value,
        caller: &Caller,
        error: CallError,
    ) -> ToolResult {
        let watch = self.observer.watch(name, tool.is_some(), &input, caller);
        let result = ToolResult::new(name.to_owned(), input, tool, Err(error));
        watch.finish(result.error(), result.output());
        result
    }
}
