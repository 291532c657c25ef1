//! Transports move bytes between a client and a [`Connection`](crate::mcp::Connection):
//! newline-delimited JSON over any reader and writer (stdio), and Streamable HTTP with the
//! REST endpoints (axum).

#[cfg(feature = "http")]
pub mod http;
pub mod stdio;

use crate::mcp::McpServer;

/// Starts the work a server with a shared store runs for as long as it lives (taking over
/// the tasks of replicas that were lost), on the current tokio runtime. Outside a runtime
/// it cannot, and says so: the other replicas still take over lost tasks.
pub(crate) fn start_maintenance(server: &McpServer) {
    let Some((sweep, mut reruns)) = server.maintenance() else {
        return;
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!(
            "built outside a tokio runtime: this server will not take over the tasks of lost \
             replicas (build it inside one)"
        );
        return;
    };
    runtime.spawn(sweep.run());
    if let Some(store) = server.store().cloned() {
        runtime.spawn(watch_store(store));
    }
    runtime.spawn(async move {
        while let Some(rerun) = reruns.recv().await {
            tokio::spawn(rerun.run());
        }
    });
}

/// How often a server asks its shared store whether it answers, for the metric.
const STORE_CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Keeps the gauge of whether the shared store answers (`mcp_store_reachable`) current.
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
