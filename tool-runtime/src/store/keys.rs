//! The keys that seal request states: one that seals, and the ones still accepted (the
//! previous keys of a rotation), shared by every replica that continues another's calls.

use std::path::Path;
use std::sync::{Arc, RwLock};

/// The fewest secret bytes a key may have: a short key is a guessable one.
const MIN_KEY_BYTES: usize = 32;

/// The keys request states are sealed with: the first seals, every one opens (a state
/// sealed before a rotation stays good until it expires). Replicas that continue each
/// other's calls need the same keys: a shared [`Store`](super::Store) makes and rotates
/// them, or they come from a file ([`SealingKey::from_file`]); a server with neither makes
/// its own at start, so its states are good only until it restarts. Clones share the keys.
///
/// ```
/// use tool_runtime::store::SealingKey;
///
/// let current = [7u8; 32];
/// let previous = [9u8; 32];
/// let key = SealingKey::new(current).accepting([previous]);
/// assert_eq!(key.len(), 2);
/// ```
#[derive(Clone)]
pub struct SealingKey {
    ring: Arc<RwLock<Ring>>,
}

#[derive(Debug, PartialEq)]
struct Ring {
    /// The first seals; all open.
    keys: Vec<Arc<[u8]>>,
}

impl SealingKey {
    /// A key from secret bytes (at least 32, from a secret store; never from argv).
    ///
    /// # Panics
    ///
    /// When `secret` is shorter than 32 bytes: a short key is a guessable one.
    pub fn new(secret: impl AsRef<[u8]>) -> SealingKey {
        let secret = secret.as_ref();
        assert!(
            secret.len() >= MIN_KEY_BYTES,
            "a sealing key needs at least {MIN_KEY_BYTES} secret bytes; got {}",
            secret.len()
        );
        SealingKey::of(vec![Arc::from(secret)])
    }

    /// The same key, also opening states sealed with `previous` keys (after a rotation,
    /// until the states sealed before it have expired: an hour).
    ///
    /// # Panics
    ///
    /// When a previous key is shorter than 32 bytes.
    pub fn accepting<K: AsRef<[u8]>>(self, previous: impl IntoIterator<Item = K>) -> SealingKey {
        let mut keys = self.keys();
        for key in previous {
            keys.push(SealingKey::new(key).sealing());
        }
        SealingKey::of(keys)
    }

    /// The keys in a file: one per line, hex or base64 (standard or URL-safe), at least 32
    /// bytes each; the first seals, the others are still accepted. Blank lines and lines
    /// starting with `#` are skipped.
    ///
    /// # Errors
    ///
    /// When the file cannot be read, has no key, or has a line that is not a key of 32
    /// bytes or more (the message names the line, never its content).
    pub fn from_file(path: impl AsRef<Path>) -> std::io::Result<SealingKey> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)?;
        let invalid =
            |message: String| std::io::Error::new(std::io::ErrorKind::InvalidData, message);
        let mut keys = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bytes = decode_key(line).ok_or_else(|| {
                invalid(format!(
                    "{}: line {} is not a key (hex or base64)",
                    path.display(),
                    number + 1
                ))
            })?;
            if bytes.len() < MIN_KEY_BYTES {
                return Err(invalid(format!(
                    "{}: the key on line {} has {} bytes; a key needs at least {MIN_KEY_BYTES}",
                    path.display(),
                    number + 1,
                    bytes.len()
                )));
            }
            keys.push(Arc::from(bytes));
        }
        if keys.is_empty() {
            return Err(invalid(format!("{}: no key in the file", path.display())));
        }
        Ok(SealingKey::of(keys))
    }

    /// How many keys open states (the sealing one included).
    pub fn len(&self) -> usize {
        self.read().keys.len()
    }

    /// Always false: there is always a key that seals.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// A new random key.
    ///
    /// # Panics
    ///
    /// When the operating system has no randomness to give: a key that could be guessed
    /// would let clients forge request states, so the server does not start with one.
    pub(crate) fn random() -> SealingKey {
        SealingKey::of(vec![Arc::from(random_secret())])
    }

    fn of(keys: Vec<Arc<[u8]>>) -> SealingKey {
        SealingKey {
            ring: Arc::new(RwLock::new(Ring { keys })),
        }
    }

    /// The key that seals.
    pub(crate) fn sealing(&self) -> Arc<[u8]> {
        Arc::clone(&self.read().keys[0])
    }

    /// Every key that opens, the sealing one first.
    pub(crate) fn keys(&self) -> Vec<Arc<[u8]>> {
        self.read().keys.clone()
    }

    /// Replaces the keys (a shared store rotated them); an empty list changes nothing.
    pub(crate) fn replace(&self, keys: Vec<Arc<[u8]>>) {
        if keys.is_empty() {
            return;
        }
        let mut ring = crate::sync::write(&self.ring);
        if ring.keys != keys {
            ring.keys = keys;
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Ring> {
        crate::sync::read(&self.ring)
    }
}

impl std::fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealingKey({} key(s))", self.len())
    }
}

/// 32 random bytes.
pub(crate) fn random_secret() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .expect("the operating system's random generator is needed for a sealing key");
    bytes
}

/// A key written as hex or base64.
fn decode_key(text: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};
    use base64::Engine;
    if text.len().is_multiple_of(2) && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
            .collect();
    }
    let standard = base64::engine::general_purpose::STANDARD_NO_PAD;
    [&STANDARD, &URL_SAFE, &URL_SAFE_NO_PAD, &standard]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_file_gives_the_sealing_key_first_and_names_a_bad_line() {
        let dir = std::env::temp_dir().join(format!("keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("keys");
        let hex = "ab".repeat(32);
        let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [5u8; 40]);
        std::fs::write(&file, format!("# rotated 2026-11-01\n{hex}\n\n{b64}\n")).unwrap();
        let key = SealingKey::from_file(&file).unwrap();
        assert_eq!(key.len(), 2);
        assert_eq!(&*key.sealing(), &[0xab; 32][..]);

        std::fs::write(&file, format!("{hex}\nnot a key!\n")).unwrap();
        let error = SealingKey::from_file(&file).unwrap_err().to_string();
        assert!(
            error.ends_with("line 2 is not a key (hex or base64)"),
            "{error}"
        );
        std::fs::write(&file, "abcd\n").unwrap();
        let error = SealingKey::from_file(&file).unwrap_err().to_string();
        assert!(
            error.contains("has 2 bytes; a key needs at least 32"),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
