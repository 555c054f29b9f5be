//! `/v1/connectors`: declarative create-or-replace, read, delete, and lifecycle.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use turnpike_config::{ConfigError, ConnectorConfig, ConnectorName, HostConfig};
#[allow(unused_imports, reason = "named in the OpenAPI annotations")]
use turnpike_pipeline::PartitionOffsets;
use turnpike_pipeline::{Applied, ConnectorStatus, Host, HostError};

use crate::auth::Principal;
use crate::error::ApiError;

/// A connector as the API shows it: its status, and its configuration with secrets hidden.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ConnectorView {
    #[serde(flatten)]
    status: ConnectorStatus,
    /// The configuration, values of secret-looking keys replaced by `***`.
    #[schema(value_type = Object)]
    config: serde_json::Value,
}

/// The connector as `caller` may see it; `None` for the editors' endpoints (changes and
/// lifecycle actions), whose callers may see everything about it.
fn view(host: &Host, name: &str, caller: Option<&Principal>) -> Result<ConnectorView, ApiError> {
    let (config, status) = host.connector(name).ok_or_else(|| not_found(name))?;
    let mut config = serde_json::to_value(&config).unwrap_or_default();
    crate::redact::redact(&mut config);
    let status = match caller {
        Some(caller) => for_caller(status, caller),
        None => status,
    };
    Ok(ConnectorView { status, config })
}

/// The status as `caller` may see it: the failing record's key and value are data (for a
/// source, data before any mask), shown to editors and admins only, like topic samples.
fn for_caller(mut status: ConnectorStatus, caller: &Principal) -> ConnectorStatus {
    if caller.role < turnpike_config::Role::Editor {
        if let Some(record) = status.error.as_mut().and_then(|e| e.record.as_mut()) {
            (record.key, record.value) = (None, None);
        }
    }
    status
}

pub fn not_found(name: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "connector_not_found", format!("no connector named {name:?}; GET /v1/connectors lists them"))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Only connectors in this state (`RUNNING`, `PAUSED`, `STOPPED`, `FAILED`, …).
    state: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ConnectorList {
    connectors: Vec<ConnectorStatus>,
}

/// `GET /v1/connectors[?state=S]`.
#[utoipa::path(get, path = "/v1/connectors", tag = "connectors", params(ListParams), responses((status = 200, body = ConnectorList)))]
pub async fn list(State(host): State<Arc<Host>>, Extension(caller): Extension<Principal>, Query(params): Query<ListParams>) -> Json<ConnectorList> {
    let connectors = host
        .statuses()
        .into_iter()
        .filter(|s| caller.is_admin() || host.connector_team(&s.name).is_some_and(|owner| caller.sees(owner.as_ref())))
        .filter(|s| params.state.as_deref().is_none_or(|want| serde_json::to_value(s.state).is_ok_and(|v| v.as_str() == Some(want))))
        .map(|s| for_caller(s, &caller))
        .collect();
    Json(ConnectorList { connectors })
}

/// `GET /v1/connectors/{name}`: status and configuration in one answer.
#[utoipa::path(get, path = "/v1/connectors/{name}", tag = "connectors", params(("name" = ConnectorName, Path, description = "Connector name")), responses((status = 200, body = ConnectorView), (status = 404, body = ApiError)))]
pub async fn get(State(host): State<Arc<Host>>, Extension(caller): Extension<Principal>, Path(name): Path<String>) -> Result<Json<ConnectorView>, ApiError> {
    Ok(Json(view(&host, &name, Some(&caller))?))
}

fn config_error(e: ConfigError) -> ApiError {
    match e {
        ConfigError::Syntax { message, .. } => ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_config", message),
        ConfigError::Invalid { problems, .. } => {
            let detail = problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
            ApiError { problems, ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_config", detail) }
        }
    }
}

/// `PUT /v1/connectors/{name}` with the connector as JSON (`name` may be left out). `201`
/// when created; `200` otherwise, with `"changed": false` when the same body changed nothing,
/// and `"restarted": false` when only the plugin chain changed and the running connector
/// switched to it between two batches. A chain that cannot start is `422` (`swap_failed`);
/// the connector keeps running what it ran.
#[utoipa::path(put, path = "/v1/connectors/{name}", tag = "connectors", params(("name" = ConnectorName, Path, description = "Connector name")), request_body(content = ConnectorConfig, description = "The connector; `name` may be left out"), responses((status = 201, description = "Created", body = ConnectorView), (status = 200, description = "Unchanged, restarted, or plugins swapped (see `changed`, `restarted`)", body = ConnectorView), (status = 400, body = ApiError), (status = 422, description = "Invalid configuration, or a plugin chain that cannot start (`swap_failed`)", body = ApiError)))]
pub async fn put(State(host): State<Arc<Host>>, Extension(caller): Extension<Principal>, Path(name): Path<String>, body: Bytes) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    let config = parse_body(&host, &caller, &name, &body)?;
    // Refused here, every problem at once, rather than left to fail at start: a reference to a
    // secret not stored (or a variable or file the host lacks) is a mistake of this request.
    host.check_connector(&config)?;
    let applied = detached(&host, move |h| async move { h.put_connector(config).await }).await?;
    let status = if applied == Applied::Created { StatusCode::CREATED } else { StatusCode::OK };
    let mut answer = serde_json::to_value(view(&host, &name, None)?).unwrap_or_default();
    answer["changed"] = serde_json::Value::Bool(applied != Applied::Unchanged);
    answer["restarted"] = serde_json::Value::Bool(matches!(applied, Applied::Created | Applied::Updated));
    Ok((status, Json(answer)))
}

/// Parses a connector body as `PUT` and `validate` take it (the host checks the rules), owned
/// by the caller's team (an admin may name one; a body without `team` keeps the stored
/// connector's). A redaction marker where `GET` showed one stands for the stored secret, so
/// a configuration read, edited and sent back keeps its real credentials; a marker with
/// nothing stored behind it is refused.
fn parse_body(host: &Host, caller: &Principal, name: &str, body: &[u8]) -> Result<ConnectorConfig, ApiError> {
    let mut config = parse_document(host, name, body)?;
    let asked = config.team.take();
    config.team = caller.owner_for(asked, || host.connector_team(name).flatten())?;
    Ok(config)
}

fn parse_document(host: &Host, name: &str, body: &[u8]) -> Result<ConnectorConfig, ApiError> {
    let mut document: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid_json", format!("the body is not JSON: {e}")))?;
    let object = document
        .as_object_mut()
        .ok_or_else(|| ApiError::new(StatusCode::BAD_REQUEST, "invalid_json", "send the connector as a JSON object"))?;
    match object.get("name").and_then(|n| n.as_str()) {
        Some(n) if n != name => {
            return Err(ApiError { key: Some("name".into()), ..ApiError::new(StatusCode::BAD_REQUEST, "name_mismatch", format!("the body names {n:?} but the URL {name:?}")) });
        }
        _ => {
            object.insert("name".into(), serde_json::Value::String(name.to_owned()));
        }
    }
    if let Some((stored, _)) = host.connector(name) {
        let stored = serde_json::to_value(&stored).unwrap_or_default();
        // A stored secret is only kept for the destinations it was given for: a body that
        // changes where data goes (URLs, the HTTP grant, the plugins) must send it again, or
        // anyone who may PUT could send the stored token to a host of their choosing.
        if same_destinations(&document, &stored) {
            crate::redact::keep_stored_secrets(&mut document, &stored);
        }
    }
    let left = crate::redact::markers_left(&document);
    if !left.is_empty() {
        let problems: Vec<turnpike_config::Problem> = left
            .iter()
            .map(|key| turnpike_config::Problem::new(format!("connector.{key}"), format!("{:?} stands for a hidden secret, but none is stored here: send the real value", crate::redact::MARKER)))
            .collect();
        let detail = problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
        return Err(ApiError { problems, ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_config", detail) });
    }
    let text = serde_json::to_vec(&document).unwrap_or_default();
    // Rules are checked by the host, with its own, so every problem is reported at once.
    HostConfig::parse_connector_json(&text, "request body").map_err(config_error)
}

/// Whether two connector documents send data to the same places: the same HTTP grant, the
/// same plugins, and the same URLs (compared as `GET` shows them).
fn same_destinations(incoming: &serde_json::Value, stored: &serde_json::Value) -> bool {
    fn urls(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) if s.contains("://") => out.push(s.clone()),
            serde_json::Value::Array(items) => items.iter().for_each(|i| urls(i, out)),
            serde_json::Value::Object(map) => map.values().for_each(|i| urls(i, out)),
            _ => {}
        }
    }
    fn plugins(v: &serde_json::Value) -> Vec<serde_json::Value> {
        let steps = v["transforms"].as_array().cloned().unwrap_or_default();
        let mut refs: Vec<_> = steps.iter().map(|t| t["plugin"].clone()).collect();
        refs.extend([v["source"]["plugin"].clone(), v["sink"]["plugin"].clone()]);
        refs
    }
    let mut shown = stored.clone();
    crate::redact::redact(&mut shown);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    urls(incoming, &mut a);
    urls(&shown, &mut b);
    a.sort();
    b.sort();
    incoming.get("http") == stored.get("http") && plugins(incoming) == plugins(stored) && a == b
}

/// `POST /v1/connectors/{name}/validate` with a connector as for `PUT`: checks everything
/// (rules, operator maxima, plugins, each plugin's own configuration) and creates nothing.
#[utoipa::path(post, path = "/v1/connectors/{name}/validate", tag = "connectors", params(("name" = ConnectorName, Path, description = "Connector name")), request_body = ConnectorConfig, responses((status = 200, description = "`{\"valid\": true, \"plugins\": [\"name@version\", …]}`"), (status = 400, body = ApiError), (status = 422, description = "Every problem, each with its key", body = ApiError)))]
pub async fn validate(State(host): State<Arc<Host>>, Extension(caller): Extension<Principal>, Path(name): Path<String>, body: Bytes) -> Result<Json<serde_json::Value>, ApiError> {
    let config = parse_body(&host, &caller, &name, &body)?;
    let plugins = host.validate_connector(&config).await?;
    Ok(Json(serde_json::json!({ "valid": true, "plugins": plugins })))
}

/// `DELETE /v1/connectors/{name}`.
#[utoipa::path(delete, path = "/v1/connectors/{name}", tag = "connectors", params(("name" = ConnectorName, Path, description = "Connector name")), responses((status = 204), (status = 404, body = ApiError)))]
pub async fn delete(State(host): State<Arc<Host>>, Path(name): Path<String>) -> Result<StatusCode, ApiError> {
    let n = name.clone();
    detached(&host, move |h| async move { h.delete_connector(&n).await }).await.map_err(|e| lifecycle_error(e, &name))?;
    Ok(StatusCode::NO_CONTENT)
}

fn lifecycle_error(e: HostError, name: &str) -> ApiError {
    match e {
        HostError::NotFound(_) => not_found(name),
        HostError::State(detail) => ApiError::new(StatusCode::CONFLICT, "wrong_state", detail),
        other => other.into(),
    }
}

/// Runs a host operation as a task of its own: a client that disconnects, or a request that
/// times out, must not cut a lifecycle change in half (a connector halted but not started
/// again, a swap published but never withdrawn). The answer is lost then; the change is not.
pub(crate) async fn detached<T, F>(host: &Arc<Host>, op: impl FnOnce(Arc<Host>) -> F) -> Result<T, HostError>
where
    F: std::future::Future<Output = Result<T, HostError>> + Send + 'static,
    T: Send + 'static,
{
    match tokio::spawn(op(host.clone())).await {
        Ok(done) => done,
        Err(e) => Err(HostError::Internal(format!("the operation ended abnormally: {e}"))),
    }
}

async fn lifecycle(host: &Arc<Host>, name: &str, action: &'static str) -> Result<(StatusCode, Json<ConnectorView>), ApiError> {
    let n = name.to_owned();
    let done = detached(host, move |h| async move {
        match action {
            "pause" => h.pause(&n).await,
            "resume" => h.resume(&n).await,
            _ => h.stop(&n).await,
        }
    })
    .await;
    done.map_err(|e| lifecycle_error(e, name))?;
    Ok((StatusCode::ACCEPTED, Json(view(host, name, None)?)))
}

/// `POST /v1/connectors/{name}/pause`: stop consuming, keep instances and clients.
#[utoipa::path(post, path = "/v1/connectors/{name}/pause", tag = "connectors", params(("name" = ConnectorName, Path, description = "Connector name")), responses((status = 202, body = ConnectorView), (status = 404, body = ApiError), (status = 409, body = ApiError)))]
pub async fn pause(State(host): State<Arc<Host>>, Path(name): Path<String>) -> Result<(StatusCode, Json<ConnectorView>), ApiError> {
    lifecycle(&host, &name, "pause").await
}

/// `POST /v1/connectors/{name}/resume`: resume a paused connector or start a stopped one.
#[utoipa::path(post, path = "/v1/connectors/{name}/resume", tag = "connectors", params(("name" = ConnectorName, Path, description = "Connector name")), responses((status = 202, body = ConnectorView), (status = 404, body = ApiError)))]
pub async fn resume(State(host): State<Arc<Host>>, Path(name): Path<String>) -> Result<(StatusCode, Json<ConnectorView>), ApiError> {
    lifecycle(&host, &name, "resume").await
}

/// `POST /v1/connectors/{name}/stop`: release everything; configuration and offsets stay.
#[utoipa::path(post, path = "/v1/connectors/{name}/stop", tag = "connectors", params(("name" = ConnectorName, Path, description = "Connector name")), responses((status = 202, body = ConnectorView), (status = 404, body = ApiError)))]
pub async fn stop(State(host): State<Arc<Host>>, Path(name): Path<String>) -> Result<(StatusCode, Json<ConnectorView>), ApiError> {
    lifecycle(&host, &name, "stop").await
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct OffsetsView {
    connector: String,
    group_id: String,
    partitions: Vec<turnpike_pipeline::PartitionOffsets>,
}

/// `GET /v1/connectors/{name}/offsets`: committed offsets, partition ranges and lag.
#[utoipa::path(get, path = "/v1/connectors/{name}/offsets", tag = "connectors", params(("name" = ConnectorName, Path, description = "Connector name")), responses((status = 200, body = OffsetsView), (status = 404, body = ApiError)))]
pub async fn offsets(State(host): State<Arc<Host>>, Path(name): Path<String>) -> Result<Json<OffsetsView>, ApiError> {
    let (group_id, partitions) = host.offsets(&name).await.map_err(|e| lifecycle_error(e, &name))?;
    Ok(Json(OffsetsView { connector: name, group_id, partitions }))
}

/// An explicit offset in a reset request.
#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PartitionOffset {
    topic: String,
    partition: i32,
    offset: i64,
}

/// Where to reset to: exactly one of the three.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResetRequest {
    /// `earliest` or `latest`.
    to: Option<String>,
    /// Milliseconds since the epoch: the first record at or after it.
    timestamp: Option<i64>,
    /// Explicit offsets.
    offsets: Option<Vec<PartitionOffset>>,
}

/// `POST /v1/connectors/{name}/offsets/reset`, only while `STOPPED`.
#[utoipa::path(post, path = "/v1/connectors/{name}/offsets/reset", tag = "connectors", params(("name" = ConnectorName, Path, description = "Connector name")), request_body = ResetRequest, responses((status = 200, description = "The offsets now committed"), (status = 400, body = ApiError), (status = 404, body = ApiError), (status = 409, description = "Not stopped", body = ApiError), (status = 422, body = ApiError)))]
pub async fn reset_offsets(
    State(host): State<Arc<Host>>,
    Path(name): Path<String>,
    Json(request): Json<ResetRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    use turnpike_pipeline::ResetTo;
    let bad = |detail: &str| ApiError::new(StatusCode::BAD_REQUEST, "invalid_reset", detail.to_owned());
    let to = match (request.to.as_deref(), request.timestamp, request.offsets) {
        (Some("earliest"), None, None) => ResetTo::Earliest,
        (Some("latest"), None, None) => ResetTo::Latest,
        (Some(other), None, None) => return Err(bad(&format!("`to` must be `earliest` or `latest`, not {other:?}"))),
        (None, Some(ms), None) => ResetTo::Timestamp(ms),
        (None, None, Some(list)) if !list.is_empty() => ResetTo::Explicit(list.into_iter().map(|p| (p.topic, p.partition, p.offset)).collect()),
        _ => return Err(bad("give exactly one of: `to` (`earliest` or `latest`), `timestamp` (ms), `offsets` (a non-empty list)")),
    };
    let n = name.clone();
    let targets = detached(&host, move |h| async move { h.reset_offsets(&n, to).await }).await.map_err(|e| lifecycle_error(e, &name))?;
    let partitions: Vec<PartitionOffset> = targets.into_iter().map(|(topic, partition, offset)| PartitionOffset { topic, partition, offset }).collect();
    Ok(Json(serde_json::json!({ "connector": name, "partitions": partitions })))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct RestartParams {
    #[serde(default)]
    only_failed: bool,
}

/// `POST /v1/connectors/{name}/restart[?only_failed=true]`: restart now with a fresh failure
/// budget (also after the supervisor gave up).
#[utoipa::path(post, path = "/v1/connectors/{name}/restart", tag = "connectors", params(("name" = ConnectorName, Path, description = "Connector name"), RestartParams), responses((status = 202, description = "`{\"connector\": …, \"restarted\": bool}`"), (status = 404, body = ApiError)))]
pub async fn restart(
    State(host): State<Arc<Host>>,
    Path(name): Path<String>,
    Query(params): Query<RestartParams>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    let (n, only_failed) = (name.clone(), params.only_failed);
    let restarted = detached(&host, move |h| async move { h.restart(&n, only_failed).await }).await.map_err(|e| lifecycle_error(e, &name))?;
    Ok((StatusCode::ACCEPTED, Json(serde_json::json!({ "connector": name, "restarted": restarted }))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_lost_lifecycle_task_is_an_internal_error_not_a_wrong_state() {
        let runtime = turnpike_pipeline::Runtime::new().expect("engine");
        let host = Arc::new(Host::new(runtime, Vec::new(), turnpike_pipeline::SandboxConfig::default()));
        let broken = |h: Arc<Host>| async move {
            if Arc::strong_count(&h) > 0 {
                panic!("the task broke");
            }
            Ok::<(), HostError>(())
        };
        let lost = detached(&host, broken).await.expect_err("the task panicked");
        assert!(matches!(lost, HostError::Internal(_)), "{lost:?}");
        let answer = lifecycle_error(lost, "c");
        assert_eq!((answer.status, answer.error), (StatusCode::INTERNAL_SERVER_ERROR, "internal"));
        let wrong = lifecycle_error(HostError::State("resume it instead".into()), "c");
        assert_eq!(wrong.status, StatusCode::CONFLICT);
    }
}
