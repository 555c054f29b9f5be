//! The API's defences, in process (`oneshot`), against what a hostile web page or a careless
//! client sends: foreign hosts and origins, non-JSON bodies, oversized bodies, junk uploads,
//! racing uploads, secrets round-tripped through GET and PUT, unwritable state, and names
//! that would vanish or collide on disk. The broker address is unreachable on purpose.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;
use turnpike_pipeline::{ConnectorState, EventKind, Host, Runtime, SandboxConfig};
use turnpike_state::{Lifecycle, StateStore};

fn component(name: &str) -> Vec<u8> {
    turnpike_builtins::get(name).expect("built-in").wasm.to_vec()
}

fn host_with(sandbox: SandboxConfig, store: Option<StateStore>) -> Arc<Host> {
    let kafka = vec![("bootstrap.servers".into(), "127.0.0.1:1".into())];
    let host = Host::new(Runtime::new().expect("engine"), kafka, sandbox);
    Arc::new(match store {
        Some(s) => host.persist_to(s),
        None => host,
    })
}

fn app(host: &Arc<Host>) -> Router {
    turnpike_admin::router(host.clone())
}

async fn send(app: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let content_type = response.headers().get("content-type").map(|v| v.to_str().unwrap_or("").to_owned()).unwrap_or_default();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if status.is_client_error() || status.is_server_error() {
        assert!(content_type.starts_with("application/json"), "{status}: every refusal is JSON, got {content_type:?}: {body:?}");
        assert!(json["error"].is_string() && json["detail"].is_string(), "{status}: the documented error shape: {json}");
    }
    (status, json)
}

fn json_request(method: &str, uri: &str, body: &Value) -> Request<Body> {
    Request::builder().method(method).uri(uri).header("content-type", "application/json").body(Body::from(body.to_string())).unwrap()
}

fn upload(name: &str, version: &str, bytes: Vec<u8>) -> Request<Body> {
    Request::post(format!("/v1/plugins?name={name}&version={version}")).header("content-type", "application/wasm").body(Body::from(bytes)).unwrap()
}

fn connector(plugin: &str) -> Value {
    json!({ "topics": ["customers"], "output_topic": "customers.masked", "transforms": [{ "plugin": plugin, "config": { "fields": ["email"] } }] })
}

#[tokio::test]
async fn a_foreign_host_header_is_refused_and_the_listen_address_accepted() {
    let host = host_with(SandboxConfig::default(), None);
    let request = |h: &str| Request::get("/v1/connectors").header("host", h).body(Body::empty()).unwrap();
    let (status, body) = send(&app(&host), request("attacker.example:8080")).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::MISDIRECTED_REQUEST, Some("unknown_host")), "{body}");
    assert_eq!(send(&app(&host), request("127.0.0.1:8080")).await.0, StatusCode::OK);
    assert_eq!(send(&app(&host), request("localhost:8080")).await.0, StatusCode::OK);
}

#[tokio::test]
async fn cross_site_requests_change_nothing() {
    let host = host_with(SandboxConfig::default(), None);
    let app = app(&host);
    // A multipart upload is a "simple" request: no preflight, so the server must refuse it.
    let boundary = "x";
    let mut form = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\npii-mask\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"version\"\r\n\r\n99.0.0\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"component\"; filename=\"a.wasm\"\r\n\r\n").into_bytes();
    form.extend(component("identity"));
    form.extend(format!("\r\n--{boundary}--\r\n").into_bytes());
    let request = Request::post("/v1/plugins")
        .header("origin", "https://evil.example")
        .header("content-type", format!("multipart/form-data; boundary={boundary}"))
        .body(Body::from(form))
        .unwrap();
    let (status, body) = send(&app, request).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::FORBIDDEN, Some("cross_origin")), "{body}");
    assert!(host.registry().list().is_empty(), "nothing was uploaded");

    let validate = Request::post("/v1/connectors/probe/validate")
        .header("content-type", "text/plain")
        .body(Body::from(connector("pii-mask").to_string()))
        .unwrap();
    let (status, body) = send(&app, validate).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::UNSUPPORTED_MEDIA_TYPE, Some("unsupported_media_type")), "{body}");

    let pause = Request::post("/v1/connectors/any/pause").header("sec-fetch-site", "cross-site").body(Body::empty()).unwrap();
    assert_eq!(send(&app, pause).await.0, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn oversized_and_malformed_requests_get_json_errors() {
    let host = host_with(SandboxConfig::default(), None);
    let app = app(&host);
    let big = format!("[{}0]", "0,".repeat(600_000));
    let request = Request::put("/v1/connectors/x").header("content-type", "application/json").body(Body::from(big)).unwrap();
    let (status, body) = send(&app, request).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some("body_too_large")), "{body}");

    let (status, _) = send(&app, Request::get("/v1/connectors?bogus=1").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let reset = Request::post("/v1/connectors/x/offsets/reset").header("content-type", "application/json").body(Body::from("{bad")).unwrap();
    assert_eq!(send(&app, reset).await.0, StatusCode::BAD_REQUEST);

    // The dry run stops parsing at the sample limit, whatever the body holds after it.
    send(&app, upload("identity", "1.0.0", component("identity"))).await;
    let samples: Vec<Value> = (0..1_500).map(|_| json!({})).collect();
    let (status, body) = send(&app, json_request("POST", "/v1/plugins/identity/1.0.0/test", &json!({ "records": samples }))).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some("too_many_samples")), "{body}");
}

#[tokio::test]
async fn a_refused_upload_never_becomes_latest() {
    let host = host_with(SandboxConfig::default(), None);
    let app = app(&host);
    assert_eq!(send(&app, upload("pii-mask", "1.0.0", component("pii-mask"))).await.0, StatusCode::CREATED);
    let (status, _) = send(&app, upload("pii-mask", "99.0.1", b"junk, not a component".to_vec())).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let dry = json!({ "config": { "fields": ["email"] }, "records": [{ "value": "{\"email\":\"a@b.c\"}" }] });
    let (status, body) = send(&app, json_request("POST", "/v1/plugins/pii-mask/latest/test", &dry)).await;
    assert_eq!((status, body["plugin"].as_str()), (StatusCode::OK, Some("pii-mask@1.0.0")), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_uploads_of_one_version_with_different_bytes_cannot_both_succeed() {
    let host = host_with(SandboxConfig::default(), None);
    let app = app(&host);
    let (a, b) = tokio::join!(send(&app, upload("race", "1.0.0", component("pii-mask"))), send(&app, upload("race", "1.0.0", component("identity"))));
    let mut codes = [a.0, b.0];
    codes.sort();
    assert_eq!(codes, [StatusCode::CREATED, StatusCode::CONFLICT], "{a:?} {b:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_round_trip_through_get_and_put_without_being_replaced() {
    let host = host_with(SandboxConfig::default(), None);
    let app = app(&host);
    send(&app, upload("http-sink", "1.0.0", component("http-sink"))).await;
    let url = "https://svc:Sup3rS3cret@ingest.example.com/v1?access_key=AKIAXYZ";
    let body = json!({ "topics": ["orders"], "http": { "allow": ["ingest.example.com"] }, "restart": { "enabled": false },
        "sink": { "plugin": "http-sink@1.0.0", "config": { "url": url,
            "headers": { "Authorization": "Bearer real", "X-Auth-Key": "cf-global-key-123", "Ocp-Apim-Subscription-Key": "azure-sub-key-456", "Private-Key": "pk-000", "Accept": "application/json" } } } });
    assert_eq!(send(&app, json_request("PUT", "/v1/connectors/leak", &body)).await.0, StatusCode::CREATED);
    let (_, shown) = send(&app, Request::get("/v1/connectors/leak").body(Body::empty()).unwrap()).await;
    let text = shown["config"].to_string();
    for secret in ["Sup3rS3cret", "AKIAXYZ", "Bearer real", "cf-global-key-123", "azure-sub-key-456", "pk-000"] {
        assert!(!text.contains(secret), "{secret} is shown: {text}");
    }
    assert_eq!(shown["config"]["sink"]["config"]["headers"]["Accept"], "application/json");

    let (status, again) = send(&app, json_request("PUT", "/v1/connectors/leak", &shown["config"])).await;
    assert_eq!((status, &again["changed"]), (StatusCode::OK, &json!(false)), "GET's configuration sent back changes nothing: {again}");
    let (stored, _) = host.connector("leak").unwrap();
    let stored = serde_json::to_value(stored).unwrap();
    assert_eq!(stored["sink"]["config"]["url"], url);
    assert_eq!(stored["sink"]["config"]["headers"]["Authorization"], "Bearer real");

    // Pointing the connector elsewhere while keeping `***` would send the stored token there.
    let mut elsewhere = shown["config"].clone();
    elsewhere["sink"]["config"]["url"] = json!("https://ingest.example.com/attacker");
    let (status, body) = send(&app, json_request("PUT", "/v1/connectors/leak", &elsewhere)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "stored secrets follow only unchanged destinations: {body}");
    assert_eq!(serde_json::to_value(host.connector("leak").unwrap().0).unwrap()["sink"]["config"]["url"], url, "nothing changed");

    let mut fresh = shown["config"].clone();
    fresh["name"] = json!("leak2");
    let (status, body) = send(&app, json_request("PUT", "/v1/connectors/leak2", &fresh)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "a marker with no stored secret behind it: {body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn names_that_would_vanish_or_collide_on_disk_and_foreign_groups_are_refused() {
    let host = host_with(SandboxConfig::default(), None);
    let app = app(&host);
    send(&app, upload("pii-mask", "1.0.0", component("pii-mask"))).await;
    assert_eq!(send(&app, json_request("PUT", "/v1/connectors/.hidden", &connector("pii-mask"))).await.0, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(send(&app, upload("pii-mask", ".1", component("pii-mask"))).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(send(&app, json_request("PUT", "/v1/connectors/orders", &connector("pii-mask"))).await.0, StatusCode::CREATED);
    let (status, body) = send(&app, json_request("PUT", "/v1/connectors/Orders", &connector("pii-mask"))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("only in case"), "{body}");

    let mut foreign = connector("pii-mask");
    foreign["group_id"] = json!("payments-app");
    let (status, body) = send(&app, json_request("PUT", "/v1/connectors/g1", &foreign)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body["detail"].as_str().unwrap().contains("must start with \"turnpike-\""), "{body}");
    let mut shared = connector("pii-mask");
    shared["group_id"] = json!("turnpike-orders");
    let (status, body) = send(&app, json_request("PUT", "/v1/connectors/g2", &shared)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body["detail"].as_str().unwrap().contains("already used by connector \"orders\""), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_that_could_not_be_saved_is_saved_by_the_retry() {
    let dir = tempfile::tempdir().unwrap();
    let host = host_with(SandboxConfig::default(), Some(StateStore::open(dir.path()).unwrap()));
    let app = app(&host);
    send(&app, upload("pii-mask", "1.0.0", component("pii-mask"))).await;
    let connectors = dir.path().join("connectors");
    std::fs::remove_dir_all(&connectors).unwrap();
    std::fs::write(&connectors, b"not a directory").unwrap();
    let body = connector("pii-mask@1.0.0");
    assert_eq!(send(&app, json_request("PUT", "/v1/connectors/unsaved", &body)).await.0, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(send(&app, json_request("PUT", "/v1/connectors/unsaved", &body)).await.0, StatusCode::SERVICE_UNAVAILABLE, "the retry tries to save again");
    std::fs::remove_file(&connectors).unwrap();
    std::fs::create_dir(&connectors).unwrap();
    let (status, answer) = send(&app, json_request("PUT", "/v1/connectors/unsaved", &body)).await;
    assert_eq!((status, &answer["changed"]), (StatusCode::OK, &json!(false)));
    let saved = StateStore::open(dir.path()).unwrap().load().unwrap();
    assert_eq!(saved.connectors.iter().map(|(c, _)| c.name.to_string()).collect::<Vec<_>>(), ["unsaved"], "saved once the disk allowed it");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_saved_connector_above_tightened_maxima_is_restored_failed_with_the_problems() {
    let dir = tempfile::tempdir().unwrap();
    let store = StateStore::open(dir.path()).unwrap();
    let mut config = connector("pii-mask");
    config["name"] = json!("big-limits");
    config["limits"] = json!({ "batch_timeout_ms": 60_000 });
    let config: turnpike_config::ConnectorConfig = serde_json::from_value(config).unwrap();
    store.save_connector(&config, Lifecycle::Running).unwrap();
    let tight = SandboxConfig { max_batch_timeout_ms: turnpike_config::Ranged::constant(1_000), ..SandboxConfig::default() };
    let host = host_with(tight, Some(store));
    host.restore().await.unwrap();
    let status = host.status("big-limits").unwrap();
    assert_eq!(status.state, ConnectorState::Failed);
    let error = status.error.unwrap();
    assert_eq!(error.class, "config");
    assert!(error.message.contains("sandbox.max_batch_timeout_ms"), "{}", error.message);
    let (code, body) = send(&app(&host), Request::post("/v1/connectors/big-limits/resume").body(Body::empty()).unwrap()).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "it cannot be resumed as it is: {body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_policy_with_a_tiny_backoff_still_gives_up() {
    let host = host_with(SandboxConfig::default(), None);
    let mut events = host.events().subscribe();
    let mut body = connector("does-not-exist");
    body["restart"] = json!({ "base_ms": 1, "max_ms": 1, "jitter_percent": 0, "max_failures": 1000, "window_s": 1 });
    assert_eq!(send(&app(&host), json_request("PUT", "/v1/connectors/hotloop", &body)).await.0, StatusCode::CREATED);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, events.recv()).await {
            Ok(Ok(event)) if event.connector == "hotloop" && matches!(event.kind, EventKind::GaveUp { .. }) => break,
            Ok(_) => {}
            Err(_) => panic!("never gave up: {:?}", host.status("hotloop")),
        }
    }
    assert_eq!(host.status("hotloop").map(|s| s.state), Some(ConnectorState::Failed));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_host_refuses_connectors_past_its_capacity_and_prunes_deleted_code() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = SandboxConfig { max_connectors: turnpike_config::Ranged::constant(1), ..SandboxConfig::default() };
    let host = host_with(sandbox, Some(StateStore::open(dir.path()).unwrap()));
    let app = app(&host);
    assert_eq!(send(&app, upload("pii-mask", "1.0.0", component("pii-mask"))).await.0, StatusCode::CREATED);
    assert_eq!(send(&app, json_request("PUT", "/v1/connectors/one", &connector("pii-mask"))).await.0, StatusCode::CREATED);
    let (status, body) = send(&app, json_request("PUT", "/v1/connectors/two", &connector("pii-mask"))).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::SERVICE_UNAVAILABLE, Some("host_full")), "{body}");

    let compiled = |dir: &std::path::Path| std::fs::read_dir(dir.join("compiled")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(compiled(dir.path()), 1, "the upload left compiled code");
    assert_eq!(send(&app, Request::delete("/v1/connectors/one").body(Body::empty()).unwrap()).await.0, StatusCode::NO_CONTENT);
    assert_eq!(send(&app, Request::delete("/v1/plugins/pii-mask/1.0.0").body(Body::empty()).unwrap()).await.0, StatusCode::NO_CONTENT);
    assert_eq!(compiled(dir.path()), 0, "deleting the last version with those bytes removes their compiled code");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_half_sent_request_head_is_cut_off() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let host = host_with(SandboxConfig::default(), None);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let limits = turnpike_admin::ServeLimits { header_read_timeout: Duration::from_secs(1), max_connections: 4 };
    let stop = tokio_util::sync::CancellationToken::new();
    let server = tokio::spawn(turnpike_admin::serve(listener, app(&host), limits, None, stop.clone()));
    let mut slow = tokio::net::TcpStream::connect(address).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(20), slow.read_to_end(&mut rest)).await;
    assert!(closed.is_ok(), "the server still holds a connection whose head never finished");
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(20), server).await.expect("the server stops").unwrap();
}
