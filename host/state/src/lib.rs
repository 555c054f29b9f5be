//! Durable host state in a directory, so a restarted host comes back as it was:
//!
//! ```text
//! <dir>/connectors/<name>.json        {"config": {…}, "lifecycle": "running" | "paused" | "stopped"}
//! <dir>/plugins/<name>/<version>.wasm the uploaded component, as uploaded
//! <dir>/plugins/<name>/<version>.meta.json {"seq": 3, "uploaded_at": 1700000000000, "team": "analytics"}
//! <dir>/compiled/<digest>-<engine>.cwasm compiled code, written and read only by the runtime
//! <dir>/secrets/<name>                  a secret's value, mode 0600 (`secrets.rs`)
//! <dir>/secret-teams.json               {"name": "team", …}: each secret's team, mode 0600 (`secrets.rs`)
//! <dir>/tokens.json                     the admin API's tokens, only their SHA-256, mode 0600 (`tokens.rs`)
//! ```
//!
//! `seq` orders a plugin's versions by upload, so `@latest` means the same version after a
//! restart as before it (`order.rs`); `uploaded_at` is milliseconds since the Unix epoch;
//! `team` is the team that uploaded the version, absent for a plugin every team shares.
//!
//! Every write goes to a temporary file (`.tmp-*`) in the same directory, is flushed to
//! disk, then renamed over the old file: a crash mid-write leaves the old file or the new
//! one, never a mix, and never a half-written file under the real name.
//!
//! Names become file names. On a case-insensitive file system (macOS and Windows by
//! default) two names differing only in case are one file; [`case_key`] lets the host refuse
//! the second before it overwrites the first.

mod order;
mod secrets;
mod tokens;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use turnpike_config::{ConnectorConfig, PluginName, TeamName};

pub use secrets::{SecretInfo, SecretStore, TeamSecrets};
pub use tokens::{AuthFailure, TokenInfo, TokenStore};

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

/// The prefix of the temporary files [`write_atomically`] leaves behind if interrupted.
const TMP_PREFIX: &str = ".tmp-";

/// The key under which a case-insensitive file system stores a connector name or a plugin
/// version: two different names with the same key are one file there, so saving the second
/// would silently overwrite the first (`Orders` and `orders`, `1.0-RC1` and `1.0-rc1`). The
/// host refuses a new name whose key equals that of an existing, different name (see
/// [`case_collision`]). Names are ASCII (`turnpike_config::names`), so ASCII lowercasing is
/// exact; plugin names are lowercase already.
pub fn case_key(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// The first of `existing` that is a different name from `name` but has the same
/// [`case_key`]: the name a case-insensitive file system would confuse it with.
pub fn case_collision<'a>(name: &str, existing: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let key = case_key(name);
    existing.into_iter().find(|&other| other != name && case_key(other) == key)
}

/// One saved plugin version.
#[derive(Debug)]
pub struct SavedPlugin {
    /// The plugin.
    pub name: PluginName,
    /// The version.
    pub version: String,
    /// The component, as uploaded.
    pub bytes: Vec<u8>,
    /// When it was uploaded; for a version saved without upload metadata (by an earlier
    /// host), the file's modification time.
    pub uploaded_at: std::time::SystemTime,
    /// The team that uploaded it; `None`: shared by every team.
    pub team: Option<TeamName>,
}

/// Everything a state directory holds.
#[derive(Debug, Default)]
pub struct Saved {
    /// Each plugin's versions in upload order (oldest first), so the last one is what
    /// `@latest` named before the restart.
    pub plugins: Vec<SavedPlugin>,
    /// Connectors with their lifecycle.
    pub connectors: Vec<(ConnectorConfig, Lifecycle)>,
}

/// A state directory.
#[derive(Debug, Clone)]
pub struct StateStore {
    dir: PathBuf,
    /// Held while a plugin version is saved, so two uploads never take the same sequence
    /// number (clones share it).
    uploads: Arc<Mutex<()>>,
}

impl StateStore {
    /// Opens (creating if needed) a state directory.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, StateError> {
        let dir = dir.into();
        for sub in ["connectors", "plugins"] {
            let path = dir.join(sub);
            fs::create_dir_all(&path).map_err(io(&path))?;
        }
        Ok(Self { dir, uploads: Arc::default() })
    }

    /// Where the runtime keeps compiled plugins (only the host writes there).
    pub fn compiled_dir(&self) -> PathBuf {
        self.dir.join("compiled")
    }

    /// The secrets store in this directory (`<dir>/secrets`, their teams in
    /// `<dir>/secret-teams.json`).
    pub fn secrets(&self) -> SecretStore {
        SecretStore::in_dir(self.dir.join("secrets"))
    }

    /// The admin API's tokens in this directory (`<dir>/tokens.json`). Each call makes a new
    /// store: make one and clone it, so that every clone sees the fresh `last_used_at` times.
    pub fn tokens(&self) -> TokenStore {
        TokenStore::in_dir(&self.dir)
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

    /// Whether a connector has a saved state file. On a case-insensitive file system this is
    /// also true when a name with the same [`case_key`] is saved.
    pub fn connector_saved(&self, name: &str) -> bool {
        self.connector_path(name).is_file()
    }

    /// Saves a component `team` uploaded (`None`: shared) as the plugin's newest version:
    /// saving an existing version again moves it last, as registering it again does in the
    /// registry.
    pub fn save_plugin(&self, name: &PluginName, version: &str, bytes: &[u8], team: Option<&TeamName>) -> Result<(), StateError> {
        let dir = self.dir.join("plugins").join(name.as_str());
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        let _one_at_a_time = self.uploads.lock().unwrap_or_else(|p| p.into_inner());
        // The metadata first: the component's rename is what makes the version exist, so a
        // crash between the two leaves metadata of no version (ignored) rather than a version
        // that has lost its place in the order.
        order::save(&dir, version, team)?;
        write_atomically(&self.plugin_path(name, version), bytes)
    }

    /// Forgets an uploaded component and its upload metadata.
    pub fn remove_plugin(&self, name: &PluginName, version: &str) -> Result<(), StateError> {
        remove(&self.plugin_path(name, version))?;
        // After the component, for the same reason as in `save_plugin`.
        remove(&order::meta_path(&self.dir.join("plugins").join(name.as_str()), version))
    }

    /// Reads everything back. Leftover temporary files (`.tmp-*`) from an interrupted write
    /// are ignored; any other file that looks like state, a hidden one included, is loaded
    /// or reported as corrupt, never silently dropped.
    pub fn load(&self) -> Result<Saved, StateError> {
        let mut saved = Saved::default();
        let plugins = self.dir.join("plugins");
        for dir in sorted_entries(&plugins)? {
            if !dir.is_dir() {
                continue;
            }
            let Some(name) = dir.file_name().and_then(|n| n.to_str()).and_then(|n| PluginName::parse(n).ok()) else { continue };
            for (version, file, uploaded_at, team) in order::versions(&dir)? {
                let bytes = fs::read(&file).map_err(io(&file))?;
                saved.plugins.push(SavedPlugin { name: name.clone(), version, bytes, uploaded_at, team });
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

/// A directory's entries by name, without leftover temporary files and macOS metadata. Other hidden files are
/// kept: earlier hosts accepted names starting with `.`, and skipping them lost that state.
fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, StateError> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        // `._name` files are macOS metadata (AppleDouble) on foreign file systems, never state.
        .filter(|p| !p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(TMP_PREFIX) || n.starts_with("._")))
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
    let mut tmp = tempfile::Builder::new().prefix(TMP_PREFIX).tempfile_in(dir).map_err(io(dir))?;
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
        turnpike_config::HostConfig::parse_connector_yaml(
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
        store.save_plugin(&name, "1.0.0", b"bytes", None).unwrap();
        store.save_plugin(&name, "2.0.0", b"more", None).unwrap();
        store.remove_plugin(&name, "2.0.0").unwrap();
        store.remove_connector("gone").unwrap();

        let saved = StateStore::open(dir.path()).unwrap().load().unwrap();
        let lifecycles: Vec<_> = saved.connectors.iter().map(|(c, l)| (c.name.to_string(), *l)).collect();
        assert_eq!(lifecycles, [("one".to_owned(), Lifecycle::Paused), ("two".to_owned(), Lifecycle::Stopped)]);
        let plugins: Vec<_> = saved.plugins.iter().map(|p| (p.name.clone(), p.version.clone(), p.bytes.clone())).collect();
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

    #[test]
    fn a_hidden_file_is_loaded_or_reported_never_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        // As an earlier host saved version `.hidden` and connector `.hidden`, which it accepted.
        let plugin_dir = dir.path().join("plugins/mask");
        fs::create_dir_all(&plugin_dir).unwrap();
        fs::write(plugin_dir.join(".hidden.wasm"), b"bytes").unwrap();
        fs::write(plugin_dir.join(".tmp-half"), b"by").unwrap();
        let versions: Vec<_> = store.load().unwrap().plugins.into_iter().map(|p| p.version).collect();
        assert_eq!(versions, [".hidden"]);

        let mut hidden = serde_json::to_value(SavedConnector { config: connector("x"), lifecycle: Lifecycle::Running }).unwrap();
        hidden["config"]["name"] = ".hidden".into();
        fs::write(dir.path().join("connectors/.hidden.json"), serde_json::to_vec(&hidden).unwrap()).unwrap();
        let err = store.load().unwrap_err().to_string();
        assert!(err.contains(".hidden.json"), "a connector no longer valid is reported, not dropped: {err}");
    }

    #[test]
    fn names_one_case_insensitive_file_system_would_merge_share_a_case_key() {
        assert_eq!(case_key("Orders"), case_key("orders"));
        assert_eq!(case_key("1.0-RC1"), case_key("1.0-rc1"));
        assert_ne!(case_key("orders"), case_key("orders2"));
        assert_eq!(case_collision("orders", ["Orders", "other"]), Some("Orders"));
        assert_eq!(case_collision("orders", ["orders", "other"]), None, "the same name is no collision");
    }

    #[test]
    fn connector_saved_says_whether_its_file_exists() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        assert!(!store.connector_saved("one"));
        store.save_connector(&connector("one"), Lifecycle::Running).unwrap();
        assert!(store.connector_saved("one"));
        store.remove_connector("one").unwrap();
        assert!(!store.connector_saved("one"));
    }
}
