//! Helpers shared by the integration tests. It defines no tools itself, so each test binary
//! holds exactly the tools its own file declares (plus the second crate's, where linked).

use serde_json::Value;
use tool_runtime::{Registry, ToolResult};

/// Runs one call on a fresh multi-thread runtime.
pub fn call(registry: &Registry, name: &str, input: Value) -> ToolResult {
    runtime().block_on(registry.call(name, input))
}

/// A multi-thread runtime for tests that call tools.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The error text of a result that must have failed.
pub fn error_text(result: &ToolResult) -> String {
    match result.error() {
        Some(error) => error.to_string(),
        None => panic!("expected an error, got output {:?}", result.output()),
    }
}

/// A handshake-era `initialize` request with id 0, as a client's first message.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// The JSON-RPC messages of an HTTP body: one JSON answer, or the `data:` lines of an SSE
/// stream (each of which must be JSON).
pub fn messages(body: &str) -> Vec<Value> {
    if body.trim().is_empty() {
        return Vec::new();
    }
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return vec![value];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| {
            serde_json::from_str(data)
                .unwrap_or_else(|_| panic!("an SSE event that is not JSON: {data}"))
        })
        .collect()
}
