//! Any bytes as one incoming message, to a session that lives across inputs: the handler
//! never panics, every message it sends is one JSON-RPC 2.0 object, and none leaks
//! internals.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use tool_runtime::mcp::{McpServer, ServerInfo};
use tool_runtime::mcp::connection::{outbox, Connection, OutboxReader, Outbox};
use tool_runtime::{tool, Registry};

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Fails with a message.
#[tool]
fn fail(reason: String) -> Result<u8, String> {
    Err(reason)
}

struct Harness {
    runtime: tokio::runtime::Runtime,
    connection: Connection,
    sink: Outbox,
    messages: std::sync::Mutex<OutboxReader>,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let server = McpServer::new(
            Registry::new().unwrap(),
            ServerInfo::new("fuzz", "1"),
        );
        let connection = server.connection();
        let (sink, messages) = outbox();
        Harness { runtime, connection, sink, messages: std::sync::Mutex::new(messages) }
    })
}

fuzz_target!(|data: &[u8]| {
    let harness = harness();
    harness.runtime.block_on(async {
        if let Some(work) = harness.connection.handle(data, &harness.sink).into_work() {
            tokio::spawn(work.run());
        }
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
    });
    let mut messages = harness.messages.lock().unwrap();
    while let Some(message) = messages.try_recv() {
        let value: serde_json::Value =
            serde_json::from_slice(&message.bytes).expect("every message is JSON");
        assert_eq!(value["jsonrpc"], "2.0");
        let text = String::from_utf8_lossy(&message.bytes);
        assert!(!text.contains("panicked") && !text.contains(".rs:"), "leak: {text}");
    }
});
