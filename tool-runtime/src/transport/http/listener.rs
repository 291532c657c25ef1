//! The server's accept loop: connections counted in all and per client address, refused
//! past either cap with a 503; a time limit on every request head (which also closes
//! connections left idle between requests); and a process out of file descriptors that
//! keeps serving what it has and accepts again as soon as one is freed, never exits.
//!
//! Written over hyper's HTTP/1 connection rather than `axum::serve`, which offers neither
//! caps nor a head time limit.

use super::options::ConnectionLimits;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tower::Layer;

/// The connections open, in all and by client address.
#[derive(Default)]
struct Tally {
    open: Mutex<(usize, HashMap<IpAddr, usize>)>,
    /// Woken each time a connection closes: an accept loop out of descriptors waits on it.
    freed: Notify,
}

/// One open connection, counted while it lives.
struct OpenConnection {
    tally: Arc<Tally>,
    /// The client address it counts against, unless it comes from a trusted proxy.
    client: Option<IpAddr>,
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        {
            let mut open = crate::sync::lock(&self.tally.open);
            open.0 -= 1;
            if let Some(client) = self.client {
                if let Some(count) = open.1.get_mut(&client) {
                    *count -= 1;
                    if *count == 0 {
                        open.1.remove(&client);
                    }
                }
            }
        }
        self.tally.freed.notify_one();
    }
}

impl Tally {
    /// Counts a connection from `client` (`None`: a trusted proxy, held to the total only),
    /// or says which cap refuses it.
    fn admit(
        self: &Arc<Self>,
        client: Option<IpAddr>,
        limits: &ConnectionLimits,
    ) -> Result<OpenConnection, &'static str> {
        let mut open = crate::sync::lock(&self.open);
        if open.0 >= limits.most {
            return Err("server busy: it holds as many connections as it may; retry later");
        }
        if let Some(client) = client {
            let count = open.1.entry(client).or_insert(0);
            if *count >= limits.per_client {
                return Err("too many connections from this client; close some, or retry later");
            }
            *count += 1;
        }
        open.0 += 1;
        Ok(OpenConnection {
            tally: Arc::clone(self),
            client,
        })
    }
}

/// Serves `router` on `listener` until `stop` resolves; then stops accepting, asks every
/// connection to finish its request in flight, and resolves once all have closed.
pub(super) async fn serve_connections(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    trusted_proxies: Vec<ipnet::IpNet>,
    stop: impl Future<Output = ()>,
) {
    let tally = Arc::new(Tally::default());
    let (closing, closed) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    let mut warned_at: Option<tokio::time::Instant> = None;
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => accepted,
        };
        // Reap the connections that ended, so the set does not grow.
        while connections.try_join_next().is_some() {}
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::Interrupted
                ) {
                    continue;
                }
                // Most likely out of file descriptors: keep serving the connections held,
                // and accept again as soon as one closes (or shortly, if another part of
                // the process frees one).
                let now = tokio::time::Instant::now();
                if warned_at.is_none_or(|at| now.duration_since(at) > Duration::from_secs(10)) {
                    tracing::warn!(
                        %error,
                        open = connections.len(),
                        "cannot accept connections for now; serving those open"
                    );
                    warned_at = Some(now);
                }
                tokio::select! {
                    () = &mut stop => break,
                    () = tally.freed.notified() => {}
                    () = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
                continue;
            }
        };
        let trusted = trusted_proxies.iter().any(|net| net.contains(&peer.ip()));
        let client = (!trusted).then_some(peer.ip());
        let counted = match tally.admit(client, &limits) {
            Ok(counted) => counted,
            Err(reason) => {
                refuse(&stream, reason);
                continue;
            }
        };
        // No Nagle delay: an answer is one small write, and waiting to coalesce it with the
        // next (which the client will not send before it has this one) costs tens of ms.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot turn off Nagle's algorithm on a connection");
        }
        let service = axum::Extension(ConnectInfo(peer)).layer(router.clone());
        let closed = closed.clone();
        connections.spawn(serve_one(stream, service, limits, closed, counted));
    }
    let _ = closing.send(true);
    while connections.join_next().await.is_some() {}
}

/// Serves one connection until it closes, or finishes its request in flight and closes
/// once the server stops.
async fn serve_one(
    stream: TcpStream,
    service: axum::middleware::AddExtension<Router, ConnectInfo<SocketAddr>>,
    limits: ConnectionLimits,
    mut closed: tokio::sync::watch::Receiver<bool>,
    _open: OpenConnection,
) {
    let service = hyper_util::service::TowerToHyperService::new(service);
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.head_timeout)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        served = connection.as_mut() => {
            if let Err(error) = served {
                tracing::debug!(%error, "a connection ended with an error");
            }
        }
        () = async { let _ = closed.wait_for(|closed| *closed).await; } => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

/// Answers a connection past a cap with 503 and closes it, without waiting on the client.
fn refuse(stream: &TcpStream, reason: &str) {
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{reason}",
        reason.len()
    );
    // A client whose buffer is full gets nothing: the close says enough.
    let _ = stream.try_write(response.as_bytes());
    tracing::debug!(reason, "refused a connection");
}
