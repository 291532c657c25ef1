//! MCP over the process's own stdin and stdout, at the cost of a plain loop: a reader thread
//! reads a message, runs a sync tool proven quick right there, and writes the answers of
//! everything it read in one write before it reads again. Nothing crosses a thread for such
//! a call.
//!
//! A tool that was quick a thousand times can still block on the next call. The reader
//! does not wait for that to be noticed: a watchdog looks while runs in place happen, and
//! when one has lasted [`STUCK_AFTER`], it sends the tool back to the blocking pool (until
//! it proves quick again) and starts a new reader thread, which goes on reading and
//! answering; the old one finishes its call, writes its answer and ends. The watchdog also
//! answers a call whose time limit passes while it runs in place (whatever the tool returns
//! later is dropped), and a `notifications/cancelled` read by the new reader drops it too.
//! Async tools and everything else run on the tokio runtime, as with any transport; their
//! messages go out through a writer thread.

use super::framing::{append, fill_batch, too_large, Framer, Line};
use crate::call::lanes::STUCK_AFTER;
use crate::mcp::connection::{outbox, Connection, Outbox, OutboxReader, ServerMessage, Work};
use crate::mcp::{McpServer, Placed, Watched};
use crate::sync::lock;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How often the watchdog looks after a quiet spell (a run that starts then is caught
/// within this). While runs in place happen, it looks at the next moment one could be due
/// (stuck, or past its time limit), and [`STUCK_AFTER`] later at most: a run that starts
/// meanwhile is then caught on time, with a look per 2 ms rather than more.
const WATCH_QUIET: Duration = Duration::from_millis(20);
/// How long after the last run in place the watchdog still looks often.
const BUSY_FOR: Duration = Duration::from_millis(50);
/// The shortest wait between looks, so that rounding never makes the watchdog spin.
const SHORTEST_WAIT: Duration = Duration::from_micros(50);

type Input = BufReader<Box<dyn Read + Send>>;
type Output = Box<dyn Write + Send>;

struct Shared {
    connection: Connection,
    runtime: tokio::runtime::Handle,
    /// Where work running on the runtime sends its messages (the writer thread).
    sink: Outbox,
    input: Mutex<Input>,
    output: Mutex<Output>,
    limit: usize,
    /// The current reader's number; a reader that sees another one stops.
    reader: AtomicU64,
    /// Calls running in place, one per reader at most.
    running: Mutex<Vec<Running>>,
    base: Instant,
    /// When the last run in place started, in nanoseconds after `base`.
    last_run: AtomicU64,
    finished: AtomicBool,
    ended: Mutex<Option<oneshot::Sender<std::io::Result<()>>>>,
}

struct Running {
    reader: u64,
    since: Instant,
    watched: Watched,
    timed_out: bool,
    handed_over: bool,
    /// Answers the reader had ready but not yet written when the run began: written by the
    /// watchdog if it hands the reading over, so a run that never returns holds none back.
    pending: Vec<u8>,
}

/// Serves one client on `input` and `output` (the process's stdin and stdout) until the
/// input ends.
pub(super) async fn serve(
    server: &McpServer,
    input: Box<dyn Read + Send>,
    output: Output,
) -> std::io::Result<()> {
    let (sink, outgoing) = outbox();
    let connection = server
        .connection()
        .called_by(crate::call::caller::Caller::stdio());
    connection.set_unsolicited(sink.clone());
    let (ended, input_ended) = oneshot::channel();
    let shared = Arc::new(Shared {
        connection,
        runtime: tokio::runtime::Handle::current(),
        sink,
        input: Mutex::new(BufReader::with_capacity(64 * 1024, input)),
        output: Mutex::new(output),
        limit: server.max_message_bytes(),
        reader: AtomicU64::new(0),
        running: Mutex::new(Vec::new()),
        base: Instant::now(),
        last_run: AtomicU64::new(0),
        finished: AtomicBool::new(false),
        ended: Mutex::new(Some(ended)),
    });
    let (written, writer_done) = oneshot::channel();
    let writer = Arc::clone(&shared);
    spawn_thread("mcp-stdio-writer", move || {
        writer.write_messages(outgoing);
        let _ = written.send(());
    })?;
    let reader = Arc::clone(&shared);
    spawn_thread("mcp-stdio-reader", move || reader.read(0))?;
    let watchdog = Arc::clone(&shared);
    spawn_thread("mcp-stdio-watchdog", move || watchdog.watch())?;

    let outcome = input_ended.await.unwrap_or(Ok(()));
    shared.finished.store(true, Ordering::SeqCst);
    super::wind_down(server, &shared.connection).await;
    // An empty message (no real one is) tells the writer to finish.
    shared.sink.send(ServerMessage::notification(Vec::new()));
    // A reader stuck in a tool that never returns holds its thread, not the exit.
    let _ = tokio::time::timeout(Duration::from_secs(1), writer_done).await;
    outcome
}

fn spawn_thread(name: &str, body: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(body)
        .map(|_| ())
}

impl Shared {
    /// A reader: reads, handles and answers until the input ends or another reader takes
    /// over.
    fn read(self: Arc<Self>, me: u64) {
        let (local, mut answers) = outbox();
        let mut out: Vec<u8> = Vec::with_capacity(64 * 1024);
        let mut line = Vec::new();
        while self.reader.load(Ordering::SeqCst) == me {
            let read = {
                let mut input = lock(&self.input);
                if input.buffer().is_empty() && !out.is_empty() {
                    // The next read may wait for the client: answer what is done first.
                    self.write(&mut out);
                }
                read_line(&mut input, &mut line, self.limit)
            };
            match read {
                Err(error) => return self.end(&mut out, Err(error)),
                Ok(Line::End) => return self.end(&mut out, Ok(())),
                Ok(Line::TooLarge(size)) => push(&mut out, &too_large(size, self.limit).bytes),
                Ok(Line::Message) if line.iter().all(u8::is_ascii_whitespace) => {}
                Ok(Line::Message) => self.handle(me, &line, &local, &mut answers, &mut out),
            }
        }
        self.write(&mut out);
    }

    fn handle(
        &self,
        me: u64,
        line: &[u8],
        local: &Outbox,
        answers: &mut OutboxReader,
        out: &mut Vec<u8>,
    ) {
        let placed = self
            .connection
            .handle(line, local)
            .into_work()
            .map(Work::placed);
        match placed {
            None => {}
            Some(Placed::InPlace(work)) => {
                let (call, watched) = work.split();
                let since = Instant::now();
                self.last_run.store(self.nanos_at(since), Ordering::Relaxed);
                lock(&self.running).push(Running {
                    reader: me,
                    since,
                    watched,
                    timed_out: false,
                    handed_over: false,
                    pending: std::mem::take(out),
                });
                let result = call.run(since);
                let run = {
                    let mut running = lock(&self.running);
                    let index = running.iter().position(|run| run.reader == me);
                    index.map(|index| running.swap_remove(index))
                };
                // Only this reader takes its run out, so it is there.
                if let Some(run) = run {
                    // Unless the watchdog wrote them, the earlier answers go first; then
                    // the call's notifications, then its answer.
                    *out = run.pending;
                    drain(answers, out);
                    if let Some(answer) = run.watched.answer(result) {
                        push(out, &answer.bytes);
                    }
                }
                // A call in place is all its message left: nothing more is queued.
                return;
            }
            Some(Placed::Future(mut work)) => {
                // Its messages go to the writer thread: nobody drains this reader's own
                // channel while it waits for input.
                work.redirect(&self.sink);
                self.runtime.spawn(work.run());
            }
        }
        drain(answers, out);
    }

    /// Input ended (or failed): the last answers go out and `serve` takes over.
    fn end(&self, out: &mut Vec<u8>, outcome: std::io::Result<()>) {
        self.write(out);
        if let Some(ended) = lock(&self.ended).take() {
            let _ = ended.send(outcome);
        }
    }

    /// Writes whole messages, under the output lock, and empties `out`.
    fn write(&self, out: &mut Vec<u8>) {
        if out.is_empty() {
            return;
        }
        let mut output = lock(&self.output);
        if let Err(error) = output.write_all(out).and_then(|()| output.flush()) {
            tracing::debug!(%error, "the client's end of stdout is gone");
        }
        out.clear();
    }

    /// The writer thread: messages of work on the runtime, in batches.
    fn write_messages(&self, mut outgoing: OutboxReader) {
        let mut batch = Vec::with_capacity(64 * 1024);
        while let Some(message) = outgoing.blocking_recv() {
            if message.bytes.is_empty() {
                break;
            }
            push(&mut batch, &message.bytes);
            let ended = fill_batch(&mut batch, &mut outgoing);
            self.write(&mut batch);
            if ended {
                break;
            }
        }
        // What is still queued (the last answers) goes out too.
        while let Some(message) = outgoing.try_recv() {
            push(&mut batch, &message.bytes);
        }
        self.write(&mut batch);
    }

    /// The watchdog: answers calls in place whose time is up, and hands the reading over
    /// when a run in place takes long.
    fn watch(self: Arc<Self>) {
        let mut wait = WATCH_QUIET;
        while !self.finished.load(Ordering::SeqCst) {
            std::thread::sleep(wait);
            let now = Instant::now();
            let since_run = self
                .nanos_at(now)
                .saturating_sub(self.last_run.load(Ordering::Relaxed));
            let busy = since_run < u64::try_from(BUSY_FOR.as_nanos()).unwrap_or(u64::MAX);
            wait = if busy { STUCK_AFTER } else { WATCH_QUIET };
            let mut held_back = Vec::new();
            let mut running = lock(&self.running);
            for run in running.iter_mut() {
                let took = now.saturating_duration_since(run.since);
                if let Some(limit) = run.watched.limit().filter(|_| !run.timed_out) {
                    if took >= limit {
                        run.timed_out = true;
                        run.watched.time_out(&self.sink);
                    } else {
                        wait = wait.min(limit - took);
                    }
                }
                if !run.handed_over && took < STUCK_AFTER {
                    wait = wait.min(STUCK_AFTER - took);
                }
                if !run.handed_over && took >= STUCK_AFTER {
                    run.handed_over = true;
                    run.watched.demote();
                    held_back.append(&mut run.pending);
                    if self.reader.load(Ordering::SeqCst) == run.reader {
                        let next = run.reader + 1;
                        self.reader.store(next, Ordering::SeqCst);
                        let reader = Arc::clone(&self);
                        if let Err(error) =
                            spawn_thread("mcp-stdio-reader", move || reader.read(next))
                        {
                            tracing::error!(%error, "cannot start a reader thread");
                        }
                    }
                }
            }
            drop(running);
            // Out at once, not when (if ever) the stuck run returns; answers carry their ids,
            // so coming after a new reader's is no harm.
            self.write(&mut held_back);
            wait = wait.max(SHORTEST_WAIT);
        }
    }

    /// `at` in nanoseconds after `base`.
    fn nanos_at(&self, at: Instant) -> u64 {
        u64::try_from(at.duration_since(self.base).as_nanos()).unwrap_or(u64::MAX)
    }
}

/// Reads one line (see [`super::framing`]), waiting for input as long as it takes.
fn read_line(input: &mut Input, line: &mut Vec<u8>, limit: usize) -> std::io::Result<Line> {
    let mut framer = Framer::start(limit, line);
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok(framer.at_end());
        }
        let (used, ended) = framer.feed(available, line);
        input.consume(used);
        if let Some(ended) = ended {
            return Ok(ended);
        }
    }
}

fn drain(answers: &mut OutboxReader, out: &mut Vec<u8>) {
    while let Some(message) = answers.try_recv() {
        push(out, &message.bytes);
    }
}

/// Appends a message as a line; the empty stop message is no line.
fn push(out: &mut Vec<u8>, message: &[u8]) {
    if !message.is_empty() {
        append(out, message);
    }
}
