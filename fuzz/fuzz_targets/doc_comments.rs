//! The macro's doc-comment parser (tool-macros/src/doc.rs, a plain function over lines) on
//! any text: it never panics, every error points at a line that exists, and the summary
//! and description only hold text that was there.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tool-macros/src/doc.rs"]
#[allow(dead_code)]
mod doc;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // Each NUL-separated piece stands for one `#[doc = "..."]` attribute.
    let attributes: Vec<&str> = text.split('\0').collect();
    let lines: Vec<doc::DocLine> = attributes
        .iter()
        .enumerate()
        .flat_map(|(origin, raw)| doc::split_attribute(raw, origin))
        .collect();
    let parsed = doc::parse(&lines);
    for error in &parsed.errors {
        assert!(error.origin < attributes.len());
    }
    for example in &parsed.examples {
        assert!(example.origin < attributes.len());
    }
    for word in parsed.summary.split_whitespace() {
        assert!(text.contains(word), "{word:?} is not in the input");
    }
});
