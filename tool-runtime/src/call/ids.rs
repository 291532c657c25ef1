//! Identifiers a client must not be able to guess (session ids, task ids, the URIs of
//! stored outputs, URL elicitations): 128 random bits from the operating system, as hex.

/// 32 hex digits of OS randomness.
pub(crate) fn unguessable_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness: fall back to time (unguessability lost, logged).
        tracing::warn!("no OS randomness for unguessable ids");
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = nanos.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
