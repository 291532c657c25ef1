//! What a 2026-07-28 server says on its own (its lists changed, a resource changed) comes
//! on a `subscriptions/listen` stream, which the client keeps open for as long as the
//! connection lasts when the server offers anything to listen to, and opens again when
//! the server ends it or the resources subscribed to change. (In the handshake era the GET
//! stream of the session does this.)

use super::session::{RequestOptions, Session};
use super::{ClientError, Notification};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::{broadcast, oneshot};

/// How long one listen request may stay open: as long as the connection, in practice.
const FOR_GOOD: Duration = Duration::from_secs(365 * 24 * 60 * 60);
/// The wait before a stream the server ended is opened again.
const AGAIN_AFTER: Duration = Duration::from_millis(200);

/// The notification by which a server says a listen stream is open.
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// Starts listening on `session` when its server offers anything to listen to; resolves
/// (when it does) once the server acknowledged the stream or the first one ended, so that
/// a client connected after it hears whatever the server says from then on.
pub(crate) fn start(session: &Arc<Session>) -> Option<oneshot::Receiver<()>> {
    let capabilities = crate::sync::read(&session.side).capabilities.clone();
    let changes = |list: &str| capabilities[list]["listChanged"].as_bool().unwrap_or(false);
    let wanted = json!({
        "toolsListChanged": changes("tools"),
        "promptsListChanged": changes("prompts"),
        "resourcesListChanged": changes("resources"),
    });
    let updates = capabilities["resources"]["subscribe"]
        .as_bool()
        .unwrap_or(false);
    let anything = wanted
        .as_object()
        .is_some_and(|lists| lists.values().any(|on| on == true));
    if !anything && !updates {
        return None;
    }
    let (opened, told) = oneshot::channel();
    let opened = Arc::new(Mutex::new(Some(opened)));
    // Subscribed before the stream is asked for, so its acknowledgement cannot pass unseen.
    tokio::spawn(tell_when_acknowledged(
        session.events.subscribe(),
        Arc::clone(&opened),
    ));
    tokio::spawn(listen(Arc::downgrade(session), wanted, opened));
    Some(told)
}

/// Who is waiting for the first stream to be open, until it is told.
type Opened = Arc<Mutex<Option<oneshot::Sender<()>>>>;

/// Tells `opened` once the server acknowledges a listen stream (or the session ends).
async fn tell_when_acknowledged(mut heard: broadcast::Receiver<Notification>, opened: Opened) {
    loop {
        match heard.recv().await {
            Ok(Notification::Other { method, .. }) if method == ACKNOWLEDGED => break,
            Err(broadcast::error::RecvError::Closed) => break,
            _ if crate::sync::lock(&opened).is_none() => return,
            _ => {}
        }
    }
    if let Some(opened) = crate::sync::lock(&opened).take() {
        let _ = opened.send(());
    }
}

/// Keeps a listen stream open for `session` while it lives; the first stream that ends
/// unacknowledged lets `opened`'s waiter go on without it.
async fn listen(session: Weak<Session>, wanted: Value, opened: Opened) {
    loop {
        let Some(live) = session.upgrade() else {
            return;
        };
        if live.is_dead() {
            return;
        }
        let mut notifications = wanted.clone();
        let subscribed = live.subscribed();
        if !subscribed.is_empty() {
            notifications["resourceSubscriptions"] = json!(subscribed);
        }
        let changed = live.subscriptions_changed();
        let options = RequestOptions {
            timeout: Some(FOR_GOOD),
            ..RequestOptions::default()
        };
        let params = json!({"notifications": notifications});
        let listening = live.request("subscriptions/listen", &params, options);
        let ended = tokio::select! {
            ended = listening => Some(ended),
            // Dropping the request closes its stream (cancels it): a new one follows.
            () = changed => None,
        };
        drop(live);
        // Ended before it was acknowledged (refused, or cut): nothing to wait for.
        drop(crate::sync::lock(&opened).take());
        match ended {
            // The server ended the stream: open it again, a moment later.
            Some(Ok(_)) | None => {}
            Some(Err(ClientError::Server { code, message, .. })) => {
                tracing::debug!(code, %message, "the server does not take subscriptions/listen");
                return;
            }
            Some(Err(error)) => {
                tracing::debug!(%error, "the listen stream ended");
                if session.upgrade().is_none_or(|session| session.is_dead()) {
                    return;
                }
            }
        }
        tokio::time::sleep(AGAIN_AFTER).await;
    }
}
