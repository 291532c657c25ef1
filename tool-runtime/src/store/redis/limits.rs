//! Rate limits and budgets in Redis, each one script run atomically, so replicas that
//! count together never read then write over each other.
//!
//! A rate is kept as GCRA (the algorithm of the in-process limiter): one number per key,
//! the theoretical arrival time of the next event, in microseconds of the store's own
//! clock (`TIME`), so replicas whose clocks differ still count alike.

use super::{failed, Shared};
use crate::catalog::time::Rate;
use crate::tasks::StoreError;
use std::time::Duration;

/// GCRA: `ARGV[1]` the emission interval, `ARGV[2]` the burst tolerance, both in µs.
/// Returns 0 when the event passes, else the µs to wait.
const RATE_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local allow_at = tat - tonumber(ARGV[2])
if now < allow_at then return allow_at - now end
local next_tat = tat + tonumber(ARGV[1])
redis.call('SET', KEYS[1], next_tat, 'PX', math.ceil((next_tat - now) / 1000) + 1)
return 0
";

/// Admits a call against a budget (`ARGV[1]` the most calls, `ARGV[2]` the most output
/// tokens; -1 for none): `{1, calls, tokens}` when admitted (and counted), `{0, ...}` when
/// spent. What a client spent is forgotten after an hour without calls.
const ADMIT_SCRIPT: &str = r"
local calls = tonumber(redis.call('HGET', KEYS[1], 'calls') or '0')
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens') or '0')
local most_calls = tonumber(ARGV[1])
local most_tokens = tonumber(ARGV[2])
if (most_tokens >= 0 and tokens >= most_tokens) or (most_calls >= 0 and calls >= most_calls) then
  return {0, calls, tokens}
end
calls = redis.call('HINCRBY', KEYS[1], 'calls', 1)
redis.call('PEXPIRE', KEYS[1], 3600000)
return {1, calls, tokens}
";

pub(super) async fn check_rate(
    shared: &Shared,
    key: &str,
    rate: Rate,
) -> Result<Result<(), Duration>, StoreError> {
    let count = rate.count().max(1);
    let interval = (rate.period() / count).max(Duration::from_micros(1));
    let interval_us = u64::try_from(interval.as_micros()).unwrap_or(u64::MAX);
    let tolerance_us = interval_us.saturating_mul(u64::from(count - 1));
    let mut connection = shared.connection();
    let wait_us: u64 = ::redis::Script::new(RATE_SCRIPT)
        .key(shared.key("rate", key))
        .arg(interval_us)
        .arg(tolerance_us)
        .invoke_async(&mut connection)
        .await
        .map_err(failed)?;
    Ok(match wait_us {
        0 => Ok(()),
        wait => Err(Duration::from_micros(wait).max(Duration::from_millis(1))),
    })
}

pub(super) async fn admit(
    shared: &Shared,
    key: &str,
    calls: Option<u64>,
    tokens: Option<u64>,
) -> Result<Result<(), (u64, u64)>, StoreError> {
    let mut connection = shared.connection();
    let (admitted, spent_calls, spent_tokens): (u8, u64, u64) = ::redis::Script::new(ADMIT_SCRIPT)
        .key(shared.key("budget", key))
        .arg(calls.map_or(-1, |most| i64::try_from(most).unwrap_or(i64::MAX)))
        .arg(tokens.map_or(-1, |most| i64::try_from(most).unwrap_or(i64::MAX)))
        .invoke_async(&mut connection)
        .await
        .map_err(failed)?;
    Ok(match admitted {
        1 => Ok(()),
        _ => Err((spent_calls, spent_tokens)),
    })
}

pub(super) async fn charge(shared: &Shared, key: &str, tokens: u64) -> Result<(), StoreError> {
    let key = shared.key("budget", key);
    let mut connection = shared.connection();
    ::redis::pipe()
        .cmd("HINCRBY")
        .arg(&key)
        .arg("tokens")
        .arg(tokens)
        .ignore()
        .cmd("PEXPIRE")
        .arg(&key)
        .arg(3_600_000u64)
        .ignore()
        .query_async::<()>(&mut connection)
        .await
        .map_err(failed)
}
