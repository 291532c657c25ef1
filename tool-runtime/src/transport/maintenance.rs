//! The driver of a server's time: it tells the server the time whenever one of its waits
//! comes due, runs the work due now and then (with a store replicas share: renewing this
//! replica's leases on tasks, looking for tasks whose worker was lost and running them again
//! here), and keeps the gauge `mcp_store_reachable` current. The protocol layer itself reads
//! no clock and starts no timer; this is where time comes from.
//!
//! The built-in transports start it with their first connection. A transport of one's own
//! runs it too, once per server, on the tokio runtime the server's work runs on:
//!
//! ```
//! use tool_runtime::mcp::{McpServer, ServerInfo};
//! use tool_runtime::Registry;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let server = McpServer::new(Registry::new().unwrap(), ServerInfo::new("calc", "1.0.0"));
//! if let Some(driver) = tool_runtime::transport::maintenance(&server) {
//!     tokio::spawn(driver);
//! }
//! // ... then serve connections: server.connection(), handle, run the work ...
//! # });
//! ```

use crate::mcp::McpServer;
use std::future::Future;
use std::time::Duration;

/// How often a server asks its shared store whether it answers, for the gauge.
const STORE_CHECK_EVERY: Duration = Duration::from_secs(5);

/// The driver of `server`'s time, to spawn on the runtime its work runs on; `None` when
/// the server already has one. It runs until the runtime stops.
pub fn maintenance(server: &McpServer) -> Option<impl Future<Output = ()> + Send + 'static> {
    if !server.claim_driver() {
        return None;
    }
    let server = server.clone();
    Some(async move {
        server.start_registry();
        let watched = server.store().cloned().map(watch_store);
        let driven = drive(server);
        match watched {
            Some(watched) => {
                tokio::join!(watched, driven);
            }
            None => driven.await,
        }
    })
}

/// Starts [`maintenance`] on the current tokio runtime, once per server. Outside a runtime
/// it cannot, and says so.
pub(crate) fn start_maintenance(server: &McpServer) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!(
            "served outside a tokio runtime: nothing tells this server the time (calls do \
             not become tasks, lost tasks are not taken over); serve it inside one"
        );
        return;
    };
    if let Some(driver) = maintenance(server) {
        runtime.spawn(driver);
    }
}

/// Tells `server` the time each time it asks, and runs the work it hands out.
async fn drive(server: McpServer) {
    loop {
        let now = tokio::time::Instant::now();
        for work in server.on_time(now.into_std()) {
            tokio::spawn(work.run());
        }
        let changed = server.wake_changed();
        match server.next_wake() {
            Some(at) => {
                tokio::select! {
                    () = tokio::time::sleep_until(at.into()) => {}
                    () = changed => {}
                }
            }
            None => changed.await,
        }
    }
}

/// Keeps the gauge of whether the shared store answers current.
async fn watch_store(store: crate::store::Store) {
    loop {
        let reachable = store.is_reachable().await;
        metrics::gauge!(crate::ops::watch::names::STORE_REACHABLE).set(if reachable {
            1.0
        } else {
            0.0
        });
        tokio::time::sleep(STORE_CHECK_EVERY).await;
    }
}
