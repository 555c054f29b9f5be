//! A shared host for the auth tests: teams A and B (topics `a.*` and `b.*`), a token of each
//! kind, and team A's connector `a-conn`, plugin `a-plug@1.0.0` and secret `a-secret`.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;
use turnpike_config::{AdminConfig, Role, TeamName, TeamPolicy};
use turnpike_pipeline::{Host, Runtime, SandboxConfig};
use turnpike_state::TokenStore;

/// Who calls, weakest first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Caller {
    NoToken,
    Malformed,
    Expired,
    Revoked,
    ViewerA,
    EditorB,
    EditorA,
    Admin,
}

/// One engine for every world: each reserves its instance pool's address space, and the
/// matrix builds a world per operation at once.
fn runtime() -> Runtime {
    static RUNTIME: std::sync::OnceLock<Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::new().expect("engine")).clone()
}

pub fn team(name: &str) -> TeamName {
    TeamName::parse(name).unwrap()
}

pub struct World {
    pub app: Router,
    pub host: Arc<Host>,
    pub tokens: Vec<(Caller, String)>,
    /// A token of team A that no caller uses: the one the matrix revokes.
    pub victim_token: String,
}

impl World {
    pub fn token(&self, caller: Caller) -> Option<&str> {
        self.tokens.iter().find(|(c, _)| *c == caller).map(|(_, t)| t.as_str())
    }
}

/// A host whose team A owns connector `a-conn`, plugin `a-plug@1.0.0` and secret `a-secret`.
pub async fn world() -> World {
    let teams = [("a", "a.*"), ("b", "b.*")].into_iter().map(|(t, p)| (team(t), TeamPolicy { topics: vec![p.into()], ..TeamPolicy::default() })).collect();
    let kafka = vec![("bootstrap.servers".into(), "127.0.0.1:1".into())];
    let host = Arc::new(Host::new(runtime(), kafka, SandboxConfig::default()).with_teams(teams));
    load_shared(&host, "identity").await;
    let store = TokenStore::in_memory();
    let make = |team: Option<&str>, role, expires: Option<SystemTime>| store.create(team.map(self::team), role, expires, None).expect("token");
    let (_, admin) = make(None, Role::Admin, None);
    let (_, viewer_a) = make(Some("a"), Role::Viewer, None);
    let (_, editor_a) = make(Some("a"), Role::Editor, None);
    let (_, editor_b) = make(Some("b"), Role::Editor, None);
    let (_, expired) = make(Some("a"), Role::Editor, Some(SystemTime::now() - Duration::from_secs(1)));
    let (revoked_info, revoked) = make(Some("a"), Role::Admin, None);
    store.revoke(&revoked_info.id, SystemTime::now()).unwrap();
    let (victim, _) = make(Some("a"), Role::Viewer, None);
    let config = AdminConfig { auth: true, ..AdminConfig::default() };
    let app = turnpike_admin::router_secured(host.clone(), &config, store);
    let tokens = vec![
        (Caller::Malformed, "not-a-token".to_owned()),
        (Caller::Expired, expired),
        (Caller::Revoked, revoked),
        (Caller::ViewerA, viewer_a),
        (Caller::EditorB, editor_b),
        (Caller::EditorA, editor_a.clone()),
        (Caller::Admin, admin.clone()),
    ];
    let world = World { app, host, tokens, victim_token: victim.id };
    let (status, body) = send(&world.app, request("post", "/v1/plugins?name=a-plug&version=1.0.0", Some(&editor_a), Body::from(identity()), "application/wasm")).await;
    assert_eq!(status, StatusCode::CREATED, "team A's editor uploads a plugin: {body}");
    let (status, body) = send(&world.app, json_request("put", "/v1/connectors/a-conn", Some(&editor_a), &connector())).await;
    assert_eq!(status, StatusCode::CREATED, "team A's editor makes a connector: {body}");
    assert_eq!(body["config"]["team"], "a", "owned by the token's team: {body}");
    let (status, body) = send(&world.app, json_request("put", "/v1/secrets/a-secret", Some(&admin), &json!({ "value": "s3cret-value", "team": "a" }))).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    world
}

/// Loads a built-in as the host does at start: shared by every team.
pub async fn load_shared(host: &Host, name: &str) {
    let wasm = turnpike_builtins::get(name).expect("built-in").wasm.to_vec();
    host.load_plugin(turnpike_config::PluginName::parse(name).unwrap(), "1.0.0".into(), wasm).await.expect("shared plugin");
}

pub fn identity() -> Vec<u8> {
    turnpike_builtins::get("identity").expect("built-in").wasm.to_vec()
}

pub fn connector() -> Value {
    json!({ "topics": ["a.in"], "output_topic": "a.out", "transforms": [{ "plugin": "a-plug@1.0.0" }] })
}

pub fn request(method: &str, uri: &str, token: Option<&str>, body: Body, content_type: &str) -> Request<Body> {
    let mut builder = Request::builder().method(method.to_ascii_uppercase().as_str()).uri(uri).header("content-type", content_type);
    if let Some(token) = token {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    builder.body(body).unwrap()
}

pub fn json_request(method: &str, uri: &str, token: Option<&str>, body: &Value) -> Request<Body> {
    request(method, uri, token, Body::from(body.to_string()), "application/json")
}

pub async fn send(app: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    if response.headers().get("content-type").is_some_and(|v| v == "text/event-stream") {
        return (status, Value::Null);
    }
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

