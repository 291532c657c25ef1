//! JSON-RPC messages as a test client writes them: text, ready for any transport. Request
//! ids are anything JSON (`1`, `7u64`, `"long"`).

use serde_json::{json, Value};

/// A request of `method` with `params` (a handshake-era one, when the connection is past
/// `initialize`).
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params}).to_string()
}

/// A `tools/call` of `tool` with `arguments`.
pub fn call(id: impl Into<Value>, tool: &str, arguments: Value) -> String {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
}

/// A 2025-11-25 `tools/call` of `tool` that asks for a task.
pub fn task_call(id: impl Into<Value>, tool: &str, arguments: Value) -> String {
    let params = json!({"name": tool, "arguments": arguments, "task": {}});
    request(id, "tools/call", params)
}

/// A request at protocol 2026-07-28, whose `_meta` names the version and the client's
/// `capabilities` (each request carries them; there is no handshake).
pub fn per_request(
    id: impl Into<Value>,
    method: &str,
    mut params: Value,
    capabilities: Value,
) -> String {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    request(id, method, params)
}

/// An `initialize` request with id 0 at protocol `version`, declaring `capabilities`
/// ([`crate::INITIALIZE`] is the one at 2025-11-25 with none).
pub fn initialize(version: &str, capabilities: Value) -> String {
    let params = json!({"protocolVersion": version, "capabilities": capabilities,
        "clientInfo": {"name": "t", "version": "1"}});
    request(0, "initialize", params)
}

/// The client's answer to the server's request `id`.
pub fn respond(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

/// A notification of `method` with `params`.
pub fn notification(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}
