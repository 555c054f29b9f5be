//! Source positions as a test sees them: what the host saved in its positions topic, and how
//! far a topic's partition 0 reaches. A kill test waits for a saved position before it kills,
//! so "resumed from a stored position" is about the host, not about how fast a source is.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{bail, Result};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};

use crate::{bootstrap, consume_until, unique};

/// Waits until `positions_topic` holds a saved position for every connector in `connectors`;
/// returns the last position read for each, as text.
pub async fn saved_positions(positions_topic: &str, connectors: &[&str], timeout: Duration) -> Result<HashMap<String, String>> {
    let all_saved = |got: &[(String, String)]| connectors.iter().all(|c| got.iter().any(|(k, _)| k == c));
    let saves = consume_until(positions_topic, timeout, all_saved).await?;
    let mut last = HashMap::new();
    for (connector, position) in saves {
        last.insert(connector, position);
    }
    let missing: Vec<&&str> = connectors.iter().filter(|c| !last.contains_key(**c)).collect();
    if !missing.is_empty() {
        bail!("no position saved in {positions_topic} within {timeout:?} for {missing:?} (saved: {last:?})");
    }
    Ok(last)
}

/// Every connector's last saved position in `positions_topic` (one partition), read to its
/// end as it is now: what a host starting now would resume from.
pub async fn all_saved_positions(positions_topic: &str, timeout: Duration) -> Result<HashMap<String, String>> {
    let end = usize::try_from(end_offset(positions_topic)?)?;
    let saves = consume_until(positions_topic, timeout, |got| got.len() >= end).await?;
    if saves.len() < end {
        bail!("read {} of the {end} saves in {positions_topic} within {timeout:?}", saves.len());
    }
    Ok(saves.into_iter().collect())
}

/// The end offset of partition 0 of `topic`: how many records it has had.
pub fn end_offset(topic: &str) -> Result<i64> {
    let consumer: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap()).set("group.id", unique("watermarks")).create()?;
    let (_, high) = consumer.fetch_watermarks(topic, 0, Duration::from_secs(10))?;
    Ok(high)
}
