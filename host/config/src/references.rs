//! References in configuration values, so that no connector file, API body or state file
//! holds a secret: `${secret:NAME}` (the host's secrets store), `${env:NAME}` (the host's
//! environment) and `${file:/path}` (a file on the host), as a whole string value or inside
//! one (`"Bearer ${secret:api-token}"`). `$${` writes a literal `${`. A reference always
//! gives text; one trailing newline of a file is dropped.
//!
//! [`check_syntax`] is pure and runs in [`crate::Connector::validate`]. [`resolve`] does the
//! lookups (the one place in this crate that reads the environment and files) and runs only
//! where a plugin is about to be created, or where the host checks a connector it is given:
//! what is stored and shown keeps the references, never the values. No message here ever
//! holds a resolved value.

use std::collections::BTreeSet;
use std::fmt;
use std::io::Read;

use serde_json::Value;

use crate::Problem;

/// Where the host finds the value of `${secret:NAME}`.
pub trait SecretLookup {
    /// The value stored under `name`; `None` when there is no such secret.
    fn secret(&self, name: &str) -> Option<String>;

    /// Whether `${env:…}` and `${file:…}` may be resolved too. Default: yes. Not for a
    /// team's connector on a shared host: the host's environment and files hold what the
    /// operator keeps from teams (other teams' secrets among them, in the state directory).
    fn host_references(&self) -> bool {
        true
    }
}

/// Secrets in memory, by name (tests, and callers that gathered them already).
impl SecretLookup for std::collections::BTreeMap<String, String> {
    fn secret(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

/// The fewest characters a secret may have: a shorter value could not be hidden from messages
/// without hiding ordinary words (`Scrub` in the runtime leaves shorter values alone).
pub const MIN_SECRET_CHARS: usize = 4;

/// The largest file a `${file:…}` reference reads.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The name of a secret in the host's store: 1 to 63 lower-case letters, digits, `.`, `_` and
/// `-`, starting with a letter or digit. It is also the store's file name, so it can never be
/// a path, a hidden file or two names that differ only in case.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SecretName(String);

impl SecretName {
    /// `name` if it is a secret name, else why not.
    pub fn parse(name: &str) -> Result<Self, String> {
        let mut chars = name.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
        if first_ok && rest_ok && name.len() <= 63 {
            Ok(Self(name.to_owned()))
        } else {
            Err(format!("{name:?} is not a secret name: 1 to 63 lower-case letters, digits, `.`, `_` and `-`, starting with a letter or digit"))
        }
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SecretName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a value cannot be stored as a secret, if it cannot. The message never repeats it.
pub fn check_secret_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("the value is empty: give the secret's value".into());
    }
    if value.chars().count() < MIN_SECRET_CHARS {
        return Err(format!("the value is shorter than {MIN_SECRET_CHARS} characters: a value that short could not be hidden from messages"));
    }
    Ok(())
}

/// A value with its references resolved, and every value a reference resolved to (of any
/// kind): what must never be shown. Its `Debug` shows neither.
#[derive(Clone, PartialEq)]
pub struct Resolved<T = Value> {
    /// The value, references replaced.
    pub value: T,
    /// What the references resolved to, each once.
    pub secret_values: Vec<String>,
}

impl<T> fmt::Debug for Resolved<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Resolved {{ value: (hidden), secret_values: ({} hidden) }}", self.secret_values.len())
    }
}

/// `value` with every reference in its strings resolved; problems are keyed by their path
/// inside `value` (`headers.Authorization`, `urls[1]`). Every problem is returned at once.
pub fn resolve(value: &Value, secrets: &dyn SecretLookup) -> Result<Resolved, Vec<Problem>> {
    resolve_at(value, "", secrets)
}

/// [`resolve`] with problems keyed under `key` (`connector.sink.config` gives
/// `connector.sink.config.headers.Authorization`).
pub fn resolve_at(value: &Value, key: &str, secrets: &dyn SecretLookup) -> Result<Resolved, Vec<Problem>> {
    let mut walk = Walk { secrets: Some(secrets), problems: Vec::new(), values: BTreeSet::new() };
    let mut path = key.to_owned();
    let resolved = walk.value(value, &mut path);
    walk.finish(resolved)
}

/// One string with its references resolved; problems are keyed `key`.
pub fn resolve_str(text: &str, key: &str, secrets: &dyn SecretLookup) -> Result<Resolved<String>, Vec<Problem>> {
    let mut walk = Walk { secrets: Some(secrets), problems: Vec::new(), values: BTreeSet::new() };
    let resolved = walk.string(text, key);
    walk.finish(resolved)
}

/// Every malformed reference in `value`'s strings, keyed under `key`. Pure: whether a secret,
/// a variable or a file exists is checked when the value is resolved.
pub fn check_syntax(value: &Value, key: &str) -> Vec<Problem> {
    let mut walk = Walk { secrets: None, problems: Vec::new(), values: BTreeSet::new() };
    let mut path = key.to_owned();
    walk.value(value, &mut path);
    walk.problems
}

/// The names of the secrets `value`'s strings reference (well-formed references only).
pub fn referenced_secrets(value: &Value) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    strings(value, &mut |text| {
        if let Ok(pieces) = parse(text) {
            names.extend(pieces.into_iter().filter_map(|p| match p {
                Piece::Ref(Reference::Secret(name)) => Some(name.to_owned()),
                _ => None,
            }));
        }
    });
    names
}

/// Whether `text` is made of references alone (`${secret:token}`, or two side by side): it
/// says where a secret is, and holds none itself.
pub fn is_only_references(text: &str) -> bool {
    match parse(text) {
        Ok(pieces) => pieces.iter().any(|p| matches!(p, Piece::Ref(_))) && pieces.iter().all(|p| matches!(p, Piece::Ref(_) | Piece::Text(""))),
        Err(_) => false,
    }
}

/// The problems of every step's plugin config of a connector (`source`, `transforms[i]`,
/// `sink`), keyed under the connector's `key`: what [`crate::Connector::validate`] reports.
pub(crate) fn plugin_config_syntax(config: &crate::ConnectorConfig, key: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Some(s) = &config.source {
        problems.extend(check_syntax(&s.config, &format!("{key}.source.config")));
    }
    for (i, t) in config.transforms.iter().enumerate() {
        problems.extend(check_syntax(&t.config, &format!("{key}.transforms[{i}].config")));
    }
    if let Some(s) = &config.sink {
        problems.extend(check_syntax(&s.config, &format!("{key}.sink.config")));
    }
    problems
}

fn strings(value: &Value, f: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, f)),
        Value::Object(map) => map.values().for_each(|v| strings(v, f)),
        _ => {}
    }
}

/// One reference as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reference<'a> {
    Secret(&'a str),
    Env(&'a str),
    File(&'a str),
}

/// A string as literal text and references, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece<'a> {
    Text(&'a str),
    Ref(Reference<'a>),
}

const HOW: &str = "write ${secret:NAME}, ${env:NAME} or ${file:/path} (and $${ for a literal ${)";

/// `text` split into literal text and references; or every malformed reference, each message
/// starting with the reference as written.
fn parse(text: &str) -> Result<Vec<Piece<'_>>, Vec<String>> {
    let mut pieces = Vec::new();
    let mut errors = Vec::new();
    let (bytes, mut i, mut literal) = (text.as_bytes(), 0, 0);
    while i < bytes.len() {
        // `$` is ASCII, so `i` is a character boundary whenever it points at one.
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        if text[i..].starts_with("$${") {
            // The first `$` is dropped; `${` starts the next literal run.
            pieces.push(Piece::Text(&text[literal..i]));
            literal = i + 1;
            i += 3;
        } else if text[i..].starts_with("${") {
            pieces.push(Piece::Text(&text[literal..i]));
            let Some(len) = text[i + 2..].find('}') else {
                errors.push(format!("{}: no closing `}}`; {HOW}", &text[i..]));
                return Err(errors);
            };
            let (inner, written) = (&text[i + 2..i + 2 + len], &text[i..i + 3 + len]);
            match reference(inner) {
                Ok(r) => pieces.push(Piece::Ref(r)),
                Err(why) => errors.push(format!("{written}: {why}")),
            }
            i += 3 + len;
            literal = i;
        } else {
            i += 1;
        }
    }
    pieces.push(Piece::Text(&text[literal..]));
    if errors.is_empty() {
        Ok(pieces)
    } else {
        Err(errors)
    }
}

/// The reference `${inner}` names.
fn reference(inner: &str) -> Result<Reference<'_>, String> {
    let Some((kind, arg)) = inner.split_once(':') else {
        return Err(format!("not a reference; {HOW}"));
    };
    match kind {
        "secret" => SecretName::parse(arg).map(|_| Reference::Secret(arg)),
        "env" => {
            let mut chars = arg.chars();
            let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if ok {
                Ok(Reference::Env(arg))
            } else {
                Err(format!("{arg:?} is not an environment variable name: a letter or `_`, then letters, digits and `_`"))
            }
        }
        "file" if std::path::Path::new(arg).is_absolute() => Ok(Reference::File(arg)),
        "file" => Err(format!("{arg:?} is not an absolute path: write the whole path, starting with /")),
        other => Err(format!("unknown kind of reference {other:?}; {HOW}")),
    }
}

/// A walk over a value: its strings resolved (with `secrets`) or only checked (without).
struct Walk<'s> {
    secrets: Option<&'s dyn SecretLookup>,
    problems: Vec<Problem>,
    values: BTreeSet<String>,
}

impl Walk<'_> {
    fn value(&mut self, value: &Value, path: &mut String) -> Value {
        match value {
            Value::String(text) => Value::String(self.string(text, path)),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let len = path.len();
                        path.push_str(&format!("[{i}]"));
                        let out = self.value(v, path);
                        path.truncate(len);
                        out
                    })
                    .collect(),
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let len = path.len();
                        push_key(path, k);
                        let out = self.value(v, path);
                        path.truncate(len);
                        (k.clone(), out)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn string(&mut self, text: &str, key: &str) -> String {
        if !text.contains('$') {
            return text.to_owned();
        }
        let pieces = match parse(text) {
            Ok(pieces) => pieces,
            Err(errors) => {
                self.problems.extend(errors.into_iter().map(|e| Problem::new(key, e)));
                return text.to_owned();
            }
        };
        let Some(secrets) = self.secrets else { return text.to_owned() };
        let mut out = String::with_capacity(text.len());
        for piece in pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Ref(r) => match lookup(r, secrets) {
                    Ok(v) => {
                        out.push_str(&v);
                        if !v.is_empty() {
                            self.values.insert(v);
                        }
                    }
                    Err(why) => self.problems.push(Problem::new(key, why)),
                },
            }
        }
        out
    }

    fn finish<T>(self, value: T) -> Result<Resolved<T>, Vec<Problem>> {
        if self.problems.is_empty() {
            Ok(Resolved { value, secret_values: self.values.into_iter().collect() })
        } else {
            Err(self.problems)
        }
    }
}

/// What one reference stands for, or why it cannot be had (in words that never hold a value).
fn lookup(r: Reference<'_>, secrets: &dyn SecretLookup) -> Result<String, String> {
    match r {
        Reference::Secret(name) => secrets.secret(name).ok_or_else(|| format!("${{secret:{name}}}: no secret named {name:?} (create it with PUT /v1/secrets/{name})")),
        Reference::Env(name) if !secrets.host_references() => {
            Err(format!("${{env:{name}}}: a team's connector cannot read the host's environment; store the value as a secret and write ${{secret:NAME}}"))
        }
        Reference::File(path) if !secrets.host_references() => {
            Err(format!("${{file:{path}}}: a team's connector cannot read the host's files; store the value as a secret and write ${{secret:NAME}}"))
        }
        Reference::Env(name) => match std::env::var(name) {
            Ok(v) => Ok(v),
            Err(std::env::VarError::NotPresent) => Err(format!("${{env:{name}}}: the host has no environment variable {name}")),
            Err(std::env::VarError::NotUnicode(_)) => Err(format!("${{env:{name}}}: the host's environment variable {name} is not UTF-8 text")),
        },
        Reference::File(path) => read_file(path).map_err(|why| format!("${{file:{path}}}: cannot read {path}: {why}")),
    }
}

/// A file's text, without one trailing newline; bounded, and only a regular file (a FIFO or
/// a device would block or never end).
fn read_file(path: &str) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let too_big = || format!("larger than {} KiB", MAX_FILE_BYTES >> 10);
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path).and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big());
    }
    let mut text = String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())?;
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    Ok(text)
}

/// Appends `key` to a dotted path the way problems are written: `headers.Authorization`, and
/// `headers["X.Y"]` for a key with characters other than letters, digits, `_` and `-`.
fn push_key(path: &mut String, key: &str) {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&Value::String(key.to_owned()).to_string());
        path.push(']');
    }
}

#[cfg(test)]
mod tests;
