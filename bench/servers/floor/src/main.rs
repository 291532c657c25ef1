//! floor: the performance floor. No MCP framework, no async runtime; only
//! serde_json + std. Newline-delimited JSON-RPC 2.0 over stdin/stdout,
//! single-threaded: read a line (BufReader), parse it into a serde_json::Value,
//! answer it into a locked BufWriter, flush after each response.
//!
//! With `--relay COMMAND...` or `--http ADDR --relay-to URL`, the floor of a mount instead:
//! a relay to another server (see `relay.rs`).
//!
//! With `--http ADDR`, the same answers over HTTP/1.1 with nothing but hyper: one
//! current-thread runtime, a POST's body answered as one JSON response, no sessions (the
//! floor of a framework on hyper; see `http.rs`).
//!
//! Answers `initialize`, `ping`, `tools/list`, `tools/call`; notifications
//! (including `notifications/initialized`) get no answer. Results are shaped
//! like rmcp 3.9.0's for a client that negotiated a pre-2026-07-28 protocol
//! (no `resultType`), including `"isError": false` on success (rmcp's
//! `CallToolResult::success` sets it) and the same field order.
//!
//! The tools/list schemas below are what schemars 1.x (draft 2020-12, as
//! rmcp generates them, top-level title/description stripped) is expected
//! to produce for the rmcp binaries' argument structs.
//! UNSURE: byte-for-byte equality with rmcp's tools/list is not verified
//! (no compiler run). To make it exact, dump `tools/list` from rmcp_example
//! once and paste each tool's `inputSchema`/`outputSchema` into `tools_list_result`.

use std::{
    borrow::Cow,
    io::{self, BufRead, BufReader, BufWriter, Write},
};

use serde_json::{json, Map, Value};

mod http;
mod relay;

const SERVER_NAME: &str = "floor";
const SERVER_VERSION: &str = "0.1.0";

/// Versions that still have an `initialize` handshake, oldest first (rmcp 3.9.0
/// `ProtocolVersion::KNOWN_VERSIONS` minus 2026-07-28, which has none).
const INITIALIZE_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// rmcp's fallback when the client asks for a version it cannot serve over
/// `initialize`: `ProtocolVersion::LATEST_WITH_INITIALIZE`.
const FALLBACK_VERSION: &str = "2025-11-25";

const DEFAULT_SEARCH_LIMIT: u64 = 3;
/// Same hard cap as the rmcp binaries.
const MAX_SEARCH_RESULTS: u64 = 1000;

// JSON-RPC error codes (same codes rmcp uses for these cases).
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

type RpcResult<'a> = Result<Cow<'a, str>, (i64, String)>;

fn main() -> io::Result<()> {
    let tools_list = tools_list_result();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["--relay", _, ..] => return relay::stdio(&args[1..]),
        ["--http", address, "--relay-to", upstream] => return relay::http(address, upstream),
        ["--http", address] => return http::serve(address, tools_list),
        [] => {}
        _ => {
            eprintln!(
                "usage: bench-floor [--http ADDR [--relay-to URL] | --relay COMMAND [ARGS...]]"
            );
            std::process::exit(2);
        }
    }

    let mut reader = BufReader::with_capacity(64 * 1024, io::stdin().lock());
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = String::with_capacity(4096);

    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break; // EOF
        }
        if answer(line.as_bytes(), &tools_list, &mut out)? {
            out.write_all(b"\n")?;
            out.flush()?;
        }
    }
    out.flush()
}

/// Writes the response to one message to `out` (without a line end); false when the
/// message gets none (a notification, a response, or junk).
fn answer<W: Write>(message: &[u8], tools_list: &str, out: &mut W) -> io::Result<bool> {
    // Like rmcp's stdio transport: unparsable input is ignored (no reply).
    let Ok(msg) = serde_json::from_slice::<Value>(message) else {
        return Ok(false);
    };
    let Some(method) = msg.get("method").and_then(Value::as_str) else {
        return Ok(false); // a response from the client, or junk: nothing to answer
    };
    let Some(id) = msg.get("id") else {
        return Ok(false); // notification (e.g. notifications/initialized): no answer
    };
    let params = msg.get("params");
    let result = match method {
        "initialize" => Ok(Cow::Owned(initialize(params))),
        "ping" => Ok(Cow::Borrowed("{}")),
        "tools/list" => Ok(Cow::Borrowed(tools_list)),
        "tools/call" => call_tool(params),
        _ => Err((METHOD_NOT_FOUND, format!("Method not found: {method}"))),
    };
    write_response(out, id, result)?;
    Ok(true)
}

fn write_response<W: Write>(out: &mut W, id: &Value, result: RpcResult<'_>) -> io::Result<()> {
    out.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":")?;
    serde_json::to_writer(&mut *out, id)?;
    match result {
        Ok(result) => {
            out.write_all(b",\"result\":")?;
            out.write_all(result.as_bytes())?;
        }
        Err((code, message)) => {
            write!(out, ",\"error\":{{\"code\":{code},\"message\":")?;
            serde_json::to_writer(&mut *out, &message)?;
            out.write_all(b"}")?;
        }
    }
    out.write_all(b"}")
}

// ---------------------------------------------------------------------------
// initialize / tools/list
// ---------------------------------------------------------------------------

fn initialize(params: Option<&Value>) -> String {
    let requested = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let version = INITIALIZE_VERSIONS
        .iter()
        .copied()
        .find(|v| *v == requested)
        .unwrap_or(FALLBACK_VERSION);
    format!(
        "{{\"protocolVersion\":\"{version}\",\"capabilities\":{{\"tools\":{{}}}},\
         \"serverInfo\":{{\"name\":\"{SERVER_NAME}\",\"version\":\"{SERVER_VERSION}\"}}}}"
    )
}

const SCHEMA_DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// Precomputed once: the whole `tools/list` result, tools sorted by name like
/// rmcp's `ToolRouter::list_all`. Tool-level key order follows rmcp's `Tool`
/// struct (name, description, inputSchema, outputSchema); the schema objects
/// are serde_json Maps (sorted keys), as in rmcp.
fn tools_list_result() -> String {
    let add_in = json!({
        "$schema": SCHEMA_DIALECT,
        "type": "object",
        "properties": {
            "a": { "type": "integer", "format": "int64" },
            "b": { "type": "integer", "format": "int64" }
        },
        "required": ["a", "b"]
    });
    let add_out = json!({
        "$schema": SCHEMA_DIALECT,
        "type": "object",
        "properties": {
            "result": { "type": "integer", "format": "int64" }
        },
        "required": ["result"]
    });
    let echo_in = json!({
        "$schema": SCHEMA_DIALECT,
        "type": "object",
        "properties": {
            "message": { "type": "string" }
        },
        "required": ["message"]
    });
    let weather_in = json!({
        "$schema": SCHEMA_DIALECT,
        "type": "object",
        "properties": {
            "city": { "type": "string" },
            "units": { "$ref": "#/$defs/Units", "default": "metric" },
            "include_forecast": { "type": "boolean", "default": false }
        },
        "required": ["city"],
        "$defs": {
            "Units": { "type": "string", "enum": ["metric", "imperial"] }
        }
    });
    let search_in = json!({
        "$schema": SCHEMA_DIALECT,
        "type": "object",
        "properties": {
            "query": { "type": "string" },
            "limit": { "type": ["integer", "null"], "format": "uint32", "minimum": 0 },
            "tags": { "type": "array", "items": { "type": "string" } }
        },
        "required": ["query", "tags"]
    });

    let tool = |name: &str, description: &str, input: &Value, output: Option<&Value>| {
        let mut s = format!(
            "{{\"name\":{},\"description\":{},\"inputSchema\":{}",
            json_str(name),
            json_str(description),
            input
        );
        if let Some(output) = output {
            s.push_str(",\"outputSchema\":");
            s.push_str(&output.to_string());
        }
        s.push('}');
        s
    };
    let tools = [
        tool("add", "Add two integers", &add_in, Some(&add_out)),
        tool("echo", "Echo the message back", &echo_in, None),
        tool(
            "get_weather",
            "Get the (fake) weather for a city",
            &weather_in,
            None,
        ),
        tool(
            "search",
            "Search (fake): returns up to `limit` (default 3) results",
            &search_in,
            None,
        ),
    ];
    format!("{{\"tools\":[{}]}}", tools.join(","))
}

// ---------------------------------------------------------------------------
// tools/call
// ---------------------------------------------------------------------------

fn call_tool(params: Option<&Value>) -> RpcResult<'static> {
    let params = params.ok_or_else(|| (INVALID_PARAMS, "missing params".to_owned()))?;
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| (INVALID_PARAMS, "missing tool name".to_owned()))?;
    let empty = Map::new();
    let args = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(map)) => map,
        Some(_) => return Err((INVALID_PARAMS, "arguments must be an object".to_owned())),
    };
    // Argument errors become a tool-level error result (isError: true), as in
    // rmcp (router's `into_tool_argument_error`); an unknown tool is a
    // JSON-RPC error -32602 "tool not found", also as in rmcp.
    let outcome = match name {
        "add" => tool_add(args),
        "echo" => tool_echo(args),
        "get_weather" => tool_get_weather(args),
        "search" => tool_search(args),
        _ => return Err((INVALID_PARAMS, "tool not found".to_owned())),
    };
    Ok(Cow::Owned(match outcome {
        Ok(result) => result,
        Err(message) => text_result(
            &format!("failed to deserialize parameters: {message}"),
            true,
        ),
    }))
}

type ToolOutcome = Result<String, String>;

fn tool_add(args: &Map<String, Value>) -> ToolOutcome {
    let a = req_i64(args, "a")?;
    let b = req_i64(args, "b")?;
    let sum = a.wrapping_add(b);
    Ok(format!(
        "{{\"content\":[{{\"type\":\"text\",\"text\":\"{sum}\"}}],\
         \"structuredContent\":{{\"result\":{sum}}},\"isError\":false}}"
    ))
}

fn tool_echo(args: &Map<String, Value>) -> ToolOutcome {
    let message = req_str(args, "message")?;
    Ok(text_result(message, false))
}

fn tool_get_weather(args: &Map<String, Value>) -> ToolOutcome {
    let city = req_str(args, "city")?;
    let imperial = match args.get("units") {
        None => false,
        Some(Value::String(s)) if s == "metric" => false,
        Some(Value::String(s)) if s == "imperial" => true,
        Some(other) => {
            return Err(format!(
                "unknown variant `{other}`, expected `metric` or `imperial`"
            ));
        }
    };
    let include_forecast = match args.get("include_forecast") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(format!("invalid type: {other}, expected a boolean")),
    };
    let (temperature, units, forecast): (f64, &str, [f64; 5]) = if imperial {
        (67.1, "imperial", [67.1, 68.0, 65.3, 69.8, 63.5])
    } else {
        (19.5, "metric", [19.5, 20.0, 18.5, 21.0, 17.5])
    };
    // Same field order and number formatting as serde-serializing rmcp's
    // `Weather { city, temperature, units, forecast? }` struct.
    let mut w = String::with_capacity(128);
    w.push_str("{\"city\":");
    w.push_str(&json_str(city));
    w.push_str(",\"temperature\":");
    w.push_str(&Value::from(temperature).to_string());
    w.push_str(",\"units\":\"");
    w.push_str(units);
    w.push('"');
    if include_forecast {
        w.push_str(",\"forecast\":[");
        for (i, t) in forecast.iter().enumerate() {
            if i > 0 {
                w.push(',');
            }
            w.push_str(&Value::from(*t).to_string());
        }
        w.push(']');
    }
    w.push('}');
    Ok(text_result(&w, false))
}

fn tool_search(args: &Map<String, Value>) -> ToolOutcome {
    let query = req_str(args, "query")?;
    let limit = match args.get("limit") {
        None | Some(Value::Null) => DEFAULT_SEARCH_LIMIT,
        Some(v) => v
            .as_u64()
            .filter(|n| *n <= u64::from(u32::MAX))
            .ok_or_else(|| format!("invalid value: {v}, expected u32"))?,
    };
    let tags = match args.get("tags") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|t| {
                t.as_str()
                    .ok_or_else(|| format!("invalid type: {t}, expected a string"))
            })
            .collect::<Result<Vec<&str>, String>>()?,
        Some(other) => return Err(format!("invalid type: {other}, expected a sequence")),
        None => return Err("missing field `tags`".to_owned()),
    };
    let suffix = tags.join(",");
    let results: Vec<Value> = (0..limit.min(MAX_SEARCH_RESULTS))
        .map(|i| Value::String(format!("{query}-{i}{suffix}")))
        .collect();
    let text = Value::Array(results).to_string();
    Ok(text_result(&text, false))
}

// ---------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------

/// `{"content":[{"type":"text","text":...}],"isError":<is_error>}`
fn text_result(text: &str, is_error: bool) -> String {
    format!(
        "{{\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"isError\":{is_error}}}",
        json_str(text)
    )
}

/// A JSON string literal (quoted + escaped).
fn json_str(s: &str) -> String {
    // Serializing a &str cannot fail.
    serde_json::to_string(s).expect("string serialization")
}

fn req_str<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(s.as_str()),
        Some(other) => Err(format!("invalid type: {other}, expected a string")),
        None => Err(format!("missing field `{key}`")),
    }
}

fn req_i64(args: &Map<String, Value>, key: &str) -> Result<i64, String> {
    match args.get(key) {
        Some(v) => v
            .as_i64()
            .ok_or_else(|| format!("invalid type: {v}, expected i64")),
        None => Err(format!("missing field `{key}`")),
    }
}
