//! Kept answers of read-only tools in Redis: one string per answer, readable from every
//! replica until it expires, and a claim per key so that one replica runs the tool while
//! the others wait for its answer.

use super::sessions::millis;
use super::{failed, Shared};
use crate::tasks::StoreError;
use std::time::Duration;

pub(super) async fn get(
    shared: &Shared,
    key: &str,
) -> Result<Option<(String, Duration)>, StoreError> {
    let key = shared.key("answer", key);
    let mut connection = shared.connection();
    let (answer, left): (Option<String>, i64) = ::redis::pipe()
        .cmd("GET")
        .arg(&key)
        .cmd("PTTL")
        .arg(&key)
        .query_async(&mut connection)
        .await
        .map_err(failed)?;
    // A key without an expiry (never written so here) is read as just expired.
    let left = Duration::from_millis(u64::try_from(left).unwrap_or(0));
    Ok(answer.map(|answer| (answer, left)))
}

pub(super) async fn claim(shared: &Shared, key: &str, lease: Duration) -> Result<bool, StoreError> {
    let mut connection = shared.connection();
    let set: Option<String> = ::redis::cmd("SET")
        .arg(shared.key("answer-run", key))
        .arg(&shared.replica)
        .arg("NX")
        .arg("PX")
        .arg(millis(lease))
        .query_async(&mut connection)
        .await
        .map_err(failed)?;
    Ok(set.is_some())
}

pub(super) async fn put(
    shared: &Shared,
    key: &str,
    answer: Option<(String, Duration)>,
) -> Result<(), StoreError> {
    let mut connection = shared.connection();
    let mut pipe = ::redis::pipe();
    pipe.atomic();
    if let Some((answer, ttl)) = answer {
        pipe.cmd("SET")
            .arg(shared.key("answer", key))
            .arg(answer)
            .arg("PX")
            .arg(millis(ttl))
            .ignore();
    }
    pipe.cmd("DEL").arg(shared.key("answer-run", key)).ignore();
    pipe.query_async::<()>(&mut connection)
        .await
        .map_err(failed)
}
