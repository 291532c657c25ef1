//! The result a request of the client is handed: read once, by the request, into what it
//! needs.
//!
//! A server's answer is found its request by its id. Reading the whole message to learn
//! the id, and then its result again into what the request needs, reads every answer
//! twice. Many servers (ours, rmcp's, the Python SDK's) write an answer the same way:
//! `{"jsonrpc":"2.0","id":7,"result":` and the result, then `}`. Such a message is known
//! by that start, handed over unread, and its request reads the text from there to the
//! final `}` as the result alone, once. When that text is not one JSON value (more members
//! after the result, a message cut short), the request reads the message whole, by the
//! one reader of messages, which reads it or says why not: the request fails with that
//! error rather than waiting for an answer that cannot come. A message written otherwise
//! (spaces, the result first as the TypeScript SDK writes it) is read whole before it is
//! handed over, as every message is.

use super::wire::RoundResult;
use crate::mcp::jsonrpc;
use serde_json::value::RawValue;

/// A result from the server, as it reaches the request that asked for it.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// The result alone, as the JSON text it came as.
    Result(Box<RawValue>),
    /// A whole message known by its start (see [`answered`]), read no further: its result
    /// starts at `result_at`.
    Unread { message: Box<str>, result_at: usize },
}

impl Reply {
    /// The result, as the JSON text it came as; why it cannot be had, in words.
    pub(crate) fn result(&self) -> Result<&RawValue, String> {
        match self {
            Reply::Result(result) => Ok(result),
            Reply::Unread { message, .. } => {
                if let Some(result) = self.result_text() {
                    if let Ok(result) = serde_json::from_str::<&RawValue>(result) {
                        return Ok(result);
                    }
                }
                whole_result(message)
            }
        }
    }

    /// [`result`](Reply::result), owned.
    pub(crate) fn into_result(self) -> Result<Box<RawValue>, String> {
        match self {
            Reply::Result(result) => Ok(result),
            Reply::Unread { .. } => self.result().map(ToOwned::to_owned),
        }
    }

    /// The result read as `T`: alone, when the message came unread and ends with it; why
    /// not, in words.
    pub(crate) fn read<T: RoundResult>(&self) -> Result<T, String> {
        if let Some(result) = self.result_text() {
            if let Ok(read) = T::read(result) {
                return Ok(read);
            }
        }
        T::read(self.result()?.get())
    }

    /// The text of an unread message from its result to the `}` that ends the message:
    /// when that reads as one JSON value, it is the result, and the message was JSON-RPC
    /// as its start said (anything after the result, another member say, makes it no
    /// value, and the message is read whole).
    fn result_text(&self) -> Option<&str> {
        let Reply::Unread { message, result_at } = self else {
            return None;
        };
        let ended = message
            .trim_end_matches(is_json_whitespace)
            .strip_suffix('}')?;
        ended.get(*result_at..)
    }
}

/// The result of a whole message, read by the rules every message is read by.
fn whole_result(message: &str) -> Result<&RawValue, String> {
    match jsonrpc::parse_written(message.as_bytes()) {
        Ok(jsonrpc::Written::Response {
            outcome: Ok(result),
            ..
        }) => Ok(result),
        Ok(_) => Err("a message that is no result".to_owned()),
        Err(refused) => Err(format!(
            "a message that is not JSON-RPC 2.0 ({})",
            refused.message
        )),
    }
}

/// The id of the request `message` answers (its digits), and where its result starts,
/// when the message starts exactly `{"jsonrpc":"2.0","id":`, a whole number (the client
/// numbers its requests), `,"result":`, as this crate's server writes it. `None` for any
/// other message, which is read whole.
///
/// A literal start, not a parse: it is found in a few comparisons, where reading even
/// those members with serde_json costs as much as a tenth of reading the whole answer.
/// Whether the rest is the JSON it should be is for serde_json, when the result is read.
pub(crate) fn answered(message: &str) -> Option<(&str, usize)> {
    let after = message.strip_prefix(jsonrpc::RESPONSE_START)?;
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    // A number as JSON writes it (no leading zero), small enough for any id of ours.
    if digits == 0 || digits > 18 || (digits > 1 && after.starts_with('0')) {
        return None;
    }
    let result_at = jsonrpc::RESPONSE_START.len() + digits + jsonrpc::RESPONSE_RESULT.len();
    after[digits..]
        .starts_with(jsonrpc::RESPONSE_RESULT)
        .then_some((&after[..digits], result_at))
}

fn is_json_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::jsonrpc::RequestId;
    use serde_json::{json, Value};

    fn unread(message: &str) -> Reply {
        let (_, result_at) = answered(message).expect(message);
        Reply::Unread {
            message: message.into(),
            result_at,
        }
    }

    #[test]
    fn an_answer_is_known_by_its_start_as_this_crates_server_writes_it() {
        let message = r#"{"jsonrpc":"2.0","id":7,"result":{"a":[1,2]}}"#;
        assert_eq!(answered(message), Some(("7", 33)));
        assert_eq!(&message[33..], r#"{"a":[1,2]}}"#);
        assert_eq!(
            answered(r#"{"jsonrpc":"2.0","id":0,"result":null}"#),
            Some(("0", 33))
        );
        assert_eq!(
            answered(r#"{"jsonrpc":"2.0","id":123456789012345678,"result":1}"#),
            Some(("123456789012345678", 50))
        );
        // As the server writes its answers: if one drifted from the other, every answer
        // would still be read, only the long way.
        let id = RequestId::from_value(&json!(42));
        for written in [
            crate::mcp::jsonrpc::response(&id, &json!({"content": []})),
            crate::mcp::jsonrpc::response_raw(&id, r#"{"content":[]}"#),
        ] {
            let written = std::str::from_utf8(&written).unwrap();
            assert_eq!(answered(written).map(|(id, _)| id), Some("42"), "{written}");
            assert_eq!(unread(written).result().unwrap().get(), r#"{"content":[]}"#);
        }
        for other in [
            // Written otherwise: read whole.
            r#"{"id":7,"jsonrpc":"2.0","result":{}}"#,
            r#"{"result":{},"jsonrpc":"2.0","id":7}"#,
            r#"{ "jsonrpc":"2.0","id":7,"result":{}}"#,
            r#"{"jsonrpc": "2.0", "id": 7, "result": {}}"#,
            // No result, or an id no request of ours has.
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":"7","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":-7,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7.5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":07,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1234567890123456789,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            // Not JSON-RPC 2.0 as it says.
            r#"{"jsonrpc":"1.0","id":7,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
            r#"[{"jsonrpc":"2.0","id":7,"result":{}}]"#,
            "not json",
            "",
        ] {
            assert_eq!(answered(other), None, "{other}");
        }
    }

    /// Every message that starts as an answer does, read as its request reads it and by
    /// the one reader of messages: the same result, or an error from both.
    #[test]
    fn an_unread_answer_reads_as_the_reader_of_every_message_reads_it() {
        let results = [
            r#"{}"#,
            r#"{"resultType":"complete","n":1}"#,
            r#"{"text":"a } and a \"} and {"}"#,
            r#"{"text":"ünïcödé ✓ 𝄞","k":["}","{"]}"#,
            r#"{"deep":{"er":[{"est":[1,2,{"x":null}]}]}}"#,
            r#""a string, } and all""#,
            r#"[1,{"}":2}]"#,
            "null",
            "12.5e3",
            r#"{"surrogate":"\ud800"}"#,
        ];
        let mut messages = Vec::new();
        for result in results {
            for (before, after) in [("", ""), ("", " "), (" ", "\r\n"), ("\n", "\t ")] {
                messages.push(format!(
                    r#"{{"jsonrpc":"2.0","id":7,"result":{before}{result}{after}}}"#
                ));
            }
            // More members after the result, as a server may write.
            messages.push(format!(
                r#"{{"jsonrpc":"2.0","id":7,"result":{result},"_meta":{{}}}}"#
            ));
            messages.push(format!(
                r#"{{"jsonrpc":"2.0","id":7,"result":{result},"error":{{"code":1,"message":"x"}}}}"#
            ));
        }
        // And what is no answer, though it starts as one.
        for broken in [
            r#"{"jsonrpc":"2.0","id":7,"result":{},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"#,
            r#"{"jsonrpc":"2.0","id":7,"result":}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{} x}"#,
        ] {
            messages.push(broken.to_owned());
        }
        for message in &messages {
            let whole = whole_result(message).map(RawValue::get);
            let reply = unread(message);
            assert_eq!(reply.result().map(RawValue::get), whole, "{message}");
            assert_eq!(
                reply
                    .clone()
                    .into_result()
                    .map(|result| result.get().to_owned()),
                whole.clone().map(str::to_owned),
                "{message}"
            );
            let read = reply.read::<Value>();
            let read_whole = whole.and_then(<Value as RoundResult>::read);
            assert_eq!(read, read_whole, "{message}");
        }
        // Most are read alone, not the long way.
        let alone = messages
            .iter()
            .filter(|message| {
                unread(message)
                    .result_text()
                    .is_some_and(|text| serde_json::from_str::<&RawValue>(text).is_ok())
            })
            .count();
        assert_eq!(
            alone,
            results.len() * 4,
            "every result with the final brace after it"
        );
    }

    #[test]
    fn an_unread_answer_that_is_none_says_why() {
        let read = |message: &str| unread(message).read::<Value>().unwrap_err();
        assert!(
            read(r#"{"jsonrpc":"2.0","id":7,"result":{},"method":"ping"}"#)
                .contains("a request has no result")
        );
        assert!(read(r#"{"jsonrpc":"2.0","id":7,"result":{"#).contains("ends early"));
        assert!(
            read(r#"{"jsonrpc":"2.0","id":7,"result":{},"result":{}}"#).contains("duplicate field")
        );
    }
}
