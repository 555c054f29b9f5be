//! What the config log holds: its keys and its records' JSON values.
//!
//! ```text
//! connector/<name>            {"write", "host", "version", "prev", "config", "lifecycle"} or {…, "deleted": true}
//! restart/<name>              {"write", "host", "only_failed"}
//! plugin/<name>/<version>     {"write", "host", "digest", "size", "chunks", "team", "uploaded_at_ms"} or {…, "deleted": true}
//! chunk/<write>/<i>          the component's bytes i·CHUNK_BYTES.., raw; written before the plugin record of write <write>
//! ```
//!
//! `write` is a random id per write: a writer recognises its own record when it reads it.

use serde::{Deserialize, Serialize};
use turnpike_config::{ConnectorConfig, TeamName};
use turnpike_state::Lifecycle;

/// The most component bytes one chunk record holds: well under Kafka's default 1 MiB
/// `max.message.bytes`.
pub const CHUNK_BYTES: usize = 512 * 1024;

/// A config log key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// A connector's config and lifecycle.
    Connector(String),
    /// A request to restart a connector.
    Restart(String),
    /// A plugin version's manifest (or its deletion).
    Plugin { name: String, version: String },
    /// One chunk of the component of the upload with write id `write` (keyed by the upload,
    /// so two uploads of one version never mix their chunks).
    Chunk { write: String, index: u32 },
}

impl Key {
    /// Parses a key; `None` for a key this host does not know (written by a newer one).
    pub fn parse(key: &str) -> Option<Self> {
        let (kind, rest) = key.split_once('/')?;
        match kind {
            "connector" => Some(Key::Connector(rest.to_owned())),
            "restart" => Some(Key::Restart(rest.to_owned())),
            "plugin" => {
                let (name, version) = rest.split_once('/')?;
                Some(Key::Plugin { name: name.to_owned(), version: version.to_owned() })
            }
            "chunk" => {
                let (write, index) = rest.split_once('/')?;
                Some(Key::Chunk { write: write.to_owned(), index: index.parse().ok()? })
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Connector(name) => write!(f, "connector/{name}"),
            Key::Restart(name) => write!(f, "restart/{name}"),
            Key::Plugin { name, version } => write!(f, "plugin/{name}/{version}"),
            Key::Chunk { write, index } => write!(f, "chunk/{write}/{index}"),
        }
    }
}

/// A connector's config and lifecycle, as of one version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectorRecord {
    /// This write's id.
    pub write: String,
    /// The host whose API took the change.
    pub host: String,
    /// `prev + 1`.
    pub version: u64,
    /// The version the writer saw; a record whose `prev` is not the current version lost a
    /// race with another write and is not applied.
    pub prev: u64,
    /// The config (absent when deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ConnectorConfig>,
    /// What it should be doing.
    pub lifecycle: Lifecycle,
    /// Deleted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

/// A request to restart a connector on every host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestartRecord {
    /// This write's id.
    pub write: String,
    /// The host whose API took it.
    pub host: String,
    /// Only where it failed.
    pub only_failed: bool,
}

/// A plugin version's manifest: its chunks precede it in the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginRecord {
    /// This write's id.
    pub write: String,
    /// The host whose API took the upload.
    pub host: String,
    /// SHA-256 of the component, hex: every host checks the chunks it read against it.
    #[serde(default)]
    pub digest: String,
    /// The component's size in bytes.
    #[serde(default)]
    pub size: u64,
    /// How many chunk records hold it.
    #[serde(default)]
    pub chunks: u32,
    /// The team that uploaded it; absent: shared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<TeamName>,
    /// When it was uploaded (ms since the Unix epoch): orders versions for `@latest` alike on
    /// every host.
    #[serde(default)]
    pub uploaded_at_ms: u64,
    /// Deleted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

/// A fresh write id.
pub fn write_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_back_as_written() {
        let keys = [
            Key::Connector("orders".into()),
            Key::Restart("orders".into()),
            Key::Plugin { name: "mask".into(), version: "1.0".into() },
            Key::Chunk { write: "0af3".into(), index: 12 },
        ];
        for key in keys {
            assert_eq!(Key::parse(&key.to_string()), Some(key.clone()), "{key}");
        }
        assert_eq!(Key::parse("offsets/x"), None);
        assert_eq!(Key::parse("chunk/0af3/x"), None);
    }
}
