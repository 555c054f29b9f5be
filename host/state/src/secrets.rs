//! The host's secrets store: what `${secret:NAME}` references resolve to.
//!
//! ```text
//! <dir>/secrets/<name>    the value, as given; mode 0600 in a directory of mode 0700
//! ```
//!
//! Values are written atomically like every state file (a temporary file created with mode
//! 0600 before a byte is written, flushed, renamed) and read only when a connector's plugins
//! are about to start. They are not encrypted: whoever can read the state directory can read
//! them, so it must be protected like a key file. A host without a state directory keeps its
//! secrets in memory, for as long as it runs.
//!
//! Nothing here ever puts a value into an error or a `Debug` output.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use turnpike_config::{SecretLookup, SecretName};

use crate::{io, remove, write_atomically, StateError, TMP_PREFIX};

/// A secret as it may be shown: its name and when it was last written, never its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretInfo {
    /// The name (`${secret:NAME}`).
    pub name: String,
    /// When it was last stored.
    pub updated_at: SystemTime,
}

/// Where the host keeps secrets. Clones share the same secrets.
#[derive(Clone)]
pub struct SecretStore {
    backing: Backing,
}

#[derive(Clone)]
enum Backing {
    /// One file per secret in this directory.
    Files(PathBuf),
    /// Values by name, with when each was stored.
    Memory(Arc<Mutex<BTreeMap<String, (String, SystemTime)>>>),
}

impl fmt::Debug for SecretStore {
    /// Where the secrets are, never what they are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.backing {
            Backing::Files(dir) => write!(f, "SecretStore({})", dir.display()),
            Backing::Memory(_) => f.write_str("SecretStore(in memory)"),
        }
    }
}

impl SecretStore {
    /// Secrets kept as files in `dir` (made, with mode 0700, when the first one is stored).
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Self { backing: Backing::Files(dir.into()) }
    }

    /// Secrets kept in memory only, lost when the host stops (a host without a state
    /// directory: the demo, tests).
    pub fn in_memory() -> Self {
        Self { backing: Backing::Memory(Arc::default()) }
    }

    /// Stores `value` under `name`, replacing what was there.
    pub fn put(&self, name: &SecretName, value: &str) -> Result<(), StateError> {
        match &self.backing {
            Backing::Files(dir) => {
                make_private_dir(dir)?;
                write_atomically(&dir.join(name.as_str()), value.as_bytes())
            }
            Backing::Memory(map) => {
                map.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_string(), (value.to_owned(), SystemTime::now()));
                Ok(())
            }
        }
    }

    /// The value stored under `name`, if any.
    pub fn get(&self, name: &SecretName) -> Result<Option<String>, StateError> {
        match &self.backing {
            Backing::Files(dir) => {
                let path = dir.join(name.as_str());
                match fs::read(&path) {
                    Ok(bytes) => String::from_utf8(bytes)
                        .map(Some)
                        .map_err(|_| StateError::Corrupt { path, message: "the secret is not UTF-8 text (store it again)".into() }),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(io(&path)(e)),
                }
            }
            Backing::Memory(map) => Ok(map.lock().unwrap_or_else(|p| p.into_inner()).get(name.as_str()).map(|(v, _)| v.clone())),
        }
    }

    /// Forgets `name`; whether it was there.
    pub fn delete(&self, name: &SecretName) -> Result<bool, StateError> {
        match &self.backing {
            Backing::Files(dir) => {
                let path = dir.join(name.as_str());
                let existed = path.is_file();
                remove(&path)?;
                Ok(existed)
            }
            Backing::Memory(map) => Ok(map.lock().unwrap_or_else(|p| p.into_inner()).remove(name.as_str()).is_some()),
        }
    }

    /// Every secret's name and when it was stored, by name. Files that are not secrets (a
    /// leftover temporary, a name the store would not take) are not listed.
    pub fn list(&self) -> Result<Vec<SecretInfo>, StateError> {
        match &self.backing {
            Backing::Files(dir) => {
                let entries = match fs::read_dir(dir) {
                    Ok(entries) => entries,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                    Err(e) => return Err(io(dir)(e)),
                };
                let mut secrets = Vec::new();
                for entry in entries.filter_map(Result::ok) {
                    let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
                    if name.starts_with(TMP_PREFIX) || SecretName::parse(&name).is_err() {
                        continue;
                    }
                    let meta = entry.metadata().map_err(io(&entry.path()))?;
                    if meta.is_file() {
                        secrets.push(SecretInfo { name, updated_at: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH) });
                    }
                }
                secrets.sort_by(|a, b| a.name.cmp(&b.name));
                Ok(secrets)
            }
            Backing::Memory(map) => {
                let map = map.lock().unwrap_or_else(|p| p.into_inner());
                Ok(map.iter().map(|(name, (_, at))| SecretInfo { name: name.clone(), updated_at: *at }).collect())
            }
        }
    }
}

/// What `${secret:NAME}` resolves to. A secret that cannot be read counts as missing; the
/// reference's problem then says to store it again, which replaces the unreadable file.
impl SecretLookup for SecretStore {
    fn secret(&self, name: &str) -> Option<String> {
        let name = SecretName::parse(name).ok()?;
        self.get(&name).ok().flatten()
    }
}

/// Creates `dir` if needed and makes it readable by its owner only.
fn make_private_dir(dir: &std::path::Path) -> Result<(), StateError> {
    fs::create_dir_all(dir).map_err(io(dir))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(io(dir))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> SecretName {
        SecretName::parse(n).unwrap()
    }

    fn exercise(store: &SecretStore) {
        assert!(store.list().unwrap().is_empty());
        assert_eq!(store.secret("token"), None);
        store.put(&name("token"), "first-value").unwrap();
        store.put(&name("db"), "db-password").unwrap();
        store.put(&name("token"), "second-value").unwrap();
        assert_eq!(store.secret("token").as_deref(), Some("second-value"), "a put replaces");
        assert_eq!(store.list().unwrap().into_iter().map(|s| s.name).collect::<Vec<_>>(), ["db", "token"]);
        assert!(store.delete(&name("db")).unwrap());
        assert!(!store.delete(&name("db")).unwrap(), "gone already");
        assert_eq!(store.secret("db"), None);
        assert_eq!(store.secret("Not A Name"), None);
        assert!(!format!("{store:?}").contains("second-value"));
    }

    #[test]
    fn secrets_are_stored_replaced_listed_and_deleted() {
        exercise(&SecretStore::in_memory());
        let dir = tempfile::tempdir().unwrap();
        exercise(&SecretStore::in_dir(dir.path().join("secrets")));
    }

    #[test]
    fn a_secret_file_holds_the_value_alone_readable_by_its_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::StateStore::open(dir.path()).unwrap().secrets();
        store.put(&name("api-token"), "tok-123").unwrap();
        let file = dir.path().join("secrets/api-token");
        assert_eq!(fs::read_to_string(&file).unwrap(), "tok-123");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
            assert_eq!(fs::metadata(dir.path().join("secrets")).unwrap().permissions().mode() & 0o777, 0o700);
        }
        // A leftover temporary and a file that is no secret name are not listed.
        fs::write(dir.path().join("secrets/.tmp-half"), "x").unwrap();
        fs::write(dir.path().join("secrets/Upper"), "x").unwrap();
        let names: Vec<String> = store.list().unwrap().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["api-token"]);
        // Clones, and a store opened again on the same directory, see the same secrets.
        assert_eq!(crate::StateStore::open(dir.path()).unwrap().secrets().secret("api-token").as_deref(), Some("tok-123"));
    }
}
