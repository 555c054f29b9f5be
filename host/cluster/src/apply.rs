//! The reading side of the config log: every record, in log order, judged by the [`View`]
//! and applied to this host; a record this host wrote is answered to its waiting writer.
//!
//! [`View`]: crate::view::View

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot};
use turnpike_config::{PluginName, PluginRef};
use turnpike_kafka::{LogRecord, Tailed};
use turnpike_pipeline::{Applied, Change, Host, HostError, Outcome, RegistryError};

use crate::records::{ConnectorRecord, Key, PluginRecord, RestartRecord};
use crate::view::Verdict;
use crate::writes::Reply;
use crate::Cluster;

/// Chunks read so far, by the write id of their upload, then index.
type Chunks = HashMap<String, BTreeMap<u32, Vec<u8>>>;

/// Applies the log as it is read; `caught_up` fires once every record that was there at
/// the start is applied. Until then connector records only update the view (the log holds
/// every version since the last compaction: running each would start, restart and stop
/// connectors for nothing); then each connector starts once, in its last state.
pub(crate) async fn run(cluster: Arc<Cluster>, host: Arc<Host>, mut log: mpsc::Receiver<Tailed>, caught_up: oneshot::Sender<()>) {
    let mut caught_up = Some(caught_up);
    let mut chunks = Chunks::new();
    while let Some(item) = log.recv().await {
        match item {
            Tailed::CaughtUp => {
                start_all(&cluster, &host).await;
                if let Some(tx) = caught_up.take() {
                    let _ = tx.send(());
                }
            }
            Tailed::Record(record) => {
                let (live, next) = (caught_up.is_none(), record.offset + 1);
                apply_record(&cluster, &host, record, &mut chunks, live).await;
                cluster.applied.send_replace(next);
            }
        }
    }
}

/// After catching up: starts every connector of the log, each in its last lifecycle.
async fn start_all(cluster: &Cluster, host: &Host) {
    let names = cluster.view().connector_names();
    for name in names {
        let Some((record, config, lifecycle)) = cluster.view().connector(&name).and_then(|c| c.live().map(|(config, l)| (c.record.clone(), config.clone(), l))) else {
            continue;
        };
        match host.apply_put(config, lifecycle).await {
            Ok(_) => drop(cluster.running_versions.lock().unwrap_or_else(|p| p.into_inner()).insert(name, record.version)),
            Err(e) => tracing::error!(connector = %name, version = record.version, error = %e, "could not start the cluster's connector here"),
        }
    }
}

async fn apply_record(cluster: &Cluster, host: &Host, record: LogRecord, chunks: &mut Chunks, live: bool) {
    let Some(key) = Key::parse(&record.key) else {
        tracing::debug!(key = %record.key, "config log record of an unknown kind; skipped");
        return;
    };
    match (key, record.value) {
        (Key::Chunk { write, index }, Some(bytes)) => drop(chunks.entry(write).or_default().insert(index, bytes)),
        (Key::Chunk { write, index }, None) => {
            if let Some(parts) = chunks.get_mut(&write) {
                parts.remove(&index);
            }
        }
        (_, None) => {}
        (Key::Connector(name), Some(raw)) => match serde_json::from_slice::<ConnectorRecord>(&raw) {
            Ok(written) => apply_connector(cluster, host, &name, written, raw, live).await,
            Err(e) => tracing::warn!(connector = %name, offset = record.offset, error = %e, "config log record does not parse; skipped"),
        },
        (Key::Restart(name), Some(raw)) => match serde_json::from_slice::<RestartRecord>(&raw) {
            // A restart asked for before this host started is not its business.
            Ok(restart) if live => {
                let outcome = host.apply(Change::Restart { name, only_failed: restart.only_failed }).await;
                answer(cluster, &restart.write, Reply::Change(outcome));
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(connector = %name, offset = record.offset, error = %e, "config log record does not parse; skipped"),
        },
        (Key::Plugin { name, version }, Some(raw)) => match serde_json::from_slice::<PluginRecord>(&raw) {
            Ok(manifest) => {
                let parts = chunks.remove(&manifest.write).unwrap_or_default();
                apply_plugin(cluster, host, (&name, &version), manifest, parts, raw).await
            }
            Err(e) => tracing::warn!(plugin = %name, offset = record.offset, error = %e, "config log record does not parse; skipped"),
        },
    }
}

async fn apply_connector(cluster: &Cluster, host: &Host, name: &str, written: ConnectorRecord, raw: Vec<u8>, live: bool) {
    let verdict = cluster.view().judge_connector(name, &written);
    let write = written.write.clone();
    match verdict {
        Verdict::Apply => {
            cluster.view().set_connector(name, written.clone(), raw);
            if !live {
                return;
            }
            let outcome = match (written.config, written.deleted) {
                (Some(config), false) => host.apply_put(config, written.lifecycle).await.map(Outcome::Put),
                _ => host.apply(Change::Delete(name.to_owned())).await,
            };
            let mut versions = cluster.running_versions.lock().unwrap_or_else(|p| p.into_inner());
            match (&outcome, written.deleted) {
                (Ok(_), false) => drop(versions.insert(name.to_owned(), written.version)),
                (Ok(_), true) => drop(versions.remove(name)),
                (Err(e), _) => tracing::error!(connector = %name, version = written.version, error = %e, "could not apply the cluster's config here"),
            }
            drop(versions);
            answer(cluster, &write, Reply::Change(outcome));
        }
        Verdict::Again => drop(answer(cluster, &write, Reply::Change(Ok(Outcome::Put(Applied::Unchanged))))),
        Verdict::Refuse { current } => {
            let mine = answer(
                cluster,
                &write,
                Reply::Change(Err(HostError::Conflict(format!(
                    "connector {name:?} was changed by another host at the same time (it is at version {current} now); read it again and retry"
                )))),
            );
            if mine {
                let raw = cluster.view().connector(name).map(|c| c.raw.clone());
                repair(cluster, &Key::Connector(name.to_owned()), raw).await;
            }
        }
    }
}

/// After this host's write lost a race: writes the winning record again, after the loser,
/// so that compaction (which keeps a key's last record) keeps the winner.
async fn repair(cluster: &Cluster, key: &Key, winner: Option<Vec<u8>>) {
    let Some(raw) = winner else { return };
    if let Err(e) = cluster.config_log.write(&key.to_string(), Some(&raw)).await {
        tracing::error!(%key, error = %e, "could not write the winning record again after a refused write");
    }
}

async fn apply_plugin(cluster: &Cluster, host: &Host, (name, version): (&str, &str), manifest: PluginRecord, parts: BTreeMap<u32, Vec<u8>>, raw: Vec<u8>) {
    let write = manifest.write.clone();
    let Ok(plugin) = PluginName::parse(name) else {
        tracing::warn!(plugin = %name, "config log names an invalid plugin; skipped");
        return;
    };
    let verdict = cluster.view().judge_plugin(name, version, &manifest);
    let label = format!("{name}@{version}");
    let reply = match (verdict, manifest.deleted) {
        (Verdict::Apply, true) => {
            let deleted = host.apply_plugin_deletion(&plugin, version);
            cluster.view().set_plugin(name, version, manifest, raw);
            Reply::Deleted(deleted)
        }
        (Verdict::Apply, false) => {
            let loaded = match assemble(&manifest, parts) {
                Ok(bytes) => {
                    let at = SystemTime::UNIX_EPOCH + Duration::from_millis(manifest.uploaded_at_ms);
                    host.apply_upload(plugin, version.to_owned(), bytes, manifest.team.clone(), at).await
                }
                Err(why) => Err(HostError::Cluster(format!("{label}: {why}"))),
            };
            match &loaded {
                Ok(_) => cluster.view().set_plugin(name, version, manifest, raw),
                Err(e) => tracing::error!(plugin = %label, error = %e, "could not load a plugin from the cluster's config log"),
            }
            Reply::Upload(loaded)
        }
        (Verdict::Again, true) => {
            Reply::Deleted(Err(HostError::Plugin(RegistryError::UnknownVersion { name: name.to_owned(), version: version.to_owned(), known: String::new() })))
        }
        (Verdict::Again, false) => {
            let reference = PluginRef { name: plugin, version: Some(version.to_owned()) };
            Reply::Upload(host.registry().resolve(&reference).map(|info| (info, false)).map_err(HostError::from))
        }
        (Verdict::Refuse { .. }, _) => {
            if answer(cluster, &write, Reply::Upload(Err(HostError::VersionExists(label)))) {
                let winner = cluster.view().plugin_raw(name, version).map(<[u8]>::to_vec);
                repair(cluster, &Key::Plugin { name: name.to_owned(), version: version.to_owned() }, winner).await;
            }
            return;
        }
    };
    answer(cluster, &write, reply);
}

/// The component from its chunks, checked against its manifest.
fn assemble(manifest: &PluginRecord, parts: BTreeMap<u32, Vec<u8>>) -> Result<Vec<u8>, String> {
    if parts.len() != manifest.chunks as usize || parts.keys().copied().ne(0..manifest.chunks) {
        return Err(format!("{} of its {} chunks were found in the log", parts.len(), manifest.chunks));
    }
    let bytes: Vec<u8> = parts.into_values().flatten().collect();
    let digest = hex::encode(Sha256::digest(&bytes));
    if bytes.len() as u64 != manifest.size || digest != manifest.digest {
        return Err(format!("its chunks add up to {} bytes with SHA-256 {digest}, not the {} bytes with {} uploaded", bytes.len(), manifest.size, manifest.digest));
    }
    Ok(bytes)
}

/// Hands `reply` to this host's writer of `write`, if it is waiting; whether it was.
fn answer(cluster: &Cluster, write: &str, reply: Reply) -> bool {
    match cluster.waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(write) {
        Some(tx) => {
            let _ = tx.send(reply);
            true
        }
        None => false,
    }
}
