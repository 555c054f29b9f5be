//! The connector endpoints, in process (`tower::ServiceExt::oneshot`). The broker address is
//! unreachable on purpose: creating, reading, pausing, stopping and deleting connectors must
//! work without one (a connector simply waits for records).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;
use turnpike_pipeline::{Host, Runtime, SandboxConfig};

fn pii_mask() -> Vec<u8> {
    turnpike_builtins::get("pii-mask").expect("built-in").wasm.to_vec()
}

async fn send(app: &Router, method: &str, uri: &str, body: Option<Value>) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(uri);
    let body = match body {
        Some(v) => {
            request = request.header("content-type", "application/json");
            Body::from(v.to_string())
        }
        None => Body::empty(),
    };
    let response = app.clone().oneshot(request.body(body).unwrap()).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

async fn app() -> Router {
    let kafka = vec![("bootstrap.servers".into(), "127.0.0.1:1".into())];
    let host = Host::new(Runtime::new().expect("engine"), kafka, SandboxConfig::default());
    let app = turnpike_admin::router(Arc::new(host));
    let upload = Request::post("/v1/plugins?name=pii-mask&version=1.0.0").header("content-type", "application/wasm").body(Body::from(pii_mask())).unwrap();
    assert_eq!(app.clone().oneshot(upload).await.unwrap().status(), StatusCode::CREATED);
    app
}

fn connector(salt: &str) -> Value {
    json!({
        "topics": ["customers"],
        "output_topic": "customers.masked",
        "transforms": [{ "plugin": "pii-mask@1.0.0", "config": { "fields": ["email"], "salt": salt } }]
    })
}

/// Polls the connector's status every 50 ms until `done` holds (20 s at most) and returns it:
/// the one poll loop of these tests, async because the host runs on the test's runtime.
async fn wait_for(app: &Router, name: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, body) = send(app, "GET", &format!("/v1/connectors/{name}"), None).await;
        if done(&body) {
            return body;
        }
        assert!(Instant::now() < deadline, "{name} never {what}: {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_state(app: &Router, name: &str, state: &str) -> Value {
    wait_for(app, name, &format!("reached {state}"), |body| body["state"] == state).await
}

/// The keys of every problem in a refusal, sorted: what counts is that each is reported, not
/// the order the host lists them in.
fn problem_keys(body: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = body["problems"].as_array().into_iter().flatten().filter_map(|p| p["key"].as_str()).collect();
    keys.sort_unstable();
    keys
}

/// The message of the problem reported for `key`.
fn problem_message<'a>(body: &'a Value, key: &str) -> Option<&'a str> {
    body["problems"].as_array()?.iter().find(|p| p["key"] == key)?["message"].as_str()
}

#[tokio::test(flavor = "multi_thread")]
async fn put_is_declarative_and_idempotent() {
    let app = app().await;
    let (status, body) = send(&app, "PUT", "/v1/connectors/mask", Some(connector("s1"))).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let running = wait_state(&app, "mask", "RUNNING").await;
    let since = running["state_since"].clone();
    assert_eq!(running["config"]["transforms"][0]["config"]["salt"], "***", "secrets are never echoed");
    assert_eq!(running["config"]["transforms"][0]["config"]["fields"], json!(["email"]));
    assert_eq!(running["plugins"], json!(["pii-mask@1.0.0"]));

    let (status, body) = send(&app, "PUT", "/v1/connectors/mask", Some(connector("s1"))).await;
    assert_eq!((status, &body["changed"]), (StatusCode::OK, &json!(false)));
    assert_eq!(send(&app, "GET", "/v1/connectors/mask", None).await.1["state_since"], since, "nothing restarted");

    let (status, body) = send(&app, "PUT", "/v1/connectors/mask", Some(connector("s2"))).await;
    assert_eq!((status, &body["changed"]), (StatusCode::OK, &json!(true)));
    wait_state(&app, "mask", "RUNNING").await;

    let (_, list) = send(&app, "GET", "/v1/connectors?state=RUNNING", None).await;
    assert_eq!(list["connectors"].as_array().map(Vec::len), Some(1));
    let (_, list) = send(&app, "GET", "/v1/connectors?state=FAILED", None).await;
    assert_eq!(list["connectors"], json!([]));

    assert_eq!(send(&app, "DELETE", "/v1/connectors/mask", None).await.0, StatusCode::NO_CONTENT);
    assert_eq!(send(&app, "GET", "/v1/connectors/mask", None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(send(&app, "DELETE", "/v1/connectors/mask", None).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_connector_bodies_get_4xx_naming_what_to_fix() {
    let app = app().await;
    let mut bad = connector("s");
    bad["batch"] = json!({ "max_records": 0 });
    let (status, body) = send(&app, "PUT", "/v1/connectors/c", Some(bad)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body["detail"].as_str().unwrap().starts_with("connector.batch.max_records: 0 is out of range"), "{body}");
    assert_eq!(body["problems"][0]["key"], "connector.batch.max_records", "a value out of range names its field as a problem: {body}");

    let mut bad = connector("s");
    bad["output_topic"] = json!("customers");
    bad["restart"] = json!({ "base_ms": 5000, "max_ms": 10 });
    let (status, body) = send(&app, "PUT", "/v1/connectors/c", Some(bad)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(problem_keys(&body), ["connector.output_topic", "connector.restart.base_ms"], "every problem at once: {body}");

    let mut renamed = connector("s");
    renamed["name"] = json!("other");
    let (status, body) = send(&app, "PUT", "/v1/connectors/c", Some(renamed)).await;
    assert_eq!((status, body["key"].as_str()), (StatusCode::BAD_REQUEST, Some("name")));

    let mut typo = connector("s");
    typo["output_topik"] = json!("x");
    let (status, body) = send(&app, "PUT", "/v1/connectors/c", Some(typo)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body["detail"].as_str().unwrap().contains("unknown key \"output_topik\"; the keys here are name, team, topics"), "{body}");

    let mut limits = connector("s");
    limits["limits"] = json!({ "memory_mib": 4000 });
    let (status, body) = send(&app, "PUT", "/v1/connectors/c", Some(limits)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body["detail"].as_str().unwrap().contains("sandbox.max_memory_mib"), "{body}");

    let request = Request::put("/v1/connectors/c").header("content-type", "application/json").body(Body::from("{nope")).unwrap();
    assert_eq!(app.clone().oneshot(request).await.unwrap().status(), StatusCode::BAD_REQUEST);
    assert_eq!(send(&app, "GET", "/v1/connectors", None).await.1["connectors"], json!([]), "nothing was created");
}

#[tokio::test(flavor = "multi_thread")]
async fn lifecycle_pause_resume_stop_restart() {
    let app = app().await;
    send(&app, "PUT", "/v1/connectors/life", Some(connector("s"))).await;
    wait_state(&app, "life", "RUNNING").await;

    assert_eq!(send(&app, "POST", "/v1/connectors/life/pause", None).await.0, StatusCode::ACCEPTED);
    wait_state(&app, "life", "PAUSED").await;
    send(&app, "POST", "/v1/connectors/life/resume", None).await;
    wait_state(&app, "life", "RUNNING").await;

    assert_eq!(send(&app, "POST", "/v1/connectors/life/stop", None).await.0, StatusCode::ACCEPTED);
    let stopped = wait_state(&app, "life", "STOPPED").await;
    assert_eq!(stopped["config"]["output_topic"], "customers.masked", "the configuration stays");
    let (status, body) = send(&app, "POST", "/v1/connectors/life/pause", None).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::CONFLICT, Some("wrong_state")));
    send(&app, "POST", "/v1/connectors/life/resume", None).await;
    wait_state(&app, "life", "RUNNING").await;

    let (status, body) = send(&app, "POST", "/v1/connectors/life/restart?only_failed=true", None).await;
    assert_eq!((status, &body["restarted"]), (StatusCode::ACCEPTED, &json!(false)), "a running connector is left alone");
    let (_, body) = send(&app, "POST", "/v1/connectors/life/restart", None).await;
    assert_eq!(body["restarted"], json!(true));
    wait_state(&app, "life", "RUNNING").await;
    for action in ["pause", "resume", "stop", "restart"] {
        assert_eq!(send(&app, "POST", &format!("/v1/connectors/ghost/{action}"), None).await.0, StatusCode::NOT_FOUND, "{action}");
    }
}

async fn upload(app: &Router, name: &str, version: &str) {
    let request = Request::post(format!("/v1/plugins?name={name}&version={version}")).header("content-type", "application/wasm").body(Body::from(pii_mask())).unwrap();
    assert!(app.clone().oneshot(request).await.unwrap().status().is_success());
}

#[tokio::test(flavor = "multi_thread")]
async fn changing_only_the_plugin_version_swaps_without_a_restart() {
    let app = app().await;
    upload(&app, "pii-mask", "2.0.0").await;
    send(&app, "PUT", "/v1/connectors/swap", Some(connector("s"))).await;
    let before = wait_state(&app, "swap", "RUNNING").await;

    let mut v2 = connector("s");
    v2["transforms"][0]["plugin"] = json!("pii-mask@2.0.0");
    let (status, body) = send(&app, "PUT", "/v1/connectors/swap", Some(v2.clone())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!((&body["changed"], &body["restarted"]), (&json!(true), &json!(false)));
    assert_eq!(body["plugins"], json!(["pii-mask@2.0.0"]));
    assert_eq!(body["state_since"], before["state_since"], "no restart: the state never changed");

    // A chain that cannot start is refused, and the connector keeps what it runs.
    let mut broken = v2.clone();
    broken["transforms"][0]["config"] = json!({ "fields": ["a..b"] });
    let (status, body) = send(&app, "PUT", "/v1/connectors/swap", Some(broken)).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("swap_failed")), "{body}");
    assert!(body["detail"].as_str().unwrap().contains("still running pii-mask@2.0.0"), "{body}");
    let (_, now) = send(&app, "GET", "/v1/connectors/swap", None).await;
    assert_eq!(now["plugins"], json!(["pii-mask@2.0.0"]));
    assert_eq!(now["config"]["transforms"][0]["config"]["fields"], json!(["email"]), "the refused config was not kept");
    assert!(now["swap_error"].as_str().is_some_and(|e| e.contains("empty segment")), "{now}");
    assert_eq!(now["state"], "RUNNING");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connector_on_latest_follows_a_new_upload() {
    let app = app().await;
    let mut on_latest = connector("s");
    on_latest["transforms"][0]["plugin"] = json!("pii-mask@latest");
    send(&app, "PUT", "/v1/connectors/follow", Some(on_latest)).await;
    wait_state(&app, "follow", "RUNNING").await;
    assert_eq!(send(&app, "GET", "/v1/connectors/follow", None).await.1["plugins"], json!(["pii-mask@1.0.0"]));
    upload(&app, "pii-mask", "3.0.0").await;
    let now = wait_for(&app, "follow", "switched to 3.0.0", |body| body["plugins"] == json!(["pii-mask@3.0.0"])).await;
    assert_eq!(now["state"], "RUNNING");
}

#[tokio::test(flavor = "multi_thread")]
async fn validation_reports_every_problem_including_the_plugins_own_and_creates_nothing() {
    let app = app().await;
    let (status, body) = send(&app, "POST", "/v1/connectors/v/validate", Some(connector("s"))).await;
    assert_eq!((status, &body["valid"], &body["plugins"]), (StatusCode::OK, &json!(true), &json!(["pii-mask@1.0.0"])), "{body}");

    let mut bad = connector("s");
    bad["output_topic"] = json!("customers");
    bad["transforms"] = json!([
        { "plugin": "pii-mask@1.0.0", "config": { "fields": ["email"], "default_mode": "scramble" } },
        { "plugin": "nope" }
    ]);
    let (status, body) = send(&app, "POST", "/v1/connectors/v/validate", Some(bad)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(problem_keys(&body), ["connector.output_topic", "connector.transforms[0].config.default_mode", "connector.transforms[1].plugin"], "{body}");
    let default_mode = problem_message(&body, "connector.transforms[0].config.default_mode");
    assert!(default_mode.is_some_and(|m| m.ends_with(r#": "scramble" is not one of redact, hash, partial"#)), "{body}");
    assert_eq!(send(&app, "GET", "/v1/connectors", None).await.1["connectors"], json!([]), "validation creates nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn validation_checks_each_stage_has_a_plugin_of_its_kind_and_a_source_has_an_output() {
    let app = app().await;
    let sink_on_a_transform = json!({ "topics": ["customers"], "sink": { "plugin": "pii-mask@1.0.0", "config": { "fields": ["email"] } } });
    let (status, body) = send(&app, "POST", "/v1/connectors/s/validate", Some(sink_on_a_transform)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let sink = problem_message(&body, "connector.sink.plugin");
    assert!(sink.is_some_and(|m| m.contains("is a transform plugin; this stage needs a sink plugin")), "{body}");

    let source_without_output = json!({ "source": { "plugin": "pii-mask@1.0.0" }, "http": { "allow": ["https://x"] } });
    let (status, body) = send(&app, "PUT", "/v1/connectors/src", Some(source_without_output)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(problem_keys(&body), ["connector.http.allow[0]", "connector.output_topic"], "{body}");
}
