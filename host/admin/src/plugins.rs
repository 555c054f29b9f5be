//! `/v1/plugins`: upload, list, show, delete, and dry-run plugins.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::Json;
use serde::{Deserialize, Serialize};
use turnpike_config::{PluginName, PluginRef, TeamName};
use turnpike_pipeline::{DryRunResult, Host, PluginInfo, SampleRecord, MAX_SAMPLE_RECORDS};

use crate::auth::Principal;
use crate::error::ApiError;

/// A component's bytes, as the API document describes an upload body: a binary string (so
/// generated clients and fuzzers can send one).
struct ComponentBytes;

impl utoipa::PartialSchema for ComponentBytes {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new().schema_type(Type::String).format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary))).description(Some("A WebAssembly component")).into()
    }
}

impl utoipa::ToSchema for ComponentBytes {}

/// Default cap on an uploaded component; larger bodies get `413`.
pub const DEFAULT_MAX_UPLOAD_BYTES: usize = 50 << 20;

/// A plugin version, as the API shows it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct PluginVersion {
    name: String,
    version: String,
    /// Inferred from the world the component implements.
    kind: &'static str,
    /// `sha256:<hex>` of the component.
    digest: String,
    size: usize,
    /// When it was uploaded (RFC 3339).
    uploaded_at: String,
    /// Connectors using this version.
    used_by: Vec<String>,
}

fn describe(host: &Host, caller: &Principal, p: &PluginInfo) -> PluginVersion {
    PluginVersion {
        name: p.name.to_string(),
        version: p.version.clone(),
        kind: p.plugin.kind().as_str(),
        digest: format!("sha256:{}", p.plugin.digest()),
        size: p.plugin.size(),
        uploaded_at: humantime::format_rfc3339_seconds(p.uploaded_at).to_string(),
        // Only the connectors the caller may see: a shared plugin is used by every team.
        used_by: host.plugin_users(&p.name, &p.version).into_iter().filter(|c| caller.is_admin() || host.connector_team(c).is_some_and(|o| caller.sees(o.as_ref()))).collect(),
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct PluginList {
    plugins: Vec<PluginVersion>,
}

/// `GET /v1/plugins`: every plugin version.
#[utoipa::path(get, path = "/v1/plugins", tag = "plugins", responses((status = 200, body = PluginList)))]
pub async fn list(State(host): State<Arc<Host>>, Extension(caller): Extension<Principal>) -> Json<PluginList> {
    let plugins = host.registry().list().iter().filter(|p| caller.sees_plugin(p.team.as_ref())).map(|p| describe(&host, &caller, p)).collect();
    Json(PluginList { plugins })
}

fn plugin_name(name: &str) -> Result<PluginName, ApiError> {
    PluginName::parse(name).map_err(|e| ApiError { key: Some("name".into()), ..ApiError::new(StatusCode::BAD_REQUEST, "invalid_name", e.to_string()) })
}

/// `GET /v1/plugins/{name}`: the versions of one plugin.
#[utoipa::path(get, path = "/v1/plugins/{name}", tag = "plugins", params(("name" = PluginName, Path)), responses((status = 200, body = PluginList), (status = 404, body = ApiError)))]
pub async fn show(State(host): State<Arc<Host>>, Extension(caller): Extension<Principal>, Path(name): Path<String>) -> Result<Json<PluginList>, ApiError> {
    let name = plugin_name(&name)?;
    let plugins: Vec<_> = host.registry().list().iter().filter(|p| p.name == name && caller.sees_plugin(p.team.as_ref())).map(|p| describe(&host, &caller, p)).collect();
    if plugins.is_empty() {
        return Err(not_found(&name));
    }
    Ok(Json(PluginList { plugins }))
}

/// The answer for a plugin that does not exist, or that belongs to another team.
pub(crate) fn not_found(name: &PluginName) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "plugin_not_found", format!("no plugin named {:?}; GET /v1/plugins lists them", name.as_str()))
}

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct UploadParams {
    name: Option<String>,
    version: Option<String>,
    /// The team that owns the plugin (admins only; others upload for their own team).
    /// Default: the caller's team, or for an admin the plugin's existing team (none: shared).
    team: Option<TeamName>,
}

/// The parts of a `multipart/form-data` upload: `name` and `version` text fields (or the
/// query) and a `component` file.
async fn from_multipart(content_type: &str, body: Bytes, params: &mut UploadParams) -> Result<Bytes, ApiError> {
    let bad = |detail: String| ApiError::new(StatusCode::BAD_REQUEST, "invalid_multipart", detail);
    let boundary = multer::parse_boundary(content_type).map_err(|e| bad(format!("bad multipart Content-Type: {e}")))?;
    let stream = futures::stream::once(async move { Ok::<Bytes, std::convert::Infallible>(body) });
    let mut form = multer::Multipart::new(stream, boundary);
    let mut component = None;
    while let Some(field) = form.next_field().await.map_err(|e| bad(format!("unreadable multipart body: {e}")))? {
        let field_name = field.name().unwrap_or_default().to_owned();
        let data = field.bytes().await.map_err(|e| bad(format!("unreadable field {field_name:?}: {e}")))?;
        match field_name.as_str() {
            "component" => component = Some(data),
            "name" => params.name = Some(String::from_utf8_lossy(&data).into_owned()),
            "version" => params.version = Some(String::from_utf8_lossy(&data).into_owned()),
            other => return Err(bad(format!("unknown field {other:?}: send `name`, `version` and a `component` file"))),
        }
    }
    component.ok_or_else(|| bad("no `component` file field in the form".into()))
}

/// `POST /v1/plugins?name=N&version=V` with the component as the body
/// (`Content-Type: application/wasm` or `application/octet-stream`), or as a
/// `multipart/form-data` form with `name`, `version` and a `component` file.
#[utoipa::path(post, path = "/v1/plugins", tag = "plugins", params(UploadParams), request_body(description = "The component: the raw body (application/wasm or application/octet-stream), or a multipart form with name, version and component", content((ComponentBytes = "application/wasm"), (ComponentBytes = "application/octet-stream"))), responses((status = 201, body = PluginVersion), (status = 200, description = "The same bytes again", body = PluginVersion), (status = 400, body = ApiError), (status = 409, body = ApiError), (status = 413), (status = 415, body = ApiError), (status = 422, body = ApiError)))]
pub async fn upload(
    State(host): State<Arc<Host>>,
    Extension(caller): Extension<Principal>,
    Query(mut params): Query<UploadParams>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(StatusCode, Json<PluginVersion>), ApiError> {
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let body = if content_type.starts_with("multipart/form-data") {
        from_multipart(content_type, body, &mut params).await?
    } else if matches!(content_type, "application/wasm" | "application/octet-stream") {
        body
    } else {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            format!("send the component as the body with Content-Type application/wasm, or as a multipart form (got {content_type:?})"),
        ));
    };
    let missing = |key: &str| ApiError { key: Some(key.into()), ..ApiError::new(StatusCode::BAD_REQUEST, "missing_field", format!("give the plugin's `{key}` (query or form field)")) };
    let asked_team = params.team.take();
    let (name, version) = (params.name.ok_or_else(|| missing("name"))?, params.version.ok_or_else(|| missing("version"))?);
    let params = (name, version);
    let name = plugin_name(&params.0)?;
    let reference = PluginRef::try_from(format!("{}@{}", params.0, params.1))
        .map_err(|e| ApiError { key: Some("version".into()), ..ApiError::new(StatusCode::BAD_REQUEST, "invalid_version", e.to_string()) })?;
    if reference.version.is_none() {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "invalid_version", "`latest` is a reference, not a version: name the version"));
    }
    let team = caller.owner_for(asked_team, || host.plugin_team(&name).flatten())?;
    let (version, bytes) = (params.1, body.to_vec());
    let (info, created) = crate::connectors::detached(&host, move |h| async move { h.upload_plugin(name, version, bytes, team).await }).await?;
    let status = if created { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(describe(&host, &caller, &info))))
}

/// `DELETE /v1/plugins/{name}/{version}`: `409` while a connector uses it.
#[utoipa::path(delete, path = "/v1/plugins/{name}/{version}", tag = "plugins", params(("name" = PluginName, Path), ("version" = String, Path)), responses((status = 204), (status = 404, body = ApiError), (status = 409, body = ApiError)))]
pub async fn delete(State(host): State<Arc<Host>>, Path((name, version)): Path<(String, String)>) -> Result<StatusCode, ApiError> {
    let name = plugin_name(&name)?;
    crate::connectors::detached(&host, move |h| async move { h.delete_plugin(&name, &version).await }).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A dry-run request.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DryRunRequest {
    /// The plugin's configuration, as in a connector.
    #[serde(default = "empty_object")]
    #[schema(value_type = Object)]
    config: serde_json::Value,
    /// Sample records, at most 1,000.
    #[serde(deserialize_with = "at_most_samples")]
    records: Vec<SampleRecord>,
    /// The step's predicate, as in a connector: the plugin runs on the samples it selects,
    /// the others come out unchanged. Samples are read from the topic `sample`.
    #[serde(default)]
    predicate: Option<turnpike_config::Predicate>,
}

/// Said when a dry run brings more samples than it may; the parse stops there, so a huge
/// body costs no more than the records it may have.
const TOO_MANY_SAMPLES: &str = "too many sample records";

fn at_most_samples<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<SampleRecord>, D::Error> {
    struct Bounded;
    impl<'de> serde::de::Visitor<'de> for Bounded {
        type Value = Vec<SampleRecord>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "a list of at most {MAX_SAMPLE_RECORDS} sample records")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut records = Vec::new();
            while let Some(record) = seq.next_element()? {
                if records.len() == MAX_SAMPLE_RECORDS {
                    return Err(serde::de::Error::custom(TOO_MANY_SAMPLES));
                }
                records.push(record);
            }
            Ok(records)
        }
    }
    d.deserialize_seq(Bounded)
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(serde_json::Map::new())
}

/// `POST /v1/plugins/{name}/{version}/test`: runs a transform on sample records (version may
/// be `latest`) and returns its outputs and per-record errors. Touches no topic.
#[utoipa::path(post, path = "/v1/plugins/{name}/{version}/test", tag = "plugins", params(("name" = PluginName, Path), ("version" = String, Path, description = "A version, or `latest`")), request_body = DryRunRequest, responses((status = 200, body = DryRunResult), (status = 404, body = ApiError), (status = 413, body = ApiError), (status = 422, body = ApiError)))]
pub async fn dry_run(
    State(host): State<Arc<Host>>,
    Extension(caller): Extension<Principal>,
    Path((name, version)): Path<(String, String)>,
    body: Bytes,
) -> Result<Json<DryRunResult>, ApiError> {
    let request: DryRunRequest = serde_json::from_slice(&body).map_err(|e| {
        if e.to_string().contains(TOO_MANY_SAMPLES) {
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_many_samples", format!("more than {MAX_SAMPLE_RECORDS} sample records given; send at most {MAX_SAMPLE_RECORDS}"))
        } else if e.classify() == serde_json::error::Category::Data {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", format!("the body is not a dry-run request: {e}"))
        } else {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_json", format!("the body is not JSON: {e}"))
        }
    })?;
    let reference = PluginRef::try_from(format!("{name}@{version}"))
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid_plugin", e.to_string()))?;
    // A dry run resolves secret references: a team's resolves only its own.
    let team = if caller.is_admin() { None } else { caller.team.clone() };
    // No outgoing HTTP from a dry run through the API: a preview must not reach other systems.
    Ok(Json(host.dry_run(&reference, &request.config, request.predicate.as_ref(), &request.records, team.as_ref(), turnpike_pipeline::HttpGrant::default()).await?))
}
