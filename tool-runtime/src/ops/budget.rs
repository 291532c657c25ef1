//! Budgets per client: how many calls, and how many output tokens, one session (or one
//! authenticated subject, or one address) may spend, so an agent stuck in a loop stops
//! instead of running up costs.

pub use crate::call::error::Spent;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What each client may spend: calls, and tokens of tool output (what the outputs cost
/// the model that reads them, counted with a real tokenizer). Past either, a call does not
/// run and is answered an error result whose status is `budget_exceeded`. A client is its
/// [`Caller::key`](crate::context::Caller::key): a stdio process, an HTTP session, or a
/// token's subject; one idle for an hour starts afresh.
///
/// ```
/// use tool_runtime::ops::Budget;
/// use tool_runtime::{tool, Registry};
///
/// /// Say hello.
/// #[tool]
/// fn hello() -> &'static str { "hello" }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::builder().budget(Budget::default().calls(2)).build().unwrap();
/// registry.call("hello", serde_json::json!({})).await;
/// registry.call("hello", serde_json::json!({})).await;
/// let third = registry.call("hello", serde_json::json!({})).await;
/// assert_eq!(third.error().unwrap().status(), "budget_exceeded");
/// # });
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    calls: Option<u64>,
    output_tokens: Option<u64>,
}

impl Budget {
    /// At most `calls` tool calls per client (`maxTurns`).
    pub fn calls(mut self, calls: u64) -> Self {
        self.calls = Some(calls);
        self
    }

    /// At most `tokens` tokens of tool output per client (`maxTotalTokens`). The call that
    /// goes past it is answered whole; the next is refused.
    pub fn output_tokens(mut self, tokens: u64) -> Self {
        self.output_tokens = Some(tokens);
        self
    }

    /// Whether it limits anything.
    pub(crate) fn limits(&self) -> bool {
        self.calls.is_some() || self.output_tokens.is_some()
    }

    /// Whether it counts output tokens.
    pub(crate) fn counts_tokens(&self) -> bool {
        self.output_tokens.is_some()
    }

    /// The most calls per client, if limited.
    pub(crate) fn most_calls(&self) -> Option<u64> {
        self.calls
    }

    /// The most output tokens per client, if limited.
    pub(crate) fn most_output_tokens(&self) -> Option<u64> {
        self.output_tokens
    }
}

/// What one client has spent.
struct Usage {
    calls: u64,
    output_tokens: u64,
    last: Instant,
}

/// How long a client may stay idle before what it spent is forgotten.
const FORGET_AFTER: Duration = Duration::from_secs(3600);

/// The most clients whose spending is kept: past it, those idle longest are forgotten (a
/// client keyed by its session makes a new key with each session, and sessions are
/// cheap to make).
const MOST_CLIENTS: usize = 65_536;

/// How many admissions pass between two sweeps of idle clients.
const SWEEP_EVERY: u32 = 4096;

/// The budget, and what each client has spent of it.
pub(crate) struct Budgets {
    budget: Budget,
    spent: Mutex<HashMap<String, Usage>>,
    admissions: AtomicU32,
    /// The store what clients spend is counted in, when replicas share it.
    shared: std::sync::OnceLock<crate::store::Store>,
}

/// Forgets the quarter of the clients idle longest, at once, so that a table at its bound
/// is sorted once per many new clients rather than once per client.
fn forget_idlest(spent: &mut HashMap<String, Usage>) {
    let mut last_seen: Vec<Instant> = spent.values().map(|usage| usage.last).collect();
    let cut = last_seen.len() / 4;
    let (_, threshold, _) = last_seen.select_nth_unstable(cut);
    let threshold = *threshold;
    spent.retain(|_, usage| usage.last > threshold);
}

impl Budgets {
    pub(crate) fn new(budget: Budget) -> Self {
        Budgets {
            budget,
            spent: Mutex::new(HashMap::new()),
            admissions: AtomicU32::new(0),
            shared: std::sync::OnceLock::new(),
        }
    }

    /// The budget each client has.
    pub(crate) fn budget(&self) -> Budget {
        self.budget
    }

    /// Counts what clients spend in `store` from now on.
    pub(crate) fn share(&self, store: crate::store::Store) {
        let _ = self.shared.set(store);
    }

    /// Whether output tokens must be counted after each call.
    pub(crate) fn counts_tokens(&self) -> bool {
        self.budget.counts_tokens()
    }

    /// Admits one call of the client `key`, counting it; refused, with what was spent and
    /// the limit, when the client has spent its calls or its output tokens.
    pub(crate) fn admit(&self, key: &str) -> Result<(), (Spent, u64, u64)> {
        let now = Instant::now();
        let mut spent = crate::sync::lock(&self.spent);
        if self.admissions.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            spent.retain(|_, usage| now.duration_since(usage.last) < FORGET_AFTER);
        }
        // A client seen before costs no copy of its key.
        if !spent.contains_key(key) {
            if spent.len() >= MOST_CLIENTS {
                forget_idlest(&mut spent);
            }
            let usage = Usage {
                calls: 0,
                output_tokens: 0,
                last: now,
            };
            spent.insert(key.to_owned(), usage);
        }
        let Some(usage) = spent.get_mut(key) else {
            unreachable!("inserted above")
        };
        usage.last = now;
        if let Some(limit) = self
            .budget
            .output_tokens
            .filter(|limit| usage.output_tokens >= *limit)
        {
            return Err((Spent::OutputTokens, usage.output_tokens, limit));
        }
        if let Some(limit) = self.budget.calls.filter(|limit| usage.calls >= *limit) {
            return Err((Spent::Calls, usage.calls, limit));
        }
        usage.calls += 1;
        Ok(())
    }

    /// Counts `tokens` of output against the client `key` (in the shared store, when there
    /// is one: written after the call is answered, without holding it up).
    pub(crate) fn charge(&self, key: &str, tokens: u64) {
        if let Some(store) = self.shared.get() {
            store.backend.later(crate::store::Later::Charge {
                key: key.to_owned(),
                tokens,
            });
            return;
        }
        let mut spent = crate::sync::lock(&self.spent);
        if let Some(usage) = spent.get_mut(key) {
            usage.output_tokens = usage.output_tokens.saturating_add(tokens);
        }
    }
}

impl std::fmt::Debug for Budgets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budgets")
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}
