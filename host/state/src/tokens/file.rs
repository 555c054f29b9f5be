//! The tokens file's form: `{"version": 1, "tokens": [...]}`, times in milliseconds since
//! the Unix epoch, the hash as hex. Reading it checks everything the store relies on (ids,
//! hashes, times, no id twice), and says where a problem is without quoting the file.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use turnpike_config::{Role, TeamName};

use super::{hex, is_hex, Entry, TokenInfo, ID_BYTES};
use crate::{io, write_atomically, StateError};

/// The file format this code reads and writes.
const VERSION: u64 = 1;

/// The file's form.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenFile {
    version: u64,
    tokens: Vec<SavedToken>,
}

/// Read first, so a file of another version is reported as that, not as a shape error.
#[derive(Deserialize)]
struct FileVersion {
    version: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedToken {
    id: String,
    team: Option<TeamName>,
    role: Role,
    sha256: String,
    created_at: u64,
    expires_at: Option<u64>,
    last_used_at: Option<u64>,
    revoked_at: Option<u64>,
    description: Option<String>,
}

/// The tokens in a file's `bytes`. Errors name the file and where in it, never what it holds.
pub(super) fn parse(path: &Path, bytes: &[u8]) -> Result<Vec<Entry>, StateError> {
    let corrupt = |message: String| StateError::Corrupt {
        path: path.to_owned(),
        message: format!("{message}: restore it from a backup, or move it away and create new tokens with `turnpike token create`"),
    };
    let FileVersion { version } = serde_json::from_slice::<FileVersion>(bytes).map_err(|e| corrupt(json_problem(&e)))?;
    if version != VERSION {
        return Err(corrupt(format!("it is version {version}, and this turnpike reads version {VERSION} (written by a newer one?)")));
    }
    let file: TokenFile = serde_json::from_slice(bytes).map_err(|e| corrupt(json_problem(&e)))?;
    let mut entries: Vec<Entry> = Vec::with_capacity(file.tokens.len());
    for (i, saved) in file.tokens.into_iter().enumerate() {
        let entry = entry(saved).map_err(|why| corrupt(format!("tokens[{i}]: {why}")))?;
        if entries.iter().any(|e| e.info.id == entry.info.id) {
            return Err(corrupt(format!("tokens[{i}]: its id is also an earlier token's")));
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// Where and what kind of problem, without serde's text (which quotes the values it refused).
fn json_problem(e: &serde_json::Error) -> String {
    let what = match e.classify() {
        serde_json::error::Category::Data => "unexpected keys or values",
        serde_json::error::Category::Eof => "cut short",
        serde_json::error::Category::Syntax | serde_json::error::Category::Io => "not valid JSON",
    };
    format!("{what} at line {}, column {}", e.line(), e.column())
}

fn entry(saved: SavedToken) -> Result<Entry, &'static str> {
    if !is_hex(&saved.id, 2 * ID_BYTES) {
        return Err("its id is not 12 lowercase hex digits");
    }
    let sha256 = decode_sha256(&saved.sha256).ok_or("its sha256 is not 64 lowercase hex digits")?;
    let time = |ms: u64| from_ms(ms).ok_or("a time is out of range");
    let optional = |ms: Option<u64>| ms.map(time).transpose();
    let last_used_at = optional(saved.last_used_at)?;
    Ok(Entry {
        info: TokenInfo {
            id: saved.id,
            team: saved.team,
            role: saved.role,
            created_at: time(saved.created_at)?,
            expires_at: optional(saved.expires_at)?,
            last_used_at,
            revoked_at: optional(saved.revoked_at)?,
            description: saved.description,
        },
        sha256,
        saved_last_used: last_used_at,
    })
}

pub(super) fn save(path: &Path, entries: &[Entry]) -> Result<(), StateError> {
    if let Some(dir) = path.parent() {
        make_private_dir_if_missing(dir)?;
    }
    let file = TokenFile {
        version: VERSION,
        tokens: entries
            .iter()
            .map(|e| SavedToken {
                id: e.info.id.clone(),
                team: e.info.team.clone(),
                role: e.info.role,
                sha256: hex(&e.sha256),
                created_at: to_ms(e.info.created_at),
                expires_at: e.info.expires_at.map(to_ms),
                last_used_at: e.info.last_used_at.map(to_ms),
                revoked_at: e.info.revoked_at.map(to_ms),
                description: e.info.description.clone(),
            })
            .collect(),
    };
    let bytes = serde_json::to_vec_pretty(&file)
        .map_err(|_| StateError::Corrupt { path: path.to_owned(), message: "the tokens could not be written as JSON".into() })?;
    write_atomically(path, &bytes)
}

/// Creates `dir` with mode 0700 if it does not exist. An existing one (the host's state
/// directory) is left as it is: the file itself is 0600.
fn make_private_dir_if_missing(dir: &Path) -> Result<(), StateError> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    fs::create_dir_all(dir).map_err(io(dir))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(io(dir))?;
    }
    Ok(())
}

fn decode_sha256(text: &str) -> Option<[u8; 32]> {
    if !is_hex(text, 64) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        // ASCII only (checked above), so these slices fall on character boundaries.
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

pub(super) fn to_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

pub(super) fn from_ms(ms: u64) -> Option<SystemTime> {
    UNIX_EPOCH.checked_add(Duration::from_millis(ms))
}
