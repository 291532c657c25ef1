//! Cutting a byte stream into newline-delimited messages without ever holding more than the
//! message size limit: a longer line is read through to its end and dropped, so one huge
//! message neither exhausts memory nor ends the connection; and the way out: one line per
//! message, several ready messages in one write.

use crate::mcp::connection::ServerMessage;
use crate::mcp::jsonrpc::{self, code};

/// What one read of a line gave.
pub(super) enum Line {
    /// A message is in the buffer.
    Message,
    /// A message past the limit was skipped; its size.
    TooLarge(usize),
    /// The input ended.
    End,
}

/// The state of one line being read.
pub(super) struct Framer {
    limit: usize,
    total: usize,
    too_large: bool,
}

impl Framer {
    /// Starts a line; `line` is cleared.
    pub(super) fn start(limit: usize, line: &mut Vec<u8>) -> Framer {
        line.clear();
        Framer {
            limit,
            total: 0,
            too_large: false,
        }
    }

    /// Takes what belongs to the line from `available` (never empty): how many bytes were
    /// used, and how the line ended when it did.
    pub(super) fn feed(&mut self, available: &[u8], line: &mut Vec<u8>) -> (usize, Option<Line>) {
        // memchr looks at a word or more at a time; the line ends are what a reader spends
        // its time finding in a stream of short messages.
        let (chunk, complete) = match memchr::memchr(b'\n', available) {
            Some(end) => (&available[..=end], true),
            None => (available, false),
        };
        let used = chunk.len();
        self.total += used;
        if !self.too_large {
            if line.len() + used > self.limit {
                self.too_large = true;
                line.clear();
                line.shrink_to(64 * 1024);
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let ended = complete.then(|| self.ended());
        (used, ended)
    }

    /// The input ended: what the line is.
    pub(super) fn at_end(&self) -> Line {
        match (self.total, self.too_large) {
            (0, _) => Line::End,
            (_, true) => Line::TooLarge(self.total),
            // Input closed in the middle of a message: what came is still handled.
            (_, false) => Line::Message,
        }
    }

    fn ended(&self) -> Line {
        if self.too_large {
            Line::TooLarge(self.total)
        } else {
            Line::Message
        }
    }
}

/// The answer to a message over the limit: it is refused, naming the limit.
pub(super) fn too_large(size: usize, limit: usize) -> ServerMessage {
    let message =
        format!("Invalid Request: the message is {size} bytes; the limit is {limit} bytes");
    ServerMessage::error(
        code::INVALID_REQUEST,
        jsonrpc::error_response(None, code::INVALID_REQUEST, &message, None),
    )
}

/// The most one write holds: everything ready goes out in one system call, up to this.
const BATCH_BYTES: usize = 1024 * 1024;

/// Appends to `batch` the messages already waiting, up to the batch size.
pub(super) fn fill_batch(batch: &mut Vec<u8>, outgoing: &mut crate::mcp::connection::OutboxReader) {
    while batch.len() < BATCH_BYTES {
        match outgoing.try_recv() {
            Some(message) => append(batch, &message.bytes),
            None => break,
        }
    }
}

/// Appends one outgoing message to `out` as a line.
pub(super) fn append(out: &mut Vec<u8>, message: &[u8]) {
    out.extend_from_slice(message);
    out.push(b'\n');
}
