//! How a value travels in an HTTP header of the protocol (`Mcp-Name`, `Mcp-Param-*`, as
//! 2026-07-28 has them): as it is when it is safe there, else as `=?base64?...?=`, the
//! standard base64 of its UTF-8 text. A client writes with [`encode`], a server reads with
//! [`decode`]: one rule for both roles.

use base64::Engine;
use serde_json::Value;

/// The session a request belongs to (the handshake era, over HTTP).
#[cfg_attr(not(any(feature = "client", feature = "http")), allow(dead_code))]
pub(crate) const SESSION: &str = "mcp-session-id";
/// The protocol version a request speaks.
#[cfg_attr(not(any(feature = "client", feature = "http")), allow(dead_code))]
pub(crate) const VERSION: &str = "mcp-protocol-version";
/// The method of a 2026-07-28 request.
#[cfg_attr(not(any(feature = "client", feature = "http")), allow(dead_code))]
pub(crate) const METHOD: &str = "mcp-method";
/// The tool, prompt, resource or task a 2026-07-28 request names.
#[cfg_attr(not(any(feature = "client", feature = "http")), allow(dead_code))]
pub(crate) const NAME: &str = "mcp-name";

/// The same headers as names, made once for both roles: a header map finds a name by its
/// hash at once, where a name given as text is read and checked byte by byte first, and
/// one made from text each time is checked each time.
#[cfg(any(feature = "client", feature = "http"))]
pub(crate) mod names {
    use hyper::header::HeaderName;

    /// `Mcp-Session-Id`.
    pub(crate) static SESSION: HeaderName = HeaderName::from_static(super::SESSION);
    /// `MCP-Protocol-Version`.
    pub(crate) static VERSION: HeaderName = HeaderName::from_static(super::VERSION);
    /// `Mcp-Method`.
    pub(crate) static METHOD: HeaderName = HeaderName::from_static(super::METHOD);
    /// `Mcp-Name`.
    pub(crate) static NAME: HeaderName = HeaderName::from_static(super::NAME);
}

// A client writes (feature `client`), a server over HTTP reads (feature `http`); a build
// with one of them uses half of this module.
/// The header text of a tool argument's value: a string as it is (encoded when it must
/// be), an integer in decimal, a boolean as `true` or `false`; `None` for what no header
/// carries (null, a list, an object, a fraction).
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) fn argument(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(encode(text).into_owned()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) if number.is_i64() || number.is_u64() => Some(number.to_string()),
        _ => None,
    }
}

/// `text` as a header carries it: as it is when every character is visible ASCII or an
/// inner space, with no space at either end and not itself looking encoded; else encoded.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) fn encode(text: &str) -> std::borrow::Cow<'_, str> {
    let visible = text.bytes().all(|b| (0x20..0x7f).contains(&b));
    let padded = text.starts_with(' ') || text.ends_with(' ');
    let looks_encoded = text.starts_with("=?base64?") && text.ends_with("?=");
    if visible && !padded && !looks_encoded {
        return std::borrow::Cow::Borrowed(text);
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    std::borrow::Cow::Owned(format!("=?base64?{encoded}?="))
}

/// A header's text read back: `=?base64?...?=` is strict standard base64 of UTF-8 text;
/// anything else is the text itself.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn decode(text: &str) -> Result<String, String> {
    let Some(encoded) = text
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Ok(text.to_owned());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|error| format!("invalid base64 ({error})"))?;
    String::from_utf8(bytes).map_err(|_| "the base64 does not encode UTF-8 text".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn safe_text_travels_as_it_is_and_the_rest_encoded() {
        assert_eq!(encode("us-west1"), "us-west1");
        assert_eq!(encode("us west 1"), "us west 1");
        assert_eq!(encode(""), "");
        assert_eq!(encode("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(encode("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(encode("=?base64?abc?="), "=?base64?PT9iYXNlNjQ/YWJjPz0=?=");
    }

    #[test]
    fn what_is_encoded_decodes_to_itself() {
        for text in [
            "us-west1",
            "Hello, 世界",
            " padded ",
            "line1\r\nline2",
            "=?base64?x?=",
            "",
        ] {
            assert_eq!(decode(&encode(text)).as_deref(), Ok(text));
        }
        assert_eq!(
            decode("SGVsbG8=").as_deref(),
            Ok("SGVsbG8="),
            "not marked: literal"
        );
        assert_eq!(
            decode("=?base64?SGVsbG8=").as_deref(),
            Ok("=?base64?SGVsbG8=")
        );
        assert!(decode("=?base64?SGVsbG8?=").is_err(), "padding required");
        assert!(decode("=?base64?SGVs!!!bG8=?=").is_err(), "bad characters");
        assert!(decode("=?base64?/w==?=").is_err(), "not UTF-8");
    }

    #[test]
    fn arguments_become_header_text_when_a_header_can_carry_them() {
        assert_eq!(argument(&json!(42)).as_deref(), Some("42"));
        assert_eq!(argument(&json!(false)).as_deref(), Some("false"));
        assert_eq!(argument(&json!("x")).as_deref(), Some("x"));
        assert_eq!(argument(&json!(3.5)), None);
        assert_eq!(argument(&json!(null)), None);
        assert_eq!(argument(&json!([1])), None);
    }
}
