//! Rate limits: a tool's (all its callers together) and a client's (all its requests), each
//! a GCRA limiter of `governor`: up to `count` at once, then `count` per period, steadily.

use crate::catalog::time::Rate;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota};
use std::fmt;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// One limiter for one thing (a tool): a call either passes or is told how long to wait.
pub(crate) struct Limiter {
    rate: Rate,
    limiter: DefaultDirectRateLimiter,
}

impl Limiter {
    pub(crate) fn new(rate: Rate) -> Self {
        Limiter {
            rate,
            limiter: DefaultDirectRateLimiter::direct(quota(rate)),
        }
    }

    /// The rate it keeps.
    pub(crate) fn rate(&self) -> Rate {
        self.rate
    }

    /// Passes one, or says how long until one would pass.
    pub(crate) fn check(&self) -> Result<(), Duration> {
        self.limiter.check().map_err(wait)
    }
}

/// One limiter per client, by key. Keys of clients gone quiet are dropped now and then, so
/// many short-lived clients do not grow the table without bound.
pub(crate) struct ClientLimiter {
    rate: Rate,
    limiter: DefaultKeyedRateLimiter<String>,
    checks: AtomicU32,
}

/// How many checks pass between two sweeps of the quiet clients.
const SWEEP_EVERY: u32 = 4096;

impl ClientLimiter {
    pub(crate) fn new(rate: Rate) -> Self {
        ClientLimiter {
            rate,
            limiter: DefaultKeyedRateLimiter::keyed(quota(rate)),
            checks: AtomicU32::new(0),
        }
    }

    /// The rate each client is held to.
    pub(crate) fn rate(&self) -> Rate {
        self.rate
    }

    /// Passes one request of the client `key`, or says how long until one would pass.
    pub(crate) fn check(&self, key: &String) -> Result<(), Duration> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        self.limiter.check_key(key).map_err(wait)
    }
}

impl fmt::Debug for ClientLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientLimiter")
            .field("rate", &self.rate)
            .finish_non_exhaustive()
    }
}

/// How long until a refused request would pass: at least a millisecond, so that a wait
/// shown in words is never "0ms".
fn wait(not_until: governor::NotUntil<<DefaultClock as Clock>::Instant>) -> Duration {
    not_until
        .wait_time_from(DefaultClock::default().now())
        .max(Duration::from_millis(1))
}

/// The GCRA quota of `rate`: one every period / count, up to `count` at once.
fn quota(rate: Rate) -> Quota {
    let count = NonZeroU32::new(rate.count()).unwrap_or(NonZeroU32::MIN);
    // The interval is at least a nanosecond, so `with_period` always has one.
    let interval = (rate.period() / count.get()).max(Duration::from_nanos(1));
    Quota::with_period(interval)
        .unwrap_or_else(|| Quota::per_second(count))
        .allow_burst(count)
}
