//! Durable host state in a directory, so a restarted host comes back as it was:
//!
//! ```text
//! <dir>/connectors/<name>.json        {"config": {…}, "lifecycle": "running" | "paused" | "stopped"}
//! <dir>/plugins/<name>/<version>.wasm the uploaded component, as uploaded
//! <dir>/compiled/<digest>-<engine>.cwasm compiled code, written and read only by the runtime
//! ```
//!
//! Every write goes to a temporary file in the same directory, is flushed to disk, then
//! renamed over the old file: a crash mid-write leaves the old file or the new one, never a
//! mix, and never a half-written file under the real name.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use turnpike_config::{ConnectorConfig, PluginName};

/// What a connector should be doing after a restart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lifecycle {
    /// Running (or restarting after failures).
    Running,
    /// Paused by an operator.
    Paused,
    /// Stopped by an operator.
    Stopped,
}

/// A state directory could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A file operation failed.
    #[error("state directory {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A state file does not parse (edited by hand, or written by a newer version).
    #[error("state file {path} is not valid: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StateError + '_ {
    move |source| StateError::Io { path: path.to_owned(), source }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedConnector {
    config: ConnectorConfig,
    lifecycle: Lifecycle,
}

/// Everything a state directory holds.
#[derive(Debug, Default)]
pub struct Saved {
    /// `(name, version, component bytes, when it was saved)`.
    pub plugins: Vec<(PluginName, String, Vec<u8>, std::time::SystemTime)>,
    /// Connectors with their lifecycle.
    pub connectors: Vec<(ConnectorConfig, Lifecycle)>,
}

/// A state directory.
#[derive(Debug, Clone)]
pub struct StateStore {
    dir: PathBuf,
}

impl StateStore {
    /// Opens (creating if needed) a state directory.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, StateError> {
        let dir = dir.into();
        for sub in ["connectors", "plugins"] {
            let path = dir.join(sub);
            fs::create_dir_all(&path).map_err(io(&path))?;
        }
        Ok(Self { dir })
    }

    /// Where the runtime keeps compiled plugins (only the host writes there).
    pub fn compiled_dir(&self) -> PathBuf {
        self.dir.join("compiled")
    }

    fn connector_path(&self, name: &str) -> PathBuf {
        self.dir.join("connectors").join(format!("{name}.json"))
    }

    fn plugin_path(&self, name: &PluginName, version: &str) -> PathBuf {
        self.dir.join("plugins").join(name.as_str()).join(format!("{version}.wasm"))
    }

    /// Saves a connector and its lifecycle.
    pub fn save_connector(&self, config: &ConnectorConfig, lifecycle: Lifecycle) -> Result<(), StateError> {
        let path = self.connector_path(config.name.as_str());
        let text = serde_json::to_vec_pretty(&SavedConnector { config: config.clone(), lifecycle })
            .map_err(|e| StateError::Corrupt { path: path.clone(), message: e.to_string() })?;
        write_atomically(&path, &text)
    }

    /// Forgets a connector.
    pub fn remove_connector(&self, name: &str) -> Result<(), StateError> {
        remove(&self.connector_path(name))
    }

    /// Saves an uploaded component.
    pub fn save_plugin(&self, name: &PluginName, version: &str, bytes: &[u8]) -> Result<(), StateError> {
        let path = self.plugin_path(name, version);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io(parent))?;
        }
        write_atomically(&path, bytes)
    }

    /// Forgets an uploaded component.
    pub fn remove_plugin(&self, name: &PluginName, version: &str) -> Result<(), StateError> {
        remove(&self.plugin_path(name, version))
    }

    /// Reads everything back. Leftover temporary files from an interrupted write are ignored.
    pub fn load(&self) -> Result<Saved, StateError> {
        let mut saved = Saved::default();
        let plugins = self.dir.join("plugins");
        for dir in sorted_entries(&plugins)? {
            let Some(name) = dir.file_name().and_then(|n| n.to_str()).and_then(|n| PluginName::parse(n).ok()) else { continue };
            for file in sorted_entries(&dir)? {
                let Some(version) = file.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".wasm")) else { continue };
                let bytes = fs::read(&file).map_err(io(&file))?;
                let saved_at = fs::metadata(&file).and_then(|m| m.modified()).unwrap_or(std::time::SystemTime::UNIX_EPOCH);
                saved.plugins.push((name.clone(), version.to_owned(), bytes, saved_at));
            }
        }
        let connectors = self.dir.join("connectors");
        for file in sorted_entries(&connectors)? {
            if file.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let text = fs::read(&file).map_err(io(&file))?;
            let c: SavedConnector =
                serde_json::from_slice(&text).map_err(|e| StateError::Corrupt { path: file.clone(), message: e.to_string() })?;
            saved.connectors.push((c.config, c.lifecycle));
        }
        Ok(saved)
    }
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, StateError> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| !p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.')))
        .collect();
    entries.sort();
    Ok(entries)
}

fn remove(path: &Path) -> Result<(), StateError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(path)(e)),
        _ => Ok(()),
    }
}

/// Writes `bytes` to a hidden temporary file beside `path`, flushes it to disk, renames it
/// over `path` and flushes the directory, so the rename itself survives a crash.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StateError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir).map_err(io(dir))?;
    tmp.write_all(bytes).map_err(io(path))?;
    tmp.as_file().sync_all().map_err(io(path))?;
    tmp.persist(path).map_err(|e| StateError::Io { path: path.to_owned(), source: e.error })?;
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connector(name: &str) -> ConnectorConfig {
        turnpike_config::HostConfig::connector_from_yaml(
            &format!("name: {name}\ntopics: [a]\noutput_topic: b\ntransforms:\n  - plugin: identity\n"),
            "test",
        )
        .unwrap()
    }

    #[test]
    fn what_is_saved_is_loaded_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        store.save_connector(&connector("one"), Lifecycle::Paused).unwrap();
        store.save_connector(&connector("two"), Lifecycle::Running).unwrap();
        store.save_connector(&connector("two"), Lifecycle::Stopped).unwrap();
        let name = PluginName::parse("mask").unwrap();
        store.save_plugin(&name, "1.0.0", b"bytes").unwrap();
        store.save_plugin(&name, "2.0.0", b"more").unwrap();
        store.remove_plugin(&name, "2.0.0").unwrap();
        store.remove_connector("gone").unwrap();

        let saved = StateStore::open(dir.path()).unwrap().load().unwrap();
        let lifecycles: Vec<_> = saved.connectors.iter().map(|(c, l)| (c.name.to_string(), *l)).collect();
        assert_eq!(lifecycles, [("one".to_owned(), Lifecycle::Paused), ("two".to_owned(), Lifecycle::Stopped)]);
        let plugins: Vec<_> = saved.plugins.iter().map(|(n, v, b, _)| (n.clone(), v.clone(), b.clone())).collect();
        assert_eq!(plugins, [(name, "1.0.0".to_owned(), b"bytes".to_vec())]);
    }

    #[test]
    fn a_leftover_temporary_file_is_ignored_and_a_corrupt_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        store.save_connector(&connector("ok"), Lifecycle::Running).unwrap();
        fs::write(dir.path().join("connectors/.tmp-half"), b"{\"config\": {").unwrap();
        assert_eq!(store.load().unwrap().connectors.len(), 1, "an interrupted write leaves only a hidden temporary");
        fs::write(dir.path().join("connectors/bad.json"), b"{\"config\": {").unwrap();
        let err = store.load().unwrap_err().to_string();
        assert!(err.contains("bad.json"), "{err}");
    }
}
