//! What a 2026-07-28 server says on its own (its lists changed, a resource changed) comes
//! on a `subscriptions/listen` stream, which the client keeps open for as long as the
//! connection lasts when the server offers anything to listen to, and opens again when
//! the server ends it or the resources subscribed to change. (In the handshake era the GET
//! stream of the session does this.)

use super::session::{RequestOptions, Session};
use super::ClientError;
use serde_json::{json, Value};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// How long one listen request may stay open: as long as the connection, in practice.
const FOR_GOOD: Duration = Duration::from_secs(365 * 24 * 60 * 60);
/// The wait before a stream the server ended is opened again.
const AGAIN_AFTER: Duration = Duration::from_millis(200);

/// Starts listening on `session` when its server offers anything to listen to.
pub(crate) fn start(session: &Arc<Session>) {
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
        return;
    }
    tokio::spawn(listen(Arc::downgrade(session), wanted));
}

/// Keeps a listen stream open for `session` while it lives.
async fn listen(session: Weak<Session>, wanted: Value) {
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
        let listening = live.request("subscriptions/listen", params, options);
        let ended = tokio::select! {
            ended = listening => Some(ended),
            // Dropping the request closes its stream (cancels it): a new one follows.
            () = changed => None,
        };
        drop(live);
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
