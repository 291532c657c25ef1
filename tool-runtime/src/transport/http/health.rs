//! What a load balancer or an orchestrator asks a replica: `GET /healthz` (the process
//! answers: restart it otherwise) and `GET /readyz` (send it requests).
//!
//! Readiness is about this replica alone: it is not draining and not at its capacity. The
//! store replicas share is left out on purpose: when it stops answering, it stops for every
//! replica at once, and a balancer that took them all out would refuse every call, also
//! the many that need no store; the replicas themselves answer those, and answer the others
//! with an error that says to retry. The store's state is told in `/healthz`'s body and in
//! the metric `mcp_store_reachable` instead.
//!
//! Neither passes the Host, origin or token checks: a probe names the replica by its
//! address, and the answers tell nothing secret.

use super::App;
use crate::ops::watch::names::STORE_REACHABLE;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Where liveness is served.
pub(super) const HEALTH_PATH: &str = "/healthz";
/// Where readiness is served.
pub(super) const READY_PATH: &str = "/readyz";

/// Whether the replica is draining: it answers what it has, and asks for nothing new.
#[derive(Debug, Default)]
pub(super) struct Draining(AtomicBool);

impl Draining {
    pub(super) fn start(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub(super) fn is_on(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// 200 for as long as the process serves, with what it knows of itself as JSON:
/// `{"status": "ok", "ready": true, "store": "reachable"}` (`store` is `unreachable`, or
/// `none` without a shared store).
pub(super) async fn healthz(State(app): State<Arc<App>>) -> Response {
    let store = match app.server.store() {
        None => "none",
        Some(store) => {
            let reachable = store.is_reachable().await;
            metrics::gauge!(STORE_REACHABLE).set(if reachable { 1.0 } else { 0.0 });
            if reachable {
                "reachable"
            } else {
                "unreachable"
            }
        }
    };
    let body = serde_json::json!({
        "status": "ok",
        "ready": not_ready(&app).is_none(),
        "store": store,
    });
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        format!("{body}\n"),
    )
        .into_response()
}

pub(super) async fn readyz(State(app): State<Arc<App>>) -> Response {
    match not_ready(&app) {
        Some(reason) => (StatusCode::SERVICE_UNAVAILABLE, reason).into_response(),
        None => (StatusCode::OK, "ready\n").into_response(),
    }
}

/// Why this replica should get no new requests now, if it should not.
fn not_ready(app: &App) -> Option<&'static str> {
    if app.draining.is_on() {
        Some("draining\n")
    } else if app.server.is_at_capacity() {
        Some("at capacity\n")
    } else {
        None
    }
}
