//! One connection to a server, once its era is agreed: the requests in flight (matched to
//! their answers by id), the notifications that come (progress to the request that asked
//! for it, the rest to whoever listens), and the server's own requests (answered by the
//! client's handler). The transport under it only moves messages.

use super::deadlines::Deadlines;
use super::error::ClientError;
use super::handler::{self, ClientHandler};
use super::link::Link;
use super::listener::Listener;
use super::params::ParamsOf;
use super::reply::Reply;
use super::wire::{self, ErrorObject, Message, Speaker};
use super::{Notification, Progress};
use crate::mcp::era::Era;
use crate::mcp::header_values::NAME as NAME_HEADER;
use crate::mcp::jsonrpc::RequestId;
use crate::sync::lock;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{broadcast, oneshot};

/// What the server said of itself when the era was agreed.
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerSide {
    pub(crate) capabilities: Value,
    pub(crate) info: Value,
    pub(crate) instructions: Option<String>,
}

/// What a request needs besides its method and params.
#[derive(Default)]
pub(crate) struct RequestOptions {
    /// Where its progress notifications go, if anywhere.
    pub(crate) progress: Option<Listener<Progress>>,
    /// The `Mcp-Param-*` headers of its arguments, over HTTP (`Mcp-Name` is added as it is
    /// sent).
    pub(crate) headers: Vec<(String, String)>,
    /// Its own time limit, instead of the client's.
    pub(crate) timeout: Option<Duration>,
    /// Where the log messages sent on its own stream go (HTTP); elsewhere, and without
    /// this, to the client's listeners.
    pub(crate) logs: Option<Listener<Notification>>,
    /// The id kept for it by [`Session::keep_progress`] ([`KeptProgress::id`]): its
    /// progress goes on being followed after its answer, for as long as that is held (so
    /// it must outlive the request: its drop is what removes the listener).
    pub(crate) kept_progress: Option<u64>,
    /// Whether it is never cancelled with `notifications/cancelled` when its caller stops
    /// waiting (`initialize`, which the protocol has clients never cancel); over HTTP its
    /// exchange is still closed.
    pub(crate) never_cancelled: bool,
}

/// A request's progress followed beyond its answer (a handshake-era task reports its
/// progress under the token of the call that made it, for as long as the task runs): the
/// request's id, reserved, and its progress listener dropped when this is.
pub(crate) struct KeptProgress {
    session: Arc<Session>,
    id: u64,
}

impl KeptProgress {
    /// The id the request is to be sent with.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for KeptProgress {
    fn drop(&mut self) {
        lock(&self.session.progress).remove(&self.id);
    }
}

/// Why a request got no result.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The server answered with an error.
    Server(ErrorObject),
    /// The transport failed on the way (the exchange broke, the session expired).
    Transport(String),
    /// The server broke the protocol in its answer.
    Protocol(String),
    /// The server refused the request's authorization (what the credentials could not mend).
    Refused(super::auth::Refusal),
    /// No authorization could be had.
    Unauthorized(String),
    /// No answer came within the request's time limit.
    TimedOut,
}

type Answered = oneshot::Sender<Result<Reply, Failure>>;

/// What is kept for each request in flight, by its id. Hashed with foldhash, seeded per
/// process, rather than SipHash: each request is looked up a few times, and the ids are
/// this client's own (a server only names them), so there is no flood of chosen keys to
/// resist.
type ById<T> = HashMap<u64, T, foldhash::fast::RandomState>;

pub(crate) struct Session {
    /// The server, as it was named (for errors and logs).
    pub(crate) server: String,
    pub(crate) link: Link,
    pub(crate) speaker: RwLock<Speaker>,
    pub(crate) side: RwLock<ServerSide>,
    next_id: AtomicU64,
    pending: Mutex<ById<Answered>>,
    /// The requests' time limits, kept by one timer.
    deadlines: Arc<Deadlines>,
    /// The task of that timer, once started (started again should its runtime have ended).
    timer: Mutex<Option<tokio::task::AbortHandle>>,
    /// Where each request's progress goes, by the request's id (its progress token).
    progress: Mutex<ById<Listener<Progress>>>,
    /// Where the log messages of each request that wants them go, by request id.
    logs: Mutex<ById<Listener<Notification>>>,
    pub(crate) events: broadcast::Sender<Notification>,
    pub(crate) handler: Arc<dyn ClientHandler>,
    pub(crate) timeout: Duration,
    /// Set once the transport is gone: every request fails at once, and the client
    /// connects again.
    dead: AtomicBool,
    /// Why the connection ended, once it did.
    death: Mutex<Option<String>>,
    /// The resources subscribed to (2026-07-28: named in the listen stream).
    subscribed: Mutex<std::collections::BTreeSet<String>>,
    /// Told when `subscribed` changed.
    resubscribe: tokio::sync::Notify,
    /// The first thing the server sent that was no message (its start, shortened): when no
    /// answer comes, likely why.
    not_understood: Mutex<Option<String>>,
    /// What the client still owes the server: the cancellations sent on their own when a
    /// request or a task was given up. Closing the connection waits for them, so that a
    /// call given up just before (Ctrl-C) is cancelled on the server, not cut off.
    owed: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// The timer of the requests' time limits ends with the connection.
impl Drop for Session {
    fn drop(&mut self) {
        if let Some(timer) = lock(&self.timer).take() {
            timer.abort();
        }
    }
}

/// How long closing a connection waits for each cancellation it still owes the server.
const OWED_PATIENCE: Duration = Duration::from_secs(2);

impl Session {
    /// Sends `message` (a cancellation) on its own, and keeps it owed until it is sent.
    pub(crate) fn owe(&self, message: impl std::future::Future<Output = ()> + Send + 'static) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let sending = runtime.spawn(message);
        let mut owed = lock(&self.owed);
        owed.retain(|sending| !sending.is_finished());
        owed.push(sending);
    }

    /// Waits (a bounded time each) for what the client still owes the server to be sent.
    pub(crate) async fn pay_what_is_owed(&self) {
        let owed = std::mem::take(&mut *lock(&self.owed));
        for sending in owed {
            let _ = tokio::time::timeout(OWED_PATIENCE, sending).await;
        }
    }

    pub(crate) fn new(
        server: String,
        link: Link,
        speaker: Speaker,
        handler: Arc<dyn ClientHandler>,
        timeout: Duration,
    ) -> Arc<Session> {
        let (events, _) = broadcast::channel(256);
        Arc::new(Session {
            server,
            link,
            speaker: RwLock::new(speaker),
            side: RwLock::new(ServerSide::default()),
            next_id: AtomicU64::new(1),
            pending: Mutex::new(ById::default()),
            deadlines: Arc::default(),
            timer: Mutex::new(None),
            progress: Mutex::new(ById::default()),
            logs: Mutex::new(ById::default()),
            events,
            handler,
            timeout,
            dead: AtomicBool::new(false),
            not_understood: Mutex::new(None),
            death: Mutex::new(None),
            subscribed: Mutex::default(),
            resubscribe: tokio::sync::Notify::new(),
            owed: Mutex::default(),
        })
    }

    /// The era and version agreed.
    pub(crate) fn era(&self) -> Era {
        crate::sync::read(&self.speaker).era()
    }

    /// An id for a request whose progress is followed beyond its answer, until what this
    /// gives is dropped (give it as [`RequestOptions::kept_progress`]).
    pub(crate) fn keep_progress(self: &Arc<Self>) -> KeptProgress {
        KeptProgress {
            session: Arc::clone(self),
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Whether the transport is gone.
    pub(crate) fn is_dead(&self) -> bool {
        self.dead.load(Ordering::Acquire)
    }

    /// Keeps the first thing the server sent that was no message, for when an answer does
    /// not come.
    pub(crate) fn not_understood(&self, bytes: &[u8]) {
        const SHOWN: usize = 120;
        let mut first = lock(&self.not_understood);
        if first.is_none() {
            let text = String::from_utf8_lossy(bytes);
            let text = text.trim();
            *first = Some(match text.char_indices().nth(SHOWN) {
                Some((end, _)) => format!("{}...", &text[..end]),
                None => text.to_owned(),
            });
        }
    }

    /// The first thing the server sent that was no message, if any.
    pub(crate) fn first_not_understood(&self) -> Option<String> {
        lock(&self.not_understood).clone()
    }

    /// The resources subscribed to, in order.
    pub(crate) fn subscribed(&self) -> Vec<String> {
        lock(&self.subscribed).iter().cloned().collect()
    }

    /// Subscribes to `uri` (`true`) or unsubscribes (`false`); the listen stream is
    /// opened anew with the new set.
    pub(crate) fn set_subscribed(&self, uri: &str, on: bool) {
        let changed = {
            let mut subscribed = lock(&self.subscribed);
            if on {
                subscribed.insert(uri.to_owned())
            } else {
                subscribed.remove(uri)
            }
        };
        if changed {
            self.resubscribe.notify_waiters();
        }
    }

    /// Resolves when the resources subscribed to change.
    pub(crate) fn subscriptions_changed(&self) -> impl std::future::Future<Output = ()> + '_ {
        self.resubscribe.notified()
    }

    /// The transport is gone: every request waiting fails, and so will the next.
    pub(crate) fn die(&self, reason: &str) {
        if self.dead.swap(true, Ordering::AcqRel) {
            return;
        }
        tracing::debug!(server = %self.server, reason, "the connection to an MCP server ended");
        *lock(&self.death) = Some(reason.to_owned());
        for (_, answer) in lock(&self.pending).drain() {
            let _ = answer.send(Err(Failure::Transport(reason.to_owned())));
        }
        lock(&self.progress).clear();
        lock(&self.logs).clear();
    }

    pub(crate) fn down(&self, reason: impl Into<String>) -> ClientError {
        ClientError::TransportDown {
            server: self.server.clone(),
            reason: reason.into(),
        }
    }

    /// Sends a request and waits for its answer: its result, or why there is none. Dropping
    /// the future cancels the request on the server.
    pub(crate) async fn request(
        self: &Arc<Self>,
        method: &str,
        params: &Value,
        options: RequestOptions,
    ) -> Result<Value, ClientError> {
        // Read once, from the answer as it came (not copied out as text and read again).
        let reply = self.request_reply(method, params.into(), options).await?;
        wire::read_reply(method, &reply)
    }

    /// [`request`](Session::request), its result as the JSON text it came as, for a caller
    /// that reads only part of it.
    pub(crate) async fn request_raw(
        self: &Arc<Self>,
        method: &str,
        params: &Value,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        let reply = self.request_reply(method, params.into(), options).await?;
        reply
            .into_result()
            .map_err(|why| wire::unreadable(method, &why))
    }

    /// [`request`](Session::request), its result as it came, for a caller that reads it
    /// into what it needs ([`Reply::read`]).
    pub(crate) async fn request_reply(
        self: &Arc<Self>,
        method: &str,
        params: ParamsOf<'_>,
        options: RequestOptions,
    ) -> Result<Reply, ClientError> {
        #[cfg(feature = "otel")]
        {
            use tracing::Instrument;
            let span = crate::otel::client::request_span(method, params.named(method));
            if !span.is_disabled() {
                let version = crate::sync::read(&self.speaker).version().to_owned();
                span.record("mcp.protocol.version", version.as_str());
                let outcome = self
                    .exchange(method, params, options, &span)
                    .instrument(span.clone())
                    .await;
                traced_outcome(&span, &outcome);
                return outcome;
            }
        }
        self.exchange(method, params, options, &tracing::Span::none())
            .await
    }

    /// Sends the request and waits for its answer; `span` is the request's (disabled when
    /// no trace is kept), whose context the request carries.
    async fn exchange(
        self: &Arc<Self>,
        method: &str,
        params: ParamsOf<'_>,
        options: RequestOptions,
        #[cfg_attr(not(feature = "otel"), allow(unused_variables))] span: &tracing::Span,
    ) -> Result<Reply, ClientError> {
        if self.is_dead() {
            let why = lock(&self.death).clone();
            return Err(self.down(why.unwrap_or_else(|| "the connection ended".to_owned())));
        }
        let id = options
            .kept_progress
            .unwrap_or_else(|| self.next_id.fetch_add(1, Ordering::Relaxed));
        #[cfg_attr(not(feature = "otel"), allow(unused_mut))]
        let mut added = wire::Added {
            // The request's id is its progress token: unique among the requests running,
            // and a number, which costs nothing to make or to look up.
            progress_token: options.progress.as_ref().map(|_| id),
            ..wire::Added::default()
        };
        // `Mcp-Name` is an HTTP header (a process's link has no headers to carry it), unless
        // the caller gave its own.
        let headers = super::http::RequestHeaders {
            name: params.named(method).filter(|_| {
                self.link.carries_headers()
                    && !options
                        .headers
                        .iter()
                        .any(|(name, _)| name.eq_ignore_ascii_case(NAME_HEADER))
            }),
            params: options.headers,
        };
        #[cfg(feature = "otel")]
        if !span.is_disabled() {
            span.record("jsonrpc.request.id", id);
            crate::otel::write_meta(span, &mut added.trace);
        }
        let (answer, answered) = oneshot::channel();
        lock(&self.pending).insert(id, answer);
        if let Some(progress) = options.progress {
            lock(&self.progress).insert(id, progress);
        }
        if let Some(logs) = options.logs {
            lock(&self.logs).insert(id, logs);
        }
        let mut guard = InFlight {
            session: Arc::clone(self),
            id,
            // A kept request's listener is dropped with what keeps it, not with the request.
            follows_progress: added.progress_token.is_some() && options.kept_progress.is_none(),
            method,
            answer: answered,
            answered: false,
            deadline: None,
            timed_out: false,
            never_cancelled: options.never_cancelled,
        };
        // Its HTTP headers say the era its body was written in, whatever the session speaks
        // by the time they are written.
        let (bytes, spoken) = {
            let speaker = crate::sync::read(&self.speaker);
            let spoken = self
                .link
                .carries_headers()
                .then(|| super::http::Spoken::new(speaker.era(), speaker.version()));
            (
                wire::request(id, method, params, speaker.meta(), &added),
                spoken,
            )
        };
        let mut exchange = self
            .link
            .send_request(self, spoken, id, method, bytes, headers)?;
        let limit = options.timeout.unwrap_or(self.timeout);
        // A limit too far away to be a time is no limit.
        guard.deadline = tokio::time::Instant::now().checked_add(limit);
        if let Some(deadline) = guard.deadline {
            self.start_timer();
            self.deadlines.add(id, deadline);
        }
        // Over HTTP the exchange runs here, beside the wait for the answer it brings, and
        // is dropped with it: done once the answer came or the time ran out.
        let answer = std::future::poll_fn(|context| {
            if let Some(exchanging) = &mut exchange {
                if std::future::Future::poll(exchanging.as_mut(), context).is_ready() {
                    exchange = None;
                }
            }
            std::future::Future::poll(std::pin::Pin::new(&mut guard.answer), context)
        })
        .await;
        drop(exchange);
        let outcome = match answer {
            Ok(Err(Failure::TimedOut)) => {
                guard.timed_out = true;
                return Err(ClientError::TimedOut {
                    method: method.to_owned(),
                    after: limit,
                });
            }
            Ok(outcome) => outcome,
            Err(_) => {
                guard.answered = true;
                return Err(self.down("the connection ended before the answer came"));
            }
        };
        guard.answered = true;
        outcome.map_err(|failure| match failure {
            Failure::Server(error) => ClientError::Server {
                method: method.to_owned(),
                code: error.code,
                message: error.message,
                data: error.data,
            },
            Failure::Transport(reason) => self.down(reason),
            Failure::Protocol(reason) => ClientError::Protocol { reason },
            Failure::Unauthorized(reason) => ClientError::Unauthorized { reason },
            Failure::Refused(refusal) => ClientError::Unauthorized {
                reason: format!("the server refused the request (HTTP {})", refusal.status),
            },
            // Handled above, as it came.
            Failure::TimedOut => ClientError::TimedOut {
                method: method.to_owned(),
                after: limit,
            },
        })
    }

    /// Starts the timer of the requests' time limits, unless it runs. It holds the session
    /// weakly, and is stopped when the session is dropped.
    fn start_timer(self: &Arc<Self>) {
        let mut timer = lock(&self.timer);
        if timer.as_ref().is_some_and(|timer| !timer.is_finished()) {
            return;
        }
        let (deadlines, session) = (Arc::clone(&self.deadlines), Arc::downgrade(self));
        let running = tokio::spawn(async move {
            deadlines
                .run(|id| {
                    if let Some(session) = session.upgrade() {
                        session.expire(id);
                    }
                })
                .await;
        });
        *timer = Some(running.abort_handle());
    }

    /// Request `id` had no answer in time: it is told so.
    fn expire(&self, id: u64) {
        // Told while `pending` is held, as an answer is: a guard ending at the same time
        // finds the request waiting, or this in its answer.
        let mut pending = lock(&self.pending);
        if let Some(answer) = pending.remove(&id) {
            let _ = answer.send(Err(Failure::TimedOut));
        }
    }

    /// Sends a notification.
    pub(crate) async fn notify(
        self: &Arc<Self>,
        method: &str,
        params: Option<Value>,
    ) -> Result<(), ClientError> {
        let bytes = {
            let speaker = crate::sync::read(&self.speaker);
            wire::notification(method, params.as_ref(), speaker.meta())
        };
        self.link.send_notification(self, method, bytes).await
    }

    /// Takes one message from the server, from whichever stream it came on.
    pub(crate) fn dispatch(self: &Arc<Self>, message: Message) {
        self.dispatch_for(message, None);
    }

    /// Takes one message that came on the stream of request `related` (if any): a log
    /// message there belongs to that request.
    pub(crate) fn dispatch_for(self: &Arc<Self>, message: Message, related: Option<u64>) {
        if let Message::Notification { method, params } = &message {
            if method == "notifications/message" {
                let owner = {
                    let logs = lock(&self.logs);
                    // A log message on a request's own stream is that request's; one that
                    // came where requests share a stream (stdio) is the request's when it
                    // is the only one running that wants them, and nobody's otherwise.
                    match related {
                        Some(id) => logs.get(&id).cloned(),
                        None if logs.len() == 1 => logs.values().next().cloned(),
                        None => None,
                    }
                };
                // Told outside the lock: a listener may be a function of the caller's (which
                // may so be told just after its request ended; a mount's stops hearing).
                if let Some(owner) = owner {
                    owner.tell(Notification::of(method, params.clone()));
                    return;
                }
            }
        }
        match message {
            Message::Response { id, outcome } => {
                let Some(id) = id.as_ref().and_then(wire::request_number) else {
                    let id = id.as_ref().map_or("null", RequestId::as_json);
                    tracing::debug!(server = %self.server, id, "an answer to no request of ours");
                    return;
                };
                // Given while `pending` is held (see `InFlight`'s drop).
                let mut pending = lock(&self.pending);
                if let Some(answer) = pending.remove(&id) {
                    let _ = answer.send(outcome.map_err(Failure::Server));
                }
            }
            Message::Request { id, method, params } => {
                let session = Arc::clone(self);
                tokio::spawn(async move {
                    let outcome = handler::answer(&*session.handler, &method, &params).await;
                    session.answer(&id, outcome).await;
                });
            }
            Message::Refused { id, code, message } => {
                tracing::warn!(server = %self.server, %message, "a message from the server was refused");
                let session = Arc::clone(self);
                tokio::spawn(async move { session.answer(&id, Err((code, message))).await });
            }
            Message::Notification { method, params } => self.notified(&method, params),
        }
    }

    /// Sends our answer to the server's request `id`.
    async fn answer(self: &Arc<Self>, id: &RequestId, outcome: Result<Value, (i64, String)>) {
        let bytes = wire::response(id, outcome);
        if let Err(error) = self.link.send_response(self, bytes).await {
            tracing::warn!(server = %self.server, %error, "could not answer a server's request");
        }
    }

    fn notified(&self, method: &str, params: Value) {
        if method == "notifications/progress" {
            // Tokens are the requests' ids; a token of anything else is no request's.
            let listener = params["progressToken"]
                .as_u64()
                .and_then(|id| lock(&self.progress).get(&id).cloned());
            if let Some(progress) = listener {
                progress.tell(Progress {
                    progress: params["progress"].as_f64().unwrap_or(0.0),
                    total: params["total"].as_f64(),
                    message: params["message"].as_str().map(str::to_owned),
                });
            }
            return;
        }
        let notification = Notification::of(method, params);
        // Nobody listening is no error: the notification is simply not needed.
        let _ = self.events.send(notification);
    }

    /// The answer to request `id` cannot come, for `failure`.
    pub(crate) fn fail(&self, id: u64, failure: Failure) {
        let mut pending = lock(&self.pending);
        if let Some(answer) = pending.remove(&id) {
            let _ = answer.send(Err(failure));
        }
    }

    /// Whether request `id` still waits for its answer.
    pub(crate) fn waits_for(&self, id: u64) -> bool {
        lock(&self.pending).contains_key(&id)
    }
}

/// Records how a request ended on its span: the server's error code, a tool's error, or
/// how it failed without an answer.
#[cfg(feature = "otel")]
fn traced_outcome(span: &tracing::Span, outcome: &Result<Reply, ClientError>) {
    use crate::otel::outcome::{answered_with_error, failed};
    let (kind, description) = match outcome {
        Ok(reply) => match reply.result() {
            Ok(result) if wire::says_tool_failed(result) => {
                ("tool_error", "the tool reported an error")
            }
            Ok(_) => return,
            // Its caller is told so when it reads the answer.
            Err(_) => ("protocol", "the answer broke the protocol"),
        },
        Err(ClientError::Server { code, .. }) => return answered_with_error(span, *code),
        Err(ClientError::TimedOut { .. }) => ("timeout", "no answer in time"),
        Err(ClientError::Unauthorized { .. }) => ("unauthorized", "the server refused the client"),
        Err(ClientError::Protocol { .. } | ClientError::UnsupportedVersion { .. }) => {
            ("protocol", "the answer broke the protocol")
        }
        Err(_) => ("transport", "the connection failed"),
    };
    failed(span, kind, description);
}

/// A request waiting for its answer. Dropped unanswered (its caller stopped waiting, or its
/// time ran out), it is cancelled on the server (unless it is never to be).
struct InFlight<'a> {
    session: Arc<Session>,
    id: u64,
    /// Whether the request's progress listener goes with it (one kept beyond it by a
    /// [`KeptProgress`] goes with that).
    follows_progress: bool,
    method: &'a str,
    /// Where its answer comes.
    answer: oneshot::Receiver<Result<Reply, Failure>>,
    /// Whether its caller took the answer.
    answered: bool,
    /// When its answer is due, if it has a time limit.
    deadline: Option<tokio::time::Instant>,
    /// Whether its time limit passed (its answer no longer awaited).
    timed_out: bool,
    /// Whether it is never cancelled on the server.
    never_cancelled: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        // Under the lock the answer is given under: the request still waits, or its answer
        // (the server's, or the timer's) is there, never neither.
        let (waiting, left) = {
            let mut pending = lock(&self.session.pending);
            (
                pending.remove(&self.id).is_some(),
                self.answer.try_recv().ok(),
            )
        };
        // Given up by the timer, whether the caller saw it or stopped waiting first.
        let waiting = waiting || self.timed_out || matches!(left, Some(Err(Failure::TimedOut)));
        // Made a task by the server, in an answer nobody read: that task is given up too.
        if let Some(Ok(result)) = left
            .as_ref()
            .and_then(|left| left.as_ref().ok())
            .map(Reply::result)
        {
            let task = (wire::result_kind(result) == wire::ResultKind::Task)
                .then(|| wire::read_result::<Value>(self.method, result).ok())
                .flatten();
            if let Some(task) = task.as_ref().and_then(|task| task["taskId"].as_str()) {
                super::tasks::cancel_owed(&self.session, task.to_owned());
            }
        }
        if let Some(deadline) = self.deadline {
            self.session.deadlines.remove(self.id, deadline);
        }
        if self.follows_progress {
            lock(&self.session.progress).remove(&self.id);
        }
        lock(&self.session.logs).remove(&self.id);
        if self.answered || !waiting || self.never_cancelled || self.session.is_dead() {
            return;
        }
        // The server stops working on it: over HTTP at 2026-07-28 closing the exchange says
        // so (the exchange is dropped with the request's future); elsewhere a notification.
        if self
            .session
            .link
            .cancels_by_notification(self.session.era())
        {
            let session = Arc::clone(&self.session);
            let params =
                serde_json::json!({"requestId": self.id, "reason": "the client stopped waiting"});
            let method = self.method.to_owned();
            self.session.owe(async move {
                if let Err(error) = session.notify("notifications/cancelled", Some(params)).await {
                    tracing::debug!(%error, method, "could not tell the server a request was cancelled");
                }
            });
        }
    }
}
