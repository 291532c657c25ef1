//! Large outputs in Redis: one hash per output (`m` its type, `t` its text), readable from
//! every replica until it expires.

use super::sessions::millis;
use super::{failed, Shared};
use crate::tasks::StoreError;
use std::time::Duration;

pub(super) async fn put(
    shared: &Shared,
    uri: &str,
    text: &str,
    mime_type: &str,
    ttl: Duration,
) -> Result<(), StoreError> {
    let key = shared.key("output", uri);
    let mut connection = shared.connection();
    ::redis::pipe()
        .atomic()
        .cmd("HSET")
        .arg(&key)
        .arg("m")
        .arg(mime_type)
        .arg("t")
        .arg(text)
        .ignore()
        .cmd("PEXPIRE")
        .arg(&key)
        .arg(millis(ttl))
        .ignore()
        .query_async::<()>(&mut connection)
        .await
        .map_err(failed)
}

pub(super) async fn get(
    shared: &Shared,
    uri: &str,
) -> Result<Option<(String, String)>, StoreError> {
    let mut connection = shared.connection();
    let (mime_type, text): (Option<String>, Option<String>) = ::redis::cmd("HMGET")
        .arg(shared.key("output", uri))
        .arg("m")
        .arg("t")
        .query_async(&mut connection)
        .await
        .map_err(failed)?;
    Ok(text.map(|text| (text, mime_type.unwrap_or_else(|| "text/plain".to_owned()))))
}
