//! Creating one of the host's own topics (the shared logs, the positions topic, the slots
//! topic) unless it exists. A refusal (no permission to create topics, say) is logged, not
//! returned: an operator may have made the topic, and reading it says so if they did not.

use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::RDKafkaErrorCode;

use crate::KafkaError;

/// How long the broker may take to create a topic.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Creates `topic` with `partitions` partitions and the topic `settings`, unless it exists;
/// `what` names it in the log ("the source slots topic"). An error means the request could
/// not be made at all.
pub(crate) async fn create_unless_exists(kafka: &[(String, String)], topic: &str, partitions: i32, settings: &[(&str, &str)], what: &str) -> Result<(), KafkaError> {
    let admin: AdminClient<DefaultClientContext> = crate::client_config::client_config(kafka).create().map_err(|source| KafkaError::Client { role: "admin client", source })?;
    let new = settings.iter().fold(NewTopic::new(topic, partitions, TopicReplication::Fixed(-1)), |new, (k, v)| new.set(k, v));
    let options = AdminOptions::new().operation_timeout(Some(TIMEOUT));
    let results = admin.create_topics([&new], &options).await.map_err(|source| KafkaError::CreateTopic { topic: topic.to_owned(), source })?;
    match results.into_iter().next() {
        Some(Ok(_)) => tracing::info!(%topic, partitions, "created {what}"),
        Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists))) | None => {}
        Some(Err((_, code))) => tracing::warn!(%topic, error = %code, "could not create {what}; using it as it is"),
    }
    Ok(())
}
