//! What `run` and `dev` share: loading the built-in plugins, serving the admin API, and
//! waiting for a shutdown signal.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;
use turnpike_config::{AdminConfig, PluginName};
use turnpike_pipeline::Host;
use turnpike_state::TokenStore;

/// Registers the built-in plugins, whose components are embedded in this binary. A component
/// that serves several names (the Kafka Connect transforms) is compiled once.
pub async fn load_builtins(host: &Host) -> Result<()> {
    let version = env!("CARGO_PKG_VERSION").to_owned();
    // Each shared component, with the names (and presets) it serves.
    type Served = Vec<(PluginName, String)>;
    let mut presets: Vec<(&'static [u8], Served)> = Vec::new();
    for builtin in turnpike_builtins::BUILTINS {
        let name = PluginName::parse(builtin.name).context("built-in plugin name")?;
        match builtin.preset {
            None => drop(host.load_plugin(name, version.clone(), builtin.wasm.to_vec()).await?),
            Some(preset) => match presets.iter_mut().find(|(wasm, _)| std::ptr::eq(*wasm, builtin.wasm)) {
                Some((_, names)) => names.push((name, preset.to_owned())),
                None => presets.push((builtin.wasm, vec![(name, preset.to_owned())])),
            },
        }
    }
    for (wasm, names) in presets {
        host.load_presets(names, version.clone(), wasm.to_vec()).await?;
    }
    Ok(())
}

/// Serves the admin API as `config` says until `stop` is cancelled. A listen address other
/// machines can reach is refused unless `config.auth` is on; with it, callers present tokens
/// from `tokens` (the state directory's). `config.tls` paths are relative to `base` (the
/// config file's directory).
pub async fn admin_api(host: Arc<Host>, config: &AdminConfig, base: &Path, tokens: Option<TokenStore>, stop: CancellationToken) -> Result<tokio::task::JoinHandle<()>> {
    let listen: SocketAddr = config.listen.parse().with_context(|| format!("admin.listen: {:?} is not an address like 127.0.0.1:8080", config.listen))?;
    turnpike_config::check_listen(listen, config.auth).map_err(|why| anyhow::anyhow!("admin.listen: {why}"))?;
    let tokens = match (config.auth, tokens) {
        (false, _) => None,
        (true, Some(tokens)) => Some(tokens),
        (true, None) => anyhow::bail!("admin.auth needs a state directory to keep its tokens in; run with a config file (`turnpike run -c FILE`)"),
    };
    if config.auth && config.tls.is_none() && !listen.ip().is_loopback() {
        tracing::warn!(address = %listen, "the admin API is reachable from other machines over plain HTTP: tokens cross the network in clear text; set admin.tls, or put it behind a TLS proxy");
    }
    if let Some(store) = &tokens {
        if store.is_empty().context("reading the token store")? {
            tracing::warn!("admin.auth is on and there are no tokens yet: make the first admin token on this host with `turnpike token create -c <config> --role admin`");
        }
    }
    // Before binding: a bad certificate or key stops start-up without taking the port.
    let tls = match &config.tls {
        Some(files) => Some(
            turnpike_admin::load_tls(&base.join(&files.cert_file), &base.join(&files.key_file)).map_err(|e| anyhow::anyhow!("admin.tls: {e}"))?,
        ),
        None => None,
    };
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding the admin API to {listen} (choose another with --listen)"))?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    tracing::info!(address = %listen, scheme, console = %format!("{scheme}://{listen}/"), "admin API and console listening");
    let app = match tokens {
        Some(tokens) => turnpike_admin::router_secured(host, config, tokens),
        None => turnpike_admin::router_with(host, config),
    };
    let limits = turnpike_admin::serve_limits(config);
    Ok(tokio::spawn(turnpike_admin::serve(listener, app, limits, tls, stop)))
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
