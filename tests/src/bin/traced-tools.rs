//! A tool binary whose tools open spans of their own (one async, one sync) and one that
//! fails, for the traces tests: each tool's span must nest inside the request's.

use tool_runtime::tool;

/// Look a word up in a small index; the lookup is a span of its own.
#[tool]
async fn lookup(word: String) -> Option<usize> {
    let span = tracing::info_span!("index lookup", word.length = word.len());
    let _inside = span.enter();
    tracing::info!("looking the word up");
    ["alpha", "beta", "gamma"]
        .iter()
        .position(|known| *known == word)
}

/// The sum of the bytes of a text, worked out in a span of its own (a sync tool: it runs
/// on another thread than the request's handling).
#[tool]
fn checksum(text: String) -> u64 {
    let _inside = tracing::info_span!("byte sum").entered();
    text.bytes().map(u64::from).sum()
}

/// Always fails, as a tool that cannot do its job does.
#[tool]
fn broken() -> Result<String, String> {
    Err("the backing service is down".to_owned())
}

/// Panics, its message holding what must never leave the server.
#[tool]
fn panicky() -> String {
    panic!("the secret-marker-7 was in the arguments")
}

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
