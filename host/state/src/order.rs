//! The order a plugin's versions were uploaded in.
//!
//! `@latest` is the most recently registered version, so a restarted host must register the
//! saved versions again in upload order. Neither file-name order (`1.10.0` sorts before
//! `1.9.0`) nor modification times (coarse, and reset by a copy or a restored backup) is that
//! order, so each version has, beside `<version>.wasm`, a `<version>.meta.json`:
//!
//! ```text
//! {"seq": 3, "uploaded_at": 1700000000000, "team": "analytics"}
//! ```
//!
//! `seq` is one more than the highest `seq` in the directory when the version was saved;
//! `uploaded_at` is milliseconds since the Unix epoch; `team` is the team that uploaded it,
//! absent for a plugin every team shares (and in the files of hosts before teams, whose
//! uploads are therefore shared). A version without the file was saved
//! by a host that wrote none, so it was uploaded before every version that has one; such
//! versions are ordered by modification time, then by name.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use turnpike_config::TeamName;

use crate::{io, sorted_entries, write_atomically, StateError};

/// How a version's component file name ends.
const COMPONENT_SUFFIX: &str = ".wasm";

/// How a version's upload metadata file name ends. Never `.wasm`, so metadata is never
/// taken for a version.
const META_SUFFIX: &str = ".meta.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct UploadMeta {
    seq: u64,
    uploaded_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    team: Option<TeamName>,
}

impl UploadMeta {
    fn time(&self) -> SystemTime {
        // `checked_add`: a hand-edited huge value must not panic the host.
        UNIX_EPOCH.checked_add(Duration::from_millis(self.uploaded_at)).unwrap_or(UNIX_EPOCH)
    }
}

/// Where the upload metadata of `version` lives in a plugin's directory.
pub(crate) fn meta_path(dir: &Path, version: &str) -> PathBuf {
    dir.join(format!("{version}{META_SUFFIX}"))
}

fn read(path: &Path) -> Result<Option<UploadMeta>, StateError> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StateError::Corrupt { path: path.to_owned(), message: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
    }
}

/// Records `version` as uploaded now by `team`, after every version in `dir` (its own earlier
/// upload included). The caller holds the store's upload lock, so no two versions share a
/// `seq`.
pub(crate) fn save(dir: &Path, version: &str, team: Option<&TeamName>) -> Result<(), StateError> {
    let mut last: u64 = 0;
    for path in sorted_entries(dir)? {
        // Metadata a crash left behind after its component was removed counts too: harmless.
        if path.is_file() && path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(META_SUFFIX)) {
            if let Some(meta) = read(&path)? {
                last = last.max(meta.seq);
            }
        }
    }
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let meta = UploadMeta { seq: last.saturating_add(1), uploaded_at: u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX), team: team.cloned() };
    let path = meta_path(dir, version);
    let bytes = serde_json::to_vec(&meta).map_err(|e| StateError::Corrupt { path: path.clone(), message: e.to_string() })?;
    write_atomically(&path, &bytes)
}

/// One saved version: its name, component file, metadata if any, and modification time.
type Found = (String, PathBuf, Option<UploadMeta>, SystemTime);

/// Versions without metadata (`None`) first, by modification time; then by `seq` (the time
/// only breaks ties in a hand-edited file). The caller breaks remaining ties by name.
fn order_key(found: &Found) -> (Option<u64>, SystemTime) {
    let (_, _, meta, modified) = found;
    match meta {
        Some(meta) => (Some(meta.seq), meta.time()),
        None => (None, *modified),
    }
}

/// A saved version: its name, component file, upload time and team.
pub(crate) type SavedVersion = (String, PathBuf, SystemTime, Option<TeamName>);

/// The versions saved in a plugin's directory, oldest upload first, each with its component
/// file, upload time (for a version without metadata, the file's modification time) and the
/// team that uploaded it.
pub(crate) fn versions(dir: &Path) -> Result<Vec<SavedVersion>, StateError> {
    let mut found: Vec<Found> = Vec::new();
    for file in sorted_entries(dir)? {
        let Some(version) = file.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(COMPONENT_SUFFIX)) else { continue };
        let version = version.to_owned();
        let meta = read(&meta_path(dir, &version))?;
        let modified = fs::metadata(&file).and_then(|m| m.modified()).unwrap_or(UNIX_EPOCH);
        found.push((version, file, meta, modified));
    }
    found.sort_by(|a, b| order_key(a).cmp(&order_key(b)).then_with(|| a.0.cmp(&b.0)));
    Ok(found
        .into_iter()
        .map(|(version, file, meta, modified)| {
            let uploaded_at = meta.as_ref().map_or(modified, UploadMeta::time);
            (version, file, uploaded_at, meta.and_then(|m| m.team))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use turnpike_config::{PluginName, TeamName};

    use crate::StateStore;

    fn versions(store: &StateStore) -> Vec<String> {
        store.load().unwrap().plugins.into_iter().map(|p| p.version).collect()
    }

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn set_modified(path: &Path, secs: u64) {
        fs::File::options().write(true).open(path).unwrap().set_modified(at(secs)).unwrap();
    }

    #[test]
    fn versions_load_in_upload_order_not_name_order() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        let name = PluginName::parse("mask").unwrap();
        let before = SystemTime::now();
        for version in ["1.9.0", "1.10.0", "1.2.0"] {
            store.save_plugin(&name, version, version.as_bytes(), None).unwrap();
        }
        let after = SystemTime::now();

        let restarted = StateStore::open(dir.path()).unwrap();
        assert_eq!(versions(&restarted), ["1.9.0", "1.10.0", "1.2.0"]);
        for p in restarted.load().unwrap().plugins {
            // Saved in whole milliseconds, so up to 1 ms before `before`.
            assert!(p.uploaded_at + Duration::from_millis(1) >= before && p.uploaded_at <= after, "{}: {:?}", p.version, p.uploaded_at);
        }

        store.save_plugin(&name, "1.9.0", b"again", None).unwrap();
        assert_eq!(versions(&restarted), ["1.10.0", "1.2.0", "1.9.0"], "saved again is latest, as registered again is");
    }

    #[test]
    fn versions_without_metadata_load_first_by_file_time_then_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        let plugin_dir = dir.path().join("plugins/mask");
        fs::create_dir_all(&plugin_dir).unwrap();
        // As an earlier host left them: components, no metadata.
        for (version, secs) in [("1.10.0", 2_000), ("1.9.0", 1_000), ("b", 3_000), ("a", 3_000)] {
            let path = plugin_dir.join(format!("{version}.wasm"));
            fs::write(&path, version).unwrap();
            set_modified(&path, secs);
        }
        // Uploaded after the upgrade.
        store.save_plugin(&PluginName::parse("mask").unwrap(), "0.1.0", b"new", None).unwrap();

        let saved = store.load().unwrap().plugins;
        let got: Vec<(&str, SystemTime)> = saved.iter().map(|p| (p.version.as_str(), p.uploaded_at)).collect();
        assert_eq!(got[..4], [("1.9.0", at(1_000)), ("1.10.0", at(2_000)), ("a", at(3_000)), ("b", at(3_000))]);
        assert_eq!(got[4].0, "0.1.0");
        assert_eq!(got.len(), 5);
    }

    #[test]
    fn removing_a_version_removes_its_metadata_and_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        let name = PluginName::parse("mask").unwrap();
        store.save_plugin(&name, "1.0.0", b"one", None).unwrap();
        store.save_plugin(&name, "2.0.0", b"two", None).unwrap();
        store.remove_plugin(&name, "1.0.0").unwrap();
        store.save_plugin(&name, "1.0.0", b"one again", None).unwrap();
        assert_eq!(versions(&store), ["2.0.0", "1.0.0"]);

        store.remove_plugin(&name, "1.0.0").unwrap();
        store.remove_plugin(&name, "2.0.0").unwrap();
        let left: Vec<_> = fs::read_dir(dir.path().join("plugins/mask")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn corrupt_metadata_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        store.save_plugin(&PluginName::parse("mask").unwrap(), "1.0.0", b"one", None).unwrap();
        fs::write(dir.path().join("plugins/mask/1.0.0.meta.json"), b"{\"seq\": ").unwrap();
        let err = store.load().unwrap_err().to_string();
        assert!(err.contains("1.0.0.meta.json"), "{err}");
    }

    #[test]
    fn the_uploading_team_is_saved_and_metadata_without_one_is_shared() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path()).unwrap();
        let (mask, shared) = (PluginName::parse("mask").unwrap(), PluginName::parse("shared").unwrap());
        let analytics = TeamName::parse("analytics").unwrap();
        store.save_plugin(&mask, "1.0.0", b"one", Some(&analytics)).unwrap();
        store.save_plugin(&shared, "1.0.0", b"two", None).unwrap();
        let meta = |plugin: &str| fs::read_to_string(dir.path().join(format!("plugins/{plugin}/1.0.0.meta.json"))).unwrap();
        assert!(meta("mask").contains(r#""team":"analytics""#), "{}", meta("mask"));
        assert!(!meta("shared").contains("team"), "no team, no key: {}", meta("shared"));
        // As a host before teams wrote it.
        let old = dir.path().join("plugins/old");
        fs::create_dir_all(&old).unwrap();
        fs::write(old.join("1.0.0.wasm"), b"three").unwrap();
        fs::write(old.join("1.0.0.meta.json"), br#"{"seq": 1, "uploaded_at": 1700000000000}"#).unwrap();

        let teams: Vec<(String, Option<TeamName>)> = StateStore::open(dir.path()).unwrap().load().unwrap().plugins.into_iter().map(|p| (p.name.to_string(), p.team)).collect();
        assert_eq!(teams, [("mask".to_owned(), Some(analytics)), ("old".to_owned(), None), ("shared".to_owned(), None)]);
    }
}
