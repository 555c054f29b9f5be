//! The cluster's topics as a caller may see them, and read-only samples of their latest
//! records: a team sees and samples only topics its patterns (`teams.<team>.topics`) allow,
//! the same rule its connectors' topics obey.

use turnpike_config::TeamName;
use turnpike_kafka::{list_topics, sample_topic, SampledRecord, TopicInfo};

use super::plugins::permit;
use super::{Host, HostError};

/// The largest value a sample returns per record, in bytes; longer ones are cut.
pub const SAMPLE_VALUE_CAP: usize = 16 * 1024;

/// Samples and topic listings running at once, per host. Each opens a Kafka client and holds
/// a blocking thread (shared with connectors' commits) for up to seconds, so a caller looping
/// on them gets `429 busy` instead of starving the connectors.
pub(super) const TOPIC_READS: usize = 2;

impl Host {
    /// The topics `team` may use (all of them for the operator, `None`), sorted by name.
    /// Internal topics (Kafka's `__…` ones and the host's source-positions topic) only when
    /// `internal` is asked for, and never for a team.
    pub async fn topics(&self, team: Option<&TeamName>, internal: bool) -> Result<Vec<TopicInfo>, HostError> {
        let _slot = permit(&self.topic_reads, "topic reads", "2 per host")?;
        // Internal topics hold every team's bookkeeping (group names, source positions).
        let internal = internal && team.is_none();
        let kafka = self.shared.kafka.clone();
        let listed = tokio::task::spawn_blocking(move || list_topics(&kafka)).await;
        let topics = listed.map_err(|e| HostError::Internal(format!("topics task: {e}")))??;
        Ok(topics.into_iter().filter(|t| (internal || !self.is_internal_topic(&t.name)) && self.team_may_use_topic(team, &t.name)).collect())
    }

    /// Up to `limit` of `topic`'s latest records, oldest first; `Ok(None)` when it does not
    /// exist or `team` may not read it (its patterns do not allow it, or it is internal: the
    /// same answer, so names do not leak).
    pub async fn sample_topic(&self, team: Option<&TeamName>, topic: &str, limit: usize) -> Result<Option<Vec<SampledRecord>>, HostError> {
        if !self.team_may_use_topic(team, topic) || (team.is_some() && self.is_internal_topic(topic)) {
            return Ok(None);
        }
        let _slot = permit(&self.topic_reads, "topic reads", "2 per host")?;
        let (kafka, name) = (self.shared.kafka.clone(), topic.to_owned());
        let read = tokio::task::spawn_blocking(move || sample_topic(&kafka, &name, limit, SAMPLE_VALUE_CAP)).await;
        Ok(read.map_err(|e| HostError::Internal(format!("sample task: {e}")))??)
    }

    /// Whether `topic` is Kafka's or the host's own bookkeeping rather than data.
    fn is_internal_topic(&self, topic: &str) -> bool {
        topic.starts_with("__") || topic == self.shared.positions_topic
    }

    fn team_may_use_topic(&self, team: Option<&TeamName>, topic: &str) -> bool {
        match team {
            None => true,
            Some(team) => self.teams().get(team).is_some_and(|policy| policy.allows_topic(topic)),
        }
    }
}
