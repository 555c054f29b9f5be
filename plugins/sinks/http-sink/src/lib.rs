//! `http-sink`: sends records to an HTTP endpoint, as one request per batch (JSON lines) or
//! one per record.
//!
//! - `2xx`: written.
//! - `5xx`, `429`, or no answer: the whole write is `retriable`, and the host retries it
//!   with backoff (per the connector's `errors.retry_timeout_ms`).
//! - another `4xx`: the record is rejected (dead-lettered, or failing the connector, per its
//!   error policy). In `json_lines` mode a batch answered `4xx` is re-sent record by record
//!   to find which records the endpoint refuses.
//! - a request the host refuses (no HTTP grant): `fatal`, with the host's reason.

use std::collections::BTreeMap;
use std::time::Duration;

use turnpike_sdk::http::{self, Request, Response};
use turnpike_sdk::prelude::*;

/// How records are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// One request per batch, one record value per line (`application/x-ndjson`).
    #[default]
    JsonLines,
    /// One request per record, its value as the body.
    PerRecord,
}

/// The plugin's configuration.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Where to send (`http://` or `https://`). Its host must be in the connector's
    /// `http.allow` list.
    pub url: String,
    /// `POST` (default) or `PUT`.
    #[serde(default = "default_method")]
    pub method: String,
    /// `json_lines` (default) or `per_record`.
    #[serde(default)]
    pub format: Format,
    /// Extra request headers (e.g. `Authorization`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Response timeout in ms (the host may clamp it). Default 10,000.
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
}

fn default_method() -> String {
    "POST".into()
}
fn default_timeout() -> u64 {
    10_000
}

/// The http-sink.
pub struct HttpSink {
    config: Config,
    /// In `per_record` mode, how far a failed write got, so its retry does not send again
    /// what the endpoint already accepted.
    progress: Option<Progress>,
}

/// How far a `per_record` write got before a retriable error.
struct Progress {
    /// The batch's first record: topic, partition, offset.
    batch: (String, i32, i64),
    /// Records sent.
    done: usize,
    /// Records the endpoint refused so far.
    rejected: Vec<(u32, RecordError)>,
}

/// What one request's answer means.
enum Outcome {
    Written,
    Rejected(String),
}

impl Sink for HttpSink {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        http::check_url(&config.url).map_err(|e| ConfigError::at("url", e.message))?;
        if !matches!(config.method.to_ascii_uppercase().as_str(), "POST" | "PUT") {
            return Err(ConfigError::at("method", format!("{:?}: use POST or PUT", config.method)));
        }
        if config.timeout_ms == 0 {
            return Err(ConfigError::at("timeout_ms", "must be above 0"));
        }
        Ok(Self { config, progress: None })
    }

    fn write(&mut self, batch: Batch<'_>) -> Result<Vec<(u32, RecordError)>, RecordError> {
        let records: Vec<Record<'_>> = batch.records().filter(|r| r.value().is_some()).collect();
        if records.is_empty() {
            return Ok(Vec::new());
        }
        match self.config.format {
            Format::PerRecord => self.one_by_one(&records),
            Format::JsonLines => {
                let mut body = Vec::new();
                for r in &records {
                    body.extend_from_slice(r.value().unwrap_or_default());
                    body.push(b'\n');
                }
                match self.send(body, "application/x-ndjson")? {
                    Outcome::Written => Ok(Vec::new()),
                    // Find the records the endpoint refuses.
                    Outcome::Rejected(_) => self.one_by_one(&records),
                }
            }
        }
    }
}

impl HttpSink {
    /// Sends each record on its own, resuming after the last one sent if the previous
    /// attempt at this batch stopped on a retriable error.
    fn one_by_one(&mut self, records: &[Record<'_>]) -> Result<Vec<(u32, RecordError)>, RecordError> {
        let first = &records[0];
        let id = (first.topic().to_owned(), first.partition(), first.offset());
        let (mut done, mut rejected) = match self.progress.take() {
            Some(p) if p.batch == id => (p.done, p.rejected),
            _ => (0, Vec::new()),
        };
        while done < records.len() {
            let r = &records[done];
            match self.send(r.value().unwrap_or_default().to_vec(), "application/json") {
                Ok(Outcome::Written) => {}
                Ok(Outcome::Rejected(why)) => rejected.push((r.index(), RecordError::invalid(why))),
                Err(e) => {
                    self.progress = Some(Progress { batch: id, done, rejected });
                    return Err(e);
                }
            }
            done += 1;
        }
        Ok(rejected)
    }

    fn send(&self, body: Vec<u8>, content_type: &str) -> Result<Outcome, RecordError> {
        let mut request = Request::post(self.config.url.clone(), body).timeout(Duration::from_millis(self.config.timeout_ms)).header("content-type", content_type);
        request.method = self.config.method.to_ascii_uppercase();
        for (k, v) in &self.config.headers {
            request = request.header(k.clone(), v.clone());
        }
        let response = http::send(&request).map_err(|e| {
            let message = format!("{} {}: {e}", request.method, self.config.url);
            if e.refused {
                RecordError::fatal(message)
            } else {
                RecordError::retriable(message)
            }
        })?;
        classify(&request, &response)
    }
}

fn classify(request: &Request, response: &Response) -> Result<Outcome, RecordError> {
    let answer = || format!("{} {} answered {}: {}", request.method, request.url, response.status, String::from_utf8_lossy(&response.body[..response.body.len().min(200)]));
    match response.status {
        200..=299 => Ok(Outcome::Written),
        429 | 500..=599 => Err(RecordError::retriable(answer())),
        _ => Ok(Outcome::Rejected(answer())),
    }
}

export_sink!(HttpSink);

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;
    use turnpike_sdk::testing;

    fn ok(status: u16) -> Response {
        Response { status, headers: vec![], body: vec![] }
    }

    #[test]
    fn a_batch_goes_as_json_lines() {
        let bodies = Rc::new(RefCell::new(Vec::new()));
        let seen = bodies.clone();
        testing::respond_http(move |req| {
            seen.borrow_mut().push(String::from_utf8(req.body.clone()).unwrap());
            Ok(ok(200))
        });
        let mut sink: HttpSink = testing::create_sink(r#"{"url": "http://sink.test/in"}"#).unwrap();
        let rejected = testing::write(&mut sink, [TestRecord::value("{\"a\":1}"), TestRecord::value("{\"a\":2}")]).unwrap();
        assert!(rejected.is_empty());
        assert_eq!(*bodies.borrow(), ["{\"a\":1}\n{\"a\":2}\n"]);
    }

    #[test]
    fn a_refused_batch_is_split_to_find_the_bad_record() {
        testing::respond_http(|req| Ok(ok(if String::from_utf8_lossy(&req.body).contains("bad") { 400 } else { 200 })));
        let mut sink: HttpSink = testing::create_sink(r#"{"url": "http://sink.test/in"}"#).unwrap();
        let rejected = testing::write(&mut sink, [TestRecord::value("good"), TestRecord::value("bad"), TestRecord::value("fine")]).unwrap();
        assert_eq!(rejected.len(), 1);
        assert_eq!(rejected[0].0, 1);
        assert!(rejected[0].1.message.contains("400"), "{}", rejected[0].1);
    }

    #[test]
    fn server_errors_are_retriable_and_a_retry_resumes_per_record() {
        let calls = Rc::new(RefCell::new(Vec::new()));
        let seen = calls.clone();
        testing::respond_http(move |req| {
            let body = String::from_utf8(req.body.clone()).unwrap();
            let mut c = seen.borrow_mut();
            c.push(body.clone());
            // "b" fails the first time it is sent.
            Ok(ok(if body == "b" && c.iter().filter(|x| **x == "b").count() == 1 { 503 } else { 200 }))
        });
        let mut sink: HttpSink = testing::create_sink(r#"{"url": "http://sink.test/in", "format": "per_record"}"#).unwrap();
        let batch = || [TestRecord::value("a"), TestRecord::value("b"), TestRecord::value("c")];
        assert_eq!(testing::write(&mut sink, batch()).unwrap_err().kind, ErrorKind::Retriable);
        assert!(testing::write(&mut sink, batch()).unwrap().is_empty());
        assert_eq!(*calls.borrow(), ["a", "b", "b", "c"], "the retry does not send `a` again");
    }

    #[test]
    fn a_refused_request_is_fatal() {
        testing::respond_http(|_| Err(http::HttpError { message: "HttpRequestDenied".into(), refused: true }));
        let mut sink: HttpSink = testing::create_sink(r#"{"url": "http://sink.test/in"}"#).unwrap();
        assert_eq!(testing::write(&mut sink, [TestRecord::value("a")]).unwrap_err().kind, ErrorKind::Fatal);
    }

    #[test]
    fn config_is_checked() {
        assert_eq!(testing::create_sink::<HttpSink>(r#"{"url": "x"}"#).err().unwrap().key.as_deref(), Some("url"));
        assert_eq!(testing::create_sink::<HttpSink>(r#"{"url": "http://a/", "method": "GET"}"#).err().unwrap().key.as_deref(), Some("method"));
    }
}
