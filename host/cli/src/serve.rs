//! What `run` and `dev` share: loading the built-in plugins, serving the admin API, and
//! waiting for a shutdown signal.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;
use turnpike_config::{AdminConfig, PluginName};
use turnpike_pipeline::Host;

/// Registers the built-in plugins, whose components are embedded in this binary.
pub async fn load_builtins(host: &Host) -> Result<()> {
    for builtin in turnpike_builtins::BUILTINS {
        let name = PluginName::parse(builtin.name).context("built-in plugin name")?;
        host.load_plugin(name, env!("CARGO_PKG_VERSION").to_owned(), builtin.wasm.to_vec()).await?;
    }
    Ok(())
}

/// Serves the admin API as `config` says until `stop` is cancelled. A listen address other
/// machines can reach is refused unless `config.allow_remote` says so (the API has no
/// authentication), and said loudly when it does.
pub async fn admin_api(host: Arc<Host>, config: &AdminConfig, stop: CancellationToken) -> Result<tokio::task::JoinHandle<()>> {
    let listen: SocketAddr = config.listen.parse().with_context(|| format!("admin.listen: {:?} is not an address like 127.0.0.1:8080", config.listen))?;
    turnpike_config::check_listen(listen, config.allow_remote).map_err(|why| anyhow::anyhow!("admin.listen: {why}"))?;
    if !listen.ip().is_loopback() {
        tracing::warn!(address = %listen, "the admin API is reachable from other machines and has NO authentication: anyone who reaches it can upload and run code");
    }
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding the admin API to {listen} (choose another with --listen)"))?;
    tracing::info!(address = %listen, "admin API listening");
    let app = turnpike_admin::router_with(host, config);
    let limits = turnpike_admin::serve_limits(config);
    Ok(tokio::spawn(turnpike_admin::serve(listener, app, limits, stop)))
}

/// How long the admin API may take to finish open requests at shutdown.
const API_DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Waits for the admin API to finish its open requests, then drops any still open.
pub async fn finish(mut api: tokio::task::JoinHandle<()>) {
    if tokio::time::timeout(API_DRAIN, &mut api).await.is_err() {
        tracing::warn!("admin API connections still open after {API_DRAIN:?}; closing them");
        api.abort();
    }
}

/// Resolves when the process is asked to stop (Ctrl-C or SIGTERM).
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM; only Ctrl-C stops the host");
                let _ = ctrl_c.await;
                return;
            }
        };
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
