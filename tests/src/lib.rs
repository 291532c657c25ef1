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
