//! Serving the API on a socket, with the bounds `axum::serve` does not set: a deadline for a
//! request's head (and for a TLS handshake), a cap on open connections, and a graceful stop.
//!
//! Why not `axum::serve`: it runs hyper without a timer, so hyper's header-read timeout never
//! fires and a client that sends half a request head holds its connection forever; and it
//! accepts connections without limit.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

/// Connection-level bounds of the API server.
#[derive(Debug, Clone, Copy)]
pub struct ServeLimits {
    /// Longest time a client may take to send a request head, and, with TLS, to finish its
    /// handshake.
    pub header_read_timeout: Duration,
    /// Connections open at once; further clients wait in the listen backlog.
    pub max_connections: usize,
}

/// Serves `app` on `listener` until `stop` is cancelled, then lets open requests finish.
/// With `tls`, every connection must complete a TLS handshake first. Resolves when every
/// connection is closed.
pub async fn serve(listener: TcpListener, app: Router, limits: ServeLimits, tls: Option<Arc<rustls::ServerConfig>>, stop: CancellationToken) {
    let acceptor = tls.map(TlsAcceptor::from);
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
        // Taken here, not in the task, so that the graceful stop also waits for a connection
        // whose task has not started yet.
        let watcher = graceful.watcher();
        let app = app.clone();
        let acceptor = acceptor.clone();
        let stop = stop.clone();
        // The handshake runs in the connection's own task: in the accept loop, one client
        // that never finishes its hello would stop everyone else from connecting.
        tokio::spawn(async move {
            let _permit = permit;
            match acceptor {
                None => serve_connection(stream, app, limits, watcher, peer).await,
                Some(acceptor) => {
                    if let Some(stream) = handshake(&acceptor, stream, limits.header_read_timeout, &stop, peer).await {
                        serve_connection(stream, app, limits, watcher, peer).await;
                    }
                }
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// Completes the TLS handshake within `deadline` (the request-head deadline: a handshake is
/// what a client sends before its head), or gives up at once when the server stops. `None`
/// drops the connection.
async fn handshake(
    acceptor: &TlsAcceptor,
    stream: TcpStream,
    deadline: Duration,
    stop: &CancellationToken,
    peer: SocketAddr,
) -> Option<tokio_rustls::server::TlsStream<TcpStream>> {
    tokio::select! {
        _ = stop.cancelled() => None,
        done = tokio::time::timeout(deadline, acceptor.accept(stream)) => match done {
            Ok(Ok(stream)) => Some(stream),
            Ok(Err(e)) => {
                tracing::debug!(%peer, error = %e, "admin API TLS handshake failed");
                None
            }
            Err(_) => {
                tracing::debug!(%peer, ?deadline, "admin API TLS handshake not finished in time");
                None
            }
        },
    }
}

/// Serves HTTP/1.1 on one connection, plain or TLS, until the client leaves or a graceful
/// stop has let its open request finish.
async fn serve_connection<I>(io: I, app: Router, limits: ServeLimits, watcher: Watcher, peer: SocketAddr)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = TowerToHyperService::new(app);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
    let connection = builder.serve_connection(TokioIo::new(io), service);
    if let Err(e) = watcher.watch(connection).await {
        tracing::debug!(%peer, error = %e, "admin API connection ended with an error");
    }
}
