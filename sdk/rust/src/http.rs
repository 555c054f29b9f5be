//! Outgoing HTTP from a plugin, over `wasi:http`, blocking and small.
//!
//! The host refuses every request unless the connector lists the host in its `http.allow`
//! grant; a refusal comes back as [`HttpError::refused`] (never a trap), and the host adds
//! the reason to the connector's error. Off WebAssembly (in `cargo test`), requests go to
//! the responder set with [`crate::testing::respond_http`].

use std::fmt;
use std::time::Duration;

/// An HTTP request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`, …
    pub method: String,
    /// `http://host[:port]/path?query` or `https://…`.
    pub url: String,
    /// Header names and values.
    pub headers: Vec<(String, String)>,
    /// The body (empty for none).
    pub body: Vec<u8>,
    /// How long to wait for the response; the host clamps it to the connector's maximum.
    pub timeout: Option<Duration>,
}

impl Request {
    /// A `GET` of `url`.
    pub fn get(url: impl Into<String>) -> Self {
        Self { method: "GET".into(), url: url.into(), headers: Vec::new(), body: Vec::new(), timeout: None }
    }

    /// A `POST` of `body` to `url`.
    pub fn post(url: impl Into<String>, body: impl Into<Vec<u8>>) -> Self {
        Self { method: "POST".into(), url: url.into(), headers: Vec::new(), body: body.into(), timeout: None }
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the response timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// An HTTP response, body read in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Header names (lower-case) and values.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of header `name` (case-insensitive), as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).and_then(|(_, v)| std::str::from_utf8(v).ok())
    }
}

/// A request that got no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    /// What went wrong.
    pub message: String,
    /// Whether the host refused it (not granted, or an internal address): retrying will not
    /// help until the connector's `http.allow` changes.
    pub refused: bool,
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HttpError {}

/// Sends a request and reads the whole response.
pub fn send(request: &Request) -> Result<Response, HttpError> {
    transport::send(request)
}

/// Checks that `url` is one [`send`] accepts (`http://` or `https://` with a host), so a
/// plugin can refuse a bad URL in `create` rather than at the first request.
pub fn check_url(url: &str) -> Result<(), HttpError> {
    split_url(url).map(drop)
}

/// `scheme`, `authority`, `path?query` of a URL.
pub(crate) fn split_url(url: &str) -> Result<(&str, &str, &str), HttpError> {
    let bad = || HttpError { message: format!("{url:?} is not an http:// or https:// URL"), refused: false };
    let (scheme, rest) = url.split_once("://").ok_or_else(bad)?;
    if scheme != "http" && scheme != "https" {
        return Err(bad());
    }
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], &rest[i..]),
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        return Err(bad());
    }
    Ok((scheme, authority, path))
}

#[cfg(target_arch = "wasm32")]
mod transport {
    use wasip2::http::outgoing_handler;
    use wasip2::http::types::{ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, RequestOptions, Scheme};
    use wasip2::io::streams::StreamError;

    use super::{split_url, HttpError, Request, Response};

    fn error(message: impl Into<String>) -> HttpError {
        HttpError { message: message.into(), refused: false }
    }

    fn code_error(code: ErrorCode) -> HttpError {
        let refused = matches!(code, ErrorCode::HttpRequestDenied | ErrorCode::DestinationIpProhibited);
        HttpError { message: format!("{code:?}"), refused }
    }

    pub(super) fn send(request: &Request) -> Result<Response, HttpError> {
        let (scheme, authority, path) = split_url(&request.url)?;
        let mut entries: Vec<(String, Vec<u8>)> = request.headers.iter().map(|(k, v)| (k.clone(), v.clone().into_bytes())).collect();
        // A known length rather than chunked encoding, which not every endpoint accepts.
        if !request.body.is_empty() && !request.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-length")) {
            entries.push(("content-length".into(), request.body.len().to_string().into_bytes()));
        }
        let headers = Fields::from_list(&entries).map_err(|e| error(format!("bad header: {e:?}")))?;
        let outgoing = OutgoingRequest::new(headers);
        let method = match request.method.to_ascii_uppercase().as_str() {
            "GET" => Method::Get,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "PATCH" => Method::Patch,
            "HEAD" => Method::Head,
            other => Method::Other(other.to_owned()),
        };
        let scheme = if scheme == "https" { Scheme::Https } else { Scheme::Http };
        let set = outgoing.set_method(&method).is_ok()
            && outgoing.set_scheme(Some(&scheme)).is_ok()
            && outgoing.set_authority(Some(authority)).is_ok()
            && outgoing.set_path_with_query(Some(path)).is_ok();
        if !set {
            return Err(error(format!("{} is not a valid request", request.url)));
        }
        let body = outgoing.body().map_err(|()| error("request body unavailable"))?;
        let options = RequestOptions::new();
        if let Some(t) = request.timeout {
            let nanos = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
            let _ = options.set_first_byte_timeout(Some(nanos));
            let _ = options.set_between_bytes_timeout(Some(nanos));
        }
        // Sent first, so the host reads the body while it is written (no deadlock on bodies
        // larger than its buffer).
        let pending = outgoing_handler::handle(outgoing, Some(options)).map_err(code_error)?;
        let written = (|| {
            let stream = body.write().map_err(|()| error("request body stream unavailable"))?;
            for chunk in request.body.chunks(4096) {
                stream.blocking_write_and_flush(chunk).map_err(|e| error(format!("writing the request body: {e:?}")))?;
            }
            Ok(())
        })();
        if let Err(write_failed) = written {
            // A refused request closes the body stream; why it was refused is in the response.
            drop(body);
            pending.subscribe().block();
            return Err(match pending.get() {
                Some(Ok(Err(code))) => code_error(code),
                _ => write_failed,
            });
        }
        OutgoingBody::finish(body, None).map_err(code_error)?;
        pending.subscribe().block();
        let response = match pending.get() {
            Some(Ok(Ok(r))) => r,
            Some(Ok(Err(code))) => return Err(code_error(code)),
            Some(Err(())) | None => return Err(error("response already taken")),
        };
        let status = response.status();
        let headers = response.headers().entries();
        let incoming = response.consume().map_err(|()| error("response body unavailable"))?;
        let mut data = Vec::new();
        {
            let stream = incoming.stream().map_err(|()| error("response body stream unavailable"))?;
            loop {
                match stream.blocking_read(64 * 1024) {
                    Ok(bytes) => data.extend_from_slice(&bytes),
                    Err(StreamError::Closed) => break,
                    Err(StreamError::LastOperationFailed(e)) => return Err(error(format!("reading the response: {}", e.to_debug_string()))),
                }
            }
        }
        drop(IncomingBody::finish(incoming));
        Ok(Response { status, headers, body: data })
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod transport {
    use super::{split_url, HttpError, Request, Response};

    pub(super) fn send(request: &Request) -> Result<Response, HttpError> {
        split_url(&request.url)?;
        crate::testing::answer_http(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_their_parts() {
        assert_eq!(split_url("http://127.0.0.1:8080/a/b?c=d").unwrap(), ("http", "127.0.0.1:8080", "/a/b?c=d"));
        assert_eq!(split_url("https://api.example.com").unwrap(), ("https", "api.example.com", "/"));
        assert_eq!(split_url("https://api.example.com?x=1").unwrap(), ("https", "api.example.com", "?x=1"));
        assert!(split_url("ftp://x/").is_err());
        assert!(split_url("http:///x").is_err());
    }
}
