//! The only crate that talks to axum: Turnpike's admin HTTP API.
//!
//! JSON everywhere; errors are `{"error": ..., "detail": ...}` with a status that says whose
//! fault it is.

pub mod auth;
mod connectors;
mod console;
mod error;
mod events;
mod guard;
mod metrics;
mod openapi;
mod panics;
mod plugins;
mod redact;
mod secrets;
mod serve;
mod tls;
mod tokens;
mod topics;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use turnpike_pipeline::Host;

use crate::error::ApiError;
pub use crate::auth::{Auth, Principal};
pub use crate::console::assets_size as console_assets_size;
pub use crate::tokens::TokenView;
pub use crate::guard::Guard;
pub use crate::plugins::DEFAULT_MAX_UPLOAD_BYTES;
pub use crate::serve::{serve, ServeLimits};
pub use crate::tls::{load_tls, TlsError};
pub use turnpike_config::AdminConfig;

/// The API's routes, over a running host, with the default settings (loopback on port 8080,
/// no authentication).
pub fn router(host: Arc<Host>) -> Router {
    router_with(host, &AdminConfig::default())
}

/// The API's routes with the default settings but another upload cap (for tests).
pub fn router_with_upload_cap(host: Arc<Host>, max_upload_bytes: usize) -> Router {
    routes(host, &AdminConfig::default(), max_upload_bytes, Auth::off())
}

/// The API's routes as `config` says: which hosts and origins it answers, and its body caps.
/// With `config.auth` this takes tokens from an empty in-memory store, which no one can
/// pass: use [`router_secured`] to give the host's.
pub fn router_with(host: Arc<Host>, config: &AdminConfig) -> Router {
    let auth = if config.auth { Auth::tokens(turnpike_state::TokenStore::in_memory()) } else { Auth::off() };
    routes(host, config, (config.limits.max_upload_mib.get() as usize) << 20, auth)
}

/// The API's routes as `config` says, authenticating callers with `tokens` when
/// `config.auth` is on.
pub fn router_secured(host: Arc<Host>, config: &AdminConfig, tokens: turnpike_state::TokenStore) -> Router {
    let auth = if config.auth { Auth::tokens(tokens) } else { Auth::off() };
    routes(host, config, (config.limits.max_upload_mib.get() as usize) << 20, auth)
}

/// The connection bounds for serving the API as `config` says.
pub fn serve_limits(config: &AdminConfig) -> ServeLimits {
    ServeLimits {
        header_read_timeout: std::time::Duration::from_secs(config.limits.header_timeout_s.get()),
        max_connections: config.limits.max_connections.get() as usize,
    }
}

fn routes(host: Arc<Host>, config: &AdminConfig, max_upload_bytes: usize, auth: Auth) -> Router {
    with_layers(endpoints(max_upload_bytes), host, config, auth)
}

/// Every path the API answers, and what answers it.
fn endpoints(max_upload_bytes: usize) -> Router<Arc<Host>> {
    // JSON bodies are small; only a component upload may be large (a route's own limit
    // overrides the router-wide one).
    let upload = post(plugins::upload).layer(DefaultBodyLimit::max(max_upload_bytes));
    Router::new()
        .route("/", get(console::index))
        .route("/ui/{file}", get(console::file))
        .route("/healthz", get(healthz))
        .route("/v1/cluster", get(cluster))
        .route("/v1/openapi.json", get(openapi::document))
        .route("/metrics", get(metrics::metrics))
        .route("/v1/events", get(events::stream))
        .route("/v1/connectors", get(connectors::list))
        .route("/v1/connectors/{name}", get(connectors::get).put(connectors::put).delete(connectors::delete))
        .route("/v1/connectors/{name}/validate", post(connectors::validate))
        .route("/v1/connectors/{name}/pause", post(connectors::pause))
        .route("/v1/connectors/{name}/resume", post(connectors::resume))
        .route("/v1/connectors/{name}/stop", post(connectors::stop))
        .route("/v1/connectors/{name}/restart", post(connectors::restart))
        .route("/v1/connectors/{name}/offsets", get(connectors::offsets))
        .route("/v1/connectors/{name}/offsets/reset", post(connectors::reset_offsets))
        .route("/v1/plugins", get(plugins::list).merge(upload))
        .route("/v1/plugins/{name}", get(plugins::show))
        .route("/v1/plugins/{name}/{version}", delete(plugins::delete))
        .route("/v1/plugins/{name}/{version}/test", post(plugins::dry_run))
        .route("/v1/secrets", get(secrets::list))
        .route("/v1/secrets/{name}", axum::routing::put(secrets::put).delete(secrets::delete))
        .route("/v1/tokens", get(tokens::list).post(tokens::create))
        .route("/v1/tokens/{id}", delete(tokens::revoke))
        .route("/v1/topics", get(topics::list))
        .route("/v1/topics/{topic}/sample", get(topics::sample))
        .fallback(not_found)
}

/// What every request to `endpoints` passes through, from the outside in: the panic catcher,
/// the host and origin guard, authentication, the body cap.
fn with_layers(endpoints: Router<Arc<Host>>, host: Arc<Host>, config: &AdminConfig, auth: Auth) -> Router {
    let guard = Arc::new(Guard::new(config));
    let layer = Arc::new(auth::AuthLayer { host: host.clone(), auth });
    endpoints
        .layer(DefaultBodyLimit::max(guard.max_json_body()))
        // Inside the guard: a request from a foreign host or origin is refused before its
        // token is even looked at.
        .layer(axum::middleware::from_fn_with_state(layer, auth::authorize))
        .layer(axum::middleware::from_fn_with_state(guard, guard::guard))
        // Outermost: a panic anywhere below still gets an answer.
        .layer(panics::layer())
        .with_state(host)
}

#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, description = "`{\"status\": \"ok\"}`")))]
async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "ok" }))
}

/// This host's cluster: its id and every host with a heartbeat.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ClusterView {
    /// This host's id; null on a host of its own (no `cluster:` in its config).
    host: Option<String>,
    /// Every host of the cluster that has reported (this one included); empty on a host of
    /// its own.
    hosts: Vec<turnpike_pipeline::Member>,
    /// The consumer group protocol this host's connectors use (`consumer`, KIP-848, when the
    /// broker serves it and `kafka:` sets nothing only the classic one has), and why; null
    /// when the host was not started from a config file (the demo).
    group_protocol: Option<turnpike_pipeline::GroupProtocol>,
}

/// `GET /v1/cluster`: the hosts of this host's cluster, alive or not.
#[utoipa::path(get, path = "/v1/cluster", tag = "operations", responses((status = 200, body = ClusterView)))]
async fn cluster(axum::extract::State(host): axum::extract::State<Arc<Host>>) -> Json<ClusterView> {
    let (id, hosts) = host.cluster_members().map_or((None, Vec::new()), |(id, hosts)| (Some(id), hosts));
    Json(ClusterView { host: id, hosts, group_protocol: host.group_protocol().cloned() })
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint; see /v1/openapi.json for every one")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    fn app() -> Router {
        let runtime = turnpike_runtime_for_tests();
        let kafka = vec![("bootstrap.servers".into(), "127.0.0.1:1".into())];
        router(Arc::new(Host::new(runtime, kafka, turnpike_pipeline::SandboxConfig::default())))
    }

    fn turnpike_runtime_for_tests() -> turnpike_pipeline::Runtime {
        turnpike_pipeline::Runtime::new().expect("engine")
    }

    async fn get_json(app: Router, uri: &str) -> (StatusCode, serde_json::Value) {
        let response = app.oneshot(Request::get(uri).body(Body::empty()).unwrap()).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&body).expect("JSON body"))
    }

    /// Through the layers every route has: a handler's panic (a host bug) is answered, 500
    /// with the error JSON, not a dropped connection.
    #[tokio::test]
    async fn a_panicking_handler_is_answered_500_with_the_error_json() {
        async fn broken() -> &'static str {
            panic!("index out of bounds")
        }
        let host = Arc::new(Host::new(turnpike_runtime_for_tests(), Vec::new(), turnpike_pipeline::SandboxConfig::default()));
        let app = with_layers(Router::new().route("/broken", get(broken)), host, &AdminConfig::default(), Auth::off());
        let (status, json) = get_json(app, "/broken").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(json["error"], "internal", "{json}");
        assert!(json["detail"].as_str().is_some_and(|d| d.contains("see its log")), "{json}");
    }

    #[tokio::test]
    async fn healthz_answers_ok() {
        let (status, body) = get_json(app(), "/healthz").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["status"], "ok");
    }

    #[tokio::test]
    async fn connectors_list_is_json_and_empty_at_first() {
        let (status, body) = get_json(app(), "/v1/connectors").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["connectors"], serde_json::json!([]));
    }

    #[tokio::test]
    async fn restarting_an_unknown_connector_is_404() {
        let request = Request::post("/v1/connectors/ghost/restart").body(Body::empty()).unwrap();
        let response = app().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn metrics_are_prometheus_text() {
        let response = app().oneshot(Request::get("/metrics").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(response.headers()[axum::http::header::CONTENT_TYPE].to_str().unwrap().starts_with("text/plain"));
    }

    #[tokio::test]
    async fn events_are_a_server_sent_event_stream() {
        let response = app().oneshot(Request::get("/v1/events").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[axum::http::header::CONTENT_TYPE], "text/event-stream");
    }

    #[tokio::test]
    async fn the_openapi_document_covers_every_route() {
        let (status, doc) = get_json(app(), "/v1/openapi.json").await;
        assert_eq!(status, StatusCode::OK);
        assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
        let routes = [
            ("get", "/healthz"),
            ("get", "/metrics"),
            ("get", "/v1/openapi.json"),
            ("get", "/v1/events"),
            ("get", "/v1/connectors"),
            ("get", "/v1/connectors/{name}"),
            ("put", "/v1/connectors/{name}"),
            ("delete", "/v1/connectors/{name}"),
            ("post", "/v1/connectors/{name}/validate"),
            ("post", "/v1/connectors/{name}/pause"),
            ("post", "/v1/connectors/{name}/resume"),
            ("post", "/v1/connectors/{name}/stop"),
            ("post", "/v1/connectors/{name}/restart"),
            ("get", "/v1/connectors/{name}/offsets"),
            ("post", "/v1/connectors/{name}/offsets/reset"),
            ("get", "/v1/plugins"),
            ("post", "/v1/plugins"),
            ("get", "/v1/plugins/{name}"),
            ("delete", "/v1/plugins/{name}/{version}"),
            ("post", "/v1/plugins/{name}/{version}/test"),
            ("get", "/v1/secrets"),
            ("put", "/v1/secrets/{name}"),
            ("delete", "/v1/secrets/{name}"),
            ("get", "/v1/tokens"),
            ("post", "/v1/tokens"),
            ("delete", "/v1/tokens/{id}"),
            ("get", "/v1/topics"),
            ("get", "/v1/topics/{topic}/sample"),
            ("get", "/v1/cluster"),
            ("get", "/"),
            ("get", "/ui/{file}"),
        ];
        let documented: usize = doc["paths"].as_object().unwrap().values().map(|p| p.as_object().unwrap().len()).sum();
        assert_eq!(documented, routes.len(), "documented operations: {}", doc["paths"]);
        for (method, path) in routes {
            assert!(doc["paths"][path][method].is_object(), "{method} {path} is not documented");
        }
        // Schemas come from the types: ranges and enums included.
        let schemas = &doc["components"]["schemas"];
        assert_eq!(schemas["Integer_1_to_100000"]["minimum"], 1, "{schemas}");
        assert_eq!(schemas["Integer_1_to_100000"]["maximum"], 100000);
        assert!(schemas["ConnectorConfig"]["properties"]["transforms"].is_object());
        assert_eq!(schemas["ErrorTolerance"]["enum"], serde_json::json!(["none", "all"]));
        for kind in ["source", "sink", "http"] {
            assert!(schemas["ConnectorConfig"]["properties"][kind].is_object(), "{kind} in {}", schemas["ConnectorConfig"]);
        }
        assert!(schemas["SourceStep"]["properties"]["poll_interval_ms"].is_object(), "{schemas}");
        assert!(schemas["SinkStep"]["properties"]["flush_interval_ms"].is_object(), "{schemas}");
        assert!(schemas["HttpAccess"]["properties"]["allow"].is_object(), "{schemas}");
        assert_eq!(schemas["ConnectorKind"]["enum"], serde_json::json!(["transform", "source", "sink"]));
    }

    #[tokio::test]
    async fn unknown_connector_and_endpoint_are_404_with_a_detail() {
        let (status, body) = get_json(app(), "/v1/connectors/nope").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["error"], "connector_not_found");
        assert!(body["detail"].as_str().unwrap().contains("nope"));
        let (status, body) = get_json(app(), "/v2/whatever").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["error"], "not_found");
    }
}
