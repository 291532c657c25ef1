//! Rate limits and budgets kept in a store the replicas share: the same step as
//! `admission`, with each count made atomically in the store, so a client held to 30 calls
//! a second gets 30 across every replica, not 30 on each. A call none of them applies to
//! never waits on the store.

use super::admission::Limits;
use crate::call::caller::Caller;
use crate::call::error::{CallError, Spent};
use crate::catalog::time::Rate;
use crate::catalog::Tool;
use crate::ops::Budget;
use crate::store::{Store, WhenUnreachable};
use std::time::Duration;

/// How long a client refused for an unreachable store is told to wait.
const RETRY_UNREACHABLE: Duration = Duration::from_secs(1);

/// The admission of one call against the shared limits, still to be made.
#[derive(Clone)]
pub(crate) struct SharedAdmission {
    store: Store,
    tool: String,
    /// The client's key, and its rate limit.
    client: Option<(String, Option<Rate>)>,
    /// The tool's rate limit.
    tool_rate: Option<Rate>,
    budget: Option<Budget>,
}

impl Limits {
    /// The admission of a call of `tool` by `caller`, when limits are shared and one
    /// applies to it: scopes are checked now, the counts when it is run.
    pub(super) fn shared_admission(
        &self,
        tool: &Tool,
        caller: &Caller,
    ) -> Option<Result<SharedAdmission, CallError>> {
        let store = self.shared.get()?;
        let client_rate = self.client_limiter.as_ref().map(|limiter| limiter.rate());
        let tool_rate = self.rate_limit_of(tool.name());
        let budget = self.budgets.as_ref().map(|budgets| budgets.budget());
        if client_rate.is_none() && tool_rate.is_none() && budget.is_none() {
            return None;
        }
        if let Some(refusal) = caller.scope_refusal(tool) {
            return Some(Err(refusal));
        }
        let key = (client_rate.is_some() || budget.is_some()).then(|| caller.key());
        Some(Ok(SharedAdmission {
            store: store.clone(),
            tool: tool.name().to_owned(),
            client: key.map(|key| (key, client_rate)),
            tool_rate,
            budget,
        }))
    }
}

impl SharedAdmission {
    /// The client's key, when a limit or a budget per client applies.
    pub(super) fn key(&self) -> Option<String> {
        self.client.as_ref().map(|(key, _)| key.clone())
    }

    /// Counts the call, as `admission` does: the client's rate, the tool's, the client's
    /// budget, in that order. A store that does not answer admits the call or refuses it,
    /// as the store was told to.
    pub(crate) async fn run(&self) -> Result<(), CallError> {
        match self.count().await {
            Ok(admitted) => admitted,
            Err(error) => match self.store.when_unreachable {
                WhenUnreachable::Admit => {
                    tracing::warn!(
                        %error,
                        tool = %self.tool,
                        "the store of rate limits did not answer; the call runs unlimited"
                    );
                    Ok(())
                }
                _ => {
                    tracing::warn!(
                        %error,
                        tool = %self.tool,
                        "the store of rate limits did not answer; the call is refused"
                    );
                    Err(CallError::LimitsUnreachable {
                        tool: self.tool.clone(),
                        retry_after: RETRY_UNREACHABLE,
                    })
                }
            },
        }
    }

    async fn count(&self) -> Result<Result<(), CallError>, crate::tasks::StoreError> {
        let backend = &self.store.backend;
        let refused = |client: bool, rate: Rate, retry_after: Duration| CallError::RateLimited {
            tool: self.tool.clone(),
            client,
            rate,
            retry_after,
        };
        if let Some((key, Some(rate))) = &self.client {
            if let Err(wait) = backend.rate_check(&format!("client:{key}"), *rate).await? {
                return Ok(Err(refused(true, *rate, wait)));
            }
        }
        if let Some(rate) = self.tool_rate {
            if let Err(wait) = backend
                .rate_check(&format!("tool:{}", self.tool), rate)
                .await?
            {
                return Ok(Err(refused(false, rate, wait)));
            }
        }
        if let (Some(budget), Some((key, _))) = (self.budget, &self.client) {
            let (calls, tokens) = (budget.most_calls(), budget.most_output_tokens());
            if let Err((used_calls, used_tokens)) = backend.budget_admit(key, calls, tokens).await?
            {
                let (spent, used, limit) = match tokens.filter(|most| used_tokens >= *most) {
                    Some(most) => (Spent::OutputTokens, used_tokens, most),
                    None => (Spent::Calls, used_calls, calls.unwrap_or(0)),
                };
                return Ok(Err(CallError::BudgetExceeded {
                    tool: self.tool.clone(),
                    spent,
                    used,
                    limit,
                }));
            }
        }
        Ok(Ok(()))
    }
}
