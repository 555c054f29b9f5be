//! What every request passes before a handler sees it, in one place: the `Host` it names,
//! where a state-changing request comes from, the media type of a JSON body, and a deadline.
//! And what every refusal looks like: the documented `{"error", "detail"}` JSON, also for the
//! rejections axum's extractors produce as plain text.
//!
//! Why: the API listens on loopback and has no authentication, and a web browser gets around
//! "loopback only". A page the operator visits can send "simple" cross-site requests (a form
//! POST, a `text/plain` body, a multipart upload) that need no CORS preflight, and a page
//! using DNS rebinding reaches the API under its own host name. Refusing foreign `Host`
//! headers, foreign origins on state-changing methods, and non-JSON bodies on JSON routes
//! closes both.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use turnpike_config::AdminConfig;

use crate::error::ApiError;

/// Who may talk to the API, as the host configuration says.
#[derive(Debug, Clone)]
pub struct Guard {
    /// `Host` header values accepted (lowercase, with and without the port where it applies).
    hosts: Vec<String>,
    /// Origins accepted on state-changing requests (lowercase, no trailing slash).
    origins: Vec<String>,
    request_timeout: Duration,
    max_json_body: usize,
}

impl Guard {
    /// The rules for an API serving `config` (its listen address, names and origins).
    pub fn new(config: &AdminConfig) -> Self {
        let mut hosts: Vec<String> = Vec::new();
        if let Ok(address) = config.listen.parse::<std::net::SocketAddr>() {
            let port = address.port();
            let ip = address.ip();
            let literal = if ip.is_ipv6() { format!("[{ip}]") } else { ip.to_string() };
            hosts.push(format!("{literal}:{port}"));
            if ip.is_loopback() || ip.is_unspecified() {
                for name in ["localhost", "127.0.0.1", "[::1]"] {
                    hosts.push(format!("{name}:{port}"));
                }
            }
            if port == 80 {
                hosts.push("localhost".to_owned());
            }
        }
        for name in &config.hosts {
            let name = name.to_ascii_lowercase();
            // A configured name without a port is accepted on any port (a proxy may map it).
            hosts.push(name);
        }
        let scheme = if config.tls.is_some() { "https" } else { "http" };
        let mut origins: Vec<String> = hosts.iter().filter(|h| h.contains(':')).map(|h| format!("{scheme}://{h}")).collect();
        origins.extend(config.origins.iter().map(|o| o.trim_end_matches('/').to_ascii_lowercase()));
        Self {
            hosts,
            origins,
            request_timeout: Duration::from_secs(config.limits.request_timeout_s.get()),
            max_json_body: (config.limits.max_json_body_kib.get() as usize) << 10,
        }
    }

    /// The JSON body cap, in bytes.
    pub fn max_json_body(&self) -> usize {
        self.max_json_body
    }

    fn host_allowed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        if self.hosts.contains(&host) {
            return true;
        }
        let name = match host.rsplit_once(':') {
            Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) && (!host.starts_with('[') || name.ends_with(']')) => name,
            _ => host.as_str(),
        };
        // DNS rebinding needs a host *name*: a request naming an IP address reached that
        // address on purpose (a probe, a scraper, a client of a remote-enabled host).
        if name.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>().is_ok() {
            return true;
        }
        // A configured name without a port matches that name on any port.
        self.hosts.iter().any(|h| h == name && !h.contains(':'))
    }

    /// Why a request must be refused before any handler runs, if it must.
    fn check(&self, method: &Method, path: &str, headers: &HeaderMap) -> Option<ApiError> {
        if let Some(host) = headers.get(header::HOST) {
            let host = host.to_str().unwrap_or("");
            if !self.host_allowed(host) {
                return Some(ApiError::new(
                    StatusCode::MISDIRECTED_REQUEST,
                    "unknown_host",
                    format!("this API does not answer to the host {host:?}; use its listen address, or add the name to admin.hosts"),
                ));
            }
        }
        let changes_state = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        if changes_state {
            if let Some(origin) = headers.get(header::ORIGIN) {
                let origin = origin.to_str().unwrap_or("").trim_end_matches('/').to_ascii_lowercase();
                if !self.origins.contains(&origin) {
                    return Some(ApiError::new(
                        StatusCode::FORBIDDEN,
                        "cross_origin",
                        format!("state-changing requests from the web origin {origin:?} are refused; add it to admin.origins if it is yours"),
                    ));
                }
            } else if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
                if matches!(site, "cross-site" | "same-site") {
                    return Some(ApiError::new(StatusCode::FORBIDDEN, "cross_origin", format!("state-changing requests from another site ({site}) are refused")));
                }
            }
            if takes_json(method, path) && !is_json(headers) {
                let got = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("none");
                return Some(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    format!("send the body as JSON with Content-Type: application/json (got {got})"),
                ));
            }
        }
        None
    }
}

/// Routes whose body is JSON: connector definitions, validations, offset resets, dry runs,
/// secrets.
fn takes_json(method: &Method, path: &str) -> bool {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    matches!(
        (method, segments.as_slice()),
        (&Method::PUT, ["v1", "connectors", _])
            | (&Method::POST, ["v1", "connectors", _, "validate"])
            | (&Method::POST, ["v1", "connectors", _, "offsets", "reset"])
            | (&Method::POST, ["v1", "plugins", _, _, "test"])
            | (&Method::PUT, ["v1", "secrets", _])
    )
}

fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else { return false };
    let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// The middleware: refuses what [`Guard::check`] refuses, bounds the request's time, and
/// turns plain-text rejections into the API's JSON errors.
pub async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Some(refusal) = guard.check(request.method(), request.uri().path(), request.headers()) {
        tracing::warn!(method = %request.method(), path = %request.uri().path(), error = refusal.error, "admin request refused");
        return refusal.into_response();
    }
    let response = match tokio::time::timeout(guard.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            return ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                format!("the request took longer than {:?} (admin.limits.request_timeout_s)", guard.request_timeout),
            )
            .into_response()
        }
    };
    as_json_error(response, guard.max_json_body).await
}

/// A 4xx/5xx answer that is not JSON (axum's extractor rejections are plain text) becomes the
/// documented `{"error", "detail"}` form, keeping its status.
async fn as_json_error(response: Response, max_json_body: usize) -> Response {
    let status = response.status();
    let is_plain = response.headers().get(header::CONTENT_TYPE).is_none_or(|v| !v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || !is_plain {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = match Body::new(body).collect().await {
        Ok(collected) => String::from_utf8_lossy(&collected.to_bytes()).into_owned(),
        Err(_) => String::new(),
    };
    let (code, detail) = match status {
        StatusCode::PAYLOAD_TOO_LARGE => ("body_too_large", format!("the body is too large: JSON bodies may be at most {max_json_body} bytes (admin.limits.max_json_body_kib), uploads admin.limits.max_upload_mib")),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ("unsupported_media_type", format!("{text}; send JSON with Content-Type: application/json")),
        StatusCode::BAD_REQUEST => ("bad_request", text),
        StatusCode::UNPROCESSABLE_ENTITY => ("invalid_body", text),
        StatusCode::METHOD_NOT_ALLOWED => ("method_not_allowed", "this endpoint does not take that method; see /v1/openapi.json".to_owned()),
        s if s.is_server_error() => ("internal", "the host could not answer; see its log".to_owned()),
        _ => ("bad_request", text),
    };
    let mut answer = ApiError::new(status, code, detail).into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            answer.headers_mut().insert(name.clone(), value.clone());
        }
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(listen: &str) -> Guard {
        Guard::new(&AdminConfig { listen: listen.into(), hosts: vec!["turnpike.internal".into()], ..AdminConfig::default() })
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn hosts_are_the_listen_address_its_loopback_names_and_configured_names() {
        let g = guard("127.0.0.1:8080");
        for ok in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080", "turnpike.internal", "turnpike.internal:443", "10.1.2.3:8080", "[fd00::1]:8080"] {
            assert!(g.host_allowed(ok), "{ok}");
        }
        for bad in ["attacker.example:8080", "localhost:9090", "localhost", "evil.turnpike.internal", "127.0.0.1.nip.io:8080"] {
            assert!(!g.host_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn a_foreign_origin_cannot_change_state_but_may_read() {
        let g = guard("127.0.0.1:8080");
        let evil = headers(&[("origin", "https://evil.example")]);
        assert_eq!(g.check(&Method::POST, "/v1/connectors/x/pause", &evil).map(|e| e.error), Some("cross_origin"));
        assert!(g.check(&Method::GET, "/v1/connectors", &evil).is_none());
        let own = headers(&[("origin", "http://localhost:8080")]);
        assert!(g.check(&Method::POST, "/v1/connectors/x/pause", &own).is_none());
        let cross = headers(&[("sec-fetch-site", "cross-site")]);
        assert_eq!(g.check(&Method::DELETE, "/v1/connectors/x", &cross).map(|e| e.error), Some("cross_origin"));
    }

    #[test]
    fn json_routes_need_a_json_body() {
        let g = guard("127.0.0.1:8080");
        let text = headers(&[("content-type", "text/plain")]);
        assert_eq!(g.check(&Method::POST, "/v1/connectors/x/validate", &text).map(|e| e.status), Some(StatusCode::UNSUPPORTED_MEDIA_TYPE));
        assert_eq!(g.check(&Method::PUT, "/v1/connectors/x", &HeaderMap::new()).map(|e| e.error), Some("unsupported_media_type"));
        let json = headers(&[("content-type", "application/json; charset=utf-8")]);
        assert!(g.check(&Method::POST, "/v1/plugins/p/latest/test", &json).is_none());
        assert!(g.check(&Method::POST, "/v1/connectors/x/pause", &HeaderMap::new()).is_none(), "bare lifecycle POSTs carry no body");
    }
}
