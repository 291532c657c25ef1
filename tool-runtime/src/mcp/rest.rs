//! The REST format: MCP's two tool methods (list the tools, call one) in the shapes plain
//! HTTP clients use, answered by the same connection, the same dispatcher and the same
//! error texts as MCP requests. A transport frames them (the HTTP one serves them at
//! `/api/tools/discover`, `/api/tools/execute`, `/mcp/tools/list` and `/mcp/tools/call`).
//!
//! - discover: `{"tools": [{"name", "description", "type": "function", "parameters"}],
//!   "totalCount"}`.
//! - execute: `{"toolName", "parameters"}` (also `{"name", "input"}`) in; the call's result
//!   (`{"name", "input", "output"}` or `{"name", "input", "error"}`) out, refused for a
//!   status of the transport's when it did not run to a result of the tool's.
//! - the JSON-RPC pair: `tools/list`'s result without pages, and `tools/call` answered as
//!   MCP answers it, except that an unknown tool and arguments that do not fit are -32602
//!   errors, and an output is never a link (these callers cannot read resources).

use super::connection::Connection;
use super::connection::Refusal;
use super::jsonrpc::{self, code, Incoming, RequestId};
use super::outbox::Outbox;
use super::params::{Method, MethodParams};
use super::responses::{answered, error_message, AnswerFormat};
use super::work::Handled;
use super::ServerMessage;
use crate::catalog::Tool;
use serde_json::{json, Value};

/// The REST execute request: `{"toolName", "parameters"}` (also `{"name", "input"}`).
#[derive(serde::Deserialize)]
struct ExecuteRequest {
    #[serde(alias = "name")]
    #[serde(rename = "toolName")]
    tool_name: String,
    #[serde(alias = "input", alias = "arguments", default)]
    parameters: Value,
}

/// The id a REST call is registered under: its connection serves that one request.
fn rest_id() -> RequestId {
    RequestId::from_value(&Value::from(0))
}

impl Connection {
    /// The tools this connection's caller is shown.
    fn listed_tools(&self) -> Vec<crate::call::runnable::ToolRef> {
        let mut tools = self.shared.registry.tools();
        tools.retain(|tool| self.shared.lists_to(&self.caller, tool));
        tools
    }

    /// REST discover: every tool the caller is shown, as REST clients read them.
    pub(crate) fn rest_discover(&self) -> ServerMessage {
        let tools: Vec<Value> = self
            .listed_tools()
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name(),
                    "description": tool.description(),
                    "type": "function",
                    "parameters": tool.input_schema(),
                })
            })
            .collect();
        let count = tools.len();
        let body = json!({"tools": tools, "totalCount": count});
        ServerMessage::result(body.to_string().into_bytes())
    }

    /// REST execute: the call of a tool, answered with its result.
    pub(crate) fn rest_execute(&self, body: &[u8], sink: &Outbox) -> Handled {
        let request: ExecuteRequest = match serde_json::from_slice(body) {
            Ok(request) => request,
            Err(error) => {
                let message = format!(
                    "the body must be {{\"toolName\": \"...\", \"parameters\": {{...}}}}: {}",
                    error.to_string().split(" at line ").next().unwrap_or("")
                );
                let body = json!({"error": message}).to_string().into_bytes();
                sink.send(ServerMessage::result(body).refused(Some(Refusal::Invalid)));
                return Handled::request(None);
            }
        };
        let work = self.rest_call(
            &request.tool_name,
            request.parameters,
            AnswerFormat::Rest,
            rest_id(),
            sink,
        );
        Handled::request(work)
    }

    /// REST call of one tool by its path: the body is the arguments, the answer the call's
    /// result, as for execute.
    pub(crate) fn rest_call_tool(&self, name: &str, body: &[u8], sink: &Outbox) -> Handled {
        let arguments: Value = if body.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            match serde_json::from_slice(body) {
                Ok(arguments) => arguments,
                Err(error) => {
                    let message = format!(
                        "the body must be the arguments of '{name}' as a JSON object: {}",
                        error.to_string().split(" at line ").next().unwrap_or("")
                    );
                    let body = json!({"error": message}).to_string().into_bytes();
                    sink.send(ServerMessage::result(body).refused(Some(Refusal::Invalid)));
                    return Handled::request(None);
                }
            }
        };
        let work = self.rest_call(name, arguments, AnswerFormat::Rest, rest_id(), sink);
        Handled::request(work)
    }

    /// The REST endpoints of the tools this connection's caller is shown, as an OpenAPI
    /// 3.1 document titled with the server's name and version.
    pub(crate) fn rest_openapi(&self) -> ServerMessage {
        let tools = self.listed_tools();
        let tools: Vec<&Tool> = tools.iter().map(|tool| &**tool).collect();
        let info = &self.shared.info;
        let document = crate::export::openapi(&tools, info.name(), info.version());
        ServerMessage::result(document.to_string().into_bytes())
    }

    /// The JSON-RPC list beside REST: `tools/list`'s result with every tool the caller is
    /// shown, on one page, in an envelope without an id (it answers a GET).
    pub(crate) fn rest_rpc_list(&self) -> ServerMessage {
        let tools = self.listed_tools();
        let tools: Vec<&Tool> = tools.iter().map(|tool| &**tool).collect();
        let body = json!({
            "jsonrpc": "2.0",
            "result": {"tools": crate::export::handshake_mcp_tools(&tools)},
        });
        ServerMessage::result(body.to_string().into_bytes())
    }

    /// The JSON-RPC call beside REST: a `tools/call` request, answered as its format says.
    pub(crate) fn rest_rpc_call(&self, body: &[u8], sink: &Outbox) -> Handled {
        let (id, method, asked) = match jsonrpc::parse(body) {
            Ok(Incoming::Request { id, method, asked }) => (id, method, asked),
            Ok(_) => {
                let refusal = error_message(
                    None,
                    code::INVALID_REQUEST,
                    "Invalid Request: expected a tools/call request with an id",
                    None,
                );
                return Handled::request(answered(sink, refusal));
            }
            Err(rejected) => {
                let refusal =
                    error_message(rejected.id.as_ref(), rejected.code, &rejected.message, None);
                return Handled::request(answered(sink, refusal));
            }
        };
        let call = match asked {
            MethodParams::CallTool(call) => call,
            MethodParams::Unfit(Method::CallTool, _, why) => {
                let refusal = error_message(Some(&id), code::INVALID_PARAMS, &why, None);
                return Handled::request(answered(sink, refusal));
            }
            _ => {
                let message = format!("Method not found: {method}");
                let refusal = error_message(Some(&id), code::METHOD_NOT_FOUND, &message, None);
                return Handled::request(answered(sink, refusal));
            }
        };
        let work = self.rest_call(&call.name, call.arguments, AnswerFormat::RestRpc, id, sink);
        Handled::request(work)
    }
}
