//! The admin API's bearer tokens: who may call it, with which role, for which team.
//!
//! ```text
//! <dir>/tokens.json   {"version": 1, "tokens": [{"id", "team", "role", "sha256", "created_at",
//!                      "expires_at", "last_used_at", "revoked_at", "description"}]}
//! ```
//!
//! A token is `tpk_<id>_<secret>`: `id` is 12 hex digits (6 random bytes), shown in lists and
//! used to revoke it; `secret` is 64 hex digits (32 bytes from `rand`'s `ThreadRng`, a CSPRNG
//! seeded from the OS). Only the SHA-256 of the whole text is kept, so the file cannot be
//! replayed as a token. A fast hash suffices: 256 random bits leave nothing to brute-force.
//! [`TokenStore::create`] returns the token once; nothing keeps it.
//!
//! Times in the file are milliseconds since the Unix epoch, `null` when absent. The file is
//! written atomically with mode 0600 like every state file.
//!
//! Both the host and the CLI on its machine (`turnpike token create -c …`) write the file, so
//! the store re-reads it whenever its modification time, length or inode changed (one `stat`
//! per call), and every change re-reads it first and then writes it whole. Two processes
//! writing at the same instant could still lose one of the two writes: accepted, as the CLI is
//! run by the operator, by hand. Calls do blocking file I/O (a `stat`, now and then a read or
//! a write) under a lock.
//!
//! Nothing here puts a token into an error or a `Debug` output.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use rand::RngCore;
use sha2::{Digest, Sha256};
use turnpike_config::{Role, TeamName};

use self::file::{from_ms, parse, save, to_ms};
use crate::{io, StateError};

mod file;

/// The file in the state directory.
const FILE_NAME: &str = "tokens.json";
/// What every token starts with, so a leaked one is recognisable (secret scanners, logs).
const PREFIX: &str = "tpk_";
/// Random bytes in a token's id (12 hex digits).
const ID_BYTES: usize = 6;
/// Random bytes in a token's secret (64 hex digits).
const SECRET_BYTES: usize = 32;
/// A token's `last_used_at` reaches the file at most this often, so a busy client does not
/// rewrite it on every request; [`TokenStore::list`] always shows the fresh value.
const PERSIST_LAST_USED_EVERY: Duration = Duration::from_secs(60);

/// A token as it may be shown: everything but the token itself (and its hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    /// The 12 hex digits after `tpk_`: names the token in lists and to revoke it.
    pub id: String,
    /// The team it acts for; `None` for an admin token of the operator.
    pub team: Option<TeamName>,
    /// What it may do.
    pub role: Role,
    /// When it was created.
    pub created_at: SystemTime,
    /// From when on it is refused; `None`: never.
    pub expires_at: Option<SystemTime>,
    /// When it last authenticated a request (to this host process; see the module comment).
    pub last_used_at: Option<SystemTime>,
    /// When it was revoked; it is kept, refused, so lists show what happened to it.
    pub revoked_at: Option<SystemTime>,
    /// What it is for, as its creator wrote.
    pub description: Option<String>,
}

/// Why a presented token was refused. No message contains the token.
#[derive(Debug, thiserror::Error)]
pub enum AuthFailure {
    /// Not of the shape `tpk_<12 hex digits>_<64 hex digits>`.
    #[error("the token is not a Turnpike token (`tpk_` and two runs of lowercase hex digits): send the whole text `turnpike token create` printed")]
    Malformed,
    /// No token with its id, or the secret does not match.
    #[error("the token is not known to this host: check TURNPIKE_TOKEN, or have an admin create one with `turnpike token create`")]
    Unknown,
    /// Its `expires_at` has passed.
    #[error("the token has expired: have an admin create a new one with `turnpike token create`")]
    Expired,
    /// It was revoked.
    #[error("the token was revoked: have an admin create a new one with `turnpike token create`")]
    Revoked,
    /// The tokens file could not be read; nothing can be checked.
    #[error("the host could not read its tokens; if this persists, the operator should look at the host's log")]
    Unavailable(#[source] StateError),
}

/// Where tokens are kept. Clones share one view of them (and the fresh `last_used_at`
/// values), so the host should make one store and clone it.
#[derive(Clone)]
pub struct TokenStore {
    backing: Backing,
    tokens: Arc<Mutex<Tokens>>,
}

#[derive(Clone)]
enum Backing {
    /// `<dir>/tokens.json`.
    File(PathBuf),
    /// Only in `tokens`, lost when the process ends.
    Memory,
}

impl fmt::Debug for TokenStore {
    /// Where the tokens are, never what they are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.backing {
            Backing::File(path) => write!(f, "TokenStore({})", path.display()),
            Backing::Memory => f.write_str("TokenStore(in memory)"),
        }
    }
}

/// The tokens as last read (or written), and which version of the file that was.
#[derive(Default)]
struct Tokens {
    entries: Vec<Entry>,
    /// The file when `entries` were read from it; `None`: read it at the next call.
    seen: Option<Stamp>,
}

#[derive(Clone)]
struct Entry {
    info: TokenInfo,
    sha256: [u8; 32],
    /// `last_used_at` as the file has it, to throttle writing it.
    saved_last_used: Option<SystemTime>,
}

/// What tells one version of the file from another without reading it. Every write renames a
/// new file into place, so the inode changes too, even within one tick of the mtime clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stamp {
    Missing,
    Present { modified: Option<SystemTime>, len: u64, inode: u64 },
}

impl TokenStore {
    /// Tokens kept in `<dir>/tokens.json`; `dir` is created, with mode 0700, by the first
    /// write if it does not exist (an existing directory keeps its mode).
    pub fn in_dir(dir: &Path) -> Self {
        Self { backing: Backing::File(dir.join(FILE_NAME)), tokens: Arc::default() }
    }

    /// Tokens kept in memory only, lost when the process ends (a host without a state
    /// directory, tests).
    pub fn in_memory() -> Self {
        Self { backing: Backing::Memory, tokens: Arc::default() }
    }

    /// Makes a token. Returns what may be shown of it and the token itself, which is not kept
    /// anywhere: the caller shows it once.
    pub fn create(
        &self,
        team: Option<TeamName>,
        role: Role,
        expires_at: Option<SystemTime>,
        description: Option<String>,
    ) -> Result<(TokenInfo, String), StateError> {
        let created_at = whole_ms(SystemTime::now());
        self.change(|entries| {
            let mut rng = rand::rng();
            let mut id_bytes = [0u8; ID_BYTES];
            let id = loop {
                rng.fill_bytes(&mut id_bytes);
                let id = hex(&id_bytes);
                // 48 random bits collide about never, but a collision would make two tokens one.
                if !entries.iter().any(|e| e.info.id == id) {
                    break id;
                }
            };
            let mut secret = [0u8; SECRET_BYTES];
            rng.fill_bytes(&mut secret);
            let token = format!("{PREFIX}{id}_{}", hex(&secret));
            let info = TokenInfo { id, team, role, created_at, expires_at: expires_at.map(whole_ms), last_used_at: None, revoked_at: None, description };
            entries.push(Entry { info: info.clone(), sha256: sha256(&token), saved_last_used: None });
            ((info, token), true)
        })
    }

    /// What the token `presented` (the text after `Bearer `) is, if it may be used at `now`.
    /// Failures are checked in the order malformed, unknown, revoked, expired. A success
    /// records `now` as its `last_used_at`, written to the file at most once a minute.
    pub fn authenticate(&self, presented: &str, now: SystemTime) -> Result<TokenInfo, AuthFailure> {
        let id = parse_token(presented).ok_or(AuthFailure::Malformed)?;
        let presented_sha256 = sha256(presented);
        let used = whole_ms(now);
        let (info, persist) = {
            let mut tokens = self.current(false).map_err(AuthFailure::Unavailable)?;
            let entry = tokens.entries.iter_mut().find(|e| e.info.id == id).ok_or(AuthFailure::Unknown)?;
            if !same_digest(&entry.sha256, &presented_sha256) {
                return Err(AuthFailure::Unknown);
            }
            if entry.info.revoked_at.is_some() {
                return Err(AuthFailure::Revoked);
            }
            if entry.info.expires_at.is_some_and(|at| at <= now) {
                return Err(AuthFailure::Expired);
            }
            entry.info.last_used_at = entry.info.last_used_at.max(Some(used));
            (entry.info.clone(), matches!(self.backing, Backing::File(_)) && due(entry.saved_last_used, now))
        };
        if persist {
            // Best effort: the request is authenticated whether or not the time reaches the
            // file; a failed write is tried again at the next use.
            let _ = self.change(|entries| match entries.iter_mut().find(|e| e.info.id == id) {
                Some(entry) => {
                    entry.info.last_used_at = entry.info.last_used_at.max(Some(used));
                    // Another thread (or process) may have written it meanwhile.
                    ((), due(entry.saved_last_used, now))
                }
                None => ((), false),
            });
        }
        Ok(info)
    }

    /// Every token, revoked and expired ones included, oldest first.
    pub fn list(&self) -> Result<Vec<TokenInfo>, StateError> {
        let tokens = self.current(false)?;
        let mut infos: Vec<TokenInfo> = tokens.entries.iter().map(|e| e.info.clone()).collect();
        // Stable: tokens created within one millisecond keep the file's (creation) order.
        infos.sort_by_key(|info| info.created_at);
        Ok(infos)
    }

    /// Revokes the token with this id at `now`: true if it existed and was not revoked yet.
    pub fn revoke(&self, id: &str, now: SystemTime) -> Result<bool, StateError> {
        let at = whole_ms(now);
        self.change(|entries| match entries.iter_mut().find(|e| e.info.id == id) {
            Some(entry) if entry.info.revoked_at.is_none() => {
                entry.info.revoked_at = Some(at);
                (true, true)
            }
            _ => (false, false),
        })
    }

    /// Whether there are no tokens at all (revoked and expired ones count as tokens).
    pub fn is_empty(&self) -> Result<bool, StateError> {
        Ok(self.current(false)?.entries.is_empty())
    }

    fn lock(&self) -> MutexGuard<'_, Tokens> {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The tokens, read again first if the file changed (always if `force`).
    fn current(&self, force: bool) -> Result<MutexGuard<'_, Tokens>, StateError> {
        let mut tokens = self.lock();
        if let Backing::File(path) = &self.backing {
            refresh(&mut tokens, path, force)?;
        }
        Ok(tokens)
    }

    /// Applies `apply` to the file's current tokens, read just before, and saves the result
    /// if `apply` says it changed anything. If saving fails nothing changes, in memory or in
    /// the file.
    fn change<T>(&self, apply: impl FnOnce(&mut Vec<Entry>) -> (T, bool)) -> Result<T, StateError> {
        let mut tokens = self.current(true)?;
        let mut entries = tokens.entries.clone();
        let (out, changed) = apply(&mut entries);
        if changed {
            if let Backing::File(path) = &self.backing {
                save(path, &entries)?;
                for entry in &mut entries {
                    entry.saved_last_used = entry.info.last_used_at;
                }
                // Read back at the next call: cheaper to reason about than trusting a `stat`
                // taken after the rename, which another process may already have replaced.
                tokens.seen = None;
            }
            tokens.entries = entries;
        }
        Ok(out)
    }
}

/// Reads the file into `tokens` if it changed since they were read (or if `force`), keeping
/// the fresher in-memory `last_used_at` of tokens still there.
fn refresh(tokens: &mut Tokens, path: &Path, force: bool) -> Result<(), StateError> {
    // Before reading: a change between the two is then seen at the next call.
    let stamp = stamp(path)?;
    if !force && tokens.seen == Some(stamp) {
        return Ok(());
    }
    let loaded = match stamp {
        Stamp::Missing => Vec::new(),
        Stamp::Present { .. } => match fs::read(path) {
            Ok(bytes) => parse(path, &bytes)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io(path)(e)),
        },
    };
    let merged: Vec<Entry> = loaded
        .into_iter()
        .map(|mut entry| {
            if let Some(known) = tokens.entries.iter().find(|e| e.info.id == entry.info.id) {
                entry.info.last_used_at = entry.info.last_used_at.max(known.info.last_used_at);
            }
            entry
        })
        .collect();
    tokens.entries = merged;
    tokens.seen = Some(stamp);
    Ok(())
}

fn stamp(path: &Path) -> Result<Stamp, StateError> {
    match fs::metadata(path) {
        Ok(meta) => Ok(Stamp::Present { modified: meta.modified().ok(), len: meta.len(), inode: inode(&meta) }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Stamp::Missing),
        Err(e) => Err(io(path)(e)),
    }
}

#[cfg(unix)]
fn inode(meta: &fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.ino()
}

#[cfg(not(unix))]
fn inode(_: &fs::Metadata) -> u64 {
    0
}

/// Whether a `last_used_at` saved at `saved` is old enough at `now` to be written again. A
/// saved time in the future (the clock went back) waits until the clock passes it.
fn due(saved: Option<SystemTime>, now: SystemTime) -> bool {
    saved.is_none_or(|at| now.duration_since(at).is_ok_and(|since| since >= PERSIST_LAST_USED_EVERY))
}

/// The id in a token of the exact shape `tpk_<12 hex>_<64 hex>` (lowercase), else `None`.
fn parse_token(text: &str) -> Option<&str> {
    let (id, secret) = text.strip_prefix(PREFIX)?.split_once('_')?;
    (is_hex(id, 2 * ID_BYTES) && is_hex(secret, 2 * SECRET_BYTES)).then_some(id)
}

fn is_hex(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Compares without stopping at the first difference, so the time taken says nothing about
/// how much of a guess was right (of a digest, which would reveal little anyway).
fn same_digest(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `t` as the file gives it back (whole milliseconds), so what [`TokenStore::create`] returns
/// equals what a later [`TokenStore::list`] shows.
fn whole_ms(t: SystemTime) -> SystemTime {
    from_ms(to_ms(t)).unwrap_or(t)
}

#[cfg(test)]
mod tests;
