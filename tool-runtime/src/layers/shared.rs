//! Kept answers shared by the replicas through their store: an answer any replica made is
//! given by all, and for each key one replica at a time runs the tool (it holds a claim in
//! the store) while the others wait for its answer. A store that does not answer never
//! fails a call: the tool then runs here, as without a store.

use super::request::CallRequest;
use super::route::Next;
use super::ToolAnswer;
use crate::call::content::AnswerBlocks;
use crate::call::error::CallError;
use crate::call::output_value::OutputValue;
use crate::catalog::CachePolicy;
use crate::store::Store;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// How long a replica's claim on a key lasts past the tool's time limit (or this long,
/// without one): a replica lost mid-run holds the others up no longer.
const CLAIM_BEYOND_LIMIT: Duration = Duration::from_secs(5);
const CLAIM_WITHOUT_LIMIT: Duration = Duration::from_secs(60);

/// How often a replica waiting for another's answer looks for it: soon at first, then less
/// often, up to this.
const FIRST_LOOK: Duration = Duration::from_millis(10);
const LOOK_AT_MOST_EVERY: Duration = Duration::from_millis(200);

/// The answer of `call` (under `key`) from the store, or made here and kept there; with how
/// long it is to be kept here too.
pub(super) async fn answer(
    store: &Store,
    key: &str,
    policy: CachePolicy,
    mut inner: Next,
    call: CallRequest,
) -> (Result<ToolAnswer, CallError>, Duration) {
    let key = stored_key(key);
    let claim = call.route.limit.map_or(CLAIM_WITHOUT_LIMIT, |limit| {
        limit.saturating_add(CLAIM_BEYOND_LIMIT)
    });
    let mut look_again = FIRST_LOOK;
    loop {
        match store.backend.answer_get(&key).await {
            Ok(Some((text, left))) => {
                if let Some(answer) = decoded(&text) {
                    return (Ok(answer), left.min(policy.ttl()));
                }
            }
            Ok(None) => {}
            Err(error) => return run_here(inner, call, policy, &error).await,
        }
        match store.backend.answer_claim(&key, claim).await {
            Ok(true) => break,
            Ok(false) => {}
            Err(error) => return run_here(inner, call, policy, &error).await,
        }
        tokio::time::sleep(look_again).await;
        look_again = (look_again * 2).min(LOOK_AT_MOST_EVERY);
    }
    // The claim may have come free because the replica that held it kept its answer (it
    // keeps the answer and gives up the claim at once): that answer, then, not a run.
    if let Ok(Some((text, left))) = store.backend.answer_get(&key).await {
        if let Some(answer) = decoded(&text) {
            if let Err(error) = store.backend.answer_put(&key, None).await {
                tracing::debug!(%error, "a claim on a kept answer could not be given up");
            }
            return (Ok(answer), left.min(policy.ttl()));
        }
    }
    let outcome = tower::Service::call(&mut inner, call).await;
    let kept = outcome
        .as_ref()
        .ok()
        .and_then(encoded)
        .map(|answer| (answer, policy.ttl()));
    if let Err(error) = store.backend.answer_put(&key, kept).await {
        tracing::warn!(%error, "an answer could not be kept in the shared store");
    }
    (outcome, policy.ttl())
}

/// Runs the tool here, the store not answering.
async fn run_here(
    mut inner: Next,
    call: CallRequest,
    policy: CachePolicy,
    error: &crate::tasks::StoreError,
) -> (Result<ToolAnswer, CallError>, Duration) {
    tracing::warn!(
        tool = %call.tool().name(),
        %error,
        "the shared store of kept answers did not answer; the tool runs here"
    );
    (tower::Service::call(&mut inner, call).await, policy.ttl())
}

/// The key in the store: a digest of the key (which holds the arguments, of any size).
fn stored_key(key: &str) -> String {
    let digest = Sha256::digest(key.as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// An answer as the store keeps it, its content blocks written as they are (another
/// server's as the text they came as); its value only when the tool gave one (the value of
/// blocks alone is made from them again when read).
fn encoded(answer: &ToolAnswer) -> Option<String> {
    #[derive(serde::Serialize)]
    struct Kept<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<&'a Value>,
        content: &'a Option<AnswerBlocks>,
    }
    let kept = Kept {
        value: answer.value.as_given(),
        content: &answer.content,
    };
    // Values and blocks always serialize; an answer that would not is not kept.
    serde_json::to_string(&kept).ok()
}

/// An answer the store kept, marked as given again; `None` when it cannot be read (kept
/// by another version of the server, say), which is then made anew.
fn decoded(text: &str) -> Option<ToolAnswer> {
    let answer = read_kept(text);
    if answer.is_none() {
        tracing::debug!(
            "an answer kept in the shared store could not be read (kept by another version \
             of the server?); it is made anew"
        );
    }
    answer
}

/// The reading of [`decoded`].
fn read_kept(text: &str) -> Option<ToolAnswer> {
    #[derive(serde::Deserialize)]
    struct Kept {
        /// Left out for blocks alone, whose value is made from them; `Some(null)` is a
        /// tool's value of `null`.
        #[serde(default, deserialize_with = "present")]
        value: Option<Value>,
        #[serde(default)]
        content: Option<Box<serde_json::value::RawValue>>,
    }
    /// A value that is there, `null` included (`Option` alone reads `null` as none).
    fn present<'de, D: serde::Deserializer<'de>>(from: D) -> Result<Option<Value>, D::Error> {
        serde::Deserialize::deserialize(from).map(Some)
    }
    let kept: Kept = serde_json::from_str(text).ok()?;
    // Kept as they were written (another server's blocks with all they carry), so they are
    // given back the same way.
    let content = match kept.content {
        None => None,
        Some(blocks) if crate::schema::is_json_list(blocks.get()) => {
            Some(AnswerBlocks::sent_as_text(blocks))
        }
        Some(_) => return None,
    };
    let value = match (kept.value, &content) {
        (Some(value), _) => OutputValue::given(value),
        (None, Some(_)) => OutputValue::of_blocks(),
        // Neither a value nor blocks: nothing this store keeps.
        (None, None) => return None,
    };
    Some(ToolAnswer {
        value,
        content,
        cached: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::content::Content;

    #[test]
    fn an_answer_comes_back_as_it_was_kept_and_marked_as_given_again() {
        let value = ToolAnswer::new(serde_json::json!({"sunrise": "06:12"}));
        let back = decoded(&encoded(&value).unwrap()).unwrap();
        assert_eq!(back.value(), value.value());
        assert!(back.content().is_none());
        assert!(back.is_cached());
        // A tool's value of `null` (it returns nothing) is a value too.
        let nothing = ToolAnswer::new(Value::Null);
        let back = decoded(&encoded(&nothing).unwrap()).unwrap();
        assert_eq!((back.value(), back.content()), (&Value::Null, None));

        let blocks = ToolAnswer::from_content(vec![Content::text("a dot")]);
        let back = decoded(&encoded(&blocks).unwrap()).unwrap();
        assert_eq!(back.content(), blocks.content());
        assert!(decoded("not json").is_none());

        // Another server's blocks come back with all they carried.
        let sent = serde_json::json!([
            {"type": "text", "text": "a dot", "annotations": {"priority": 1.0}},
            {"type": "hologram", "frames": 3},
        ]);
        let relayed = ToolAnswer::of_blocks(AnswerBlocks::sent(sent.as_array().unwrap().clone()));
        let back = decoded(&encoded(&relayed).unwrap()).unwrap();
        assert_eq!(serde_json::to_value(&back.content).unwrap(), sent);
        assert_eq!(back.content(), Some(&[Content::text("a dot")][..]));

        // Blocks kept as the text they came as come back to the byte.
        let text = r#"[{"type":"text","text":"a dot","_meta":{"z":1,"a":1.50}}]"#;
        let raw = serde_json::value::RawValue::from_string(text.to_owned()).unwrap();
        let relayed = ToolAnswer::of_blocks(AnswerBlocks::sent_as_text(raw));
        let back = decoded(&encoded(&relayed).unwrap()).unwrap();
        assert_eq!(serde_json::to_string(&back.content).unwrap(), text);
        // Another server's blocks with the structured content it sent: both come back.
        let with_structured = ToolAnswer {
            value: OutputValue::given(serde_json::json!({"sum": 3})),
            ..back.clone()
        };
        let again = decoded(&encoded(&with_structured).unwrap()).unwrap();
        assert_eq!(again.value(), &serde_json::json!({"sum": 3}));
        assert_eq!(serde_json::to_string(&again.content).unwrap(), text);
        assert!(decoded("{}").is_none());
        assert!(decoded(r#"{"value": 1, "content": {"type": "text"}}"#).is_none());
        assert!(decoded(r#"{"value": 1, "content": null}"#).is_some_and(|a| a.content.is_none()));
        // Blocks alone are kept without their value, which is made from them when read.
        let blocks = ToolAnswer::from_content(vec![Content::text("a dot")]);
        let text = encoded(&blocks).unwrap();
        assert!(!text.contains("\"value\""), "{text}");
        let back = decoded(&text).unwrap();
        assert_eq!(
            back.value(),
            &serde_json::json!([{"type": "text", "text": "a dot"}])
        );
        // An entry written with the value of its blocks (as before) reads the same.
        let old = r#"{"value":[{"type":"text","text":"a dot"}],"content":[{"type":"text","text":"a dot"}]}"#;
        assert_eq!(decoded(old).unwrap(), back);
    }

    #[test]
    fn keys_in_the_store_are_digests_of_fixed_length() {
        let short = stored_key("a");
        let long = stored_key(&"x".repeat(10_000));
        assert_eq!((short.len(), long.len()), (64, 64));
        assert_ne!(short, stored_key("b"));
    }
}
