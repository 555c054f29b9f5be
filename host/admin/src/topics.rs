//! `/v1/topics`: the cluster's topics and a read-only sample of a topic's latest records, for
//! the console's "mask a topic" wizard. A team sees and samples only the topics its patterns
//! allow; another team's topic answers 404 like a missing one.

use std::sync::Arc;

use axum::extract::{Extension, Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use turnpike_config::{TeamName, TopicName};
use turnpike_pipeline::{Host, SampledRecord, TopicInfo};

use crate::auth::Principal;
use crate::error::ApiError;

/// The most records one sample returns.
const MAX_SAMPLE: usize = 100;

#[derive(Deserialize, utoipa::IntoParams)]
pub struct TopicsParams {
    /// Also list internal topics (Kafka's `__…` and the host's source positions).
    #[serde(default)]
    internal: bool,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct TopicList {
    topics: Vec<TopicInfo>,
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct SampleParams {
    /// How many of the latest records, 1 to 100 (default 10).
    #[param(minimum = 1, maximum = 100)]
    limit: Option<usize>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct TopicSample {
    topic: String,
    /// The latest records across partitions, oldest first; each value cut at 16 KiB.
    records: Vec<SampledRecord>,
}

/// Whose topics the caller sees: every topic for an admin (`Ok(None)`), its team's for others;
/// `Err` for a non-admin of no team, who sees none.
fn scope(caller: &Principal) -> Result<Option<&TeamName>, ()> {
    if caller.is_admin() {
        return Ok(None);
    }
    caller.team.as_ref().map(Some).ok_or(())
}

/// `GET /v1/topics`: the topics the caller may use, by name.
#[utoipa::path(get, path = "/v1/topics", tag = "topics", params(TopicsParams), responses((status = 200, body = TopicList), (status = 429, description = "Too many topic reads at once; try again", body = ApiError), (status = 503, description = "Kafka did not answer", body = ApiError)))]
pub async fn list(State(host): State<Arc<Host>>, Extension(caller): Extension<Principal>, Query(params): Query<TopicsParams>) -> Result<Json<TopicList>, ApiError> {
    let Ok(team) = scope(&caller) else { return Ok(Json(TopicList { topics: Vec::new() })) };
    let topics = host.topics(team, params.internal).await?;
    Ok(Json(TopicList { topics }))
}

/// `GET /v1/topics/{topic}/sample?limit=N`: the latest N records, read without a consumer
/// group (nothing is committed, no group is created). Editors and admins: it shows records.
#[utoipa::path(get, path = "/v1/topics/{topic}/sample", tag = "topics", params(("topic" = String, Path, description = "Topic name"), SampleParams), responses((status = 200, body = TopicSample), (status = 404, body = ApiError), (status = 422, body = ApiError), (status = 429, description = "Too many topic reads at once; try again", body = ApiError), (status = 503, description = "Kafka did not answer", body = ApiError)))]
pub async fn sample(State(host): State<Arc<Host>>, Extension(caller): Extension<Principal>, Path(topic): Path<String>, Query(params): Query<SampleParams>) -> Result<Json<TopicSample>, ApiError> {
    let limit = params.limit.unwrap_or(10);
    if !(1..=MAX_SAMPLE).contains(&limit) {
        return Err(ApiError { key: Some("limit".into()), ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_limit", format!("limit: {limit} is not between 1 and {MAX_SAMPLE}")) });
    }
    let not_found = || ApiError::new(StatusCode::NOT_FOUND, "topic_not_found", format!("no topic {topic:?}"));
    // Kafka's own rule for names, checked before any client sees one (librdkafka cannot
    // handle a name past 512 bytes).
    let legal = TopicName::parse(&topic).is_ok();
    let Ok(team) = scope(&caller) else { return Err(not_found()) };
    if !legal {
        return Err(not_found());
    }
    match host.sample_topic(team, &topic, limit).await? {
        Some(records) => Ok(Json(TopicSample { topic, records })),
        None => Err(not_found()),
    }
}
