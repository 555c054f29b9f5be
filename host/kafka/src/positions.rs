//! Source positions, kept in a compacted Kafka topic (as Kafka Connect keeps source offsets):
//! one record per save, keyed by connector name; the last one for a key is the position.
//! Reading and creating are blocking calls: run them on a blocking thread.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer as _};
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::message::Message as _;
use rdkafka::{Offset, TopicPartitionList};

use crate::health::{is_connection_error, HealthContext};
use crate::{BrokerHealth, KafkaError};

/// The positions topic when the host configuration names none.
pub const DEFAULT_POSITIONS_TOPIC: &str = "turnpike-source-positions";

/// How long reading or creating the positions topic may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Creates the positions topic, compacted with one partition (so saves stay in order), if it
/// does not exist. A cluster that refuses (no permission) is not fatal: the topic may exist
/// already or be auto-created, so this only warns.
pub async fn ensure_positions_topic(settings: &[(String, String)], topic: &str) {
    let what = "the source positions topic (if it is missing, create it compacted, with one partition)";
    let created = crate::create_topic::create_unless_exists(settings, topic, 1, &[("cleanup.policy", "compact")], what).await;
    if let Err(e) = created {
        tracing::warn!(%topic, error = %e, "could not create the source positions topic; create it compacted yourself");
    }
}

/// The last position saved for `connector`, reading the topic to its end. `None` when the
/// connector never saved one (or the topic does not exist yet). The reader reports broker
/// errors to `health`: a source starting while no broker answers says so in its status while
/// it waits here, as a running connector would.
pub fn read_position(settings: &[(String, String)], topic: &str, connector: &str, health: Arc<BrokerHealth>) -> Result<Option<Vec<u8>>, KafkaError> {
    let mut config = crate::client_config::client_config(settings);
    // Partitions are assigned by hand; the group id is required by the client but never
    // joined or committed.
    config.set("group.id", "turnpike-positions-reader").set("enable.auto.commit", "false").set("enable.partition.eof", "false");
    let context = HealthContext { health, client: "positions reader" };
    let consumer: BaseConsumer<HealthContext> = config.create_with_context(context).map_err(|source| KafkaError::Client { role: "positions reader", source })?;
    let deadline = Instant::now() + TIMEOUT;
    let Some(partitions) = partition_count(&consumer, topic, deadline)? else {
        return Ok(None);
    };
    let mut tpl = TopicPartitionList::new();
    let mut ends = Vec::new();
    for p in 0..partitions {
        let (low, high) = consumer.fetch_watermarks(topic, p, TIMEOUT).map_err(KafkaError::Offsets)?;
        if high > low {
            tpl.add_partition_offset(topic, p, Offset::Offset(low)).map_err(KafkaError::Offsets)?;
            ends.push((p, high));
        }
    }
    if ends.is_empty() {
        return Ok(None);
    }
    consumer.assign(&tpl).map_err(KafkaError::Offsets)?;
    let mut found: Option<(i64, Vec<u8>)> = None;
    while !ends.is_empty() {
        if Instant::now() > deadline {
            return Err(KafkaError::PositionsTimeout { topic: topic.to_owned() });
        }
        let msg = match consumer.poll(Duration::from_millis(200)) {
            None => {
                read_past_markers(&consumer, topic, &mut ends);
                continue;
            }
            Some(Ok(msg)) => msg,
            // Reported to the run's health by the client's context; the broker may be back
            // before the deadline.
            Some(Err(e)) if is_connection_error(&e) => continue,
            Some(Err(e)) => return Err(KafkaError::Offsets(e)),
        };
        if msg.key() == Some(connector.as_bytes()) {
            // Saves are in order within the (normally single) partition; across partitions of
            // a topic someone created wider, the latest timestamp wins.
            let ts = msg.timestamp().to_millis().unwrap_or(0);
            if found.as_ref().is_none_or(|(seen, _)| ts >= *seen) {
                found = Some((ts, msg.payload().map(<[u8]>::to_vec).unwrap_or_default()));
            }
        }
        let (partition, next) = (msg.partition(), msg.offset() + 1);
        ends.retain(|&(p, high)| !(p == partition && next >= high));
    }
    Ok(found.map(|(_, position)| position))
}

/// Retires the partitions whose read position reached their end. A partition written by a
/// fenced (transactional) writer ends with a commit marker, which is never handed over as a
/// record: only the position says the reader is past it.
fn read_past_markers(consumer: &BaseConsumer<HealthContext>, topic: &str, ends: &mut Vec<(i32, i64)>) {
    let Ok(positions) = consumer.position() else { return };
    for element in positions.elements_for_topic(topic) {
        if let Offset::Offset(at) = element.offset() {
            ends.retain(|&(p, high)| !(p == element.partition() && at >= high));
        }
    }
}

/// How long one metadata request waits before the reader looks at its client's errors.
const METADATA_WAIT: Duration = Duration::from_secs(2);

/// How long a poll for the client's errors waits for the next (log lines come between them).
const ERRORS_WAIT: Duration = Duration::from_millis(100);

/// How long a positions topic the broker does not know is asked for again before it counts
/// as absent: a broker that just restarted may not know it yet, and the host creates it at
/// start, but one that was never created (no permission to) must not stop sources for long.
const UNKNOWN_TOPIC_GRACE: Duration = Duration::from_secs(2);

/// How many partitions `topic` has; `None` when it does not exist. Metadata that carries an
/// error (a leader being elected, a broker just restarted) is asked for again until the
/// deadline: taking it for "no positions saved" would restart every source from its start.
fn partition_count(consumer: &BaseConsumer<HealthContext>, topic: &str, deadline: Instant) -> Result<Option<i32>, KafkaError> {
    let absent_after = Instant::now() + UNKNOWN_TOPIC_GRACE;
    loop {
        // Asked in short waits, polling the client between them: its errors ("all brokers
        // down") reach its context, and so the run's health, only when it is polled. (No
        // partition is assigned yet: polling takes no record.)
        let metadata = match consumer.fetch_metadata(Some(topic), METADATA_WAIT) {
            Ok(metadata) => metadata,
            Err(e) if Instant::now() < deadline => {
                while let Some(Err(_)) = consumer.poll(ERRORS_WAIT) {}
                tracing::debug!(%topic, error = %e, "no metadata for the positions topic yet; asking again");
                continue;
            }
            Err(e) => return Err(KafkaError::Offsets(e)),
        };
        let listed = metadata.topics().iter().find(|t| t.name() == topic);
        let unknown = listed.is_none_or(|t| t.error().map(RDKafkaErrorCode::from) == Some(RDKafkaErrorCode::UnknownTopicOrPartition));
        if unknown && Instant::now() >= absent_after {
            return Ok(None);
        }
        let problem = match listed.and_then(|t| t.error()).map(RDKafkaErrorCode::from) {
            _ if unknown => "the broker does not know the topic".to_owned(),
            Some(code) => code.to_string(),
            None => match listed.map(|t| t.partitions()).unwrap_or_default() {
                [] => "no partitions listed".to_owned(),
                partitions => match partitions.iter().find_map(|p| p.error()) {
                    Some(code) => RDKafkaErrorCode::from(code).to_string(),
                    None => return Ok(Some(partitions.len() as i32)),
                },
            },
        };
        if Instant::now() > deadline {
            return Err(KafkaError::PositionsUnavailable { topic: topic.to_owned(), problem });
        }
        tracing::debug!(%topic, %problem, "positions topic not ready; asking again");
        std::thread::sleep(Duration::from_millis(200));
    }
}
