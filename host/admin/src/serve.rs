//! Serving the API on a socket, with the bounds `axum::serve` does not set: a deadline for a
//! request's head, a cap on open connections, and a graceful stop.
//!
//! Why not `axum::serve`: it runs hyper without a timer, so hyper's header-read timeout never
//! fires and a client that sends half a request head holds its connection forever; and it
//! accepts connections without limit.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Connection-level bounds of the API server.
#[derive(Debug, Clone, Copy)]
pub struct ServeLimits {
    /// Longest time a client may take to send a request head.
    pub header_read_timeout: Duration,
    /// Connections open at once; further clients wait in the listen backlog.
    pub max_connections: usize,
}

/// Serves `app` on `listener` until `stop` is cancelled, then lets open requests finish.
/// Resolves when every connection is closed.
pub async fn serve(listener: TcpListener, app: Router, limits: ServeLimits, stop: CancellationToken) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut full_warned = false;
    loop {
        if slots.available_permits() == 0 && !std::mem::replace(&mut full_warned, true) {
            tracing::warn!(max = limits.max_connections, "admin API at its connection limit; new clients wait");
        }
        let permit = tokio::select! {
            _ = stop.cancelled() => break,
            permit = slots.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %e, "admin API accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        full_warned = false;
        let service = TowerToHyperService::new(app.clone());
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(%peer, error = %e, "admin API connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}
