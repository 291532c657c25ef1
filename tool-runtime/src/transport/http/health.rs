//! What a load balancer or an orchestrator asks a replica: `GET /healthz` (the process
//! answers: restart it otherwise) and `GET /readyz` (send it requests: it is not draining,
//! and the store it shares state through answers). Neither passes the Host, origin or token
//! checks: a probe names the replica by its address, and the answers tell nothing.

use super::App;
use axum::extract::State;
use axum::http::StatusCode;
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

pub(super) async fn healthz() -> Response {
    (StatusCode::OK, "ok\n").into_response()
}

pub(super) async fn readyz(State(app): State<Arc<App>>) -> Response {
    if app.draining.is_on() {
        return (StatusCode::SERVICE_UNAVAILABLE, "draining\n").into_response();
    }
    if let Some(store) = app.server.store() {
        if !store.is_reachable().await {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                "the store does not answer\n",
            )
                .into_response();
        }
    }
    (StatusCode::OK, "ready\n").into_response()
}
