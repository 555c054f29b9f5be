//! Who is calling, and whether they may: the one layer in front of every handler that turns a
//! bearer token into a [`Principal`], applies the role each operation needs
//! ([`access::rule`]), answers another team's connector or plugin as if it did not exist,
//! and records every state-changing request as an audit event.
//!
//! With `admin.auth` off every caller is the operator (an admin of no team) and nothing is
//! audited: the API then listens on loopback only (`turnpike_config::check_listen`).

pub mod access;

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use turnpike_config::{PluginName, Role, TeamName};
use turnpike_pipeline::{EventKind, Host};
use turnpike_state::{AuthFailure, TokenStore};

use self::access::{Need, Resource};
use crate::error::ApiError;

/// The caller of a request, as handlers see it (an axum `Extension`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The token's id; `None` for the operator of a host without auth.
    pub token_id: Option<String>,
    /// The token's team; `None` for the operator and for admins of no team.
    pub team: Option<TeamName>,
    /// What the token may do.
    pub role: Role,
}

impl Principal {
    /// The caller of a host without auth: an admin of no team.
    pub fn operator() -> Self {
        Self { token_id: None, team: None, role: Role::Admin }
    }

    /// Whether the caller acts for every team.
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }

    /// Whether the caller may see a connector or secret owned by `owner` (`None`: the
    /// operator's, seen by admins only).
    pub fn sees(&self, owner: Option<&TeamName>) -> bool {
        self.is_admin() || (owner.is_some() && owner == self.team.as_ref())
    }

    /// Whether the caller may see a plugin owned by `owner` (`None`: shared with every team).
    pub fn sees_plugin(&self, owner: Option<&TeamName>) -> bool {
        owner.is_none() || self.sees(owner)
    }

    /// The team a resource this caller creates or replaces belongs to: its own; for an admin
    /// the one it names, else the resource's `existing` team (`None`: the operator's).
    pub fn owner_for(&self, asked: Option<TeamName>, existing: impl FnOnce() -> Option<TeamName>) -> Result<Option<TeamName>, ApiError> {
        if self.is_admin() {
            return Ok(asked.or_else(existing));
        }
        match asked {
            Some(asked) if Some(&asked) != self.team.as_ref() => Err(ApiError {
                key: Some("team".into()),
                ..ApiError::new(
                    StatusCode::FORBIDDEN,
                    "forbidden",
                    format!("{} of team {} cannot act for team {:?}; leave `team` out", self.role_phrase(), self.shown_team(), asked.as_str()),
                )
            }),
            _ => Ok(self.team.clone()),
        }
    }

    /// "a viewer", "an editor", "an admin".
    fn role_phrase(&self) -> String {
        let article = if self.role == Role::Viewer { "a" } else { "an" };
        format!("{article} {}", self.role)
    }

    fn shown_team(&self) -> String {
        self.team.as_ref().map_or_else(|| "(none)".to_owned(), |t| format!("{:?}", t.as_str()))
    }
}

/// How the API authenticates: off, or tokens from a store.
#[derive(Clone, Debug)]
pub struct Auth {
    tokens: Option<TokenStore>,
}

impl Auth {
    /// Every caller is the operator.
    pub fn off() -> Self {
        Self { tokens: None }
    }

    /// Callers present tokens from `store`.
    pub fn tokens(store: TokenStore) -> Self {
        Self { tokens: Some(store) }
    }

    /// The token store, when auth is on.
    pub fn store(&self) -> Option<&TokenStore> {
        self.tokens.as_ref()
    }
}

/// What the layer needs: the host (owners of connectors and plugins, the event hub) and how
/// to authenticate.
pub struct AuthLayer {
    pub host: Arc<Host>,
    pub auth: Auth,
}

/// The middleware.
pub async fn authorize(State(layer): State<Arc<AuthLayer>>, mut request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    request.extensions_mut().insert(layer.auth.clone());
    let Some(store) = layer.auth.store() else {
        request.extensions_mut().insert(Principal::operator());
        return next.run(request).await;
    };
    let Some((need, resource)) = access::rule(&method, &path) else {
        return next.run(request).await;
    };
    let mutating = !matches!(method, Method::GET | Method::HEAD | Method::OPTIONS);
    if need == Need::Public {
        return next.run(request).await;
    }
    let principal = match authenticate(store, request.headers().get(header::AUTHORIZATION)) {
        Ok(principal) => principal,
        Err(refusal) => return refused(&layer.host, None, mutating, (&method, &path, &resource), refusal),
    };
    if let Err(refusal) = permit(&layer.host, &principal, need, &resource) {
        return refused(&layer.host, Some(&principal), mutating, (&method, &path, &resource), refusal);
    }
    request.extensions_mut().insert(principal.clone());
    let response = next.run(request).await;
    if mutating {
        audit(&layer.host, Some(&principal), &method, &path, &resource, response.status());
    }
    response
}

/// The answer to a refused request, audited when it would have changed something.
fn refused(host: &Host, principal: Option<&Principal>, mutating: bool, (method, path, resource): (&Method, &str, &Resource), refusal: ApiError) -> Response {
    if mutating {
        audit(host, principal, method, path, resource, refusal.status);
    }
    let mut response = refusal.into_response();
    if response.status() == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// The principal behind an `Authorization: Bearer …` header.
fn authenticate(store: &TokenStore, header: Option<&HeaderValue>) -> Result<Principal, ApiError> {
    let unauthorized = |code, detail: &str| ApiError::new(StatusCode::UNAUTHORIZED, code, detail);
    let Some(value) = header.and_then(|v| v.to_str().ok()) else {
        return Err(unauthorized("unauthorized", "send a token as `Authorization: Bearer <token>`; an admin makes one with `turnpike token create`"));
    };
    // The scheme is case-insensitive (RFC 9110 §11.1).
    let presented = value.split_once(' ').filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer")).map(|(_, token)| token);
    let Some(presented) = presented else {
        return Err(unauthorized("unauthorized", "the Authorization header must be `Bearer <token>`"));
    };
    match store.authenticate(presented.trim(), SystemTime::now()) {
        Ok(info) => Ok(Principal { token_id: Some(info.id), team: info.team, role: info.role }),
        Err(AuthFailure::Expired) => Err(unauthorized("token_expired", "this token has expired; ask an admin for a new one")),
        Err(AuthFailure::Revoked) => Err(unauthorized("token_revoked", "this token was revoked; ask an admin for a new one")),
        Err(AuthFailure::Unavailable(e)) => {
            tracing::error!(error = %e, "the token store cannot be read");
            Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "auth_unavailable", "the host cannot check tokens now; see its log"))
        }
        Err(AuthFailure::Malformed | AuthFailure::Unknown) => Err(unauthorized("unauthorized", "this token is not valid; an admin makes one with `turnpike token create`")),
    }
}

/// Whether `principal` may call an operation that needs `need` on `resource`. Another team's
/// connector or plugin is answered exactly as a missing one, so names do not leak.
fn permit(host: &Host, principal: &Principal, need: Need, resource: &Resource) -> Result<(), ApiError> {
    let refuse = Err;
    if let Need::Role(role) = need {
        if principal.role < role {
            return refuse(ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!("this needs the {role} role; this token is {} of team {}", principal.role_phrase(), principal.shown_team()),
            ));
        }
    }
    if principal.is_admin() {
        return Ok(());
    }
    match resource {
        Resource::None => Ok(()),
        Resource::Connector(name) => match host.connector_team(name) {
            Some(owner) if !principal.sees(owner.as_ref()) => refuse(crate::connectors::not_found(name)),
            _ => Ok(()),
        },
        Resource::Plugin { name, writes } => {
            let Ok(parsed) = PluginName::parse(name.as_str()) else { return Ok(()) };
            match host.plugin_team(&parsed) {
                Some(owner) if !principal.sees_plugin(owner.as_ref()) => refuse(crate::plugins::not_found(&parsed)),
                Some(None) if *writes => refuse(ApiError::new(StatusCode::FORBIDDEN, "forbidden", format!("plugin {name:?} is shared by every team and read-only; only an admin may change it"))),
                _ => Ok(()),
            }
        }
    }
}

/// Records a state-changing request: who, what, and how it ended.
fn audit(host: &Host, principal: Option<&Principal>, method: &Method, path: &str, resource: &Resource, status: StatusCode) {
    let connector = match resource {
        Resource::Connector(name) => name.as_str(),
        _ => "",
    };
    let kind = EventKind::Audit {
        token: principal.and_then(|p| p.token_id.clone()),
        team: principal.and_then(|p| p.team.as_ref().map(|t| t.to_string())),
        role: principal.map(|p| p.role.as_str().to_owned()),
        action: format!("{method} {path}"),
        status: status.as_u16(),
    };
    host.events().emit(connector, kind);
}
