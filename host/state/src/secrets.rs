//! The host's secrets store: what `${secret:NAME}` references resolve to.
//!
//! ```text
//! <dir>/secrets/<name>       the value, as given; mode 0600 in a directory of mode 0700
//! <dir>/secret-teams.json    {"name": "team", …}: the team that owns each secret; mode 0600
//! ```
//!
//! Values are written atomically like every state file (a temporary file created with mode
//! 0600 before a byte is written, flushed, renamed) and read only when a connector's plugins
//! are about to start. They are not encrypted: whoever can read the state directory can read
//! them, so it must be protected like a key file. A host without a state directory keeps its
//! secrets in memory, for as long as it runs.
//!
//! On a shared host a secret belongs to a team or, absent from `secret-teams.json` (as every
//! secret of a host before teams), to the operator. A team's connector resolves its team's
//! secrets only ([`SecretStore::for_team`]); the operator's connectors resolve every one. The
//! teams live beside the directory, not in it, since a secret may itself be named
//! `secret-teams.json` or `x.team`. A secret changing hands is first taken from its old team,
//! then written, then given to the new one: a crash between two writes leaves it to the
//! operator alone, never one team holding another's value.
//!
//! Nothing here ever puts a value into an error or a `Debug` output.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use turnpike_config::{SecretLookup, SecretName, TeamName};

use crate::{io, remove, write_atomically, StateError, TMP_PREFIX};

/// The file, beside the secrets directory, that names each secret's team.
const TEAMS_FILE: &str = "secret-teams.json";

/// A secret as it may be shown: its name, when it was last written and its team, never its
/// value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretInfo {
    /// The name (`${secret:NAME}`).
    pub name: String,
    /// When it was last stored.
    pub updated_at: SystemTime,
    /// The team that owns it; `None`: the operator's, resolved only by connectors without a
    /// team.
    pub team: Option<TeamName>,
}

/// Where the host keeps secrets. Clones share the same secrets.
#[derive(Clone)]
pub struct SecretStore {
    backing: Backing,
}

/// A secret kept in memory.
struct Held {
    value: String,
    at: SystemTime,
    team: Option<TeamName>,
}

#[derive(Clone)]
enum Backing {
    /// One file per secret in `dir`, their teams in the file `teams`. `writes` is held by every
    /// change and by every team's read, so that a read never pairs one write's team with
    /// another's value (clones share it).
    Files { dir: PathBuf, teams: PathBuf, writes: Arc<Mutex<()>> },
    /// Secrets by name.
    Memory(Arc<Mutex<BTreeMap<String, Held>>>),
}

impl fmt::Debug for SecretStore {
    /// Where the secrets are, never what they are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.backing {
            Backing::Files { dir, .. } => write!(f, "SecretStore({})", dir.display()),
            Backing::Memory(_) => f.write_str("SecretStore(in memory)"),
        }
    }
}

impl SecretStore {
    /// Secrets kept as files in `dir` (made, with mode 0700, when the first one is stored),
    /// their teams in `secret-teams.json` beside `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        let teams = dir.with_file_name(TEAMS_FILE);
        Self { backing: Backing::Files { dir, teams, writes: Arc::default() } }
    }

    /// Secrets kept in memory only, lost when the host stops (a host without a state
    /// directory: the demo, tests).
    pub fn in_memory() -> Self {
        Self { backing: Backing::Memory(Arc::default()) }
    }

    /// Stores `value` under `name` for `team` (`None`: the operator's), replacing what was
    /// there, its team included. An error after the value was written leaves the secret the
    /// operator's; storing it again sets its team.
    pub fn put(&self, name: &SecretName, value: &str, team: Option<&TeamName>) -> Result<(), StateError> {
        match &self.backing {
            Backing::Files { dir, teams, writes } => {
                let _one_at_a_time = writes.lock().unwrap_or_else(|p| p.into_inner());
                make_private_dir(dir)?;
                let mut owners = read_teams(teams)?;
                if owners.get(name.as_str()).is_some_and(|owner| Some(owner) != team) {
                    owners.remove(name.as_str());
                    write_teams(teams, &owners)?;
                }
                write_atomically(&dir.join(name.as_str()), value.as_bytes())?;
                if let Some(team) = team {
                    if owners.get(name.as_str()) != Some(team) {
                        owners.insert(name.to_string(), team.clone());
                        write_teams(teams, &owners)?;
                    }
                }
                Ok(())
            }
            Backing::Memory(map) => {
                let held = Held { value: value.to_owned(), at: SystemTime::now(), team: team.cloned() };
                map.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_string(), held);
                Ok(())
            }
        }
    }

    /// The value stored under `name`, if any, whoever owns it (for the operator; a
    /// connector's references go through [`SecretStore::for_team`]).
    pub fn get(&self, name: &SecretName) -> Result<Option<String>, StateError> {
        match &self.backing {
            Backing::Files { dir, .. } => {
                let path = dir.join(name.as_str());
                match fs::read(&path) {
                    Ok(bytes) => String::from_utf8(bytes)
                        .map(Some)
                        .map_err(|_| StateError::Corrupt { path, message: "the secret is not UTF-8 text (store it again)".into() }),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(io(&path)(e)),
                }
            }
            Backing::Memory(map) => Ok(map.lock().unwrap_or_else(|p| p.into_inner()).get(name.as_str()).map(|h| h.value.clone())),
        }
    }

    /// The value of `name` if a connector of `team` may have it: any secret for the
    /// operator's connectors (`None`), else only its team's own.
    fn get_for(&self, name: &SecretName, team: Option<&TeamName>) -> Result<Option<String>, StateError> {
        let Some(team) = team else { return self.get(name) };
        match &self.backing {
            Backing::Files { teams, writes, .. } => {
                let _not_while_it_changes = writes.lock().unwrap_or_else(|p| p.into_inner());
                if read_teams(teams)?.get(name.as_str()) == Some(team) {
                    self.get(name)
                } else {
                    Ok(None)
                }
            }
            Backing::Memory(map) => {
                let map = map.lock().unwrap_or_else(|p| p.into_inner());
                Ok(map.get(name.as_str()).filter(|h| h.team.as_ref() == Some(team)).map(|h| h.value.clone()))
            }
        }
    }

    /// What a connector of `team` may resolve: its team's secrets only, or every secret for
    /// the operator's connectors (`None`).
    pub fn for_team(&self, team: Option<TeamName>) -> TeamSecrets {
        TeamSecrets { store: self.clone(), team }
    }

    /// One secret's name, time and team; `None` when there is no such secret.
    pub fn info(&self, name: &SecretName) -> Result<Option<SecretInfo>, StateError> {
        match &self.backing {
            Backing::Files { dir, teams, .. } => {
                let path = dir.join(name.as_str());
                let meta = match fs::metadata(&path) {
                    Ok(meta) if meta.is_file() => meta,
                    Ok(_) => return Ok(None),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                    Err(e) => return Err(io(&path)(e)),
                };
                let team = read_teams(teams)?.remove(name.as_str());
                Ok(Some(SecretInfo { name: name.to_string(), updated_at: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), team }))
            }
            Backing::Memory(map) => {
                let map = map.lock().unwrap_or_else(|p| p.into_inner());
                Ok(map.get(name.as_str()).map(|h| SecretInfo { name: name.to_string(), updated_at: h.at, team: h.team.clone() }))
            }
        }
    }

    /// Forgets `name` and its team; whether it was there.
    pub fn delete(&self, name: &SecretName) -> Result<bool, StateError> {
        match &self.backing {
            Backing::Files { dir, teams, writes } => {
                let _one_at_a_time = writes.lock().unwrap_or_else(|p| p.into_inner());
                // Read first: a teams file that cannot be read refuses the delete before
                // anything changed.
                let mut owners = read_teams(teams)?;
                let path = dir.join(name.as_str());
                let existed = path.is_file();
                remove(&path)?;
                // After the value: a crash between the two leaves the team of no secret,
                // which the next `put` of the name replaces or keeps as it asks.
                if owners.remove(name.as_str()).is_some() {
                    write_teams(teams, &owners)?;
                }
                Ok(existed)
            }
            Backing::Memory(map) => Ok(map.lock().unwrap_or_else(|p| p.into_inner()).remove(name.as_str()).is_some()),
        }
    }

    /// Every secret's name, when it was stored and its team, by name. Files that are not
    /// secrets (a leftover temporary, a name the store would not take) are not listed.
    pub fn list(&self) -> Result<Vec<SecretInfo>, StateError> {
        match &self.backing {
            Backing::Files { dir, teams, .. } => {
                let entries = match fs::read_dir(dir) {
                    Ok(entries) => entries,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                    Err(e) => return Err(io(dir)(e)),
                };
                let owners = read_teams(teams)?;
                let mut secrets = Vec::new();
                for entry in entries.filter_map(Result::ok) {
                    let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
                    if name.starts_with(TMP_PREFIX) || SecretName::parse(&name).is_err() {
                        continue;
                    }
                    let meta = entry.metadata().map_err(io(&entry.path()))?;
                    if meta.is_file() {
                        let team = owners.get(&name).cloned();
                        secrets.push(SecretInfo { name, updated_at: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), team });
                    }
                }
                secrets.sort_by(|a, b| a.name.cmp(&b.name));
                Ok(secrets)
            }
            Backing::Memory(map) => {
                let map = map.lock().unwrap_or_else(|p| p.into_inner());
                Ok(map.iter().map(|(name, h)| SecretInfo { name: name.clone(), updated_at: h.at, team: h.team.clone() }).collect())
            }
        }
    }
}

/// The secrets one connector may resolve ([`SecretStore::for_team`]). Another team's secret,
/// or the operator's, is not there for a team's connector, in the same words as a secret no
/// one stored, so a name tells it nothing. Nor may it read the host's environment or files
/// (`${env:…}`, `${file:…}`): they hold what the operator keeps from teams, this store's own
/// files included.
#[derive(Clone)]
pub struct TeamSecrets {
    store: SecretStore,
    team: Option<TeamName>,
}

impl fmt::Debug for TeamSecrets {
    /// Where and whose, never what.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.team {
            Some(team) => write!(f, "{:?} for team {team}", self.store),
            None => write!(f, "{:?} for the operator", self.store),
        }
    }
}

/// What `${secret:NAME}` resolves to. A secret that cannot be read counts as missing; the
/// reference's problem then says to store it again, which replaces the unreadable file.
impl SecretLookup for TeamSecrets {
    fn secret(&self, name: &str) -> Option<String> {
        let name = SecretName::parse(name).ok()?;
        self.store.get_for(&name, self.team.as_ref()).ok().flatten()
    }

    fn host_references(&self) -> bool {
        self.team.is_none()
    }
}

/// Which team owns each secret; none when the file does not exist (a host before teams, or
/// no team's secret yet).
fn read_teams(path: &Path) -> Result<BTreeMap<String, TeamName>, StateError> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| StateError::Corrupt { path: path.to_owned(), message: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(io(path)(e)),
    }
}

/// Writes which team owns each secret, atomically and with mode 0600, like every state file.
fn write_teams(path: &Path, owners: &BTreeMap<String, TeamName>) -> Result<(), StateError> {
    let bytes = serde_json::to_vec_pretty(owners).map_err(|e| StateError::Corrupt { path: path.to_owned(), message: e.to_string() })?;
    write_atomically(path, &bytes)
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
mod tests;
