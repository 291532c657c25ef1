//! What a client subscribes to, and the work that sends it the notifications: in the
//! handshake era `resources/subscribe` and `resources/unsubscribe`, and the list changes a
//! session hears of for as long as it lasts; at 2026-07-28 `subscriptions/listen`, a stream
//! of the list changes and resource updates it asked for, for as long as it lasts.

use crate::call::scope::Cancellation;
use crate::mcp::connection::Connection;
use crate::mcp::jsonrpc::{self, code, RequestId};
use crate::mcp::outbox::Outbox;
use crate::mcp::params::{ListenParams, SubscribeParams};
use crate::mcp::responses::{answered, empty_result, error_message};
use crate::mcp::work::{notify_within, RequestSink, Work};
use crate::mcp::ServerMessage;
use crate::registry::{ListsChanged, Update};
use crate::store::sessions::Change;
use crate::sync::lock;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The notification that a resource changed.
const RESOURCE_UPDATED: &str = "notifications/resources/updated";

/// Where a 2026-07-28 notification names the `subscriptions/listen` stream it belongs to.
const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

/// Each list (in the order of `ListsChanged::flags`): its filter in `subscriptions/listen`,
/// and the notification that says it changed.
pub(crate) const LISTS: [(&str, &str); 3] = [
    ("toolsListChanged", "notifications/tools/list_changed"),
    ("promptsListChanged", "notifications/prompts/list_changed"),
    (
        "resourcesListChanged",
        "notifications/resources/list_changed",
    ),
];

/// The list-changed notifications to send for `changed`, of the lists in `wanted`.
fn list_changed_methods(
    changed: ListsChanged,
    wanted: ListsChanged,
) -> impl Iterator<Item = &'static str> {
    LISTS
        .into_iter()
        .zip(changed.and(wanted).flags())
        .filter_map(|((_, method), send)| send.then_some(method))
}

/// What a `subscriptions/listen` stream sends: the lists it watches, and the resources.
pub(crate) struct Listening {
    pub(crate) lists: ListsChanged,
    pub(crate) resources: HashSet<String>,
}

impl Connection {
    /// `subscriptions/listen`: honors what it can of what the client asked (list changes of
    /// the lists announced as changing, updates of resources when resources are offered),
    /// then streams those notifications until cancelled.
    pub(super) fn listen(
        &self,
        id: RequestId,
        params: ListenParams,
        sink: &Outbox,
    ) -> Option<Work> {
        let wanted = params.notifications;
        let lists = ListsChanged::from_flags([wanted.tools, wanted.prompts, wanted.resources])
            .and(self.shared.list_changed);
        let resources = match self.shared.offered.resources {
            true => wanted.resource_uris.into_iter().collect(),
            false => Default::default(),
        };
        self.listen_stream(id, Listening { lists, resources }, sink)
    }

    /// `resources/subscribe` (`subscribe`) and `resources/unsubscribe`. The first
    /// subscription hands out the work that sends `notifications/resources/updated` for
    /// the subscribed URIs, until the connection closes.
    pub(super) fn subscription(
        &self,
        id: &RequestId,
        subscribe: bool,
        params: SubscribeParams,
        sink: &Outbox,
    ) -> Option<Work> {
        let uri = params.uri;
        if !subscribe {
            lock(&self.state.subscribed).remove(&uri);
            return self.recorded(id, Change::Subscription(uri, false), empty_result(id), sink);
        }
        if !self.shared.registry.has_resource(&uri) {
            let message = format!("Resource not found: {uri}");
            let data = Some(json!({"uri": uri}));
            let refusal = error_message(Some(id), code::RESOURCE_NOT_FOUND, &message, data);
            return answered(sink, refusal);
        }
        lock(&self.state.subscribed).insert(uri.clone());
        // The first subscription starts watching before it is answered, so no update after
        // the answer is missed.
        let first = !self.state.watching_resources.swap(true, Ordering::SeqCst);
        let watcher = first.then(|| self.watch_subscribed());
        let recorded = self.recorded(id, Change::Subscription(uri, true), empty_result(id), sink);
        Work::both(watcher, recorded)
    }

    /// Handshake era: the work that tells the client when a list it was told can change
    /// (tools, prompts, resources) changes, until the connection closes (handed out once
    /// per connection).
    pub(in crate::mcp) fn watch_list_changes(&self) -> Option<Work> {
        if self.state.watching.swap(true, Ordering::SeqCst) {
            return None;
        }
        let mut changes = self.shared.registry.changes();
        let announced = self.shared.list_changed;
        let state = Arc::clone(&self.state);
        let work = async move {
            loop {
                let changed = tokio::select! {
                    biased;
                    () = state.closed.cancelled() => return,
                    changed = changes.next() => match changed {
                        Some(changed) => changed,
                        None => return,
                    },
                };
                if let Some(sink) = lock(&state.unsolicited).as_ref() {
                    for method in list_changed_methods(changed, announced) {
                        notify_within(&state.backlog, sink, method, &json!({}));
                    }
                }
            }
        };
        // Its notifications go where the connection's unsolicited ones go, set apart.
        Some(Work::watch(work))
    }

    /// Handshake era: the work that sends `notifications/resources/updated` for the
    /// resources the client subscribed to, until the connection closes.
    pub(in crate::mcp) fn watch_subscribed(&self) -> Work {
        let mut updates = self.shared.registry.resource_updates().subscribe();
        let state = Arc::clone(&self.state);
        let work = async move {
            loop {
                let update = tokio::select! {
                    biased;
                    () = state.closed.cancelled() => return,
                    update = updates.next() => match update {
                        Some(update) => update,
                        None => return,
                    },
                };
                let uris: Vec<String> = {
                    let subscribed = lock(&state.subscribed);
                    match update {
                        Update::Of(uri) if subscribed.contains(&*uri) => vec![uri.to_string()],
                        Update::Of(_) => continue,
                        Update::Missed => subscribed.iter().cloned().collect(),
                    }
                };
                if let Some(sink) = lock(&state.unsolicited).as_ref() {
                    for uri in uris {
                        let params = json!({"uri": uri});
                        notify_within(&state.backlog, sink, RESOURCE_UPDATED, &params);
                    }
                }
            }
        };
        Work::watch(work)
    }

    /// 2026-07-28 `subscriptions/listen`: acknowledges what it honors of what the client
    /// asked (`listening`), then sends those notifications until cancelled.
    pub(super) fn listen_stream(
        &self,
        id: RequestId,
        listening: Listening,
        sink: &Outbox,
    ) -> Option<Work> {
        let Listening { lists, resources } = listening;
        let mut honored = serde_json::Map::new();
        for ((key, _), on) in LISTS.into_iter().zip(lists.flags()) {
            if on {
                honored.insert(key.to_owned(), true.into());
            }
        }
        if !resources.is_empty() {
            let mut uris: Vec<&String> = resources.iter().collect();
            uris.sort();
            honored.insert("resourceSubscriptions".to_owned(), json!(uris));
        }
        // Watching starts before the acknowledgement, so nothing after it is missed.
        let mut changes = self.shared.registry.changes();
        let mut updates = self.shared.registry.resource_updates().subscribe();
        // Registered first, so a stream cancelled since it arrived is never acknowledged.
        let cancellation = Cancellation::new();
        let subscription = id.to_value();
        let guard = self.register(id, cancellation.clone());
        if cancellation.is_cancelled() {
            return None;
        }
        let acknowledged =
            json!({"_meta": {META_SUBSCRIPTION: subscription}, "notifications": honored});
        sink.send(ServerMessage::notification(jsonrpc::notification(
            "notifications/subscriptions/acknowledged",
            &acknowledged,
        )));
        // The stream stays open (the work holds its sink) until the client ends it, even
        // when there is nothing to send on it.
        let watch_lists = lists.any();
        let watch_updates = !resources.is_empty();
        let sink = RequestSink::new(&self.state, sink);
        let stream_sink = Arc::clone(&sink);
        let state = Arc::clone(&self.state);
        let work = async move {
            let _registered = guard;
            let meta = json!({META_SUBSCRIPTION: subscription});
            loop {
                let notifications: Vec<(&str, Value)> = tokio::select! {
                    biased;
                    () = cancellation.cancelled() => return,
                    () = state.input_ended.cancelled() => return,
                    changed = changes.next(), if watch_lists => match changed {
                        Some(changed) => list_changed_methods(changed, lists)
                            .map(|method| (method, json!({"_meta": meta})))
                            .collect(),
                        None => return,
                    },
                    update = updates.next(), if watch_updates => match update {
                        Some(Update::Of(uri)) if resources.contains(&*uri) => {
                            vec![(RESOURCE_UPDATED, json!({"_meta": meta, "uri": &*uri}))]
                        }
                        Some(Update::Of(_)) => continue,
                        Some(Update::Missed) => resources
                            .iter()
                            .map(|uri| (RESOURCE_UPDATED, json!({"_meta": meta, "uri": uri})))
                            .collect(),
                        None => return,
                    },
                };
                for (method, params) in notifications {
                    let backlog = &stream_sink.backlog;
                    if !notify_within(backlog, &lock(&stream_sink.sink), method, &params) {
                        return;
                    }
                }
            }
        };
        Some(Work::stream(work))
    }
}
