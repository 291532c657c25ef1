//! Custom headers: a tool argument marked `#[arg(header = "Name")]` (`x-mcp-header`
//! in its schema) is mirrored by the client in the HTTP header `Mcp-Param-Name`, so
//! gateways can route on it without reading the body. The server checks that the two
//! agree, and refuses the request (400, -32020) when they do not.

use crate::registry::Registry;
use axum::http::HeaderMap;
use serde_json::Value;

/// Checks the `Mcp-Param-*` headers of a `tools/call` of `name` against its `arguments`;
/// `Err` says which header and why. Arguments that are absent or `null` need no header.
pub(super) fn check(
    headers: &HeaderMap,
    registry: &Registry,
    name: &str,
    arguments: &Value,
) -> Result<(), String> {
    let Some(tool) = registry.get(name) else {
        // An unknown tool is the protocol layer's to answer.
        return Ok(());
    };
    let arguments = arguments.as_object();
    for param in tool.arguments() {
        let Some(header) = param.header() else {
            continue;
        };
        let value = match arguments.and_then(|a| a.get(param.name())) {
            None | Some(Value::Null) => continue,
            Some(value) => value,
        };
        let shown = format!("Mcp-Param-{header}");
        // Header names compare ignoring case; `get` reads `shown` so.
        let raw = headers.get(shown.as_str()).ok_or_else(|| {
            format!(
                "{shown} is missing; the argument `{}` is {value}",
                param.name()
            )
        })?;
        let text = raw
            .to_str()
            .map_err(|_| format!("{shown} is not visible ASCII; send it as =?base64?...?="))?;
        let decoded = crate::mcp::header_values::decode(text.trim_matches([' ', '\t']))
            .map_err(|reason| format!("{shown} cannot be read: {reason}"))?;
        if !agrees(&decoded, value) {
            return Err(format!(
                "{shown} is {decoded:?} but the argument `{}` is {value}",
                param.name()
            ));
        }
    }
    Ok(())
}

/// Whether a header's text says the argument's value: strings as they are, integers by
/// value, booleans as `true` / `false`.
fn agrees(text: &str, value: &Value) -> bool {
    match value {
        Value::String(body) => text == body,
        Value::Bool(body) => text.parse::<bool>() == Ok(*body),
        Value::Number(body) => match (body.as_i64(), body.as_u64()) {
            (Some(number), _) => text.parse::<i64>() == Ok(number),
            (None, Some(number)) => text.parse::<u64>() == Ok(number),
            _ => text.parse::<f64>().ok() == body.as_f64(),
        },
        // A list or a map cannot be mirrored in a header (`check` refuses such a tool).
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_compare_by_their_type() {
        assert!(agrees("eu-west", &json!("eu-west")));
        assert!(!agrees("eu-west", &json!("EU-west")));
        assert!(agrees("42", &json!(42)));
        assert!(!agrees("042x", &json!(42)));
        assert!(agrees("true", &json!(true)));
        assert!(!agrees("1", &json!(true)));
    }
}
