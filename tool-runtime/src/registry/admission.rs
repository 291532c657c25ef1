//! Whether a call may run: its caller's token must permit the tool, and the client's rate
//! limit, the tool's own and the client's budget must let it through. Decided when the call
//! arrives, whatever way it came (a protocol, REST, a direct call), so that a refusal is
//! answered at once; what is counted in a store replicas share, and the answer's tokens,
//! the admission layer (`operations`) finishes.

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

/// What admission decided when a call arrived, for the admission layer to finish: the
/// client's key (the answer's tokens are charged to it), and the counts still to make in
/// the store replicas share.
pub(crate) struct Admitted {
    pub(super) key: Option<String>,
    pub(super) shared: Option<super::shared_limits::SharedAdmission>,
}

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

    /// Whether a limit or a budget counts calls of `tool`.
    fn count(&self, tool: &Tool) -> bool {
        self.client_limiter.is_some()
            || self.budgets.is_some()
            || crate::sync::read(&self.rate_limits).contains_key(tool.name())
    }

    /// Whether a call of `tool` has admission left to finish once it runs: counts to make
    /// in a shared store, or output tokens to charge.
    pub(super) fn finish_later(&self, tool: &Tool) -> bool {
        self.budgets
            .as_ref()
            .is_some_and(|budgets| budgets.counts_tokens())
            || (self.shared.get().is_some() && self.count(tool))
    }

    /// Admits or refuses a call of `tool` by `caller` now: the scopes, then the limits and
    /// the budget kept here, or, with a shared store, the scopes now and the counts once the
    /// call runs. Gives what is left for the admission layer, when anything is.
    pub(super) fn admit_now(
        &self,
        tool: &Tool,
        caller: &Caller,
    ) -> Result<Option<Admitted>, CallError> {
        if let Some(shared) = self.shared_admission(tool, caller) {
            let shared = shared?;
            return Ok(Some(Admitted {
                key: shared.key(),
                shared: Some(shared),
            }));
        }
        let key = self.admit(tool, caller)?;
        Ok(key.map(|key| Admitted {
            key: Some(key),
            shared: None,
        }))
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
    fn admit(&self, tool: &Tool, caller: &Caller) -> Result<Option<String>, CallError> {
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

    /// A call refused when it arrived (`tool` is `None` when the name is unknown), recorded
    /// as every call is.
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
        // A refusal has no output.
        watch.finish(result.error(), || 0);
        result
    }
}
