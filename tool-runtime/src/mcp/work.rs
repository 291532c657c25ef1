//! The work a request leaves once its protocol step is done (a call to run, a stream of
//! notifications to keep), handed back to the transport, which decides where it runs: the
//! protocol layer itself spawns nothing.

use super::asking::retry::RetryAsker;
use super::connection::{InFlight, State};
use super::outbox::Outbox;
use super::responses::{settled_answer, AnswerFormat};
use super::{jsonrpc::RequestId, Shared};
use crate::call::scope::Cancellation;
use crate::sync::lock;
use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What became of one incoming message, and the work it left, if any.
///
/// A request is answered through the [`Outbox`] it was handled with; when
/// [`into_work`](Handled::into_work) gives work, the answer comes once that work is run.
#[must_use = "a request's work must be run (spawned or awaited) for the request to be answered"]
#[derive(Debug)]
pub struct Handled {
    request: bool,
    work: Option<Work>,
}

impl Handled {
    pub(crate) fn notification() -> Handled {
        Handled {
            request: false,
            work: None,
        }
    }

    pub(crate) fn request(work: Option<Work>) -> Handled {
        Handled {
            request: true,
            work,
        }
    }

    /// Whether the message was a request (it gets a response), rather than a notification
    /// or a response.
    pub fn is_request(&self) -> bool {
        self.request
    }

    /// The work left to do, if any: run it (spawn it, or await it) and the request gets
    /// its answer; drop it and the request is cancelled.
    pub fn into_work(self) -> Option<Work> {
        self.work
    }
}

/// Work a request left: a tool call, or a stream of notifications that lasts until the
/// request is cancelled or its connection closes. Await it (it is [`IntoFuture`]) or spawn
/// it ([`run`](Work::run) gives the future); dropping it cancels the request.
///
/// ```
/// use tool_runtime::mcp::connection::outbox;
/// use tool_runtime::mcp::{McpServer, ServerInfo};
/// use tool_runtime::{tool, Registry};
///
/// /// Add two integers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let server = McpServer::new(Registry::new().unwrap(), ServerInfo::new("calc", "1.0.0"));
/// let connection = server.connection();
/// let (sink, mut messages) = outbox();
/// let request = concat!(
///     r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","#,
///     r#""arguments":{"a":2,"b":3},"_meta":{"#,
///     r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
///     r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#,
/// );
/// if let Some(work) = connection.handle(request.as_bytes(), &sink).into_work() {
///     tokio::spawn(work.run());
/// }
/// let answer = messages.recv().await.unwrap();
/// let answer: serde_json::Value = serde_json::from_slice(&answer.bytes).unwrap();
/// assert_eq!(answer["result"]["structuredContent"], serde_json::json!(5));
/// # });
/// ```
pub struct Work {
    kind: Kind,
}

enum Kind {
    Call(CallWork),
    /// A stream of notifications, or other work that is not a call.
    Stream(BoxFuture),
    /// Work the request started that outlives it: watching for changes until the
    /// connection closes. It is no part of the request's own time.
    Watch(BoxFuture),
    /// Two works, each run until it ends.
    Both(Box<Work>, Box<Work>),
}

impl fmt::Debug for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Call(work) => f.debug_tuple("Work::Call").field(&work.guard.id).finish(),
            Kind::Stream(_) => f.write_str("Work::Stream"),
            Kind::Watch(_) => f.write_str("Work::Watch"),
            Kind::Both(first, second) => f
                .debug_tuple("Work::Both")
                .field(first)
                .field(second)
                .finish(),
        }
    }
}

impl Work {
    pub(crate) fn call(work: CallWork) -> Work {
        Work {
            kind: Kind::Call(work),
        }
    }

    /// A stream of notifications, or any other work a request leaves that is not a call.
    pub(crate) fn stream(future: impl Future<Output = ()> + Send + 'static) -> Work {
        Work {
            kind: Kind::Stream(Box::pin(future)),
        }
    }

    /// Work that outlives the request that started it (a watch until the connection
    /// closes).
    pub(crate) fn watch(future: impl Future<Output = ()> + Send + 'static) -> Work {
        Work {
            kind: Kind::Watch(Box::pin(future)),
        }
    }

    /// Both works as one, when there are two: each runs until it ends.
    pub(crate) fn both(first: Option<Work>, second: Option<Work>) -> Option<Work> {
        match (first, second) {
            (Some(first), Some(second)) => Some(Work {
                kind: Kind::Both(Box::new(first), Box::new(second)),
            }),
            (first, second) => first.or(second),
        }
    }
}

impl Work {
    /// The same work, run inside `span` (its request's), unless that span is disabled;
    /// a watch it started stays outside, so that the span ends with the request.
    #[cfg(feature = "otel")]
    pub(crate) fn in_span(self, span: &tracing::Span) -> Work {
        use tracing::Instrument;
        if span.is_disabled() {
            return self;
        }
        match self.kind {
            Kind::Watch(_) => self,
            Kind::Both(first, second) => Work {
                kind: Kind::Both(
                    Box::new(first.in_span(span)),
                    Box::new(second.in_span(span)),
                ),
            },
            _ => Work::stream(self.into_future().instrument(span.clone())),
        }
    }

    /// The work as a future: spawn it, or await it.
    pub fn run(self) -> impl Future<Output = ()> + Send + 'static {
        self.into_future()
    }
}

impl IntoFuture for Work {
    type Output = ();
    type IntoFuture = BoxFuture;

    fn into_future(self) -> BoxFuture {
        match self.kind {
            Kind::Call(work) => work.run(),
            Kind::Stream(future) | Kind::Watch(future) => future,
            Kind::Both(first, second) => Box::pin(async move {
                tokio::join!(first.into_future(), second.into_future());
            }),
        }
    }
}

/// A request's one sink: its notifications go there (within the connection's bounded
/// backlog), and so does its answer; in the handshake era its questions to the client too
/// (it is the call's asker: see `asking::live`). A relay may point it elsewhere once the
/// call becomes a task. One object for the three, because every call makes one.
pub(crate) struct RequestSink {
    pub(super) sink: Mutex<Outbox>,
    pub(super) backlog: Arc<super::backlog::Backlog>,
    /// The connection, held weakly: a tool may keep its call's context (a progress handle,
    /// say) after the call, which must not keep a closed connection alive.
    pub(super) state: std::sync::Weak<State>,
    /// The task the call became (2025-11-25), once it has: its questions then say so, and
    /// the task waits `input_required` while they are open.
    pub(super) task: Mutex<Option<super::tasks::TaskLink>>,
}

impl RequestSink {
    pub(super) fn new(state: &Arc<State>, sink: &Outbox) -> Arc<RequestSink> {
        Arc::new(RequestSink {
            sink: Mutex::new(sink.clone()),
            backlog: Arc::clone(&state.backlog),
            state: Arc::downgrade(state),
            task: Mutex::new(None),
        })
    }

    /// From now on the call is `task`.
    pub(super) fn attach(&self, task: super::tasks::TaskLink) {
        *lock(&self.task) = Some(task);
    }
}

impl crate::call::scope::Notifier for RequestSink {
    fn notify(&self, method: &str, params: serde_json::Value) {
        notify_within(&self.backlog, &lock(&self.sink), method, &params);
    }
}

/// Sends a notification to `sink` if the connection's backlog has room (else it is dropped,
/// as the backlog says); false once the sink is closed.
pub(super) fn notify_within(
    backlog: &super::backlog::Backlog,
    sink: &Outbox,
    method: &str,
    params: &serde_json::Value,
) -> bool {
    let Some(place) = backlog.admit() else {
        return true;
    };
    let bytes = super::jsonrpc::notification(method, params);
    sink.send(super::ServerMessage::queued_notification(bytes, place))
}

/// Ends a request's registration when its work ends, however it ends: a work dropped
/// before it answered cancels its request.
pub(crate) struct InFlightGuard {
    pub(super) state: Arc<State>,
    pub(super) id: RequestId,
    /// Which request of this id it is: another of the same id, sent once this one was
    /// cancelled, is not this one's to end.
    pub(super) generation: u64,
    /// Whether the registration has ended through this guard: the drop then leaves the id
    /// alone, which a client may already have used again for its next request.
    pub(super) ended: AtomicBool,
}

impl InFlightGuard {
    /// Whether the request is still waiting for its answer (neither answered nor
    /// cancelled).
    pub(super) fn in_flight(&self) -> bool {
        self.state.is_still_in_flight(&self.id, self.generation)
    }

    /// Answers the request on `sink` with `message()`, unless it was answered or cancelled
    /// meanwhile; whether it was.
    pub(super) fn answer(
        &self,
        sink: &Mutex<Outbox>,
        message: impl FnOnce() -> super::ServerMessage,
    ) -> bool {
        if self.finish().is_none() {
            return false;
        }
        lock(sink).send(message());
        true
    }

    /// Ends the registration, unless it was answered or cancelled meanwhile: what it was.
    pub(super) fn finish(&self) -> Option<InFlight> {
        self.ended.store(true, Ordering::Relaxed);
        self.state.finish(&self.id, self.generation)
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        if self.ended.load(Ordering::Relaxed) {
            return;
        }
        if let Some(in_flight) = self.state.finish(&self.id, self.generation) {
            in_flight.stop();
        }
    }
}

/// The work of a started `tools/call`, registered as in flight, for the transport to run.
pub(crate) struct CallWork {
    pub(super) shared: Arc<Shared>,
    /// The request's registration: dropping the work unanswered cancels it.
    pub(super) guard: InFlightGuard,
    pub(super) pending: crate::registry::PendingCall,
    pub(super) context: crate::call::context::CallContext,
    pub(super) cancellation: Cancellation,
    /// Where the call's notifications and its answer go.
    pub(super) notifier: Arc<RequestSink>,
    /// The shape its answer takes.
    pub(super) format: AnswerFormat,
    /// At 2026-07-28, the round of asking whose verdict shapes the answer.
    pub(super) retry: Option<Arc<RetryAsker>>,
    /// Whether, and how, the call may become a task.
    pub(super) task: Option<super::tasks::TaskPlan>,
}

impl CallWork {
    /// Runs the call to its end and sends its answer, unless it was cancelled meanwhile
    /// (then the tool's future is dropped at once and nothing is sent).
    fn run(mut self) -> BoxFuture {
        // Cancelled before it ran (between its arrival and its claim, or its connection
        // closed): nothing starts, not even a task.
        if self.cancellation.is_cancelled() {
            return Box::pin(std::future::ready(()));
        }
        if let Some(plan) = self.task.take() {
            return Box::pin(super::tasks::run(self, plan));
        }
        // Taken apart before the future starts, so that it holds each part once: every call
        // allocates this future, and a small one stays in the allocator's fast path.
        let CallWork {
            shared,
            guard,
            pending,
            context,
            cancellation,
            notifier,
            format,
            retry,
            task: _,
        } = self;
        Box::pin(async move {
            let mut finish = std::pin::pin!(pending.finish(&context));
            let finished = std::future::poll_fn(|cx| {
                if cancellation.poll_cancelled(cx).is_ready() {
                    return std::task::Poll::Ready(None);
                }
                finish.as_mut().poll(cx).map(Some)
            });
            let Some(result) = finished.await else {
                return;
            };
            // Only a request still in flight is answered: a cancelled one gets nothing.
            guard.answer(&notifier.sink, || {
                settled_answer(&shared, &guard.id, retry.as_deref(), result, format)
            });
        })
    }
}
