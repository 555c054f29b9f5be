//! Errors as HTTP responses: `{"error": code, "detail": what to fix}`, with a status that says
//! whose fault it is. Internal details are logged, never sent.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use turnpike_pipeline::{DryRunError, HostError, RegistryError};

/// An error response.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ApiError {
    #[serde(skip)]
    pub status: StatusCode,
    /// A short stable code.
    pub error: &'static str,
    /// What went wrong and what to do.
    pub detail: String,
    /// The configuration key concerned, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Every problem, when several were found at once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<turnpike_config::Problem>,
}

impl ApiError {
    pub fn new(status: StatusCode, error: &'static str, detail: impl Into<String>) -> Self {
        Self { status, error, detail: detail.into(), key: None, problems: Vec::new() }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self)).into_response()
    }
}

impl From<HostError> for ApiError {
    fn from(e: HostError) -> Self {
        let detail = e.to_string();
        match e {
            HostError::Invalid(problems) => Self { problems, ..Self::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_config", detail) },
            HostError::NotFound(_) => Self::new(StatusCode::NOT_FOUND, "connector_not_found", detail),
            HostError::State(_) => Self::new(StatusCode::CONFLICT, "wrong_state", detail),
            HostError::Internal(_) => {
                tracing::error!(error = %detail, "internal error behind an API call");
                Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the host failed internally; see the host log")
            }
            HostError::SwapFailed(_) => Self::new(StatusCode::UNPROCESSABLE_ENTITY, "swap_failed", detail),
            HostError::Plugin(RegistryError::Broken { class, .. }) => Self::new(StatusCode::UNPROCESSABLE_ENTITY, class.as_str(), detail),
            HostError::Plugin(_) => Self::new(StatusCode::NOT_FOUND, "plugin_not_found", detail),
            HostError::Load { source, .. } => Self::new(StatusCode::UNPROCESSABLE_ENTITY, source.class().as_str(), detail),
            HostError::VersionExists(_) => Self::new(StatusCode::CONFLICT, "version_exists", detail),
            HostError::NameTaken(_) => Self::new(StatusCode::CONFLICT, "name_taken", detail),
            HostError::InUse { .. } => Self::new(StatusCode::CONFLICT, "plugin_in_use", detail),
            HostError::DryRun(DryRunError::TooMany(_)) => Self::new(StatusCode::PAYLOAD_TOO_LARGE, "too_many_samples", detail),
            HostError::DryRun(DryRunError::Create(turnpike_pipeline::CreateError::Config { key, .. })) => {
                Self { key, ..Self::new(StatusCode::UNPROCESSABLE_ENTITY, "plugin_config", detail) }
            }
            HostError::DryRun(DryRunError::Create(turnpike_pipeline::CreateError::WrongKind { .. })) => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "wrong_kind", detail)
            }
            HostError::DryRun(DryRunError::Create(turnpike_pipeline::CreateError::Fault(f))) => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, f.class().as_str(), detail)
            }
            HostError::DryRun(DryRunError::Call(turnpike_pipeline::CallError::Fault(f))) => Self::new(StatusCode::UNPROCESSABLE_ENTITY, f.class().as_str(), detail),
            HostError::DryRun(DryRunError::Call(turnpike_pipeline::CallError::Plugin { .. })) => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "plugin_error", detail)
            }
            // Never seen today (a dry run's instances have an interrupt nobody fires); should
            // one be interrupted, the host was stopping it.
            HostError::DryRun(DryRunError::Create(turnpike_pipeline::CreateError::Stopped) | DryRunError::Call(turnpike_pipeline::CallError::Stopped)) => {
                Self::new(StatusCode::SERVICE_UNAVAILABLE, "stopping", detail)
            }
            HostError::NotSaved(_) => {
                tracing::error!(error = %detail, "state directory write failed behind an API call");
                Self::new(StatusCode::SERVICE_UNAVAILABLE, "state_unavailable", "nothing was changed: the state directory could not be written; see the host log, then retry")
            }
            HostError::Busy(_) => Self::new(StatusCode::TOO_MANY_REQUESTS, "busy", detail),
            HostError::Full(_) => Self::new(StatusCode::SERVICE_UNAVAILABLE, "host_full", detail),
            HostError::Conflict(_) => Self::new(StatusCode::CONFLICT, "conflict", detail),
            HostError::Cluster(_) => {
                tracing::error!(error = %detail, "cluster config log failed behind an API call");
                Self::new(StatusCode::SERVICE_UNAVAILABLE, "cluster_unavailable", detail)
            }
            HostError::Persist(_) => {
                tracing::error!(error = %detail, "state directory write failed behind an API call");
                Self::new(StatusCode::SERVICE_UNAVAILABLE, "state_unavailable", "the change is live but could not be saved; see the host log")
            }
            HostError::Kafka(turnpike_pipeline::KafkaError::NoSuchPartition { .. }) => Self::new(StatusCode::UNPROCESSABLE_ENTITY, "no_such_partition", detail),
            HostError::Kafka(_) => {
                tracing::error!(error = %detail, "kafka error behind an API call");
                Self::new(StatusCode::SERVICE_UNAVAILABLE, "kafka_unavailable", "the Kafka cluster could not be reached; see the host log")
            }
        }
    }
}
