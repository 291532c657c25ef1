//! A bound on the size of one server-sent event: an event may not be larger than a message
//! may, however its bytes are split into chunks.

use bytes::Bytes;
use futures_util::StreamExt;

/// A byte stream of events that fails once more than `limit` bytes come without an event
/// ending.
pub(crate) fn bounded(
    stream: impl futures_util::Stream<Item = Result<Bytes, String>> + Send + 'static,
    limit: usize,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    let mut size = EventSize::default();
    stream.map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        if size.read(&chunk) > limit {
            return Err(std::io::Error::other(format!(
                "the server sent an event over {limit} bytes"
            )));
        }
        Ok(chunk)
    })
}

/// How many bytes of the event being read have come. An event ends at a blank line: two
/// line ends in a row, each `\n`, `\r\n` or `\r`, which may come split across chunks (a
/// `\r\n` too).
struct EventSize {
    since_end: usize,
    /// Nothing came on the line being read (so the next line end ends an event).
    line_empty: bool,
    /// The last byte was a `\r`: a `\n` right after it ends no line of its own.
    after_cr: bool,
    /// That `\r` ended an event (so its `\n` belongs to that end).
    cr_ended_event: bool,
}

impl Default for EventSize {
    fn default() -> EventSize {
        EventSize {
            since_end: 0,
            line_empty: true,
            after_cr: false,
            cr_ended_event: false,
        }
    }
}

impl EventSize {
    /// Counts `chunk`, and gives how many bytes of the event it ends in came so far.
    fn read(&mut self, chunk: &[u8]) -> usize {
        let mut line_start = 0;
        let mut last_end = None;
        for at in memchr::memchr2_iter(b'\n', b'\r', chunk) {
            if at > line_start {
                self.line_empty = false;
                self.after_cr = false;
            }
            let byte = chunk[at];
            if byte == b'\n' && self.after_cr {
                if self.cr_ended_event {
                    last_end = Some(at + 1);
                }
                self.after_cr = false;
            } else {
                let ends_event = self.line_empty;
                if ends_event {
                    last_end = Some(at + 1);
                }
                self.line_empty = true;
                self.after_cr = byte == b'\r';
                self.cr_ended_event = ends_event && self.after_cr;
            }
            line_start = at + 1;
        }
        if line_start < chunk.len() {
            self.line_empty = false;
            self.after_cr = false;
        }
        self.since_end = match last_end {
            Some(end) => chunk.len() - end,
            None => self.since_end + chunk.len(),
        };
        self.since_end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes after each chunk.
    fn sizes(chunks: &[&str]) -> Vec<usize> {
        let mut size = EventSize::default();
        chunks
            .iter()
            .map(|chunk| size.read(chunk.as_bytes()))
            .collect()
    }

    #[test]
    fn an_event_ends_at_a_blank_line_of_any_line_end() {
        assert_eq!(sizes(&["data: a\n\ndata: bc"]), [8]);
        assert_eq!(sizes(&["data: a\r\n\r\ndata: bc"]), [8]);
        assert_eq!(sizes(&["data: a\r\rdata: bc"]), [8]);
        assert_eq!(sizes(&["data: a\r\n\ndata: bc"]), [8]);
        // One line end is no blank line.
        assert_eq!(sizes(&["data: a\ndata: bc"]), [16]);
        assert_eq!(sizes(&["data: a\r\ndata: bc"]), [17]);
    }

    #[test]
    fn a_blank_line_split_across_chunks_ends_the_event() {
        assert_eq!(sizes(&["data: a\n", "\n", "data: bc"]), [8, 0, 8]);
        assert_eq!(
            sizes(&["data: a\r", "\n", "\r\n", "data: bc"]),
            [8, 9, 0, 8]
        );
        assert_eq!(sizes(&["data: a\r\n\r", "\ndata: bc"]), [0, 8]);
        // A `\r\n` split in two is one line end, not two.
        assert_eq!(sizes(&["data: a\r", "\ndata: bc"]), [8, 17]);
    }

    #[tokio::test]
    async fn many_small_events_pass_and_one_large_event_fails() {
        let chunks = |parts: Vec<String>| {
            futures_util::stream::iter(parts.into_iter().map(|part| Ok(Bytes::from(part))))
        };
        // Each event's blank line comes as a chunk of its own: 100 events of 10 bytes.
        let small = (0..100)
            .flat_map(|_| ["data: abc\n".to_owned(), "\n".to_owned()])
            .collect();
        let read: Vec<_> = bounded(chunks(small), 64).collect().await;
        assert!(read.iter().all(Result::is_ok));
        let large = vec!["data: ".to_owned(), "x".repeat(100), "\n\n".to_owned()];
        let read: Vec<_> = bounded(chunks(large), 64).collect().await;
        let error = read
            .into_iter()
            .find_map(Result::err)
            .expect("over the bound");
        assert_eq!(error.to_string(), "the server sent an event over 64 bytes");
    }
}
