//! Handshake-era sessions in Redis: one hash per session (`o` owner, `v` version, `c`
//! capabilities, `l` log level, `s:<uri>` per subscription), living as long as the
//! session's idle timeout from its last use.

use super::{failed, Shared};
use crate::store::sessions::{Change, SessionRecord, MAX_SUBSCRIPTIONS};
use crate::tasks::StoreError;
use std::collections::HashMap;
use std::time::Duration;

/// Prefix of the fields that name a subscribed resource.
const SUBSCRIPTION: &str = "s:";

/// Changes a session that exists; 0 when it does not, -1 when it has too many
/// subscriptions for one more.
const CHANGE_SCRIPT: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == 'level' then
  redis.call('HSET', KEYS[1], 'l', ARGV[2])
elseif ARGV[1] == 'subscribe' then
  if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 0
    and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
    return -1
  end
  redis.call('HSET', KEYS[1], ARGV[2], '1')
else
  redis.call('HDEL', KEYS[1], ARGV[2])
end
return 1
";

pub(super) async fn open(
    shared: &Shared,
    id: &str,
    record: &SessionRecord,
    ttl: Duration,
) -> Result<(), StoreError> {
    let key = shared.key("session", id);
    let capabilities = serde_json::to_string(&record.capabilities).map_err(StoreError::new)?;
    let mut fields = vec![
        ("v".to_owned(), record.version.clone()),
        ("c".to_owned(), capabilities),
        ("l".to_owned(), record.log_level.to_string()),
    ];
    if let Some(owner) = &record.owner {
        fields.push(("o".to_owned(), owner.clone()));
    }
    for uri in &record.subscriptions {
        fields.push((format!("{SUBSCRIPTION}{uri}"), "1".to_owned()));
    }
    let mut connection = shared.connection();
    ::redis::pipe()
        .atomic()
        .cmd("DEL")
        .arg(&key)
        .ignore()
        .cmd("HSET")
        .arg(&key)
        .arg(fields)
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
    id: &str,
    ttl: Duration,
) -> Result<Option<SessionRecord>, StoreError> {
    let key = shared.key("session", id);
    let mut connection = shared.connection();
    let (fields,): (HashMap<String, String>,) = ::redis::pipe()
        .cmd("HGETALL")
        .arg(&key)
        .cmd("PEXPIRE")
        .arg(&key)
        .arg(millis(ttl))
        .ignore()
        .query_async(&mut connection)
        .await
        .map_err(failed)?;
    Ok(record_of(fields))
}

/// The record in a session's fields; `None` when there are none (it ended) or they do not
/// make a session.
fn record_of(mut fields: HashMap<String, String>) -> Option<SessionRecord> {
    let version = fields.remove("v")?;
    let capabilities = fields
        .remove("c")
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    let log_level = fields
        .remove("l")
        .and_then(|text| text.parse().ok())
        .unwrap_or(0);
    let owner = fields.remove("o");
    let mut subscriptions: Vec<String> = fields
        .into_keys()
        .filter_map(|field| field.strip_prefix(SUBSCRIPTION).map(str::to_owned))
        .collect();
    subscriptions.sort();
    Some(SessionRecord {
        owner,
        version,
        capabilities,
        log_level,
        subscriptions,
    })
}

pub(super) async fn change(shared: &Shared, id: &str, change: Change) -> Result<bool, StoreError> {
    let (what, value) = match change {
        Change::LogLevel(level) => ("level", level.to_string()),
        Change::Subscription(uri, true) => ("subscribe", format!("{SUBSCRIPTION}{uri}")),
        Change::Subscription(uri, false) => ("unsubscribe", format!("{SUBSCRIPTION}{uri}")),
    };
    let mut connection = shared.connection();
    // The record's own fields (version, capabilities, level, owner) count towards the
    // bound as well.
    let most = MAX_SUBSCRIPTIONS + 4;
    let changed: i64 = ::redis::Script::new(CHANGE_SCRIPT)
        .key(shared.key("session", id))
        .arg(what)
        .arg(value)
        .arg(most)
        .invoke_async(&mut connection)
        .await
        .map_err(failed)?;
    match changed {
        -1 => Err(StoreError::new(format!(
            "the session already has {MAX_SUBSCRIPTIONS} subscriptions, the most it may have"
        ))),
        changed => Ok(changed == 1),
    }
}

pub(super) async fn end(shared: &Shared, id: &str) -> Result<bool, StoreError> {
    let mut connection = shared.connection();
    let removed: u64 = ::redis::cmd("DEL")
        .arg(shared.key("session", id))
        .query_async(&mut connection)
        .await
        .map_err(failed)?;
    Ok(removed > 0)
}

/// A duration in whole milliseconds, at least one (Redis refuses a zero expiry).
pub(super) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_from_its_fields() {
        let fields = HashMap::from([
            ("v".to_owned(), "2025-11-25".to_owned()),
            ("c".to_owned(), r#"{"sampling":{}}"#.to_owned()),
            ("l".to_owned(), "3".to_owned()),
            ("o".to_owned(), "ada".to_owned()),
            ("s:file:///b".to_owned(), "1".to_owned()),
            ("s:file:///a".to_owned(), "1".to_owned()),
        ]);
        let record = record_of(fields).unwrap();
        assert_eq!(record.version, "2025-11-25");
        assert_eq!(record.capabilities, serde_json::json!({"sampling": {}}));
        assert_eq!(record.log_level, 3);
        assert_eq!(record.owner.as_deref(), Some("ada"));
        assert_eq!(record.subscriptions, ["file:///a", "file:///b"]);
        assert!(record_of(HashMap::new()).is_none(), "no fields: no session");
    }
}
