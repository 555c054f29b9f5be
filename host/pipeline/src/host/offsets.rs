//! A connector's consumer group offsets: where it stands, and moving them while it is
//! stopped.

use turnpike_config::ConnectorConfig;
use turnpike_kafka::{group_offsets, reset_group_offsets, PartitionOffsets, ResetTo};

use super::table::{transition, Action};
use super::{Host, HostError};

impl Host {
    /// The connector's consumer group and where it stands on every input partition.
    pub async fn offsets(&self, name: &str) -> Result<(String, Vec<PartitionOffsets>), HostError> {
        let config = self.with(name, |r| r.definition.config().clone())?;
        let (kafka, group, topics) = (self.shared.kafka.clone(), config.group_id(), topic_names(&config));
        let g = group.clone();
        let read = tokio::task::spawn_blocking(move || group_offsets(&kafka, &g, &topics)).await;
        Ok((group, read.map_err(|e| HostError::Internal(format!("offsets task: {e}")))??))
    }

    /// Moves a stopped connector's committed offsets; it reads from there when resumed.
    pub async fn reset_offsets(&self, name: &str, to: ResetTo) -> Result<Vec<(String, i32, i64)>, HostError> {
        let _one_at_a_time = self.lock_existing(name).await?;
        let config = self.with(name, |r| {
            transition(name, r.lifecycle, r.run.is_some(), Action::ResetOffsets)?;
            Ok::<_, HostError>(r.definition.config().clone())
        })??;
        let (kafka, group, topics) = (self.shared.kafka.clone(), config.group_id(), topic_names(&config));
        let done = tokio::task::spawn_blocking(move || reset_group_offsets(&kafka, &group, &topics, &to)).await;
        let targets = done.map_err(|e| HostError::Internal(format!("offsets task: {e}")))??;
        tracing::info!(connector = %name, ?targets, "offsets reset");
        Ok(targets)
    }
}

/// The topics the connector consumes (none for a source).
fn topic_names(config: &ConnectorConfig) -> Vec<String> {
    config.topics.iter().map(ToString::to_string).collect()
}
