//! A small client of the admin API for the CLI: JSON in, JSON out, API errors turned into
//! messages that say what the server said to fix.
//!
//! Paths are built only with [`path`] and [`query`], which percent-encode every segment and
//! value: a name or version typed by the user or read from a file is data, never URL syntax.
//!
//! Every request carries the user's token, if there is one ([`find_token`]), as
//! `Authorization: Bearer …`; the token goes into that header and nowhere else.

use std::ffi::OsString;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;
use ureq::Agent;

use crate::output::escape;

/// The admin API at `base` (e.g. `http://127.0.0.1:8080`).
pub struct Api {
    base: String,
    agent: Agent,
    /// The token to send, or why the one the user set cannot be sent.
    token: Result<Option<Bearer>, String>,
}

/// A bearer token. `Debug` does not show it.
struct Bearer(String);

impl fmt::Debug for Bearer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Bearer(…)")
    }
}

impl Api {
    pub fn new(base: &str) -> Self {
        // 4xx/5xx are answers to show, not transport errors.
        let agent: Agent = Agent::config_builder().http_status_as_error(false).build().into();
        Self { base: base.trim_end_matches('/').to_owned(), agent, token: find_token() }
    }

    /// `request` with the `Authorization` header, if there is a token.
    fn authorized<B>(&self, request: ureq::RequestBuilder<B>) -> Result<ureq::RequestBuilder<B>> {
        match &self.token {
            Ok(Some(token)) => Ok(request.header("authorization", format!("Bearer {}", token.0))),
            Ok(None) => Ok(request),
            Err(why) => bail!("{why}"),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn answer(&self, result: Result<ureq::http::Response<ureq::Body>, ureq::Error>, what: &str) -> Result<Value> {
        let mut response = result.with_context(|| format!("{what}: is the host running with its admin API at {}?", self.base))?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if status >= 400 {
            bail!(error_message(what, status, &text, &body));
        }
        Ok(body)
    }

    pub fn get(&self, path: &str) -> Result<Value> {
        self.answer(self.authorized(self.agent.get(&self.url(path)))?.call(), &format!("GET {path}"))
    }

    pub fn post(&self, path: &str, body: &Value) -> Result<Value> {
        self.answer(self.authorized(self.agent.post(&self.url(path)))?.send_json(body), &format!("POST {path}"))
    }

    pub fn put(&self, path: &str, body: &Value) -> Result<Value> {
        self.answer(self.authorized(self.agent.put(&self.url(path)))?.send_json(body), &format!("PUT {path}"))
    }

    pub fn delete(&self, path: &str) -> Result<Value> {
        self.answer(self.authorized(self.agent.delete(&self.url(path)))?.call(), &format!("DELETE {path}"))
    }

    /// POSTs a component from `reader` as the raw body.
    pub fn upload(&self, path: &str, reader: impl Read) -> Result<Value> {
        let mut reader = reader;
        let request = self.authorized(self.agent.post(&self.url(path)))?.header("content-type", "application/wasm");
        self.answer(request.send(ureq::SendBody::from_reader(&mut reader)), "upload")
    }
}

/// The message for an error answer: the server's `detail` (or its raw text) and each of its
/// `problems`. All of it is server text, so it is escaped: it ends up on the user's terminal.
fn error_message(what: &str, status: u16, text: &str, body: &Value) -> String {
    let detail = body["detail"].as_str().unwrap_or(text.trim());
    let mut message = format!("{what}: {} ({status})", escape(detail));
    if let Some(problems) = body["problems"].as_array() {
        for p in problems {
            let key = escape(p["key"].as_str().unwrap_or("?"));
            let said = escape(p["message"].as_str().unwrap_or(""));
            message.push_str(&format!("\n  - {key}: {said}"));
        }
    }
    if status == 401 {
        message.push_str("\n  hint: set TURNPIKE_TOKEN (a token from `turnpike token create`)");
    }
    message
}

/// The token to send: `TURNPIKE_TOKEN` if set and not empty, else the first line of
/// `$XDG_CONFIG_HOME/turnpike/token` (`~/.config/turnpike/token` without `XDG_CONFIG_HOME`)
/// if that file exists, else none (a host without `admin.auth`). The error says what is
/// wrong with the token the user set, never what it is.
fn find_token() -> Result<Option<Bearer>, String> {
    token_from(std::env::var_os("TURNPIKE_TOKEN"), token_file().as_deref())
}

/// Where a token is kept for the CLI, following the XDG rule that a relative
/// `XDG_CONFIG_HOME` is ignored.
fn token_file() -> Option<PathBuf> {
    let config = match std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from).filter(|dir| dir.is_absolute()) {
        Some(dir) => dir,
        None => PathBuf::from(std::env::var_os("HOME").filter(|home| !home.is_empty())?).join(".config"),
    };
    Some(config.join("turnpike").join("token"))
}

/// [`find_token`] from the variable's value and the file's path.
fn token_from(variable: Option<OsString>, file: Option<&Path>) -> Result<Option<Bearer>, String> {
    if let Some(value) = variable {
        let value = value.to_str().map(str::trim).ok_or("TURNPIKE_TOKEN is not text: set it to the token `turnpike token create` printed")?;
        if !value.is_empty() {
            return checked(value, "TURNPIKE_TOKEN").map(Some);
        }
    }
    let Some(file) = file else { return Ok(None) };
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // The OS error (permission, not UTF-8, …) names no content.
        Err(e) => return Err(format!("reading the token from {}: {e}", file.display())),
    };
    match text.lines().next().map(str::trim) {
        Some(line) if !line.is_empty() => checked(line, &file.display().to_string()).map(Some),
        _ => Ok(None),
    }
}

/// The token, if it can go into a header as it is: visible ASCII only.
fn checked(token: &str, from: &str) -> Result<Bearer, String> {
    if token.bytes().all(|b| b.is_ascii_graphic()) {
        Ok(Bearer(token.to_owned()))
    } else {
        Err(format!("the token in {from} has spaces or characters no token has: set it to the token `turnpike token create` printed"))
    }
}

/// `/a/b/c` from `segments`, each percent-encoded whole, so a segment cannot add segments
/// (`/`), start a query (`?`) or fragment (`#`), or lose a `+` on the way.
pub fn path(segments: &[&str]) -> String {
    segments.iter().map(|s| format!("/{}", encode(s))).collect()
}

/// `?k=v&…` with every key and value percent-encoded, so a value cannot add parameters (`&`,
/// `=`) and `+` reaches the server as `+`, not as a space. Empty for no pairs.
pub fn query(pairs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (i, (key, value)) in pairs.iter().enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        out.push_str(&encode(key));
        out.push('=');
        out.push_str(&encode(value));
    }
    out
}

/// Percent-encodes every byte of `s` except the unreserved characters of RFC 3986
/// (`A-Z a-z 0-9 - . _ ~`): the same rule for path segments and query values, so there is no
/// character whose meaning depends on where it lands.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_plus_in_a_version_reaches_the_server_as_a_plus() {
        assert_eq!(path(&["v1", "plugins", "pii-mask", "1.0.0+build.5"]), "/v1/plugins/pii-mask/1.0.0%2Bbuild.5");
        assert_eq!(query(&[("name", "pii-mask"), ("version", "1.0.0+build.5")]), "?name=pii-mask&version=1.0.0%2Bbuild.5");
    }

    #[test]
    fn a_name_cannot_add_segments_or_parameters() {
        let name = "a&version=9/../x?y=1#z w";
        let p = path(&["v1", "connectors", name]);
        assert_eq!(p, "/v1/connectors/a%26version%3D9%2F..%2Fx%3Fy%3D1%23z%20w");
        assert_eq!(p.matches('/').count(), 3);
        let q = query(&[("name", name), ("version", "1")]);
        assert_eq!(q, "?name=a%26version%3D9%2F..%2Fx%3Fy%3D1%23z%20w&version=1");
        assert_eq!((q.matches('&').count(), q.matches('=').count()), (1, 2));
        assert!(!p.contains(['?', '#', ' ']) && !q.contains(['#', ' ', '+']));
    }

    #[test]
    fn non_ascii_is_encoded_byte_by_byte() {
        assert_eq!(path(&["é\u{1b}"]), "/%C3%A9%1B");
        assert_eq!(query(&[]), "");
    }

    #[test]
    fn error_messages_escape_what_the_server_said() {
        let body = json!({ "detail": "bad\u{1b}]0;owned\u{7}", "problems": [{ "key": "a\rb", "message": "x\u{9b}2J" }] });
        let message = error_message("GET /v1/x", 400, "", &body);
        assert_eq!(message, "GET /v1/x: bad\\u{1b}]0;owned\\u{7} (400)\n  - a\\rb: x\\u{9b}2J");
        let raw = error_message("GET /v1/x", 502, "  proxy\u{1b}[2J  ", &Value::Null);
        assert_eq!(raw, "GET /v1/x: proxy\\u{1b}[2J (502)");
        assert!(!raw.contains("TURNPIKE_TOKEN"), "the hint is for 401 only");
    }

    #[test]
    fn a_401_says_where_a_token_comes_from() {
        let message = error_message("GET /v1/connectors", 401, "", &json!({ "detail": "send a token" }));
        assert!(message.ends_with("hint: set TURNPIKE_TOKEN (a token from `turnpike token create`)"), "{message}");
    }

    fn token_of(found: Result<Option<Bearer>, String>) -> Option<String> {
        found.unwrap().map(|b| b.0)
    }

    #[test]
    fn the_token_comes_from_the_variable_then_the_files_first_line() {
        let file = std::env::temp_dir().join(format!("turnpike-client-token-{}", std::process::id()));
        std::fs::write(&file, "  tpk_from_file  \nsecond line\n").unwrap();
        let from_env = token_from(Some("tpk_from_env\n".into()), Some(file.as_path()));
        let empty_env = token_from(Some("  ".into()), Some(file.as_path()));
        let no_env = token_from(None, Some(file.as_path()));
        std::fs::write(&file, "\n").unwrap();
        let empty_file = token_from(None, Some(file.as_path()));
        std::fs::remove_file(&file).unwrap();
        assert_eq!(token_of(from_env).as_deref(), Some("tpk_from_env"), "the variable first, trimmed");
        assert_eq!(token_of(empty_env).as_deref(), Some("tpk_from_file"), "an empty variable counts as unset");
        assert_eq!(token_of(no_env).as_deref(), Some("tpk_from_file"));
        assert_eq!(token_of(empty_file), None);
        assert_eq!(token_of(token_from(None, Some(file.as_path()))), None, "no file, no token");
        assert_eq!(token_of(token_from(None, None)), None);
    }

    #[test]
    fn a_token_that_cannot_be_a_header_is_refused_without_being_shown() {
        let err = token_from(Some("tpk_secret part".into()), None).unwrap_err();
        assert!(err.contains("TURNPIKE_TOKEN") && !err.contains("tpk_secret"), "{err}");
        let err = token_from(Some("tpk_secret\u{1b}".into()), None).unwrap_err();
        assert!(!err.contains("tpk_secret"), "{err}");
        assert!(!format!("{:?}", Bearer("tpk_secret".into())).contains("tpk_secret"));
    }
}
