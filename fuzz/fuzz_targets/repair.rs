//! Any text as a model's tool-call arguments, to the almost-JSON repair: it never panics,
//! JSON comes back as it is with no repair reported, text that is not JSON is either
//! repaired (and the repair says what it did) or refused with the parser's reason.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tool_runtime::agent::repair;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let strict = serde_json::from_str::<serde_json::Value>(text).ok();
    match repair::parse(text) {
        Ok((value, None)) => assert_eq!(Some(value), strict, "no repair means strict JSON"),
        Ok((value, Some(done))) => {
            assert!(strict.is_none(), "JSON is never repaired: {text:?}");
            // (Not always an object or array: serde_json reads a map holding one of its
            // private marker keys as another kind of value, strict or repaired alike.)
            let _ = value;
            assert!(
                done.fence || done.surrounding_text || done.closed > 0,
                "a repair says what it did"
            );
            assert!(!done.describe().is_empty());
        }
        Err(reason) => {
            assert!(strict.is_none());
            assert!(reason.starts_with("the arguments are not JSON"), "{reason}");
        }
    }
});
