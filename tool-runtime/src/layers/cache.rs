//! Answers of read-only tools kept and given again (`#[tool(read_only, cache = "30s")]`):
//! the innermost layer of a cached tool. Bounded in entries and bytes (least recently used
//! first out); concurrent identical calls wait for the one that runs; errors are never kept.
//! With a store the replicas share, an answer one replica made is every replica's, and one
//! replica at a time runs the tool for a key (`shared`).

use super::request::CallRequest;
use super::route::Next;
use super::ToolAnswer;
use crate::call::content::AnswerBlocks;
use crate::call::error::CallError;
use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;
use tokio::time::Instant;

/// How much a registry's cache of answers may hold; past either bound, the answers used
/// least recently go first.
///
/// ```
/// use tool_runtime::layers::CacheLimits;
///
/// let limits = CacheLimits::default().entries(1_000).bytes(8 << 20);
/// # let _ = limits;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheLimits {
    entries: NonZeroUsize,
    bytes: usize,
}

impl Default for CacheLimits {
    /// 10,000 answers and 64 MiB.
    fn default() -> Self {
        CacheLimits {
            entries: NonZeroUsize::new(10_000).unwrap_or(NonZeroUsize::MIN),
            bytes: 64 << 20,
        }
    }
}

impl CacheLimits {
    /// At most `count` answers (at least one).
    pub fn entries(mut self, count: usize) -> Self {
        self.entries = NonZeroUsize::new(count).unwrap_or(NonZeroUsize::MIN);
        self
    }

    /// At most `bytes` of answers and their keys, as JSON. An answer larger than this is
    /// not kept.
    pub fn bytes(mut self, bytes: usize) -> Self {
        self.bytes = bytes;
        self
    }
}

/// One kept answer.
struct Kept {
    answer: ToolAnswer,
    expires: Instant,
    bytes: usize,
    tool: Arc<str>,
}

/// What the cache holds: the answers, and the calls running now whose answer others wait
/// for.
struct Held {
    answers: lru::LruCache<String, Kept>,
    bytes: usize,
    running: HashMap<String, Arc<Notify>>,
}

/// A registry's kept answers.
pub(crate) struct ResultCache {
    limits: CacheLimits,
    held: Mutex<Held>,
    /// Whether hits, misses and evictions are counted through the `metrics` facade.
    metrics: bool,
    /// The store shared with other replicas, once there is one.
    shared: std::sync::OnceLock<crate::store::Store>,
}

/// The metric names, as Prometheus shows them.
mod names {
    /// Calls of cached tools, by `tool` and `outcome` (`hit` or `miss`).
    pub(super) const LOOKUPS: &str = "mcp_tool_cache_lookups_total";
    /// Answers dropped to stay within the cache's bounds, by `tool`.
    pub(super) const EVICTIONS: &str = "mcp_tool_cache_evictions_total";
}

impl ResultCache {
    pub(crate) fn new(limits: CacheLimits, metrics: bool) -> Self {
        ResultCache {
            limits,
            held: Mutex::new(Held {
                answers: lru::LruCache::unbounded(),
                bytes: 0,
                running: HashMap::new(),
            }),
            metrics,
            shared: std::sync::OnceLock::new(),
        }
    }

    /// Shares answers with the other replicas through `store` from now on.
    pub(crate) fn share(&self, store: crate::store::Store) {
        let _ = self.shared.set(store);
    }

    /// Forgets every answer (the list of tools changed: a tool may be another now).
    pub(crate) fn forget_all(&self) {
        let mut held = crate::sync::lock(&self.held);
        held.answers.clear();
        held.bytes = 0;
    }

    /// How many answers are kept now.
    #[cfg(test)]
    fn len(&self) -> usize {
        crate::sync::lock(&self.held).answers.len()
    }

    fn count(&self, name: &'static str, tool: &str, outcome: Option<&'static str>) {
        if !self.metrics {
            return;
        }
        let tool = metrics::SharedString::from(Arc::<str>::from(tool));
        match outcome {
            Some(outcome) => {
                metrics::counter!(name, "tool" => tool, "outcome" => outcome).increment(1)
            }
            None => metrics::counter!(name, "tool" => tool).increment(1),
        }
    }

    /// The answer kept under `key`, when it is still fresh; else, whether a call is running
    /// for it (to wait for), or that this call is to run (and is now running).
    fn look_up(&self, key: &str, now: Instant) -> Lookup {
        let mut held = crate::sync::lock(&self.held);
        if let Some(kept) = held.answers.get(key) {
            if kept.expires > now {
                return Lookup::Hit(kept.answer.clone());
            }
            if let Some(stale) = held.answers.pop(key) {
                held.bytes -= stale.bytes;
            }
        }
        if let Some(running) = held.running.get(key) {
            let running = Arc::clone(running);
            return Lookup::Wait(running);
        }
        held.running.insert(key.to_owned(), Arc::new(Notify::new()));
        Lookup::Run
    }

    /// Whether `running` is still the run of `key`.
    fn is_running(&self, key: &str, running: &Arc<Notify>) -> bool {
        let held = crate::sync::lock(&self.held);
        held.running
            .get(key)
            .is_some_and(|now| Arc::ptr_eq(now, running))
    }

    /// Ends the run of `key`: keeps `answer` (if any) until `expires`, and wakes those
    /// waiting for it.
    fn end_run(&self, key: &str, kept: Option<(ToolAnswer, Instant, &str)>) {
        let mut evicted = Vec::new();
        let mut held = crate::sync::lock(&self.held);
        let done = held.running.remove(key);
        if let Some((answer, expires, tool)) = kept {
            // What it holds: the value a tool gave, its blocks (whose value is not made).
            let value = answer.value.as_given().map_or(0, crate::schema::json_len);
            let blocks = answer.content.as_ref().map_or(0, AnswerBlocks::json_len);
            let bytes = key.len() + value + blocks;
            if bytes <= self.limits.bytes {
                let kept = Kept {
                    answer,
                    expires,
                    bytes,
                    tool: Arc::from(tool),
                };
                if let Some(replaced) = held.answers.put(key.to_owned(), kept) {
                    held.bytes -= replaced.bytes;
                }
                held.bytes += bytes;
                while held.answers.len() > self.limits.entries.get()
                    || held.bytes > self.limits.bytes
                {
                    let Some((_, out)) = held.answers.pop_lru() else {
                        break;
                    };
                    held.bytes -= out.bytes;
                    evicted.push(out.tool);
                }
            }
        }
        drop(held);
        if let Some(done) = done {
            done.notify_waiters();
        }
        for tool in &evicted {
            self.count(names::EVICTIONS, tool, None);
        }
    }
}

/// What a look-up found.
enum Lookup {
    Hit(ToolAnswer),
    /// Another call with the same key is running: wait for it to end, then look again.
    Wait(Arc<Notify>),
    /// This call runs; those waiting for it are woken when it ends.
    Run,
}

/// Ends a run when the call running it is dropped (cancelled, or stopped by an outer
/// layer's time limit), so those waiting look again rather than wait forever.
struct RunGuard<'a> {
    cache: &'a ResultCache,
    key: &'a str,
    armed: bool,
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.cache.end_run(self.key, None);
        }
    }
}

/// The cache in front of the rest of a call's way (`next`): the registry's innermost
/// step but the time limit.
pub(crate) fn cached(
    cache: &Arc<ResultCache>,
    call: CallRequest,
    next: Next,
) -> super::AnswerFuture {
    Box::pin(answer(Arc::clone(cache), next, call))
}

/// The key of a call: the tool (and its version), who asked (unless the tool's answers are
/// the same for everyone), and the arguments in canonical JSON (so key order and spacing
/// do not matter).
fn key_of(call: &CallRequest, same_for_everyone: bool) -> String {
    let tool = call.tool();
    let version = tool.location().map_or("", |location| location.version);
    let subject = match same_for_everyone {
        true => "",
        false => call.caller().subject().unwrap_or(""),
    };
    let arguments = crate::export::canonical::to_string(call.arguments());
    format!(
        "{}\u{0}{version}\u{0}{subject}\u{0}{arguments}",
        tool.name()
    )
}

/// The kept answer of `call`, or its answer once run (and kept).
async fn answer(
    cache: Arc<ResultCache>,
    mut inner: Next,
    call: CallRequest,
) -> Result<ToolAnswer, CallError> {
    let Some(policy) = call.tool().cache() else {
        return tower::Service::call(&mut inner, call).await;
    };
    let key = key_of(&call, policy.is_same_for_everyone());
    // Cheap to keep (a pointer, or a reference count): the name is needed once the call
    // has been handed over.
    let tool = call.tool.clone();
    loop {
        match cache.look_up(&key, Instant::now()) {
            Lookup::Hit(mut answer) => {
                cache.count(names::LOOKUPS, tool.name(), Some("hit"));
                answer.cached = true;
                return Ok(answer);
            }
            Lookup::Wait(running) => {
                let ended = running.notified();
                tokio::pin!(ended);
                // Registered, then looked at again: a run that ended in between is seen.
                ended.as_mut().enable();
                if cache.is_running(&key, &running) {
                    ended.await;
                }
            }
            Lookup::Run => {
                let mut guard = RunGuard {
                    cache: &cache,
                    key: &key,
                    armed: true,
                };
                let (outcome, kept_for) = match cache.shared.get() {
                    Some(store) => super::shared::answer(store, &key, policy, inner, call).await,
                    None => {
                        let outcome = tower::Service::call(&mut inner, call).await;
                        (outcome, policy.ttl())
                    }
                };
                guard.armed = false;
                let hit = matches!(&outcome, Ok(answer) if answer.cached);
                let outcome_name = if hit { "hit" } else { "miss" };
                cache.count(names::LOOKUPS, tool.name(), Some(outcome_name));
                let kept = match &outcome {
                    Ok(answer) => Some((answer.clone(), Instant::now() + kept_for, tool.name())),
                    Err(_) => None,
                };
                cache.end_run(&key, kept);
                return outcome;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str) -> ToolAnswer {
        ToolAnswer::new(serde_json::json!(text))
    }

    fn keep(cache: &ResultCache, key: &str, text: &str) {
        assert!(matches!(cache.look_up(key, Instant::now()), Lookup::Run));
        let expires = Instant::now() + std::time::Duration::from_secs(60);
        cache.end_run(key, Some((answer(text), expires, "t")));
    }

    #[tokio::test]
    async fn the_least_recently_used_answer_goes_first_past_the_bounds() {
        let cache = ResultCache::new(CacheLimits::default().entries(2), false);
        keep(&cache, "a", "1");
        keep(&cache, "b", "2");
        // `a` used again: `b` is now the least recently used.
        assert!(matches!(cache.look_up("a", Instant::now()), Lookup::Hit(_)));
        keep(&cache, "c", "3");
        assert_eq!(cache.len(), 2);
        assert!(matches!(cache.look_up("a", Instant::now()), Lookup::Hit(_)));
        assert!(matches!(cache.look_up("b", Instant::now()), Lookup::Run));
    }

    #[tokio::test]
    async fn answers_past_the_byte_bound_push_others_out_and_one_too_big_is_not_kept() {
        // Each answer here is its key (1 byte) and a string of 102 bytes as JSON.
        let cache = ResultCache::new(CacheLimits::default().bytes(250), false);
        keep(&cache, "a", &"x".repeat(100));
        keep(&cache, "b", &"y".repeat(100));
        keep(&cache, "c", &"z".repeat(100));
        assert_eq!(cache.len(), 2);
        assert!(matches!(cache.look_up("a", Instant::now()), Lookup::Run));
        keep(&cache, "d", &"w".repeat(300));
        assert!(matches!(cache.look_up("d", Instant::now()), Lookup::Run));
        assert_eq!(crate::sync::lock(&cache.held).bytes, 206);
    }

    #[tokio::test]
    async fn an_answer_of_blocks_is_sized_by_its_blocks_without_its_value_made() {
        use crate::call::content::Content;
        use crate::call::output_value::tests::made;
        let cache = ResultCache::new(CacheLimits::default(), false);
        assert!(matches!(cache.look_up("k", Instant::now()), Lookup::Run));
        let blocks = ToolAnswer::from_content(vec![Content::text("a dot")]);
        let expires = Instant::now() + std::time::Duration::from_secs(60);
        let before = made();
        cache.end_run("k", Some((blocks, expires, "t")));
        assert_eq!(made(), before, "the blocks were read as JSON to be kept");
        // The key (1 byte) and `[{"type":"text","text":"a dot"}]` (32 bytes).
        assert_eq!(crate::sync::lock(&cache.held).bytes, 33);
        let Lookup::Hit(kept) = cache.look_up("k", Instant::now()) else {
            panic!("the answer was not kept");
        };
        assert_eq!(kept.content(), Some(&[Content::text("a dot")][..]));
    }
}
