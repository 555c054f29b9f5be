//! The authorization matrix: what role each operation needs, and which owned resource its
//! path names. One table for every route, so a new endpoint cannot be added without saying
//! who may call it (the test in `tests/auth_matrix.rs` fails for an operation missing here).

use axum::http::Method;
use turnpike_config::Role;

/// What an operation needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Anyone, without a token: liveness and the API document.
    Public,
    /// A token with at least this role.
    Role(Role),
}

/// The team-owned thing a path names, whose owner a non-admin must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resource {
    /// Nothing owned (lists filter what they show instead).
    None,
    /// `/v1/connectors/{name}…`
    Connector(String),
    /// `/v1/plugins/{name}…`; `writes` for a delete (shared plugins are read-only).
    Plugin { name: String, writes: bool },
}

/// What `method path` needs, and the resource it names. `None` for a route that does not
/// exist (the router answers it with 404 or 405).
pub fn rule(method: &Method, path: &str) -> Option<(Need, Resource)> {
    use Role::{Admin, Editor, Viewer};
    // Decoded as the router's `Path` extractor decodes them, so `/v1/connectors/%61-conn`
    // names the connector `a-conn` here too (found by review: matching the raw text let
    // another team reach it). A segment that is not UTF-8 once decoded matches no name.
    let decoded: Vec<String> = path.trim_matches('/').split('/').map(|s| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()).collect();
    let segments: Vec<&str> = decoded.iter().map(String::as_str).collect();
    let read = matches!(*method, Method::GET | Method::HEAD);
    let owned_connector = |name: &str| Resource::Connector(name.to_owned());
    let need = |role| Need::Role(role);
    Some(match segments.as_slice() {
        // The console's assets hold no data; everything they show comes through the API.
        ["healthz"] | ["v1", "openapi.json"] | [""] | ["ui", _] => (Need::Public, Resource::None),
        ["metrics"] => (need(Admin), Resource::None),
        ["v1", "events"] | ["v1", "connectors"] => (need(Viewer), Resource::None),
        ["v1", "connectors", name] => (need(if read { Viewer } else { Editor }), owned_connector(name)),
        ["v1", "connectors", name, "offsets"] => (need(Viewer), owned_connector(name)),
        ["v1", "connectors", name, "validate" | "pause" | "resume" | "stop" | "restart"] | ["v1", "connectors", name, "offsets", "reset"] => {
            (need(Editor), owned_connector(name))
        }
        ["v1", "plugins"] => (need(if read { Viewer } else { Editor }), Resource::None),
        ["v1", "plugins", name] => (need(Viewer), Resource::Plugin { name: (*name).to_owned(), writes: false }),
        ["v1", "plugins", name, _version] => (need(if read { Viewer } else { Editor }), Resource::Plugin { name: (*name).to_owned(), writes: !read }),
        ["v1", "plugins", name, _version, "test"] => (need(Editor), Resource::Plugin { name: (*name).to_owned(), writes: false }),
        ["v1", "secrets"] => (need(Viewer), Resource::None),
        // A team sees and samples only its topics; the handler filters and hides the rest.
        // Sampling shows records themselves, so it needs what deploying a mask needs.
        ["v1", "topics"] => (need(Viewer), Resource::None),
        ["v1", "cluster"] => (need(Viewer), Resource::None),
        ["v1", "topics", _, "sample"] => (need(Editor), Resource::None),
        ["v1", "secrets", _] | ["v1", "tokens"] | ["v1", "tokens", _] => (need(Admin), Resource::None),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_need_a_viewer_changes_an_editor_and_tokens_an_admin() {
        assert_eq!(rule(&Method::GET, "/v1/connectors/a"), Some((Need::Role(Role::Viewer), Resource::Connector("a".into()))));
        assert_eq!(rule(&Method::DELETE, "/v1/connectors/a"), Some((Need::Role(Role::Editor), Resource::Connector("a".into()))));
        assert_eq!(rule(&Method::POST, "/v1/connectors/a/offsets/reset").map(|r| r.0), Some(Need::Role(Role::Editor)));
        assert_eq!(rule(&Method::POST, "/v1/tokens").map(|r| r.0), Some(Need::Role(Role::Admin)));
        assert_eq!(rule(&Method::PUT, "/v1/secrets/db").map(|r| r.0), Some(Need::Role(Role::Admin)));
        assert_eq!(rule(&Method::GET, "/healthz").map(|r| r.0), Some(Need::Public));
        assert_eq!(rule(&Method::DELETE, "/v1/plugins/p/1").map(|r| r.1), Some(Resource::Plugin { name: "p".into(), writes: true }));
        assert_eq!(rule(&Method::GET, "/v2/x"), None);
        assert_eq!(rule(&Method::GET, "/v1/connectors/%61-conn").map(|r| r.1), Some(Resource::Connector("a-conn".into())), "decoded as the router decodes");
        assert_eq!(rule(&Method::DELETE, "/v1/plugins/m%61sk/1").map(|r| r.1), Some(Resource::Plugin { name: "mask".into(), writes: true }));
    }
}
