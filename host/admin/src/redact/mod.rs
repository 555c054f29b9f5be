//! Hiding credentials in connector configurations the API sends back, and putting them back
//! when such a configuration is sent in again.
//!
//! Three places hold secrets in a connector's JSON:
//! - the value of a key that names a secret ([`is_secret_key`]): `password`, `X-Auth-Key`,
//!   `Ocp-Apim-Subscription-Key`, …;
//! - a URL inside any string: the password of `https://user:pass@host/`, and secret query or
//!   fragment parameters (`?access_key=…`, `&sig=…`, `X-Amz-Signature=…`, `#access_token=…`);
//! - `name=value` pairs inside any string: connection strings
//!   (`AccountName=a;AccountKey=…`, `Server=h;Password=…`), libpq DSNs
//!   (`host=h password=…`) and form bodies (`grant_type=x&client_secret=…`).
//!
//! [`redact`] replaces each with [`MARKER`] and leaves every other byte as it was.
//! [`keep_stored_secrets`] undoes exactly that against the stored configuration, so that a
//! client may `GET` a connector, change one thing and `PUT` it back without replacing the real
//! secrets with `***`; [`markers_left`] lists the markers that had nothing to stand for.
//!
//! Known limits, by design of a key-and-shape rule: a secret in a URL *path* (a Slack webhook),
//! in a URL without `scheme://` (`user:pass@host:5432`), in a free-form value (`Bearer …`
//! under a header the rule does not know) or under a key the rule does not recognise (a bare
//! `key`, which the built-in `datagen` uses for the record key) is shown. Plugin authors
//! should name secrets `api_key`, `token`, `password`, ….

use serde_json::Value;

/// What a hidden value is replaced by.
pub const MARKER: &str = "***";

/// Words that make a key secret wherever they occur in it, even inside a longer word
/// (`xsrftoken`, `dbpassword`, `clientsecret`).
const SECRET_STEMS: &[&str] = &[
    "password", "passwd", "passphrase", "secret", "token", "credential", "authorization", "cookie", "apikey", "privatekey", "accesskey",
    "sessionid", "sessid",
];

/// Words that make a key secret wherever they occur in it, as whole words only (`auth`, but
/// not `author`).
const SECRET_WORDS: &[&str] = &[
    "pwd", "creds", "auth", "oauth", "basicauth", "dsn", "salt", "signature", "signatures", "sig", "sas", "jwt", "bearer", "authkey",
    "sessionkey", "subscriptionkey", "masterkey", "accountkey", "signingkey", "encryptionkey", "licensekey", "sharedkey",
    "functionkey", "functionskey",
];

/// Last words that say the key describes or points at a secret rather than holding one:
/// `token_url`, `password_file`, `secret_name`, `auth_type`, `session_timeout_ms`.
const DESCRIPTORS: &[&str] = &[
    "type", "kind", "mode", "method", "scheme", "algorithm", "alg", "format", "encoding", "url", "uri", "endpoint", "host", "port",
    "path", "file", "filename", "dir", "directory", "location", "name", "field", "fields", "param", "params", "parameter", "ref",
    "env", "var", "prefix", "enabled", "disabled", "enable", "required", "length", "len", "size", "bits", "ttl", "expiry", "expires",
    "expiration", "lifetime", "timeout", "ms", "s", "sec", "secs", "seconds", "minutes", "hours", "days", "version", "count",
];

/// First words that make the key a limit (`max_tokens`, `min_password_length`).
const LIMITS: &[&str] = &["max", "min", "num"];

/// Words before a final `key` that make it a data key, not a credential: `partition_key`,
/// `record_key`, `public_key`.
const DATA_KEYS: &[&str] = &[
    "record", "message", "msg", "partition", "partitioning", "sort", "range", "hash", "primary", "foreign", "unique", "composite",
    "natural", "surrogate", "cache", "routing", "ordering", "group", "shard", "sharding", "clustering", "dist", "distribution", "join",
    "lookup", "dedup", "dedupe", "idempotency", "object", "row", "public", "schema", "item", "entity", "index", "field", "column",
    "event", "correlation",
];

/// Whether the value under `key` is a secret.
///
/// The key is split into lower-case words at `_`, `-`, `.`, spaces and other punctuation and
/// at camelCase boundaries (`X-Amz-Signature` → `x amz signature`, `apiKEY` → `api key`,
/// `APIKey` → `api key`). Then, in this order:
/// 1. not secret when the last word describes the secret (`url`, `file`, `name`, `type`,
///    `ms`, … — `token_url`, `password_file`, `cookie_name`, `session_timeout_ms`) or the
///    first word makes it a limit (`max_tokens`);
/// 2. secret when a word, or two adjacent words written together, contains `password`,
///    `passwd`, `passphrase`, `secret`, `token`, `credential`, `authorization`, `cookie`,
///    `apikey`, `privatekey`, `accesskey`, `sessionid`, or is `pwd`, `creds`, `auth`, `oauth`,
///    `dsn`, `salt`, `signature`, `sig`, `sas`, `jwt`, `bearer`, `authkey`, `subscriptionkey`,
///    … (so `pass_word`, `session_id` and `access_key_id` are caught);
/// 3. secret when the last word is `pass` or `session` (`db_pass`; but `pass_through` and
///    `session_affinity` are not);
/// 4. secret when the last word is `key` or `keys` after another word that is not a data-key
///    kind (`X-Functions-Key`, `Private-Key`, `ssh_key` are; `partition_key`, `record_key`,
///    `public_key` are not). A bare `key` or `keys` is not: the built-in `datagen` names its
///    record-key field `key`.
pub fn is_secret_key(key: &str) -> bool {
    let words = words(key);
    let Some(head) = words.last().map(String::as_str) else { return false };
    if DESCRIPTORS.contains(&head) || (words.len() > 1 && LIMITS.contains(&words[0].as_str())) {
        return false;
    }
    if words.iter().any(|w| is_secret_word(w)) || words.windows(2).any(|pair| is_secret_word(&format!("{}{}", pair[0], pair[1]))) {
        return true;
    }
    match head {
        "pass" | "session" => true,
        "key" | "keys" => words.len() > 1 && !DATA_KEYS.contains(&words[words.len() - 2].as_str()),
        _ => false,
    }
}

fn is_secret_word(word: &str) -> bool {
    SECRET_STEMS.iter().any(|stem| word.contains(*stem)) || SECRET_WORDS.contains(&word)
}

/// A query or fragment parameter also counts as secret when it is `key` (Google APIs) or
/// `code` (Azure Functions keys, OAuth authorisation codes).
fn is_secret_param(name: &str) -> bool {
    is_secret_key(name) || name.eq_ignore_ascii_case("key") || name.eq_ignore_ascii_case("code")
}

/// `X-Auth-Key` → `["x", "auth", "key"]`, `clientSecret` → `["client", "secret"]`.
fn words(key: &str) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    let mut words = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        if c.is_uppercase() && !current.is_empty() {
            // `current` is not empty, so `i > 0` and `chars[i - 1]` was alphanumeric.
            let prev = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_is_lower) {
                words.push(std::mem::take(&mut current));
            }
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Hides every secret in `value`, in place.
///
/// - Under a secret key ([`is_secret_key`]) every non-null scalar becomes [`MARKER`], however
///   deep: objects and arrays keep their shape and their keys, so `headers` under `auth` still
///   shows which headers are set. `null` stays `null` (nothing is hidden), and so does a
///   string made of references alone (`${secret:token}`: a name, not a secret).
/// - Everywhere else, a string keeps every byte except the secrets found in it: URL passwords
///   (`https://svc:***@host/`, or `https://***@host/` for a userinfo without `:`), secret
///   query and fragment parameters (`?access_key=***&region=eu`) and secret `name=value`
///   pairs (`AccountName=a;AccountKey=***`).
///
/// Object keys are never changed.
pub fn redact(value: &mut Value) {
    redact_in(value, false);
}

fn redact_in(value: &mut Value, secret: bool) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                redact_in(v, secret || is_secret_key(k));
            }
        }
        Value::Array(items) => {
            for v in items.iter_mut() {
                redact_in(v, secret);
            }
        }
        Value::Null => {}
        // `${secret:token}` says where a secret is and holds none: shown, so a reader sees
        // which secret a connector uses (and sending it back keeps it, being no marker).
        Value::String(text) if turnpike_config::is_only_references(text) => {}
        Value::String(text) => {
            if secret {
                *text = MARKER.to_owned();
            } else if let Some(shown) = redact_text(text) {
                *text = shown;
            }
        }
        Value::Bool(_) | Value::Number(_) => {
            if secret {
                *value = Value::String(MARKER.to_owned());
            }
        }
    }
}

/// For a `PUT`: puts back into `incoming` the stored secrets that `redact` hid, so that what
/// `GET` returned can be sent back unchanged.
///
/// Walking both documents together (objects by key, arrays by index), a value of `incoming`
/// is replaced by the value of `stored` at the same path when it is what [`redact`] shows for
/// it:
/// - [`MARKER`] at or below a secret key, where something non-null is stored (whatever its
///   type: the API used to replace whole objects by `***`, and such a body comes back too);
/// - elsewhere, a string equal to the redaction of the stored string, when that redaction
///   hides something (`https://svc:***@host/?access_key=***`).
///
/// Anything else is a value the client means: a new password, a URL with another path (even
/// with `***` left in it — [`markers_left`] finds those). Two array elements that are objects
/// naming different plugins (`"plugin": "pii-mask@1"` vs `"http-call"`; versions ignored) are
/// not matched, so that reordering a transform chain cannot move one step's secret into
/// another plugin's config.
pub fn keep_stored_secrets(incoming: &mut Value, stored: &Value) {
    keep_in(incoming, stored, false);
}

fn keep_in(incoming: &mut Value, stored: &Value, secret: bool) {
    if secret && incoming.as_str() == Some(MARKER) && !stored.is_null() {
        *incoming = stored.clone();
        return;
    }
    match incoming {
        Value::Object(map) => {
            if let Value::Object(old) = stored {
                for (k, v) in map.iter_mut() {
                    if let Some(o) = old.get(k) {
                        keep_in(v, o, secret || is_secret_key(k));
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Value::Array(old) = stored {
                for (v, o) in items.iter_mut().zip(old) {
                    if same_plugin(v, o) {
                        keep_in(v, o, secret);
                    }
                }
            }
        }
        Value::String(text) if !secret => {
            if let Value::String(old) = stored {
                if redact_text(old).is_some_and(|shown| shown == *text) {
                    *text = old.clone();
                }
            }
        }
        _ => {}
    }
}

/// False only for two objects whose `plugin` strings name different plugins.
fn same_plugin(a: &Value, b: &Value) -> bool {
    let name = |v: &Value| v.get("plugin").and_then(Value::as_str).map(|p| p.split('@').next().unwrap_or(p).to_owned());
    match (name(a), name(b)) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// Paths of the markers in `value` that stand for nothing: [`MARKER`] at or below a secret key,
/// and strings where a URL password, a secret parameter or a secret pair is exactly
/// [`MARKER`]. Run after [`keep_stored_secrets`]: each is a `***` the client sent for a
/// secret with no stored value (or in a URL it changed), which would otherwise be stored as
/// the literal secret `***`.
///
/// Paths are written as the config's problems are: `sink.config.headers.Authorization`,
/// `transforms[1].config.salt`; a key with characters other than letters, digits, `_` and `-`
/// is quoted: `config["db.password"]`. A literal `***` under a key that is not secret (the
/// `pii-mask` `replacement` defaults to it) is not reported.
pub fn markers_left(value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    markers_in(value, false, &mut String::new(), &mut found);
    found
}

fn markers_in(value: &Value, secret: bool, path: &mut String, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let len = path.len();
                push_key(path, k);
                markers_in(v, secret || is_secret_key(k), path, found);
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                markers_in(v, secret, path, found);
                path.truncate(len);
            }
        }
        Value::String(text) => {
            let left = if secret { text == MARKER } else { secret_spans(text).iter().any(|&(start, end)| &text[start..end] == MARKER) };
            if left {
                found.push(path.clone());
            }
        }
        _ => {}
    }
}

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

mod text;

use text::{redact_text, secret_spans};

#[cfg(test)]
mod tests;
