//! The keys that seal request states, shared by every replica: made once by whichever
//! replica comes first, rotated once a day by whichever replica notices first, the previous
//! key still accepted, so a state sealed just before a rotation stays good until it
//! expires (an hour).

use super::{failed, Shared};
use crate::store::keys::random_secret;
use crate::store::{SealingKey, StoreError};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// How long a key seals before the next one takes over.
const ROTATE_EVERY_MS: u64 = 24 * 60 * 60 * 1000;
/// How often each replica reads the keys again (a rotation reaches it within this).
const REFRESH_EVERY: Duration = Duration::from_secs(60);

/// Reads the keys, making the first or the next when due, atomically: of replicas that
/// race, one writes and all read what it wrote. The record lives two rotations and is
/// renewed at each read, so it never expires while a replica runs.
const KEYS_SCRIPT: &str = r"
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local current = redis.call('HGET', KEYS[1], 'current')
local since = tonumber(redis.call('HGET', KEYS[1], 'since') or '0')
if not current then
  redis.call('HSET', KEYS[1], 'current', ARGV[1], 'since', now_ms)
  redis.call('HDEL', KEYS[1], 'previous')
elseif now_ms - since >= tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'previous', current, 'current', ARGV[1], 'since', now_ms)
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return redis.call('HMGET', KEYS[1], 'current', 'previous')
";

/// The keys as they are now, in a ring that [`refresh`] keeps current.
pub(super) async fn shared_key(shared: &Shared) -> Result<SealingKey, StoreError> {
    let keys = read_keys(shared).await?;
    let key = SealingKey::new(&*keys[0]);
    key.replace(keys);
    Ok(key)
}

async fn read_keys(shared: &Shared) -> Result<Vec<Arc<[u8]>>, StoreError> {
    let candidate = random_secret();
    let mut connection = shared.connection();
    let (current, previous): (Option<Vec<u8>>, Option<Vec<u8>>) = ::redis::Script::new(KEYS_SCRIPT)
        .key(format!("{}:state-keys", shared.prefix))
        .arg(&candidate[..])
        .arg(ROTATE_EVERY_MS)
        .invoke_async(&mut connection)
        .await
        .map_err(failed)?;
    let current = current
        .filter(|key| key.len() >= 32)
        .ok_or_else(|| StoreError::new("the store holds no valid sealing key"))?;
    let mut keys: Vec<Arc<[u8]>> = vec![Arc::from(current)];
    if let Some(previous) = previous.filter(|key| key.len() >= 32) {
        keys.push(Arc::from(previous));
    }
    Ok(keys)
}

/// Starts the loop that reads the keys again now and then, so a rotation made by any
/// replica reaches this one.
pub(super) fn refresh(shared: Arc<Shared>, key: SealingKey) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(REFRESH_EVERY);
        every.tick().await;
        loop {
            every.tick().await;
            match read_keys(&shared).await {
                Ok(keys) => key.replace(keys),
                Err(error) => tracing::warn!(%error, "could not read the sealing keys"),
            }
        }
    })
}
