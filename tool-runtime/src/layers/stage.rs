//! One layer given to a registry or a server, made into one service for everything it
//! applies to, and kept behind a lock so that any `tower` service works, `Clone` or not:
//! the lock is held only to get the service ready and hand it the request (as
//! `tower::buffer` does on a task of its own); the request itself runs without it. Tool
//! calls and MCP requests go through layers of this one kind.

use super::BoxError;
use crate::call::error::CallError;
use futures_util::future::BoxFuture;
use std::task::{Context, Poll};
use tower::Service;

/// What goes through layers: what it is answered with, and how an error a layer answers
/// becomes the request's.
pub(super) trait Passing: Send + Sized + 'static {
    /// What a layer's service answers.
    type Answer: Send + 'static;
    /// What names the request in an error (kept before it is handed over).
    type Name: Send + 'static;

    fn name(&self) -> Self::Name;
    fn failed(name: &Self::Name, error: BoxError) -> CallError;
}

/// A layer's service, whatever its type.
trait AnyService<R: Passing>: Send {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>>;
    /// The answer, its error as the request's (naming `name`).
    fn call(
        &mut self,
        request: R,
        name: R::Name,
    ) -> BoxFuture<'static, Result<R::Answer, CallError>>;
}

impl<R, S> AnyService<R> for S
where
    R: Passing,
    S: Service<R, Response = R::Answer> + Send,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Service::poll_ready(self, cx).map_err(Into::into)
    }

    fn call(
        &mut self,
        request: R,
        name: R::Name,
    ) -> BoxFuture<'static, Result<R::Answer, CallError>> {
        let answer = Service::call(self, request);
        match already_boxed::<R::Answer, S::Future>(answer) {
            Ok(boxed) => boxed,
            Err(answer) => {
                Box::pin(
                    async move { answer.await.map_err(|error| R::failed(&name, error.into())) },
                )
            }
        }
    }
}

/// `future` as it is when it is the boxed future of an answer or a [`CallError`] already:
/// what a layer that hands on the future the rest of the way gave it answers (most do). Its
/// error is the request's as it is, so it needs no wrapping, and each such layer costs one
/// allocation less. Any other future comes back, to be wrapped.
fn already_boxed<A: 'static, F: 'static>(
    future: F,
) -> Result<BoxFuture<'static, Result<A, CallError>>, F> {
    let mut slot = Some(future);
    let any: &mut dyn std::any::Any = &mut slot;
    if let Some(boxed) = any.downcast_mut::<Option<BoxFuture<'static, Result<A, CallError>>>>() {
        return Ok(boxed
            .take()
            .expect("the future was put in the slot just above"));
    }
    Err(slot.expect("the future was put in the slot just above"))
}

/// One layer's service.
pub(super) struct Stage<R: Passing> {
    /// The lock of `futures-util`: free, it is taken and given back with one atomic
    /// operation each.
    service: futures_util::lock::Mutex<Box<dyn AnyService<R>>>,
}

impl<R: Passing> Stage<R> {
    pub(super) fn new<S>(service: S) -> Self
    where
        S: Service<R, Response = R::Answer> + Send + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        Stage {
            service: futures_util::lock::Mutex::new(Box::new(service)),
        }
    }

    /// Hands `request` over here and now, when the service is free and ready (nearly
    /// always): its answer; else the request back, for [`hand`](Self::hand). A service
    /// asked with a waker that wakes nothing is asked again, with the request's own, by
    /// `hand`: a service registers the waker of its last poll.
    pub(super) fn hand_now(
        &self,
        request: R,
    ) -> Result<BoxFuture<'static, Result<R::Answer, CallError>>, R> {
        let Some(mut service) = self.service.try_lock() else {
            return Err(request);
        };
        let mut nobody = Context::from_waker(std::task::Waker::noop());
        match service.poll_ready(&mut nobody) {
            Poll::Ready(Ok(())) => {
                let name = request.name();
                Ok(service.call(request, name))
            }
            _ => Err(request),
        }
    }

    /// Hands `request` over once the service is free and ready.
    pub(super) async fn hand(&self, request: R) -> Result<R::Answer, CallError> {
        let name = request.name();
        let answer = {
            let mut service = self.service.lock().await;
            std::future::poll_fn(|cx| service.poll_ready(cx))
                .await
                .map_err(|error| R::failed(&name, error))?;
            service.call(request, name)
        };
        answer.await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_boxed_future_of_a_call_error_is_taken_as_it_is_and_any_other_comes_back() {
        let boxed: BoxFuture<'static, Result<u8, CallError>> = Box::pin(async { Ok(7) });
        assert!(already_boxed::<u8, _>(boxed).is_ok());
        let ready = std::future::ready(Ok::<u8, CallError>(7));
        assert!(already_boxed::<u8, _>(ready).is_err());
        let other_error: BoxFuture<'static, Result<u8, BoxError>> = Box::pin(async { Ok(7) });
        assert!(already_boxed::<u8, _>(other_error).is_err());
    }
}
