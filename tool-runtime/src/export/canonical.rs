//! Canonical JSON: object keys sorted at every level, so the same catalog gives the same
//! bytes whatever map type serde_json was built with (its `preserve_order` feature changes
//! key order, and a dependency may turn it on).

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;
use sha1::{Digest, Sha1};

/// Serializes a value with every object's keys in sorted order.
pub(crate) struct Sorted<'a>(pub &'a Value);

impl Serialize for Sorted<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = serializer.serialize_map(Some(keys.len()))?;
                for key in keys {
                    out.serialize_entry(key, &Sorted(&map[key]))?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&Sorted(item))?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// Compact canonical JSON text.
pub(crate) fn to_string(value: &Value) -> String {
    serde_json::to_string(&Sorted(value)).unwrap_or_default()
}

/// Indented canonical JSON text, for files people read and diff.
pub(crate) fn to_string_pretty(value: &Value) -> String {
    serde_json::to_string_pretty(&Sorted(value)).unwrap_or_default()
}

/// SHA-1 of `bytes`, in lowercase hex.
pub(crate) fn sha1_hex(bytes: &[u8]) -> String {
    let digest = Sha1::digest(bytes);
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_level() {
        let value = json!({"b": 1, "a": {"z": [{"y": 1, "x": 2}], "c": null}});
        assert_eq!(
            to_string(&value),
            r#"{"a":{"c":null,"z":[{"x":2,"y":1}]},"b":1}"#
        );
    }

    #[test]
    fn sha1_matches_the_known_vector() {
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    }
}
