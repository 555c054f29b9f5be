//! A small client of the admin API for the CLI: JSON in, JSON out, API errors turned into
//! messages that say what the server said to fix.
//!
//! Paths are built only with [`path`] and [`query`], which percent-encode every segment and
//! value: a name or version typed by the user or read from a file is data, never URL syntax.

use std::io::Read;

use anyhow::{bail, Context, Result};
use serde_json::Value;
use ureq::Agent;

use crate::output::escape;

/// The admin API at `base` (e.g. `http://127.0.0.1:8080`).
pub struct Api {
    base: String,
    agent: Agent,
}

impl Api {
    pub fn new(base: &str) -> Self {
        // 4xx/5xx are answers to show, not transport errors.
        let agent: Agent = Agent::config_builder().http_status_as_error(false).build().into();
        Self { base: base.trim_end_matches('/').to_owned(), agent }
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
        self.answer(self.agent.get(&self.url(path)).call(), &format!("GET {path}"))
    }

    pub fn post(&self, path: &str, body: &Value) -> Result<Value> {
        self.answer(self.agent.post(&self.url(path)).send_json(body), &format!("POST {path}"))
    }

    pub fn put(&self, path: &str, body: &Value) -> Result<Value> {
        self.answer(self.agent.put(&self.url(path)).send_json(body), &format!("PUT {path}"))
    }

    pub fn delete(&self, path: &str) -> Result<Value> {
        self.answer(self.agent.delete(&self.url(path)).call(), &format!("DELETE {path}"))
    }

    /// POSTs a component from `reader` as the raw body.
    pub fn upload(&self, path: &str, reader: impl Read) -> Result<Value> {
        let mut reader = reader;
        let request = self.agent.post(&self.url(path)).header("content-type", "application/wasm");
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
    message
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
    }
}
