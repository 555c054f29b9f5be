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
///   shows which headers are set. `null` stays `null` (nothing is hidden).
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

/// `text` with every secret span replaced by [`MARKER`]; `None` when it has none.
fn redact_text(text: &str) -> Option<String> {
    let mut spans = secret_spans(text);
    spans.retain(|&(start, end)| start < end);
    if spans.is_empty() {
        return None;
    }
    spans.sort_unstable();
    // Spans found by different scans may overlap: hide their union once.
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let mut shown = String::with_capacity(text.len());
    let mut done = 0;
    for (start, end) in merged {
        shown.push_str(&text[done..start]);
        shown.push_str(MARKER);
        done = end;
    }
    shown.push_str(&text[done..]);
    Some(shown)
}

/// Byte ranges of the secrets in `text`, unmerged, possibly empty or overlapping. Every bound
/// is next to an ASCII byte, so slicing `text` with them is safe.
fn secret_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    url_spans(text, &mut spans);
    pair_spans(text, &mut spans);
    spans
}

/// Ends a URL: whitespace, and characters that delimit URLs in prose or markup.
fn ends_url(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'<' | b'>' | b'`')
}

/// The userinfo and the secret query and fragment parameters of every `scheme://` URL.
fn url_spans(text: &str, spans: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let sep = from + found;
        from = sep + 3;
        let scheme_ok = sep > 0 && (bytes[sep - 1].is_ascii_alphanumeric() || matches!(bytes[sep - 1], b'+' | b'-' | b'.'));
        if !scheme_ok {
            continue;
        }
        let auth_start = sep + 3;
        let auth_end = bytes[auth_start..]
            .iter()
            .position(|&b| matches!(b, b'/' | b'?' | b'#') || ends_url(b))
            .map_or(bytes.len(), |p| auth_start + p);
        // The last `@` ends the userinfo (as WHATWG parsers do), so an unencoded `@` in a
        // password is hidden with the rest of it.
        if let Some(at) = text[auth_start..auth_end].rfind('@') {
            let userinfo = &text[auth_start..auth_start + at];
            match userinfo.find(':') {
                Some(colon) => spans.push((auth_start + colon + 1, auth_start + at)),
                None => spans.push((auth_start, auth_start + at)),
            }
        }
        let end = bytes[auth_end..].iter().position(|&b| ends_url(b)).map_or(bytes.len(), |p| auth_end + p);
        let rest = &text[auth_end..end];
        if let Some(q) = rest.find(['?', '#']) {
            param_spans(text, auth_end + q + 1, end, spans);
        }
    }
}

/// Secret `name=value` parameters of a query and fragment, `&`- or `;`-separated, in
/// `text[start..end]` (a `#` starts the fragment, whose parameters are read the same way).
fn param_spans(text: &str, start: usize, end: usize, spans: &mut Vec<(usize, usize)>) {
    let mut piece_start = start;
    for (i, b) in text.as_bytes()[start..end].iter().enumerate().map(|(i, &b)| (start + i, b)).chain(std::iter::once((end, b'&'))) {
        if !matches!(b, b'&' | b';' | b'#') {
            continue;
        }
        let piece = &text[piece_start..i];
        if let Some(eq) = piece.find('=') {
            if is_secret_param(&piece[..eq]) {
                spans.push((piece_start + eq + 1, i));
            }
        }
        piece_start = i + 1;
    }
}

/// Secret `name=value` pairs anywhere in `text`. With a `;` in `text` (outside a quoted
/// value) it is read as a connection string: pairs end at `;` or a line break, and values may
/// hold spaces (`Password=my pass;`). Otherwise pairs end at `&` or whitespace (libpq DSNs,
/// form bodies, `--password=…`). The name is the run of letters, digits, `_`, `-` and `.`
/// just before the pair's first `=`; a value in quotes (`password='a b;c'`) ends at the
/// closing quote and is hidden without them.
fn pair_spans(text: &str, spans: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let connection_string = has_unquoted_semicolon(bytes);
    let ends_pair = |b: u8| if connection_string { matches!(b, b';' | b'\n' | b'\r') } else { b == b'&' || b.is_ascii_whitespace() };
    let mut i = 0;
    while i < bytes.len() {
        let seg_start = i;
        let mut eq = None;
        let mut quoted = None;
        while i < bytes.len() && !ends_pair(bytes[i]) {
            if bytes[i] == b'=' && eq.is_none() {
                eq = Some(i);
                let quote = bytes.get(i + 1).copied().filter(|&q| q == b'"' || q == b'\'');
                if let Some(q) = quote {
                    if let Some(close) = bytes[i + 2..].iter().position(|&b| b == q) {
                        quoted = Some((i + 2, i + 2 + close));
                        i = i + 2 + close;
                    }
                }
            }
            i += 1;
        }
        if let Some(eq) = eq {
            let name_start = bytes[seg_start..eq]
                .iter()
                .rposition(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')))
                .map_or(seg_start, |p| seg_start + p + 1);
            if name_start < eq && is_secret_key(&text[name_start..eq]) {
                let (start, end) = quoted.unwrap_or_else(|| trim_span(bytes, eq + 1, i));
                spans.push((start, end));
            }
        }
        i += 1;
    }
}

/// Whether `bytes` holds a `;` that is not inside a quoted value (`='…'` or `="…"`).
fn has_unquoted_semicolon(bytes: &[u8]) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b';' => return true,
            b'=' => {
                if let Some(&q) = bytes.get(i + 1).filter(|&&q| q == b'"' || q == b'\'') {
                    if let Some(close) = bytes[i + 2..].iter().position(|&b| b == q) {
                        i = i + 2 + close;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// `start..end` without the ASCII whitespace at both ends.
fn trim_span(bytes: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    while start < end && bytes[start].is_ascii_whitespace() {
        start += 1;
    }
    while end > start && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    (start, end)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn redacted(mut value: Value) -> Value {
        redact(&mut value);
        value
    }

    fn shown(text: &str) -> String {
        redact_text(text).unwrap_or_else(|| text.to_owned())
    }

    #[test]
    fn keys_split_into_words_at_separators_and_camel_case() {
        let cases: &[(&str, &[&str])] = &[
            ("X-Auth-Key", &["x", "auth", "key"]),
            ("Ocp-Apim-Subscription-Key", &["ocp", "apim", "subscription", "key"]),
            ("clientSecret", &["client", "secret"]),
            ("APIKey", &["api", "key"]),
            ("apiKEY", &["api", "key"]),
            ("XAuthToken", &["x", "auth", "token"]),
            ("oauth2Token", &["oauth2", "token"]),
            ("db.password", &["db", "password"]),
            ("User ID", &["user", "id"]),
            ("--password", &["password"]),
            ("DB_PASSWORD", &["db", "password"]),
            ("", &[]),
        ];
        for &(key, expected) in cases {
            assert_eq!(words(key), expected, "{key}");
        }
    }

    #[test]
    fn secret_keys_are_recognised_by_rule() {
        for key in [
            // The review's list (M9).
            "X-Auth-Key", "Ocp-Apim-Subscription-Key", "X-Functions-Key", "Private-Key", "private_key", "passphrase", "pass", "pwd",
            "auth", "signature", "dsn", "session", "access_key", "secret_key", "client_secret", "sas", "sig",
            // What was hidden before must stay hidden.
            "password", "secret", "token", "credential", "credentials", "apikey", "api_key", "api-key", "salt", "authorization",
            "Authorization", "cookie", "Cookie", "Set-Cookie",
            // Spellings and compounds.
            "apiKey", "APIKey", "x-api-key", "X-API-KEY", "api_keys", "clientSecret", "db_password", "DB_PASSWORD", "dbpassword",
            "pass_word", "db_pass", "smtp_pwd", "passwd", "auth_token", "access_token", "refresh_token", "accessToken", "xsrftoken",
            "X-CSRF-Token", "X-Amz-Security-Token", "X-Amz-Signature", "X-Amz-Credential", "X-Hub-Signature-256", "Proxy-Authorization",
            "session_id", "sessionid", "PHPSESSID", "session_key", "user_session", "access_key_id", "aws_secret_access_key",
            "subscription_key", "subscriptionKey", "AccountKey", "SharedAccessKey", "SharedAccessSignature", "sas_token", "ssh_key",
            "signing_key", "encryption_key", "master_key", "authkey", "basic_auth", "basicAuth", "oauth", "jwt", "bearer", "creds",
            "sentry_dsn", "hmac_secret", "webhook_secret", "private_key_pem", "auth_user", "db.password",
        ] {
            assert!(is_secret_key(key), "{key} should be secret");
        }
    }

    #[test]
    fn keys_that_describe_or_point_at_a_secret_stay_visible() {
        for key in [
            "token_url", "auth_url", "password_file", "credentials_file", "key_file", "private_key_file", "secret_name", "secretKeyRef",
            "cookie_name", "auth_type", "auth_method", "auth_enabled", "salt_length", "session_timeout_ms", "signature_version",
            "token_ttl", "password_env", "max_tokens", "min_password_length", "SharedAccessKeyName",
            // Record keys and other data keys.
            "key", "keys", "key_field", "partition_key", "record_key", "message_key", "sort_key", "hash_key", "primary_key",
            "public_key", "ordering_key", "object_key", "cache_key", "idempotency_key",
            // Lookalikes.
            "author", "authority", "pass_through", "passthrough", "session_affinity", "keystore", "client_id", "username", "user",
            "Accept", "Content-Type", "User-Agent", "X-Request-Id", "X-Amz-Date", "",
        ] {
            assert!(!is_secret_key(key), "{key} should be visible");
        }
    }

    #[test]
    fn built_in_config_keys_stay_visible() {
        let connector = [
            "name", "topics", "output_topic", "routes", "source", "transforms", "sink", "plugin", "config", "poll_interval_ms",
            "flush_interval_ms", "http", "allow", "connect_timeout_ms", "timeout_ms", "group_id", "start_from", "batch", "max_records",
            "max_wait_ms", "max_bytes", "errors", "tolerance", "dead_letter_topic", "retry_timeout_ms", "retry_max_delay_ms", "limits",
            "memory_mib", "batch_timeout_ms", "create_timeout_ms", "max_output_mib", "max_output_records", "restart", "enabled",
            "base_ms", "max_ms", "jitter_percent", "max_failures", "window_s",
        ];
        let http_sink = ["url", "method", "format", "headers", "timeout_ms"];
        let http_source = ["url", "mode", "cursor_param", "cursor_field", "items", "key_field", "headers", "timeout_ms"];
        let datagen = [
            "fields", "key", "seed", "rate_per_sec", "count", "name", "type", "min", "max", "decimals", "start_ms", "step_ms", "values",
            "value", "length",
        ];
        let pii_mask = ["fields", "path", "mode", "keep_last", "default_mode", "replacement", "detectors", "detector_mode", "on_non_json"];
        for key in connector.iter().chain(&http_sink).chain(&http_source).chain(&datagen).chain(&pii_mask) {
            assert!(!is_secret_key(key), "{key} is a built-in config key and must stay visible");
        }
        // The built-ins' secrets: pii-mask's `salt`, and the headers the READMEs show.
        for key in ["salt", "Authorization"] {
            assert!(is_secret_key(key), "{key}");
        }
    }

    #[test]
    fn secret_scalars_become_the_marker_and_null_stays() {
        let value = redacted(json!({"password": "hunter2", "token": 42, "auth": true, "secret": null, "salt": "", "user": "ada"}));
        assert_eq!(value, json!({"password": "***", "token": "***", "auth": "***", "secret": null, "salt": "***", "user": "ada"}));
    }

    #[test]
    fn values_inside_a_secret_container_are_hidden_and_the_shape_kept() {
        let value = redacted(json!({"credentials": {"user": "ada", "keys": ["k1", 2, null], "nested": {"pin": 1234}}, "other": "x"}));
        assert_eq!(value, json!({"credentials": {"user": "***", "keys": ["***", "***", null], "nested": {"pin": "***"}}, "other": "x"}));
    }

    #[test]
    fn url_passwords_are_hidden_and_the_user_kept() {
        for (text, expected) in [
            ("https://svc:Sup3rS3cret@ingest.example.com/v1", "https://svc:***@ingest.example.com/v1"),
            ("postgres://app:p%40ss@db:5432/orders", "postgres://app:***@db:5432/orders"),
            ("redis://:hunter2@cache:6379", "redis://:***@cache:6379"),
            ("amqp://u:p@ss@mq/vhost", "amqp://u:***@mq/vhost"),
            ("https://ghp_abc123@github.com/org/repo.git", "https://***@github.com/org/repo.git"),
            ("https://user:@host/", "https://user:@host/"),
            ("mongodb+srv://u:pw@cluster0.example.net/?retryWrites=true", "mongodb+srv://u:***@cluster0.example.net/?retryWrites=true"),
        ] {
            assert_eq!(shown(text), expected, "{text}");
        }
    }

    #[test]
    fn secret_query_and_fragment_parameters_are_hidden() {
        for (text, expected) in [
            ("https://h/v1?access_key=AKIAXYZ&region=eu", "https://h/v1?access_key=***&region=eu"),
            ("https://h/?token=t&sig=s", "https://h/?token=***&sig=***"),
            (
                "https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20240101&X-Amz-Signature=abcdef",
                "https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Signature=***",
            ),
            ("https://acct.blob.core.windows.net/c?sv=2022&sp=r&sig=abc%3D", "https://acct.blob.core.windows.net/c?sv=2022&sp=r&sig=***"),
            ("https://maps.googleapis.com/api?key=AIza123&q=x", "https://maps.googleapis.com/api?key=***&q=x"),
            ("https://fn.azurewebsites.net/api/f?code=fnkey", "https://fn.azurewebsites.net/api/f?code=***"),
            ("https://app/cb#access_token=tok&token_type=bearer", "https://app/cb#access_token=***&token_type=bearer"),
            ("https://h/?a=1;password=p", "https://h/?a=1;password=***"),
            ("https://h/?token=", "https://h/?token="),
            ("https://h/?region=eu&mode=fast", "https://h/?region=eu&mode=fast"),
        ] {
            assert_eq!(shown(text), expected, "{text}");
        }
    }

    #[test]
    fn urls_are_found_inside_any_string() {
        for (text, expected) in [
            ("see https://u:pw@h/x?token=t for details", "see https://u:***@h/x?token=*** for details"),
            ("a://u:p1@h1,b://v:p2@h2", "a://u:***@h1,b://v:***@h2"),
            ("<https://u:p@h>", "<https://u:***@h>"),
            ("https://h/?next=https://u:p@inner/", "https://h/?next=https://u:***@inner/"),
            ("→ https://u:pässwörd@höst/ ←", "→ https://u:***@höst/ ←"),
        ] {
            assert_eq!(shown(text), expected, "{text}");
        }
        let value = redacted(json!({"notes": ["mirror at ftp://bob:pw@files.example.com/pub"], "endpoint": {"primary": "https://x:y@h/"}}));
        assert_eq!(value, json!({"notes": ["mirror at ftp://bob:***@files.example.com/pub"], "endpoint": {"primary": "https://x:***@h/"}}));
    }

    #[test]
    fn secret_pairs_in_connection_strings_are_hidden() {
        for (text, expected) in [
            (
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=abc/def==;EndpointSuffix=core.windows.net",
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=***;EndpointSuffix=core.windows.net",
            ),
            (
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=k=",
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=***",
            ),
            ("Server=tcp:db,1433;User ID=app;Password=my pass word;", "Server=tcp:db,1433;User ID=app;Password=***;"),
            ("jdbc:sqlserver://db:1433;user=app;password=pw", "jdbc:sqlserver://db:1433;user=app;password=***"),
            ("host=db user=app password=hunter2 dbname=orders", "host=db user=app password=*** dbname=orders"),
            ("host=db password='a b;c' dbname=x", "host=db password='***' dbname=x"),
            ("grant_type=client_credentials&client_secret=s3&scope=read", "grant_type=client_credentials&client_secret=***&scope=read"),
            ("--db.password=pw --verbose", "--db.password=*** --verbose"),
        ] {
            assert_eq!(shown(text), expected, "{text}");
        }
    }

    #[test]
    fn strings_without_secrets_are_left_byte_identical() {
        for text in [
            "https://ingest.example.com/v1/orders",
            "https://api.example.com/v2/tickets?updated_after=2024&limit=10",
            "ada@example.com",
            "mode=fast",
            "a=b;c=d",
            "***",
            "user.password",
            "://no-scheme:pw@h",
            "key=order_id",
            "ünïcödé = ✓; ok",
            "",
        ] {
            assert_eq!(redact_text(text), None, "{text}");
        }
    }

    #[test]
    fn redacting_twice_changes_nothing_more() {
        let once = redacted(review_stored());
        assert_eq!(redacted(once.clone()), once);
    }

    fn review_stored() -> Value {
        json!({"sink": {"config": {
            "url": "https://svc:Sup3rS3cret@ingest.example.com/v1?access_key=AKIAXYZ",
            "headers": {
                "Authorization": "Bearer real",
                "X-Auth-Key": "cf-global-key-123",
                "Ocp-Apim-Subscription-Key": "azure-sub-key-456",
                "X-Functions-Key": "fn-key-789",
                "Private-Key": "pk-000",
                "Accept": "application/json"
            }
        }}})
    }

    #[test]
    fn the_review_reproduction_is_hidden_and_round_trips() {
        let stored = review_stored();
        let view = redacted(stored.clone());
        assert_eq!(
            view,
            json!({"sink": {"config": {
                "url": "https://svc:***@ingest.example.com/v1?access_key=***",
                "headers": {
                    "Authorization": "***",
                    "X-Auth-Key": "***",
                    "Ocp-Apim-Subscription-Key": "***",
                    "X-Functions-Key": "***",
                    "Private-Key": "***",
                    "Accept": "application/json"
                }
            }}})
        );
        let text = view.to_string();
        for secret in ["Sup3rS3cret", "AKIAXYZ", "Bearer real", "cf-global-key-123", "azure-sub-key-456", "fn-key-789", "pk-000"] {
            assert!(!text.contains(secret), "{secret} leaked in {text}");
        }
        let mut incoming = view;
        keep_stored_secrets(&mut incoming, &stored);
        assert_eq!(incoming, stored);
        assert!(markers_left(&incoming).is_empty());
    }

    #[test]
    fn built_in_examples_round_trip() {
        for stored in [
            review_stored(),
            json!({"transforms": [{"plugin": "pii-mask", "config": {"fields": ["ssn"], "salt": "change-me", "replacement": "***"}}]}),
            json!({"source": {"plugin": "datagen", "config": {"key": "order_id", "seed": 42, "fields": [{"name": "id", "type": "sequence"}]}}}),
            json!({"source": {"plugin": "http-source", "config": {
                "url": "https://api.example.com/v2?token=t", "key_field": "id", "headers": {"Authorization": "Bearer x"}
            }}}),
            json!({"db": {"dsn": "postgres://u:p@h/db", "conn": "AccountName=a;AccountKey=k", "auth": {"user": "u", "pass": 7, "on": true}}}),
        ] {
            let mut incoming = redacted(stored.clone());
            keep_stored_secrets(&mut incoming, &stored);
            assert_eq!(incoming, stored);
            assert!(markers_left(&incoming).is_empty(), "{incoming}");
        }
    }

    #[test]
    fn new_values_are_taken_as_given() {
        let stored = review_stored();
        let mut incoming = redacted(stored.clone());
        incoming["sink"]["config"]["headers"]["Authorization"] = json!("Bearer new");
        incoming["sink"]["config"]["url"] = json!("https://svc:N3w@ingest.example.com/v2?access_key=AKIANEW");
        keep_stored_secrets(&mut incoming, &stored);
        assert_eq!(incoming["sink"]["config"]["headers"]["Authorization"], "Bearer new");
        assert_eq!(incoming["sink"]["config"]["url"], "https://svc:N3w@ingest.example.com/v2?access_key=AKIANEW");
        assert_eq!(incoming["sink"]["config"]["headers"]["X-Auth-Key"], "cf-global-key-123");
        assert!(markers_left(&incoming).is_empty());
    }

    #[test]
    fn a_changed_url_keeps_its_markers_and_they_are_reported() {
        let stored = review_stored();
        let mut incoming = redacted(stored.clone());
        incoming["sink"]["config"]["url"] = json!("https://svc:***@ingest.example.com/v2?access_key=***");
        keep_stored_secrets(&mut incoming, &stored);
        assert_eq!(incoming["sink"]["config"]["url"], "https://svc:***@ingest.example.com/v2?access_key=***");
        assert_eq!(markers_left(&incoming), ["sink.config.url"]);
    }

    #[test]
    fn a_marker_with_nothing_stored_stays_and_is_reported() {
        let stored = json!({"sink": {"config": {"headers": {"Accept": "application/json", "X-Api-Key": null}}}});
        let mut incoming = json!({
            "sink": {"config": {"headers": {"Accept": "application/json", "Authorization": "***", "X-Api-Key": "***"}}},
            "transforms": [{"config": {"salt": "***"}}]
        });
        keep_stored_secrets(&mut incoming, &stored);
        assert_eq!(incoming["sink"]["config"]["headers"]["Authorization"], MARKER);
        assert_eq!(incoming["sink"]["config"]["headers"]["X-Api-Key"], MARKER);
        assert_eq!(markers_left(&incoming), ["sink.config.headers.Authorization", "sink.config.headers.X-Api-Key", "transforms[0].config.salt"]);
    }

    #[test]
    fn a_literal_marker_under_a_key_that_is_not_secret_is_a_value() {
        // pii-mask's `replacement` defaults to `***`: it is neither hidden, restored nor reported.
        let stored = json!({"config": {"replacement": "#"}});
        let mut incoming = json!({"config": {"replacement": "***"}});
        keep_stored_secrets(&mut incoming, &stored);
        assert_eq!(incoming, json!({"config": {"replacement": "***"}}));
        assert!(markers_left(&incoming).is_empty());
        assert_eq!(redacted(incoming.clone()), incoming);
    }

    #[test]
    fn a_whole_value_hidden_by_the_old_api_is_restored() {
        let stored = json!({"auth": {"user": "u", "password": "p"}, "headers": {"Authorization": ["a", "b"]}});
        let mut incoming = json!({"auth": "***", "headers": {"Authorization": "***"}});
        keep_stored_secrets(&mut incoming, &stored);
        assert_eq!(incoming, stored);
    }

    #[test]
    fn arrays_are_matched_by_index_and_plugin() {
        let stored = json!({"transforms": [
            {"plugin": "pii-mask@1.0.0", "config": {"salt": "s0"}},
            {"plugin": "http-call", "config": {"token": "t1"}}
        ]});
        // Same plugins, new version: matched.
        let mut incoming = json!({"transforms": [
            {"plugin": "pii-mask@1.1.0", "config": {"salt": "***"}},
            {"plugin": "http-call", "config": {"token": "***"}}
        ]});
        keep_stored_secrets(&mut incoming, &stored);
        assert_eq!(incoming["transforms"][0]["config"]["salt"], "s0");
        assert_eq!(incoming["transforms"][1]["config"]["token"], "t1");
        // Reordered: another plugin's secret is not moved in, and the markers are reported.
        let mut incoming = json!({"transforms": [
            {"plugin": "http-call", "config": {"token": "***"}},
            {"plugin": "pii-mask", "config": {"salt": "***"}}
        ]});
        keep_stored_secrets(&mut incoming, &stored);
        assert_eq!(incoming["transforms"][0]["config"]["token"], MARKER);
        assert_eq!(markers_left(&incoming), ["transforms[0].config.token", "transforms[1].config.salt"]);
        // Plain arrays by index; elements beyond the stored ones are new.
        let stored = json!({"tokens": ["a", "b"]});
        let mut incoming = json!({"tokens": ["***", "c", "***"]});
        keep_stored_secrets(&mut incoming, &stored);
        assert_eq!(incoming, json!({"tokens": ["a", "c", "***"]}));
        assert_eq!(markers_left(&incoming), ["tokens[2]"]);
    }

    #[test]
    fn marker_paths_quote_unusual_keys() {
        let value = json!({"config": {"db.password": "***", "a b": {"token": "***"}}});
        let mut paths = markers_left(&value);
        paths.sort();
        assert_eq!(paths, [r#"config["a b"].token"#, r#"config["db.password"]"#]);
    }
}
