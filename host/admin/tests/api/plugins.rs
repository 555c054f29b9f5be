//! The plugin endpoints, in process (`tower::ServiceExt::oneshot`), with the real built-in
//! components embedded by turnpike-builtins.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use tower::ServiceExt;
use turnpike_pipeline::{Host, Runtime, SandboxConfig};

fn component(name: &str) -> Vec<u8> {
    turnpike_builtins::get(name).expect("built-in").wasm.to_vec()
}

fn app_with_cap(cap: usize) -> Router {
    let kafka = vec![("bootstrap.servers".into(), "127.0.0.1:1".into())];
    let host = Host::new(Runtime::new().expect("engine"), kafka, SandboxConfig::default());
    turnpike_admin::router_with_upload_cap(Arc::new(host), cap)
}

fn app() -> Router {
    app_with_cap(turnpike_admin::DEFAULT_MAX_UPLOAD_BYTES)
}

async fn send(app: &Router, request: Request<Body>) -> (StatusCode, serde_json::Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null))
}

fn upload(query: &str, content_type: &str, body: Vec<u8>) -> Request<Body> {
    Request::post(format!("/v1/plugins?{query}")).header("content-type", content_type).body(Body::from(body)).unwrap()
}

fn json(method: &str, uri: &str, body: serde_json::Value) -> Request<Body> {
    Request::builder().method(method).uri(uri).header("content-type", "application/json").body(Body::from(body.to_string())).unwrap()
}

#[tokio::test]
async fn upload_infers_the_kind_and_is_idempotent_per_version() {
    let app = app();
    let (status, body) = send(&app, upload("name=mask&version=1.0.0", "application/wasm", component("pii-mask"))).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["kind"], "transform");
    assert!(body["digest"].as_str().unwrap().starts_with("sha256:"));
    let (status, _) = send(&app, upload("name=mask&version=1.0.0", "application/wasm", component("pii-mask"))).await;
    assert_eq!(status, StatusCode::OK, "the same bytes again change nothing");
    let (status, body) = send(&app, upload("name=mask&version=1.0.0", "application/wasm", component("identity"))).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::CONFLICT, Some("version_exists")));
    let (status, body) = send(&app, Request::get("/v1/plugins/mask").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["plugins"][0]["version"], "1.0.0");
}

#[tokio::test]
async fn bad_uploads_get_4xx_with_what_to_fix() {
    let app = app_with_cap(1_000);
    let (status, body) = send(&app, upload("name=x&version=1", "text/plain", vec![0; 10])).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::UNSUPPORTED_MEDIA_TYPE, Some("unsupported_media_type")));
    let (status, _) = send(&app, upload("name=x&version=1", "application/wasm", vec![0; 2_000])).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let (status, body) = send(&app, upload("name=x&version=1", "application/wasm", b"not wasm at all".to_vec())).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_component")));
    let (status, body) = send(&app, upload("name=x&version=1", "application/wasm", b"\0asm\x01\0\0\0".to_vec())).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("core_module")));
    let (status, body) = send(&app, upload("name=Bad_Name&version=1", "application/wasm", vec![0; 8])).await;
    assert_eq!((status, body["key"].as_str()), (StatusCode::BAD_REQUEST, Some("name")));
    let (status, _) = send(&app, upload("name=x&version=latest", "application/wasm", vec![0; 8])).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = send(&app, upload("version=1", "application/wasm", vec![0; 8])).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "name is required");
}

#[tokio::test]
async fn a_dry_run_shows_outputs_and_per_record_errors() {
    let app = app();
    send(&app, upload("name=mask&version=1.0.0", "application/wasm", component("pii-mask"))).await;
    let request = json(
        "POST",
        "/v1/plugins/mask/latest/test",
        serde_json::json!({
            "config": { "fields": [{ "path": "email", "mode": "partial" }], "detectors": ["ssn"] },
            "records": [
                { "key": "c1", "value": "{\"email\":\"ada@example.com\",\"note\":\"ssn 123-45-6789\"}", "headers": { "source": "crm" } },
                { "value": "not json" }
            ]
        }),
    );
    let (status, body) = send(&app, request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["plugin"], "mask@1.0.0");
    assert_eq!(body["outputs"][0]["value"], r#"{"email":"***********.com","note":"ssn ***"}"#);
    assert_eq!(body["outputs"][0]["key"], "c1");
    assert_eq!(body["outputs"][0]["headers"]["source"], "crm");
    assert_eq!(body["errors"][0]["input"], 1);
    assert_eq!(body["errors"][0]["kind"], "invalid_record");
}

/// A step's predicate in a dry run: the plugin sees the samples it selects, the others come
/// out unchanged, in place; a bad predicate is refused at its key.
#[tokio::test]
async fn a_dry_run_applies_a_predicate_as_the_chain_does() {
    let app = app();
    send(&app, upload("name=mask&version=1.0.0", "application/wasm", component("pii-mask"))).await;
    let records = serde_json::json!([
        { "key": "a", "value": "{\"email\":\"a@x.io\"}", "headers": { "pii": "yes" } },
        { "key": "b", "value": "{\"email\":\"b@x.io\"}" },
        { "key": "c", "value": "not json", "headers": { "pii": "yes" } }
    ]);
    let body = serde_json::json!({ "config": { "fields": ["email"] }, "predicate": { "has_header": "pii" }, "records": records });
    let (status, body) = send(&app, json("POST", "/v1/plugins/mask/latest/test", body)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let outputs: Vec<(u64, &str)> = body["outputs"].as_array().unwrap().iter().map(|o| (o["input"].as_u64().unwrap(), o["value"].as_str().unwrap())).collect();
    assert_eq!(outputs, [(0, r#"{"email":"***"}"#), (1, r#"{"email":"b@x.io"}"#)], "b is not selected and passes; c is selected and fails");
    assert_eq!(body["errors"][0]["input"], 2, "the error names the sample in the whole request: {body}");
    let bad = serde_json::json!({ "config": { "fields": ["email"] }, "predicate": { "json_path": "$[" }, "records": [] });
    let (status, body) = send(&app, json("POST", "/v1/plugins/mask/latest/test", bad)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["problems"][0]["key"], "predicate.json_path", "{body}");
}

#[tokio::test]
async fn a_dry_run_with_a_bad_config_names_the_key() {
    let app = app();
    send(&app, upload("name=mask&version=1.0.0", "application/wasm", component("pii-mask"))).await;
    let request = json("POST", "/v1/plugins/mask/1.0.0/test", serde_json::json!({ "config": { "fields": ["a"], "mode": "x" }, "records": [] }));
    let (status, body) = send(&app, request).await;
    assert_eq!((status, body["error"].as_str(), body["key"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("plugin_config"), Some("mode")));
    let request = json("POST", "/v1/plugins/nope/1/test", serde_json::json!({ "records": [] }));
    assert_eq!(send(&app, request).await.0, StatusCode::NOT_FOUND);
    let request = json("POST", "/v1/plugins/mask/1.0.0/test", serde_json::json!({ "recods": [] }));
    assert_eq!(send(&app, request).await.0, StatusCode::UNPROCESSABLE_ENTITY, "a misspelt request field is refused");
}

#[tokio::test]
async fn deleting_versions() {
    let app = app();
    send(&app, upload("name=mask&version=1.0.0", "application/wasm", component("pii-mask"))).await;
    let delete = || Request::delete("/v1/plugins/mask/1.0.0").body(Body::empty()).unwrap();
    assert_eq!(send(&app, delete()).await.0, StatusCode::NO_CONTENT);
    assert_eq!(send(&app, delete()).await.0, StatusCode::NOT_FOUND);
    assert_eq!(send(&app, Request::get("/v1/plugins/mask").body(Body::empty()).unwrap()).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn upload_as_a_multipart_form() {
    let app = app();
    let boundary = "XyZ123";
    let mut body = Vec::new();
    for (field, value) in [("name", "formed"), ("version", "0.9.0")] {
        body.extend(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"\r\n\r\n{value}\r\n").as_bytes());
    }
    body.extend(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"component\"; filename=\"p.wasm\"\r\nContent-Type: application/wasm\r\n\r\n").as_bytes());
    body.extend(component("identity"));
    body.extend(format!("\r\n--{boundary}--\r\n").as_bytes());
    let request = Request::post("/v1/plugins").header("content-type", format!("multipart/form-data; boundary={boundary}")).body(Body::from(body)).unwrap();
    let (status, answer) = send(&app, request).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!((answer["name"].as_str(), answer["version"].as_str(), answer["kind"].as_str()), (Some("formed"), Some("0.9.0"), Some("transform")));

    let empty = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx\r\n--{boundary}--\r\n");
    let request = Request::post("/v1/plugins").header("content-type", format!("multipart/form-data; boundary={boundary}")).body(Body::from(empty)).unwrap();
    let (status, answer) = send(&app, request).await;
    assert_eq!((status, answer["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_multipart")), "{answer}");
}
