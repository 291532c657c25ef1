//! The `tasks/*` requests of both eras, answered from the task store: registered in flight
//! first (they arrived counted, so the connection's limits and a duplicate id refused them
//! before the store is touched), then handed back as work, which the request's cancellation
//! stops. A store's
//! future may need a runtime's timers or sockets, which only the transport's runtime has.

use crate::call::caller::Caller;
use crate::call::scope::Cancellation;
use crate::mcp::connection::origin::Origin;
use crate::mcp::connection::Connection;
use crate::mcp::jsonrpc::RequestId;
use crate::mcp::outbox::Outbox;
use crate::mcp::params::{Method, MethodParams};
use crate::mcp::remote_relay;
use crate::mcp::responses::answered;
use crate::mcp::tasks::{self, TaskRequest};
use crate::mcp::work::{RequestSink, Work};
use crate::mcp::ServerMessage;
use crate::sync::lock;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

impl Connection {
    /// The task methods of 2025-11-25; `tasks/result` waits for its task to end.
    pub(super) fn core_task_request(
        &self,
        id: RequestId,
        asked: MethodParams,
        caller: &Caller,
        sink: &Outbox,
    ) -> Option<Work> {
        let waits = asked.method() == Method::TaskResult;
        let request = self.task_request(&id, asked, caller);
        let state = Arc::clone(&self.state);
        if !waits {
            return self.answer_from_store(id, |_| tasks::core_method(request, state), sink);
        }
        // The task's questions and notifications come on this request's stream while it
        // waits: attached once the task is found to be the caller's (to anyone else it
        // does not exist).
        let waiting = |stream: &Arc<RequestSink>| {
            let stream = Arc::clone(stream);
            // A task another replica runs (in a session replicas share) sends through the
            // store: its messages are taken onto this stream while the request waits.
            let remote = Arc::new(std::sync::Mutex::new(None));
            let attach = {
                let (state, stream, remote) =
                    (Arc::clone(&state), Arc::clone(&stream), Arc::clone(&remote));
                move |task: &str| {
                    let relay = lock(&state.relays).get(task).cloned();
                    match relay {
                        Some(relay) => relay.wait_on(&stream),
                        None if state.shared_session.get().is_some() => {
                            *lock(&remote) = Some((state, task.to_owned(), stream));
                        }
                        None => {}
                    }
                }
            };
            let answer = tasks::result_when_ended(request, attach);
            async move {
                let mut answer = std::pin::pin!(answer);
                let mut taking: Option<Pin<Box<dyn Future<Output = ()> + Send>>> = None;
                std::future::poll_fn(|cx| {
                    if let Poll::Ready(message) = answer.as_mut().poll(cx) {
                        return Poll::Ready(message);
                    }
                    // Attached while the answer was polled: taking starts at once.
                    if let Some((state, task, stream)) = lock(&remote).take() {
                        taking = Some(Box::pin(remote_relay::take_onto(state, task, stream)));
                    }
                    if let Some(take) = &mut taking {
                        if take.as_mut().poll(cx).is_ready() {
                            taking = None;
                        }
                    }
                    Poll::Pending
                })
                .await
            }
        };
        self.answer_from_store(id, waiting, sink)
    }

    /// The task methods of the 2026-07-28 extension, which only a request that declares
    /// the extension may use, whatever it asks.
    pub(super) fn extension_task_request(
        &self,
        id: RequestId,
        asked: MethodParams,
        name: &str,
        origin: &Origin<'_>,
        sink: &Outbox,
    ) -> Option<Work> {
        if !origin.declares_tasks() {
            return answered(sink, tasks::extension_required(&id, name));
        }
        let request = self.task_request(&id, asked, origin.caller);
        self.answer_from_store(id, |_| tasks::extension_method(request), sink)
    }

    /// A `tasks/*` request, as its handler takes it.
    fn task_request(&self, id: &RequestId, asked: MethodParams, caller: &Caller) -> TaskRequest {
        TaskRequest {
            shared: Arc::clone(&self.shared),
            id: id.clone(),
            asked,
            caller: caller.clone(),
        }
    }

    /// Answers a request whose answer comes from the task store (`answer`, given the
    /// request's stream), as registered work.
    fn answer_from_store<F: Future<Output = ServerMessage> + Send + 'static>(
        &self,
        id: RequestId,
        answer: impl FnOnce(&Arc<RequestSink>) -> F,
        sink: &Outbox,
    ) -> Option<Work> {
        let cancellation = Cancellation::new();
        let guard = self.register(id, cancellation.clone());
        let sink = RequestSink::new(&self.state, sink);
        let answer = answer(&sink);
        Some(Work::stream(async move {
            let message = tokio::select! {
                biased;
                () = cancellation.cancelled() => return,
                message = answer => message,
            };
            guard.answer(&sink.sink, || message);
        }))
    }
}
