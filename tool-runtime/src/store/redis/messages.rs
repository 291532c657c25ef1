//! The messages of 2025-11-25 tasks waiting for a stream of their session: one list per
//! task, oldest first, each entry a kind byte (`q` a question, `n` a notification) then
//! the message. Taking one (`LPOP`) is atomic, so each goes on exactly one stream.

use super::sessions::millis;
use super::{failed, Shared};
use crate::tasks::StoreError;
use std::time::Duration;

/// How long messages nobody takes are kept: a question waits for a `tasks/result` that
/// may come late, but not for ever.
const KEEP_FOR: Duration = Duration::from_secs(60 * 60);

pub(super) async fn push(
    shared: &Shared,
    task: &str,
    message: &[u8],
    question: bool,
) -> Result<(), StoreError> {
    let key = shared.key("task-messages", task);
    let mut entry = Vec::with_capacity(message.len() + 1);
    entry.push(if question { b'q' } else { b'n' });
    entry.extend_from_slice(message);
    let mut connection = shared.connection();
    ::redis::pipe()
        .cmd("RPUSH")
        .arg(&key)
        .arg(entry)
        .ignore()
        .cmd("PEXPIRE")
        .arg(&key)
        .arg(millis(KEEP_FOR))
        .ignore()
        .query_async::<()>(&mut connection)
        .await
        .map_err(failed)
}

pub(super) async fn take(
    shared: &Shared,
    task: &str,
) -> Result<Option<crate::store::TaskMessage>, StoreError> {
    let mut connection = shared.connection();
    let entry: Option<Vec<u8>> = ::redis::cmd("LPOP")
        .arg(shared.key("task-messages", task))
        .query_async(&mut connection)
        .await
        .map_err(failed)?;
    Ok(entry.and_then(|entry| {
        let (kind, message) = entry.split_first()?;
        Some((message.to_vec(), *kind == b'q'))
    }))
}
