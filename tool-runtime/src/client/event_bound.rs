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

/// How many bytes the events of a stream take, one by one. An event ends at a blank line:
/// two line ends in a row, each `\n`, `\r\n` or `\r`, which may come split across chunks
/// (a `\r\n` too).
struct EventSize {
    /// The bytes of the event being read that came so far.
    since_end: usize,
    /// Nothing came on the line being read (so the next line end ends an event).
    line_empty: bool,
    /// The last byte was a `\r`: a `\n` right after it ends no line of its own.
    after_cr: bool,
    /// That `\r` ended an event, of this many bytes (its `\n` belongs to that event). Read
    /// only while `after_cr` holds, and set anew with it, so it is never cleared apart.
    cr_ended_event: Option<usize>,
}

impl Default for EventSize {
    fn default() -> EventSize {
        EventSize {
            since_end: 0,
            line_empty: true,
            after_cr: false,
            cr_ended_event: None,
        }
    }
}

impl EventSize {
    /// Counts `chunk`, and gives the size of the largest event in it: those that end in it
    /// (with their bytes from earlier chunks) and the one it ends in, so far.
    fn read(&mut self, chunk: &[u8]) -> usize {
        let mut largest = 0;
        // Where the event being read starts in this chunk, and its bytes before.
        let (mut event_start, mut carried) = (0, self.since_end);
        let mut line_start = 0;
        for at in memchr::memchr2_iter(b'\n', b'\r', chunk) {
            if at > line_start {
                self.line_empty = false;
                self.after_cr = false;
            }
            let byte = chunk[at];
            if byte == b'\n' && self.after_cr {
                if let Some(size) = self.cr_ended_event.take() {
                    largest = largest.max(size + 1);
                    event_start = at + 1;
                }
                self.after_cr = false;
            } else {
                let ends_event = self.line_empty;
                self.line_empty = true;
                self.after_cr = byte == b'\r';
                self.cr_ended_event = None;
                if ends_event {
                    let size = carried + at + 1 - event_start;
                    largest = largest.max(size);
                    (event_start, carried) = (at + 1, 0);
                    if self.after_cr {
                        self.cr_ended_event = Some(size);
                    }
                }
            }
            line_start = at + 1;
        }
        if line_start < chunk.len() {
            self.line_empty = false;
            self.after_cr = false;
        }
        self.since_end = carried + chunk.len() - event_start;
        largest.max(self.since_end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest event's size after each chunk, and what the last one left unended.
    fn sizes(chunks: &[&str]) -> (Vec<usize>, usize) {
        let mut size = EventSize::default();
        let largest = chunks
            .iter()
            .map(|chunk| size.read(chunk.as_bytes()))
            .collect();
        (largest, size.since_end)
    }

    #[test]
    fn an_event_ends_at_a_blank_line_of_any_line_end() {
        assert_eq!(sizes(&["data: a\n\ndata: bc"]), (vec![9], 8));
        assert_eq!(sizes(&["data: a\r\n\r\ndata: bc"]), (vec![11], 8));
        assert_eq!(sizes(&["data: a\r\rdata: bc"]), (vec![9], 8));
        assert_eq!(sizes(&["data: a\r\n\ndata: bc"]), (vec![10], 8));
        // One line end is no blank line.
        assert_eq!(sizes(&["data: a\ndata: bc"]), (vec![16], 16));
        assert_eq!(sizes(&["data: a\r\ndata: bc"]), (vec![17], 17));
    }

    #[test]
    fn a_blank_line_split_across_chunks_ends_the_event() {
        assert_eq!(sizes(&["data: a\n", "\n", "data: bc"]), (vec![8, 9, 8], 8));
        assert_eq!(
            sizes(&["data: a\r", "\n", "\r\n", "data: bc"]),
            (vec![8, 9, 11, 8], 8)
        );
        assert_eq!(sizes(&["data: a\r\n\r", "\ndata: bc"]), (vec![10, 11], 8));
        // A `\r\n` split in two is one line end, not two.
        assert_eq!(sizes(&["data: a\r", "\ndata: bc"]), (vec![8, 17], 17));
    }

    #[test]
    fn each_event_in_a_chunk_is_measured_not_only_the_last() {
        // A large event between small ones, all in one chunk.
        let chunk = format!("data: a\n\ndata: {}\n\ndata: b\n\n", "x".repeat(100));
        assert_eq!(sizes(&[&chunk]), (vec![108], 0));
        // A large event begun in one chunk and ended early in the next.
        let begun = format!("data: {}", "x".repeat(50));
        let ended = format!("{}\n\ndata: b", "x".repeat(100));
        assert_eq!(sizes(&[&begun, &ended]), (vec![56, 158], 7));
    }

    /// The sizes of the events `stream` holds, read whole by the rule of server-sent events
    /// (a line ends at `\r\n`, `\n` or `\r`; a blank line ends an event, its line end
    /// counted in it), and the bytes after the last one.
    fn events_of(stream: &[u8]) -> (Vec<usize>, usize) {
        let (mut sizes, mut event_start, mut line_start) = (Vec::new(), 0, 0);
        let mut at = 0;
        while at < stream.len() {
            let line_end = match (stream[at], stream.get(at + 1)) {
                (b'\r', Some(b'\n')) => 2,
                (b'\r' | b'\n', _) => 1,
                _ => 0,
            };
            if line_end == 0 {
                at += 1;
                continue;
            }
            let blank = at == line_start;
            at += line_end;
            line_start = at;
            if blank {
                sizes.push(at - event_start);
                event_start = at;
            }
        }
        (sizes, stream.len() - event_start)
    }

    /// Every stream of up to `length` bytes made of `alphabet`.
    fn streams(alphabet: &[u8], length: usize) -> Vec<Vec<u8>> {
        let mut all = vec![Vec::new()];
        let mut last = vec![Vec::new()];
        for _ in 0..length {
            last = last
                .iter()
                .flat_map(|stream: &Vec<u8>| {
                    alphabet.iter().map(move |&byte| {
                        let mut longer = stream.clone();
                        longer.push(byte);
                        longer
                    })
                })
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    #[test]
    fn however_a_stream_is_cut_into_chunks_its_largest_event_is_that_of_the_whole() {
        // Every stream of up to eight bytes of text and line ends, cut at every one or two
        // places and into single bytes: the largest size the bound sees, and what is left
        // unended, are those of the stream read whole. A `\r\n` split between chunks, a
        // `\r` that ends an event before a `\n` in the next chunk, and blank lines at the
        // start are all among them.
        for stream in streams(b"a\n\r", 8) {
            let (events, unended) = events_of(&stream);
            let largest = events.iter().copied().max().unwrap_or(0).max(unended);
            let length = stream.len();
            let mut cuts: Vec<Vec<usize>> = vec![vec![], (1..length).collect()];
            for first in 1..length {
                cuts.push(vec![first]);
                cuts.extend((first + 1..length).map(|second| vec![first, second]));
            }
            for cut in cuts {
                let mut size = EventSize::default();
                let mut seen = 0;
                let mut from = 0;
                for to in cut.into_iter().chain([length]) {
                    seen = size.read(&stream[from..to]).max(seen);
                    from = to;
                }
                assert_eq!(
                    (seen, size.since_end),
                    (largest, unended),
                    "{:?} cut as it was",
                    String::from_utf8_lossy(&stream)
                );
            }
        }
    }

    #[tokio::test]
    async fn many_small_events_pass_and_one_large_event_fails() {
        let chunks = |parts: Vec<String>| {
            futures_util::stream::iter(parts.into_iter().map(|part| Ok(Bytes::from(part))))
        };
        // Each event's blank line comes as a chunk of its own: 100 events of 11 bytes.
        let small = (0..100)
            .flat_map(|_| ["data: abc\n".to_owned(), "\n".to_owned()])
            .collect();
        let read: Vec<_> = bounded(chunks(small), 64).collect().await;
        assert!(read.iter().all(Result::is_ok));
        // Ended in the chunk that brings most of it, the next event begun there too.
        let large = vec![
            "data: ".to_owned(),
            format!("{}\n\ndata: b", "x".repeat(100)),
        ];
        let read: Vec<_> = bounded(chunks(large), 64).collect().await;
        let error = read
            .into_iter()
            .find_map(Result::err)
            .expect("over the bound");
        assert_eq!(error.to_string(), "the server sent an event over 64 bytes");
    }
}
