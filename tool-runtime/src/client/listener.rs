//! Where the notifications of one request go: a channel its caller reads, or a function
//! called with each as it comes (what a mount uses: no channel to allocate, no task to read
//! it, for every call it relays).

use std::sync::Arc;
use tokio::sync::mpsc;

/// Where one request's notifications of kind `T` go.
pub(crate) enum Listener<T> {
    /// A channel its caller reads.
    Channel(mpsc::UnboundedSender<T>),
    /// A function called with each as it comes (on the connection's reader; a task's
    /// states on the caller's own task): it must not wait. It may be called just after its
    /// request ended, when the notification came on another stream than the answer.
    Call(Arc<dyn Fn(T) + Send + Sync>),
}

impl<T> Clone for Listener<T> {
    fn clone(&self) -> Self {
        match self {
            Listener::Channel(sender) => Listener::Channel(sender.clone()),
            Listener::Call(call) => Listener::Call(Arc::clone(call)),
        }
    }
}

impl<T> Listener<T> {
    /// A listener that calls `call` with each notification.
    pub(crate) fn call(call: impl Fn(T) + Send + Sync + 'static) -> Listener<T> {
        Listener::Call(Arc::new(call))
    }

    /// Hands `item` on; a channel nobody reads any more drops it.
    pub(crate) fn tell(&self, item: T) {
        match self {
            Listener::Channel(sender) => {
                let _ = sender.send(item);
            }
            Listener::Call(call) => call(item),
        }
    }
}

impl<T> From<mpsc::UnboundedSender<T>> for Listener<T> {
    fn from(sender: mpsc::UnboundedSender<T>) -> Listener<T> {
        Listener::Channel(sender)
    }
}
