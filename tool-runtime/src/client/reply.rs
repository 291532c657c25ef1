//! The result a request of the client is handed: read once, by the request, into what it
//! needs.
//!
//! A server's answer is found its request by its id. Reading the whole message to learn
//! the id, and then its result again into what the request needs, reads every answer
//! twice. Most servers (ours, rmcp's, the Python SDK's) write an answer the same way:
//! `{"jsonrpc":"2.0","id":7,"result":` and the result, then `}`. Such a message is known
//! by that start, handed over unread, and its request reads the result alone, once. Any
//! other message (spaces, another order, more members) is read whole, by the one reader
//! of messages, as before.

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

/// How an answer with a result starts, as most servers write it, before its id.
const START: &str = r#"{"jsonrpc":"2.0","id":"#;
/// What comes between the id and the result.
const RESULT: &str = r#","result":"#;

/// The id of the request `message` answers, and where its result starts, when the message
/// starts exactly `{"jsonrpc":"2.0","id":`, a whole number (the client numbers its
/// requests), `,"result":`. `None` for any other message, which is read whole.
///
/// A literal start, not a parse: it is found in a few comparisons, where reading even
/// those members with serde_json costs as much as a tenth of reading the whole answer.
/// Whether the rest is the JSON it should be is for serde_json, when the result is read.
pub(crate) fn answered(message: &str) -> Option<(u64, usize)> {
    let after = message.strip_prefix(START)?;
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    // A number as JSON writes it (no leading zero), small enough for any id of ours.
    if digits == 0 || digits > 18 || (digits > 1 && after.starts_with('0')) {
        return None;
    }
    let id = after[..digits].parse().ok()?;
    after[digits..]
        .starts_with(RESULT)
        .then_some((id, START.len() + digits + RESULT.len()))
}

fn is_json_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn unread(message: &str) -> Reply {
        let (_, result_at) = answered(message).expect(message);
        Reply::Unread {
            message: message.into(),
            result_at,
        }
    }

    #[test]
    fn an_answer_is_known_by_its_start_as_most_servers_write_it() {
        let message = r#"{"jsonrpc":"2.0","id":7,"result":{"a":[1,2]}}"#;
        assert_eq!(answered(message), Some((7, 33)));
        assert_eq!(&message[33..], r#"{"a":[1,2]}}"#);
        assert_eq!(
            answered(r#"{"jsonrpc":"2.0","id":0,"result":null}"#),
            Some((0, 33))
        );
        assert_eq!(
            answered(r#"{"jsonrpc":"2.0","id":123456789012345678,"result":1}"#),
            Some((123_456_789_012_345_678, 50))
        );
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

    #[test]
    fn an_unread_answer_reads_as_the_whole_message_reads() {
        let message =
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"resultType\":\"complete\",\"n\":1} }\r\n";
        let reply = unread(message);
        assert_eq!(
            reply.result_text(),
            Some(r#"{"resultType":"complete","n":1} "#),
            "read alone"
        );
        let read: Value = reply.read().unwrap();
        assert_eq!(read, json!({"resultType": "complete", "n": 1}));
        assert_eq!(
            reply.result().unwrap().get(),
            r#"{"resultType":"complete","n":1}"#
        );
        assert_eq!(
            reply.clone().into_result().unwrap().get(),
            r#"{"resultType":"complete","n":1}"#
        );
        // More after the result: not one value, so read whole, by the rules of every
        // message, which say why or read it.
        let more = r#"{"jsonrpc":"2.0","id":7,"result":{"n":1},"_meta":{}}"#;
        assert_eq!(
            unread(more).read::<Value>().unwrap(),
            json!({"n": 1}),
            "another member"
        );
        for (refused, why) in [
            (
                r#"{"jsonrpc":"2.0","id":7,"result":{},"method":"ping"}"#,
                "a request has no result",
            ),
            (r#"{"jsonrpc":"2.0","id":7,"result":{"#, "ends early"),
            (r#"{"jsonrpc":"2.0","id":7,"result":}"#, "Parse error"),
            (
                r#"{"jsonrpc":"2.0","id":7,"result":{},"result":{}}"#,
                "duplicate field",
            ),
        ] {
            let error = unread(refused).read::<Value>().unwrap_err();
            assert!(error.contains(why), "{refused}: {error}");
            let error = unread(refused).result().unwrap_err();
            assert!(error.contains(why), "{refused}: {error}");
        }
    }
}
