//! Counting tokens as a model counts them: what a definition or an output costs in its
//! context.

/// The tokens of `text` in OpenAI's current tokenizer (`o200k_base`); other models'
/// tokenizers count within a few percent of it on English and code.
#[cfg(feature = "tokens")]
pub(crate) fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// Without the tokenizer, an estimate: about four bytes to a token, as English and JSON
/// average.
#[cfg(not(feature = "tokens"))]
pub(crate) fn count(text: &str) -> usize {
    text.len().div_ceil(4)
}

#[cfg(all(test, feature = "tokens"))]
mod tests {
    #[test]
    fn counts_as_the_tokenizer_does() {
        assert_eq!(super::count(""), 0);
        assert_eq!(super::count("hello world"), 2);
        assert!(super::count(&"word ".repeat(100)) >= 100);
    }
}
