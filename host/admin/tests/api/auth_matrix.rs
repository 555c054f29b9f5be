//! The authorization matrix, generated from the OpenAPI document: every documented operation
//! × (no token, a malformed token, an expired one, a revoked one, a viewer of the owning team,
//! an editor of another team, an editor of the owning team, an admin) → refused as it must be
//! (401, 403, or 404 for another team's resource) or let through. An operation without an
//! entry in [`EXPECTED`] fails the test, so no new endpoint can skip the matrix.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::json;

use crate::team_world::{connector, identity, json_request, request, send, world, Caller, World};

/// Who an operation needs, and whether its path names a resource owned by a team.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Needs {
    Anyone,
    Viewer,
    Editor,
    Admin,
}

/// The expected matrix, by `METHOD path` as the OpenAPI document spells them: the role an
/// operation needs, and whether its path names team A's resource (then another team's caller
/// gets 404, as if it did not exist).
const EXPECTED: &[(&str, Needs, bool)] = &[
    ("get /healthz", Needs::Anyone, false),
    ("get /v1/openapi.json", Needs::Anyone, false),
    ("get /metrics", Needs::Admin, false),
    ("get /v1/events", Needs::Viewer, false),
    ("get /v1/connectors", Needs::Viewer, false),
    ("get /v1/connectors/{name}", Needs::Viewer, true),
    ("put /v1/connectors/{name}", Needs::Editor, true),
    ("delete /v1/connectors/{name}", Needs::Editor, true),
    ("post /v1/connectors/{name}/validate", Needs::Editor, true),
    ("post /v1/connectors/{name}/pause", Needs::Editor, true),
    ("post /v1/connectors/{name}/resume", Needs::Editor, true),
    ("post /v1/connectors/{name}/stop", Needs::Editor, true),
    ("post /v1/connectors/{name}/restart", Needs::Editor, true),
    ("get /v1/connectors/{name}/offsets", Needs::Viewer, true),
    ("post /v1/connectors/{name}/offsets/reset", Needs::Editor, true),
    ("get /v1/plugins", Needs::Viewer, false),
    ("post /v1/plugins", Needs::Editor, false),
    ("get /v1/plugins/{name}", Needs::Viewer, true),
    ("delete /v1/plugins/{name}/{version}", Needs::Editor, true),
    ("post /v1/plugins/{name}/{version}/test", Needs::Editor, true),
    ("get /v1/secrets", Needs::Viewer, false),
    ("put /v1/secrets/{name}", Needs::Admin, false),
    ("delete /v1/secrets/{name}", Needs::Admin, false),
    ("get /v1/tokens", Needs::Admin, false),
    ("post /v1/tokens", Needs::Admin, false),
    ("delete /v1/tokens/{id}", Needs::Admin, false),
    ("get /v1/topics", Needs::Viewer, false),
    ("get /v1/cluster", Needs::Viewer, false),
    // Team A's topic: another team's caller gets 404, as for a missing topic.
    ("get /v1/topics/{topic}/sample", Needs::Editor, true),
    ("get /", Needs::Anyone, false),
    ("get /ui/{file}", Needs::Anyone, false),
];

/// The callers, in the order they run: within one operation a destructive operation is
/// first allowed to team A's editor, after every refusal was checked.
const CALLERS: [Caller; 8] = [Caller::NoToken, Caller::Malformed, Caller::Expired, Caller::Revoked, Caller::ViewerA, Caller::EditorB, Caller::EditorA, Caller::Admin];

/// The request for one operation: its path with team A's resources filled in, and a body
/// that the handler accepts from an allowed caller.
fn operation_request(world: &World, method: &str, path: &str, token: Option<&str>) -> Request<Body> {
    let filled = path
        .replace("/v1/connectors/{name}", "/v1/connectors/a-conn")
        .replace("/v1/plugins/{name}", "/v1/plugins/a-plug")
        .replace("/v1/secrets/{name}", "/v1/secrets/a-secret")
        .replace("{version}", "1.0.0")
        .replace("{id}", &world.victim_token)
        .replace("{topic}", "a.orders")
        .replace("{file}", "app.js");
    let body = match (method, path) {
        ("put", "/v1/connectors/{name}") | ("post", "/v1/connectors/{name}/validate") => Some(connector()),
        ("post", "/v1/connectors/{name}/offsets/reset") => Some(json!({ "to": "earliest" })),
        ("post", "/v1/plugins/{name}/{version}/test") => Some(json!({ "records": [] })),
        ("put", "/v1/secrets/{name}") => Some(json!({ "value": "another-value", "team": "a" })),
        ("post", "/v1/tokens") => Some(json!({ "role": "viewer", "team": "a" })),
        _ => None,
    };
    match (method, path, body) {
        ("post", "/v1/plugins", _) => request(method, "/v1/plugins?name=a-plug&version=2.0.0", token, Body::from(identity()), "application/wasm"),
        (_, _, Some(body)) => json_request(method, &filled, token, &body),
        (_, _, None) => request(method, &filled, token, Body::empty(), "application/json"),
    }
}

/// What `caller` must get for an operation that needs `needs`: `Some(status)` for a refusal,
/// `None` when it must be let through.
fn expected_refusal(caller: Caller, needs: Needs, owned: bool) -> Option<StatusCode> {
    let role = match caller {
        _ if needs == Needs::Anyone => return None,
        Caller::NoToken | Caller::Malformed | Caller::Expired | Caller::Revoked => return Some(StatusCode::UNAUTHORIZED),
        Caller::ViewerA => Needs::Viewer,
        Caller::EditorA | Caller::EditorB => Needs::Editor,
        Caller::Admin => Needs::Admin,
    };
    let rank = |n: Needs| n as u8;
    if rank(role) < rank(needs) {
        Some(StatusCode::FORBIDDEN)
    } else if owned && caller == Caller::EditorB {
        Some(StatusCode::NOT_FOUND)
    } else {
        None
    }
}

/// Runs every caller against one operation on a fresh world (a delete allowed to one caller
/// must not change what the next one sees); returns how many checks passed.
async fn check_operation(method: String, path: String, needs: Needs, owned: bool) -> usize {
    let world = world().await;
    let mut checked = 0;
    for caller in CALLERS {
        let token = world.token(caller).map(str::to_owned);
        let (status, body) = send(&world.app, operation_request(&world, &method, &path, token.as_deref())).await;
        let what = format!("{caller:?} → {method} {path}: {status} {body}");
        match expected_refusal(caller, needs, owned) {
            Some(StatusCode::NOT_FOUND) => {
                assert_eq!(status, StatusCode::NOT_FOUND, "{what}");
                assert!(body["error"].as_str().is_some_and(|e| e.ends_with("_not_found")), "answered as a missing resource: {what}");
            }
            Some(refusal) => assert_eq!(status, refusal, "{what}"),
            None => {
                assert!(![StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN].contains(&status), "{what}");
                // 503: the broker of this test is unreachable on purpose (offsets).
                assert!(status != StatusCode::INTERNAL_SERVER_ERROR, "{what}");
                // Team A's callers run before the admin, while the resource still exists.
                if owned && caller != Caller::Admin {
                    assert!(!body["error"].as_str().is_some_and(|e| e.ends_with("_not_found")), "the owner sees its resource: {what}");
                }
            }
        }
        checked += 1;
    }
    checked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_operation_refuses_and_admits_exactly_whom_it_must() {
    let probe = world().await;
    let (_, doc) = send(&probe.app, request("get", "/v1/openapi.json", None, Body::empty(), "application/json")).await;
    let mut operations = Vec::new();
    for (path, methods) in doc["paths"].as_object().expect("paths") {
        for method in methods.as_object().expect("methods").keys() {
            operations.push((method.clone(), path.clone()));
        }
    }
    let missing: Vec<String> = operations.iter().map(|(m, p)| format!("{m} {p}")).filter(|op| !EXPECTED.iter().any(|(e, _, _)| e == op)).collect();
    assert!(missing.is_empty(), "operations without an entry in the authorization matrix: {missing:?}");
    assert_eq!(operations.len(), EXPECTED.len(), "the matrix names operations the API does not document");
    // Concurrently: reading offsets waits for the unreachable broker's timeout.
    let checks = operations.into_iter().map(|(method, path)| {
        let (_, needs, owned) = *EXPECTED.iter().find(|(e, _, _)| *e == format!("{method} {path}")).unwrap();
        tokio::spawn(check_operation(method, path, needs, owned))
    });
    let mut checked = 0;
    for check in checks.collect::<Vec<_>>() {
        checked += check.await.expect("an operation's checks failed; see the panic above");
    }
    assert_eq!(checked, EXPECTED.len() * CALLERS.len());
}

/// Every `$ref` in `value`, anywhere.
fn references(value: &serde_json::Value, found: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v.as_str()) {
                    ("$ref", Some(target)) => found.push(target.to_owned()),
                    _ => references(v, found),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| references(v, found)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_schema_the_api_document_refers_to_is_in_it() {
    let probe = world().await;
    let (_, doc) = send(&probe.app, request("get", "/v1/openapi.json", None, Body::empty(), "application/json")).await;
    let mut found = Vec::new();
    references(&doc, &mut found);
    let schemas = doc["components"]["schemas"].as_object().expect("components.schemas");
    let dangling: Vec<&String> = found.iter().filter(|r| r.strip_prefix("#/components/schemas/").is_some_and(|name| !schemas.contains_key(name))).collect();
    assert!(!found.is_empty() && dangling.is_empty(), "references to schemas the document does not have: {dangling:?}");
    assert!(schemas.contains_key("AutoScale"), "tasks by lag is documented");
}
