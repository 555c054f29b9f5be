//! The writing side of the config log: an API change becomes a record, and the caller waits
//! until this host has read it back and applied it, so its answer is what happened here.

use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};
use tokio::sync::oneshot;
use turnpike_config::{PluginName, TeamName};
use turnpike_pipeline::{Change, ClusterLog, HostError, HostReport, Member, Outcome, Pending, PluginInfo};
use turnpike_state::Lifecycle;

use crate::records::{write_id, ConnectorRecord, Key, PluginRecord, RestartRecord, CHUNK_BYTES};
use crate::Cluster;

/// How long a change may take from the write to its application here.
const APPLY_WAIT: Duration = Duration::from_secs(60);

/// What applying a write did, handed to the writer waiting for it.
#[derive(Debug)]
pub(crate) enum Reply {
    Change(Result<Outcome, HostError>),
    Upload(Result<(PluginInfo, bool), HostError>),
    Deleted(Result<(), HostError>),
}

impl Cluster {
    async fn read_to_end(&self) -> Result<(), HostError> {
        let end = self.config_log.end().await.map_err(|e| HostError::Cluster(format!("nothing was changed: {e}")))?;
        let mut applied = self.applied.subscribe();
        let reached = tokio::time::timeout(APPLY_WAIT, applied.wait_for(|&next| next >= end)).await.is_ok_and(|r| r.is_ok());
        match reached {
            true => Ok(()),
            false => Err(HostError::Cluster(format!("nothing was changed: this host has not read the config log to its end within {APPLY_WAIT:?}"))),
        }
    }

    /// The record a connector change writes, following the version this host has read.
    fn next_record(&self, write: &str, change: Change) -> Result<ConnectorRecord, HostError> {
        let view = self.view();
        let name = change.connector().to_owned();
        let prev = view.version(&name);
        let live = view.connector(&name).and_then(|c| c.live()).map(|(config, lifecycle)| (config.clone(), lifecycle));
        let record = |config, lifecycle, deleted| ConnectorRecord { write: write.to_owned(), host: self.host_id.clone(), version: prev + 1, prev, config, lifecycle, deleted };
        match (change, live) {
            (Change::Put(config), live) => Ok(record(Some(config), live.map_or(Lifecycle::Running, |(_, l)| l), false)),
            (Change::Delete(_), Some(_)) => Ok(record(None, Lifecycle::Stopped, true)),
            (Change::Lifecycle { to, .. }, Some((config, _))) => Ok(record(Some(config), to, false)),
            (Change::Delete(_) | Change::Lifecycle { .. }, None) => Err(HostError::NotFound(name)),
            (Change::Restart { .. }, _) => Err(HostError::Internal("a restart has no connector record".into())),
        }
    }

    /// Writes `value` under `key` as write `write`, then waits for this host's reply.
    async fn write_and_wait(&self, write: &str, key: &Key, value: &[u8]) -> Result<Reply, HostError> {
        let (tx, rx) = oneshot::channel();
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).insert(write.to_owned(), tx);
        let forget = || self.waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(write);
        if let Err(e) = self.config_log.write(&key.to_string(), Some(value)).await {
            forget();
            return Err(HostError::Cluster(format!("nothing was changed: {e}")));
        }
        match tokio::time::timeout(APPLY_WAIT, rx).await {
            Ok(Ok(reply)) => Ok(reply),
            _ => {
                forget();
                Err(HostError::Cluster(format!("the change was written but not applied here within {APPLY_WAIT:?}; read it again")))
            }
        }
    }

    fn encode<T: serde::Serialize>(record: &T) -> Result<Vec<u8>, HostError> {
        serde_json::to_vec(record).map_err(|e| HostError::Internal(format!("encoding a config record: {e}")))
    }
}

impl ClusterLog for Cluster {
    fn host_id(&self) -> &str {
        &self.host_id
    }

    fn catch_up(&self) -> Pending<'_, ()> {
        Box::pin(self.read_to_end())
    }

    fn change(&self, change: Change) -> Pending<'_, Outcome> {
        Box::pin(async move {
            let write = write_id();
            let (key, value) = match change {
                Change::Restart { name, only_failed } => {
                    (Key::Restart(name), Self::encode(&RestartRecord { write: write.clone(), host: self.host_id.clone(), only_failed })?)
                }
                change => {
                    let key = Key::Connector(change.connector().to_owned());
                    (key, Self::encode(&self.next_record(&write, change)?)?)
                }
            };
            match self.write_and_wait(&write, &key, &value).await? {
                Reply::Change(outcome) => outcome,
                other => Err(HostError::Internal(format!("a connector change was answered {other:?}"))),
            }
        })
    }

    fn upload(&self, name: PluginName, version: String, bytes: Vec<u8>, team: Option<TeamName>) -> Pending<'_, (PluginInfo, bool)> {
        Box::pin(async move {
            let digest = hex::encode(Sha256::digest(&bytes));
            // Checked before anything is written: a refused upload must not leave its record
            // as the version's last one.
            if self.view().plugin(name.as_str(), &version).is_some_and(|p| p.digest != digest) {
                return Err(HostError::VersionExists(format!("{name}@{version}")));
            }
            let write = write_id();
            let chunks = bytes.chunks(CHUNK_BYTES).collect::<Vec<_>>();
            for (index, chunk) in chunks.iter().enumerate() {
                let key = Key::Chunk { write: write.clone(), index: index as u32 };
                // Chunks without their plugin record are never loaded: nothing changed yet.
                self.config_log.write(&key.to_string(), Some(chunk)).await.map_err(|e| HostError::Cluster(format!("nothing was changed: {e}")))?;
            }
            let uploaded_at_ms = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
            let manifest = PluginRecord {
                write: write.clone(),
                host: self.host_id.clone(),
                digest,
                size: bytes.len() as u64,
                chunks: chunks.len() as u32,
                team,
                uploaded_at_ms,
                deleted: false,
            };
            let key = Key::Plugin { name: name.to_string(), version };
            match self.write_and_wait(&write, &key, &Self::encode(&manifest)?).await? {
                Reply::Upload(result) => result,
                other => Err(HostError::Internal(format!("an upload was answered {other:?}"))),
            }
        })
    }

    fn delete_plugin(&self, name: PluginName, version: String) -> Pending<'_, ()> {
        Box::pin(async move {
            let write = write_id();
            let manifest = PluginRecord { write: write.clone(), host: self.host_id.clone(), digest: String::new(), size: 0, chunks: 0, team: None, uploaded_at_ms: 0, deleted: true };
            let key = Key::Plugin { name: name.to_string(), version };
            match self.write_and_wait(&write, &key, &Self::encode(&manifest)?).await? {
                Reply::Deleted(result) => result,
                other => Err(HostError::Internal(format!("a plugin deletion was answered {other:?}"))),
            }
        })
    }

    fn reports(&self, name: &str) -> Vec<HostReport> {
        self.reports.lock().unwrap_or_else(|p| p.into_inner()).of(name, self.interval)
    }

    fn members(&self) -> Vec<Member> {
        self.reports.lock().unwrap_or_else(|p| p.into_inner()).members(self.interval)
    }
}
