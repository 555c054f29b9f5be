//! `/v1/tokens`: admins make, list and revoke API tokens. A token is shown once, in the answer
//! that makes it; the host keeps only its hash. The first admin token is made on the host
//! (`turnpike token create -c FILE`), never by an unauthenticated request.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use turnpike_config::{Ranged, Role, TeamName};
use turnpike_pipeline::Host;
use turnpike_state::{TokenInfo, TokenStore};

use crate::auth::Auth;
use crate::error::ApiError;

/// The body of `POST /v1/tokens`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    /// `viewer`, `editor` or `admin`.
    role: Role,
    /// The team it acts for; required for viewers and editors.
    #[serde(default)]
    team: Option<TeamName>,
    /// Seconds until it expires, 1 to 3,153,600,000 (100 years); default: never.
    #[serde(default)]
    expires_in_s: Option<Ranged<1, 3_153_600_000>>,
    /// What it is for (shown in lists), at most 200 characters.
    #[serde(default)]
    #[schema(max_length = 200)]
    description: Option<String>,
}

/// A token as listed — by the API and by the CLI on the host: never the token or its hash.
#[derive(Serialize, utoipa::ToSchema)]
pub struct TokenView {
    id: String,
    team: Option<String>,
    role: Role,
    /// RFC 3339.
    created_at: String,
    expires_at: Option<String>,
    last_used_at: Option<String>,
    revoked_at: Option<String>,
    description: Option<String>,
}

/// RFC 3339 in whole seconds. `humantime` cannot write years past 9999 (only a hand-edited
/// token file has them): those read as such instead of panicking the answer.
fn rfc3339(t: SystemTime) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    match write!(out, "{}", humantime::format_rfc3339_seconds(t)) {
        Ok(()) => out,
        Err(_) => "after 9999".to_owned(),
    }
}

impl From<&TokenInfo> for TokenView {
    fn from(t: &TokenInfo) -> Self {
        Self {
            id: t.id.clone(),
            team: t.team.as_ref().map(|t| t.to_string()),
            role: t.role,
            created_at: rfc3339(t.created_at),
            expires_at: t.expires_at.map(rfc3339),
            last_used_at: t.last_used_at.map(rfc3339),
            revoked_at: t.revoked_at.map(rfc3339),
            description: t.description.clone(),
        }
    }
}

/// The answer to `POST /v1/tokens`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CreatedToken {
    /// The token: shown this once, kept by the host only as a hash.
    token: String,
    info: TokenView,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct TokenList {
    tokens: Vec<TokenView>,
}

fn store(auth: &Auth) -> Result<&TokenStore, ApiError> {
    auth.store().ok_or_else(|| ApiError::new(StatusCode::CONFLICT, "auth_off", "this host has no authentication: set `admin.auth: true` in its config"))
}

fn unsaved(e: turnpike_state::StateError) -> ApiError {
    tracing::error!(error = %e, "the token store could not be written");
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the host could not save the token store; see its log")
}

/// `POST /v1/tokens`: makes a token (admins).
#[utoipa::path(post, path = "/v1/tokens", tag = "tokens", request_body = NewToken, responses((status = 201, body = CreatedToken), (status = 401, body = ApiError), (status = 403, body = ApiError), (status = 422, body = ApiError)))]
pub async fn create(State(host): State<Arc<Host>>, Extension(auth): Extension<Auth>, body: Bytes) -> Result<(StatusCode, Json<CreatedToken>), ApiError> {
    let store = store(&auth)?;
    let asked: NewToken = serde_json::from_slice(&body).map_err(|e| {
        let status = if e.classify() == serde_json::error::Category::Data { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::BAD_REQUEST };
        ApiError::new(status, "invalid_request", format!("send {{\"role\": \"viewer\" | \"editor\" | \"admin\", \"team\"?, \"expires_in_s\"?, \"description\"?}}: {}", turnpike_config::in_users_words(&e.to_string())))
    })?;
    if asked.role != Role::Admin && asked.team.is_none() {
        return Err(ApiError { key: Some("team".into()), ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", format!("a {} token acts for a team: give `team`", asked.role)) });
    }
    if let Some(team) = asked.team.as_ref().filter(|t| !host.teams().contains_key(*t)) {
        let known: Vec<&str> = host.teams().keys().map(TeamName::as_str).collect();
        return Err(ApiError {
            key: Some("team".into()),
            ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", format!("team {:?} is not defined in the host config's `teams` (defined: {})", team.as_str(), known.join(", ")))
        });
    }
    if asked.description.as_ref().is_some_and(|d| d.chars().count() > 200) {
        return Err(ApiError { key: Some("description".into()), ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", "description: at most 200 characters") });
    }
    // In range, so the sum cannot overflow (a year past 9999 could not even be shown).
    let expires_at = asked.expires_in_s.map(|s| SystemTime::now() + Duration::from_secs(s.get()));
    let (info, token) = store.create(asked.team, asked.role, expires_at, asked.description).map_err(unsaved)?;
    tracing::info!(token = %info.id, role = %info.role, team = ?info.team, "token created");
    Ok((StatusCode::CREATED, Json(CreatedToken { token, info: TokenView::from(&info) })))
}

/// `GET /v1/tokens`: every token, revoked and expired ones included (admins).
#[utoipa::path(get, path = "/v1/tokens", tag = "tokens", responses((status = 200, body = TokenList), (status = 401, body = ApiError), (status = 403, body = ApiError)))]
pub async fn list(Extension(auth): Extension<Auth>) -> Result<Json<TokenList>, ApiError> {
    let tokens = store(&auth)?.list().map_err(unsaved)?;
    Ok(Json(TokenList { tokens: tokens.iter().map(TokenView::from).collect() }))
}

/// `DELETE /v1/tokens/{id}`: revokes a token at once (admins).
#[utoipa::path(delete, path = "/v1/tokens/{id}", tag = "tokens", params(("id" = String, Path)), responses((status = 204, description = "Revoked"), (status = 401, body = ApiError), (status = 403, body = ApiError), (status = 404, body = ApiError)))]
pub async fn revoke(Extension(auth): Extension<Auth>, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    if store(&auth)?.revoke(&id, SystemTime::now()).map_err(unsaved)? {
        tracing::info!(token = %id, "token revoked");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::new(StatusCode::NOT_FOUND, "token_not_found", format!("no active token with id {id:?}; GET /v1/tokens lists them")))
    }
}
