//! `turnpike run -c FILE`: the connectors of a config file, against any Kafka.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use tokio_util::sync::CancellationToken;
use turnpike_cluster::Cluster;
use turnpike_config::HostConfig;
use turnpike_pipeline::{EngineLimits, Host, HostError, Runtime};
use turnpike_state::StateStore;

use crate::serve;

#[derive(Args)]
pub struct RunArgs {
    /// The host configuration file (YAML).
    #[arg(short, long)]
    config: PathBuf,
    /// Check the configuration and exit without running anything.
    #[arg(long)]
    check: bool,
}

pub async fn run(args: RunArgs) -> Result<()> {
    let text = std::fs::read_to_string(&args.config).with_context(|| format!("reading {}", args.config.display()))?;
    let config = HostConfig::from_yaml(&text, &args.config.display().to_string())?;
    // `group.protocol: consumer` beside a classic-only setting would fail every consumer.
    turnpike_kafka::decided_by_settings(&config.kafka.pairs())?;
    if args.check {
        println!("{}: ok ({} connectors)", args.config.display(), config.connectors.len());
        return Ok(());
    }
    let engine = EngineLimits {
        max_instances: config.sandbox.max_instances.get() as u32,
        max_memory_bytes: (config.sandbox.max_memory_mib.get() as usize) << 20,
    };
    let base = args.config.parent().map(PathBuf::from).unwrap_or_default();
    let state_dir = base.join(&config.state_dir);
    let store = StateStore::open(&state_dir).with_context(|| format!("state_dir: {}", state_dir.display()))?;
    let tokens = store.tokens();
    let (kafka, group_protocol) = turnpike_kafka::choose_group_protocol(config.kafka.pairs()).await?;
    tracing::info!(protocol = %group_protocol.protocol, reason = %group_protocol.reason, "connector consumers use this consumer group protocol");
    let host = Host::new(Runtime::with_limits(&engine)?, kafka.clone(), config.sandbox.clone())
        .with_group_protocol(group_protocol)
        .persist_to(store)
        .positions_topic(config.source_positions_topic.clone())
        .with_teams(config.teams.clone());
    let host = Arc::new(host);
    host.prepare_positions_topic().await;
    serve::load_builtins(&host).await?;
    for (name, source) in &config.plugins {
        let path = base.join(&source.path);
        let bytes = std::fs::read(&path).with_context(|| format!("plugins.{name}.path: reading {}", path.display()))?;
        // A plugin that does not load fails only the connectors that use it (they report
        // why); the host and every other connector keep running.
        let _ = host.load_plugin(name.clone(), "file".into(), bytes).await;
    }
    // In a cluster, what the cluster runs (its config log); on a host of its own, the saved
    // state (uploads, API-made connectors, paused or stopped ones). Then the file's
    // connectors on top: unchanged ones keep their state, changed ones restart.
    let cluster = match &config.cluster {
        Some(settings) => Some(Cluster::join(host.clone(), kafka, settings).await.context("joining the cluster")?),
        None => {
            host.restore().await.context("restoring the saved state")?;
            None
        }
    };
    for connector in config.connectors.clone() {
        let name = connector.name.to_string();
        // Hosts of a cluster started together all write the file's connectors: a conflict
        // means another host wrote it first; it is then the same, or written again.
        let mut attempts = if cluster.is_some() { 3 } else { 1 };
        loop {
            if cluster.is_some() && host.definition(&name).is_some_and(|(running, _)| running == connector) {
                break;
            }
            attempts -= 1;
            match host.put_connector(connector.clone()).await {
                Err(HostError::Conflict(_)) if attempts > 0 => continue,
                done => drop(done.with_context(|| format!("starting connector {name:?}"))?),
            }
            break;
        }
    }
    let stop = CancellationToken::new();
    let api = serve::admin_api(host.clone(), &config.admin, &base, Some(tokens), stop.clone()).await?;
    serve::shutdown_signal().await;
    tracing::info!("shutting down: finishing in-flight batches and committing offsets");
    let within = Duration::from_millis(config.shutdown_timeout_ms.get());
    let stuck = host.shutdown(within).await;
    if let Some(cluster) = cluster {
        cluster.leave().await;
    }
    stop.cancel();
    serve::finish(api).await;
    if !stuck.is_empty() {
        anyhow::bail!(
            "connectors still stopping after shutdown_timeout_ms ({} ms): {}; what they had not committed is read again at the next start",
            within.as_millis(),
            stuck.join(", ")
        );
    }
    Ok(())
}
