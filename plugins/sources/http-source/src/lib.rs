//! `http-source`: polls a JSON API and turns each item of the answer into a record.
//!
//! Two ways to know what is new, each kept as the source's position so a restarted
//! connector does not read the same items again:
//! - `cursor` (default): each request carries the last item's cursor field (an id, an
//!   `updated_at` timestamp) as a query parameter; the API answers with items after it.
//! - `etag`: each request carries the last `ETag` in `If-None-Match`; a `304` means
//!   nothing changed.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use turnpike_sdk::http::{self, Request};
use turnpike_sdk::prelude::*;

/// How the source knows which items are new.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Ask for items after the last cursor.
    #[default]
    Cursor,
    /// Ask whether the resource changed since the last ETag.
    Etag,
}

/// The plugin's configuration.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The API URL (`http://` or `https://`). Its host must be in the connector's
    /// `http.allow` list.
    pub url: String,
    /// `cursor` (default) or `etag`.
    #[serde(default)]
    pub mode: Mode,
    /// Cursor mode: the query parameter that carries the cursor. Default `after`.
    #[serde(default = "default_param")]
    pub cursor_param: String,
    /// Cursor mode: the item field holding its cursor. Default `id`.
    #[serde(default = "default_field")]
    pub cursor_field: String,
    /// Where the item list is in the answer: a top-level key (e.g. `items`), or none when
    /// the answer is the list itself.
    #[serde(default)]
    pub items: Option<String>,
    /// Item field whose value becomes the record key; none by default.
    #[serde(default)]
    pub key_field: Option<String>,
    /// Extra request headers (e.g. `Authorization`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Response timeout in ms (the host may clamp it). Default 10,000.
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
}

fn default_param() -> String {
    "after".into()
}
fn default_field() -> String {
    "id".into()
}
fn default_timeout() -> u64 {
    10_000
}

/// The http-source.
pub struct HttpSource {
    config: Config,
    /// The last cursor or ETag, as stored in the position.
    position: Option<String>,
}

impl Source for HttpSource {
    type Config = Config;

    fn create(config: Config, position: Option<Vec<u8>>) -> Result<Self, ConfigError> {
        http::check_url(&config.url).map_err(|e| ConfigError::at("url", e.message))?;
        if config.timeout_ms == 0 {
            return Err(ConfigError::at("timeout_ms", "must be above 0"));
        }
        let position = position.map(|p| String::from_utf8_lossy(&p).into_owned());
        Ok(Self { config, position })
    }

    fn poll(&mut self, max: usize, out: &mut Polled) -> Result<(), RecordError> {
        let mut request = Request::get(self.request_url()).timeout(Duration::from_millis(self.config.timeout_ms)).header("accept", "application/json");
        for (k, v) in &self.config.headers {
            request = request.header(k.clone(), v.clone());
        }
        if let (Mode::Etag, Some(etag)) = (self.config.mode, &self.position) {
            request = request.header("if-none-match", etag.clone());
        }
        let response = http::send(&request).map_err(|e| {
            if e.refused {
                RecordError::fatal(format!("GET {}: {e}", self.config.url))
            } else {
                RecordError::retriable(format!("GET {}: {e}", self.config.url))
            }
        })?;
        match response.status {
            304 => return Ok(()),
            429 | 500..=599 => return Err(RecordError::retriable(format!("GET {} answered {}", self.config.url, response.status))),
            s if !(200..300).contains(&s) => {
                return Err(RecordError::fatal(format!("GET {} answered {s}: {}", self.config.url, String::from_utf8_lossy(&response.body))))
            }
            _ => {}
        }
        let body: Value = serde_json::from_slice(&response.body).map_err(|e| RecordError::fatal(format!("GET {}: the answer is not JSON: {e}", self.config.url)))?;
        let items = match &self.config.items {
            None => body.as_array(),
            Some(key) => body.get(key).and_then(Value::as_array),
        }
        .ok_or_else(|| RecordError::fatal(format!("GET {}: no item list at {:?} in the answer", self.config.url, self.config.items.as_deref().unwrap_or("(top level)"))))?;
        match self.config.mode {
            Mode::Cursor => self.emit_after_cursor(items, max, out),
            Mode::Etag => {
                let etag = response.header("etag").map(str::to_owned);
                for (i, item) in items.iter().enumerate() {
                    let record = self.record(item);
                    match (&etag, i + 1 == items.len()) {
                        (Some(tag), true) => out.emit(record, tag),
                        _ => out.emit_unpositioned(record),
                    }
                }
                if let Some(tag) = etag {
                    self.position = Some(tag);
                }
            }
        }
        Ok(())
    }
}

impl HttpSource {
    fn request_url(&self) -> String {
        match (self.config.mode, &self.position) {
            (Mode::Cursor, Some(cursor)) => {
                let sep = if self.config.url.contains('?') { '&' } else { '?' };
                format!("{}{sep}{}={}", self.config.url, self.config.cursor_param, encode(cursor))
            }
            _ => self.config.url.clone(),
        }
    }

    /// Emits up to `max` items, each positioned at its own cursor; an item without a cursor
    /// is reported as failed (it would make the position ambiguous).
    fn emit_after_cursor(&mut self, items: &[Value], max: usize, out: &mut Polled) {
        for item in items.iter().take(max) {
            let cursor = item.get(&self.config.cursor_field).map(text);
            match cursor {
                Some(c) => {
                    out.emit(self.record(item), &c);
                    self.position = Some(c);
                }
                None => {
                    let at = self.position.clone().unwrap_or_default();
                    let raw = NewRecord::new().value(item.to_string());
                    out.fail(raw, at, RecordError::invalid(format!("item has no {:?} field to use as cursor", self.config.cursor_field)));
                }
            }
        }
    }

    fn record(&self, item: &Value) -> NewRecord {
        let record = NewRecord::new().value(item.to_string());
        match self.config.key_field.as_ref().and_then(|k| item.get(k)) {
            Some(key) => record.key(text(key)),
            None => record,
        }
    }
}

/// A JSON value as cursor text: strings without quotes, anything else as JSON.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Percent-encodes a query parameter value.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

export_source!(HttpSource);

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;
    use turnpike_sdk::http::Response;
    use turnpike_sdk::testing;

    fn answer(status: u16, body: &str, headers: &[(&str, &str)]) -> Response {
        Response { status, headers: headers.iter().map(|(k, v)| (k.to_string(), v.as_bytes().to_vec())).collect(), body: body.as_bytes().to_vec() }
    }

    #[test]
    fn cursor_mode_asks_after_the_last_cursor_and_resumes_from_the_position() {
        let urls = Rc::new(RefCell::new(Vec::new()));
        let seen = urls.clone();
        testing::respond_http(move |req| {
            seen.borrow_mut().push(req.url.clone());
            Ok(answer(200, r#"{"items": [{"id": 3, "n": "c"}, {"id": 4, "n": "d"}]}"#, &[]))
        });
        let config = r#"{"url": "http://api.test/items", "items": "items", "key_field": "n"}"#;
        let mut s: HttpSource = testing::create_source(config, Some(b"2")).unwrap();
        let polled = testing::poll(&mut s, 10).unwrap();
        assert_eq!(polled.iter().map(|p| p.position.clone().unwrap()).collect::<Vec<_>>(), [b"3".to_vec(), b"4".to_vec()]);
        assert_eq!(polled[1].record.key.as_deref(), Some(&b"d"[..]));
        testing::poll(&mut s, 10).unwrap();
        assert_eq!(*urls.borrow(), ["http://api.test/items?after=2", "http://api.test/items?after=4"]);
    }

    #[test]
    fn etag_mode_reads_nothing_on_304() {
        testing::respond_http(|req| {
            Ok(match req.headers.iter().find(|(k, _)| k == "if-none-match") {
                Some((_, tag)) if tag == "\"v1\"" => answer(304, "", &[]),
                _ => answer(200, r#"[{"a": 1}, {"a": 2}]"#, &[("ETag", "\"v1\"")]),
            })
        });
        let mut s: HttpSource = testing::create_source(r#"{"url": "http://api.test/all", "mode": "etag"}"#, None).unwrap();
        let first = testing::poll(&mut s, 10).unwrap();
        assert_eq!(first.len(), 2);
        assert_eq!((first[0].position.as_deref(), first[1].position.as_deref()), (None, Some(&b"\"v1\""[..])));
        assert!(testing::poll(&mut s, 10).unwrap().is_empty());
        let mut resumed: HttpSource = testing::create_source(r#"{"url": "http://api.test/all", "mode": "etag"}"#, Some(b"\"v1\"")).unwrap();
        assert!(testing::poll(&mut resumed, 10).unwrap().is_empty(), "a restart does not re-read");
    }

    #[test]
    fn server_errors_are_retriable_client_errors_and_refusals_fatal() {
        let status = Rc::new(RefCell::new(503));
        let s2 = status.clone();
        testing::respond_http(move |_| Ok(answer(*s2.borrow(), "nope", &[])));
        let mut s: HttpSource = testing::create_source(r#"{"url": "http://api.test/x"}"#, None).unwrap();
        assert_eq!(testing::poll(&mut s, 10).unwrap_err().kind, ErrorKind::Retriable);
        *status.borrow_mut() = 401;
        assert_eq!(testing::poll(&mut s, 10).unwrap_err().kind, ErrorKind::Fatal);
        testing::respond_http(|_| Err(http::HttpError { message: "HttpRequestDenied".into(), refused: true }));
        assert_eq!(testing::poll(&mut s, 10).unwrap_err().kind, ErrorKind::Fatal);
    }

    #[test]
    fn items_without_a_cursor_are_failed_not_dropped() {
        testing::respond_http(|_| Ok(answer(200, r#"[{"id": "a1"}, {"other": true}]"#, &[])));
        let mut s: HttpSource = testing::create_source(r#"{"url": "http://api.test/x"}"#, None).unwrap();
        let polled = testing::poll(&mut s, 10).unwrap();
        assert!(polled[0].error.is_none());
        assert!(polled[1].error.as_ref().unwrap().message.contains("cursor"));
        assert_eq!(polled[1].record.value.as_deref(), Some(&br#"{"other":true}"#[..]));
    }

    #[test]
    fn a_bad_url_is_a_config_error() {
        let e = testing::create_source::<HttpSource>(r#"{"url": "ftp://x"}"#, None).err().unwrap();
        assert_eq!(e.key.as_deref(), Some("url"));
    }
}
