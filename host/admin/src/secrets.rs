//! `/v1/secrets`: the host's secrets store, for connectors to reference as `${secret:NAME}`.
//! Values go in and never come out: `PUT` stores one, `GET` lists names (with when each was
//! stored and which connectors use it), `DELETE` removes one. No answer, error or log line
//! repeats a value: a body that does not parse is refused without quoting it.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use turnpike_config::{check_secret_value, SecretName, TeamName};
use turnpike_pipeline::Host;

use crate::auth::Principal;
use crate::error::ApiError;

/// The body of `PUT /v1/secrets/{name}`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SecretValue {
    /// The secret, as text: at least 4 characters.
    #[schema(min_length = 4)]
    value: String,
    /// The team whose connectors may use it. Default: the secret's team if it exists, else
    /// none (the operator's: only connectors without a team may use it).
    #[serde(default)]
    team: Option<TeamName>,
}

/// A secret as the API lists it: never its value.
#[derive(Serialize, utoipa::ToSchema)]
pub struct SecretView {
    name: String,
    /// When it was last stored (RFC 3339).
    updated_at: String,
    /// The team that owns it; absent: the operator's.
    #[serde(skip_serializing_if = "Option::is_none")]
    team: Option<String>,
    /// Connectors whose configuration references it.
    used_by: Vec<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SecretList {
    secrets: Vec<SecretView>,
}

fn secret_name(name: &str) -> Result<SecretName, ApiError> {
    SecretName::parse(name).map_err(|why| ApiError { key: Some("name".into()), ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_name", why) })
}

/// `PUT /v1/secrets/{name}` with `{"value": "…"}`: stores (creates or replaces) a secret.
/// Running connectors keep the value they started with and get the new one at their next start.
#[utoipa::path(put, path = "/v1/secrets/{name}", tag = "secrets", params(("name" = String, Path, description = "1 to 63 of a-z 0-9 . _ -, starting with a letter or digit")), request_body = SecretValue, responses((status = 204, description = "Stored"), (status = 400, body = ApiError), (status = 422, description = "A bad name, or an empty or too short value", body = ApiError)))]
pub async fn put(State(host): State<Arc<Host>>, Extension(caller): Extension<Principal>, Path(name): Path<String>, body: Bytes) -> Result<StatusCode, ApiError> {
    let name = secret_name(&name)?;
    // serde's messages can quote what they refused (an `integer 1234` given as the value).
    let body: SecretValue = serde_json::from_slice(&body).map_err(|e| {
        let status = if e.classify() == serde_json::error::Category::Data { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::BAD_REQUEST };
        ApiError::new(status, "invalid_secret", "send {\"value\": \"…\", \"team\"?: \"…\"}: a JSON object whose key `value` is the secret as a string, and `team` a team name")
    })?;
    check_secret_value(&body.value).map_err(|why| ApiError { key: Some("value".into()), ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_secret", why) })?;
    let team = caller.owner_for(body.team, || host.secret_team(&name).flatten())?;
    host.put_secret(&name, &body.value, team)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /v1/secrets`: every secret's name, when it was stored and who uses it; never a value.
#[utoipa::path(get, path = "/v1/secrets", tag = "secrets", responses((status = 200, body = SecretList)))]
pub async fn list(State(host): State<Arc<Host>>, Extension(caller): Extension<Principal>) -> Result<Json<SecretList>, ApiError> {
    let visible = |c: &String| caller.is_admin() || host.connector_team(c).is_some_and(|o| caller.sees(o.as_ref()));
    let secrets = host
        .secrets()?
        .into_iter()
        .filter(|s| caller.sees(s.team.as_ref()))
        .map(|s| SecretView {
            name: s.name,
            updated_at: humantime::format_rfc3339_seconds(s.updated_at).to_string(),
            team: s.team.map(String::from),
            used_by: s.used_by.into_iter().filter(|c| visible(c)).collect(),
        })
        .collect();
    Ok(Json(SecretList { secrets }))
}

/// `DELETE /v1/secrets/{name}`. Allowed while connectors reference it: they keep running, and
/// each fails at its next start (class `config`, naming the reference) until it is stored again.
#[utoipa::path(delete, path = "/v1/secrets/{name}", tag = "secrets", params(("name" = String, Path)), responses((status = 204), (status = 404, body = ApiError), (status = 422, body = ApiError)))]
pub async fn delete(State(host): State<Arc<Host>>, Path(name): Path<String>) -> Result<StatusCode, ApiError> {
    let name = secret_name(&name)?;
    if host.delete_secret(&name)? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::new(StatusCode::NOT_FOUND, "not_found", format!("no secret named {:?}; GET /v1/secrets lists them", name.as_str())))
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    const VALUE: &str = "tok-9b8c7d6e5f";

    fn app() -> axum::Router {
        let host = Host::new(turnpike_pipeline::Runtime::new().expect("engine"), Vec::new(), turnpike_pipeline::SandboxConfig::default());
        crate::router(Arc::new(host))
    }

    async fn call(app: &axum::Router, method: &str, uri: &str, body: &str) -> (StatusCode, String) {
        let request = Request::builder().method(method).uri(uri).header("content-type", "application/json").body(Body::from(body.to_owned())).unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        (status, String::from_utf8_lossy(&response.into_body().collect().await.unwrap().to_bytes()).into_owned())
    }

    #[tokio::test]
    async fn a_secret_goes_in_and_only_its_name_comes_out() {
        let app = app();
        let (status, _) = call(&app, "PUT", "/v1/secrets/api-token", &format!(r#"{{"value":"{VALUE}"}}"#)).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let (status, listed) = call(&app, "GET", "/v1/secrets", "").await;
        assert_eq!(status, StatusCode::OK);
        let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
        assert_eq!(listed["secrets"][0]["name"], "api-token", "{listed}");
        assert!(listed["secrets"][0]["updated_at"].is_string());
        assert!(!listed.to_string().contains(VALUE));

        for (uri, body, code) in [
            ("/v1/secrets/Bad_Name", format!(r#"{{"value":"{VALUE}"}}"#), "invalid_name"),
            ("/v1/secrets/ok", r#"{"value":""}"#.to_owned(), "invalid_secret"),
            ("/v1/secrets/ok", r#"{"value":1234567}"#.to_owned(), "invalid_secret"),
            ("/v1/secrets/ok", r#"{"value":"abcd","extra":"x"}"#.to_owned(), "invalid_secret"),
        ] {
            let (status, answer) = call(&app, "PUT", uri, &body).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{uri} {body}: {answer}");
            assert!(answer.contains(code), "{answer}");
            assert!(!answer.contains(VALUE) && !answer.contains("1234567"), "the value is never repeated: {answer}");
        }
        let (status, _) = call(&app, "PUT", "/v1/secrets/ok", "{not json").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);

        assert_eq!(call(&app, "DELETE", "/v1/secrets/api-token", "").await.0, StatusCode::NO_CONTENT);
        let (status, answer) = call(&app, "DELETE", "/v1/secrets/api-token", "").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(answer.contains("not_found"), "{answer}");
    }

    #[tokio::test]
    async fn a_secret_body_must_be_json() {
        let request = Request::put("/v1/secrets/x1").header("content-type", "text/plain").body(Body::from(format!(r#"{{"value":"{VALUE}"}}"#))).unwrap();
        let response = app().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    }
}
