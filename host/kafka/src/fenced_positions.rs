//! A source's position writer that the source's next owner fences. In a cluster a source
//! moves between hosts, and a host that froze past its session (a zombie) must not overwrite
//! the position its successor saved. Each save is a transaction of a producer whose
//! transactional id is the connector's, so the next owner's `init_transactions` fences the
//! old writer: its next save fails for good, and its source stops. Positions are read
//! `read_committed` (librdkafka's default), so a save that did not commit is never read.
//! Blocking calls: run them on a blocking thread.

use std::time::Duration;

use rdkafka::error::RDKafkaErrorCode;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer as _};

use crate::KafkaError;

/// How long starting the writer (which fences the previous one) or one save may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Delivery settings of the host's `kafka:` that a transactional producer sets itself:
/// librdkafka refuses to create one with some values the shared producer accepts
/// (`enable.idempotence: false`, `retries: 0`, `message.timeout.ms` above the transaction
/// timeout, more than 5 requests in flight).
const OWN_SETTINGS: [&str; 8] = [
    "enable.idempotence",
    "acks",
    "request.required.acks",
    "retries",
    "message.send.max.retries",
    "max.in.flight",
    "max.in.flight.requests.per.connection",
    "message.timeout.ms",
];

/// Saves one source's positions, fenced against an older writer of the same source.
pub struct FencedPositions {
    producer: BaseProducer,
    topic: String,
    connector: String,
}

/// Why a save failed: fenced by a newer writer (the source runs elsewhere now), unusable for
/// another reason librdkafka calls fatal, or for now (retried at the next save).
fn classify(e: rdkafka::error::KafkaError, connector: &str) -> KafkaError {
    match &e {
        rdkafka::error::KafkaError::Transaction(rd) if matches!(rd.code(), RDKafkaErrorCode::ProducerFenced | RDKafkaErrorCode::InvalidProducerEpoch | RDKafkaErrorCode::Fenced) => {
            KafkaError::Fenced(format!("the position writer of source {connector:?} was fenced ({rd}): a newer writer took over, so this source runs on another host now"))
        }
        rdkafka::error::KafkaError::Transaction(rd) if rd.is_fatal() => KafkaError::PositionWriter(format!("the position writer of source {connector:?} failed for good: {rd}")),
        _ => KafkaError::Delivery { topic: format!("positions of {connector}"), source: e },
    }
}

impl FencedPositions {
    /// Opens the writer of `connector`'s positions in `topic`, fencing any earlier writer
    /// with the same transactional id, and waiting for that writer's open transaction to
    /// end first.
    pub fn open(settings: &[(String, String)], topic: &str, connector: &str, transactional_id: &str) -> Result<Self, KafkaError> {
        let mut config = crate::client_config::client_config_except(settings, |k| OWN_SETTINGS.contains(&k));
        config.set("transactional.id", transactional_id);
        let producer: BaseProducer = config.create().map_err(|source| KafkaError::Client { role: "position writer", source })?;
        producer.init_transactions(TIMEOUT).map_err(|e| classify(e, connector))?;
        Ok(Self { producer, topic: topic.to_owned(), connector: connector.to_owned() })
    }

    /// Saves `position` in a transaction of its own. [`KafkaError::Fenced`] when a newer
    /// writer took over (the source must stop); [`KafkaError::PositionWriter`] when the
    /// transaction could not be ended either way (the writer is unusable: the source
    /// restarts with a new one); any other error passes (the next save carries a newer
    /// position), the transaction aborted.
    pub fn save(&self, position: &[u8]) -> Result<(), KafkaError> {
        self.producer.begin_transaction().map_err(|e| classify(e, &self.connector))?;
        let record = BaseRecord::to(&self.topic).key(self.connector.as_bytes()).payload(position);
        let saved = match self.producer.send(record) {
            Ok(()) => self.producer.commit_transaction(TIMEOUT),
            Err((e, _)) => Err(e),
        };
        // Delivery reports: nothing to learn from them after the commit's answer.
        self.producer.poll(Duration::ZERO);
        let Err(e) = saved else { return Ok(()) };
        let failed = classify(e, &self.connector);
        if matches!(failed, KafkaError::Fenced(_)) {
            return Err(failed);
        }
        // Whatever the failure (a commit that timed out, a flush that did not finish), the
        // transaction is ended before the next save begins one.
        if let Err(abort) = self.producer.abort_transaction(TIMEOUT) {
            return Err(match classify(abort, &self.connector) {
                fenced @ KafkaError::Fenced(_) => fenced,
                other => KafkaError::PositionWriter(format!("the position writer of source {:?} could not end a failed save ({failed}; abort: {other})", self.connector)),
            });
        }
        Err(failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each save is a transaction, so the topic ends with a commit marker, which no reader
    /// is handed as a record: the positions reader still reads to the end, and at once.
    /// (Fencing itself needs a real broker: tests/integration/fenced_positions.rs.)
    #[test]
    fn saves_are_read_back_past_their_commit_markers() {
        let (_broker, settings) = crate::EmbeddedBroker::with_topic("positions", 1);
        let writer = FencedPositions::open(&settings, "positions", "src", "turnpike-position-src").expect("writer");
        writer.save(b"10").expect("saved");
        writer.save(b"11").expect("saved");
        let began = std::time::Instant::now();
        let position = crate::read_position(&settings, "positions", "src", std::sync::Arc::default()).expect("read");
        assert_eq!(position.as_deref(), Some(&b"11"[..]));
        assert!(began.elapsed() < Duration::from_secs(10), "read to the end in {:?}", began.elapsed());
    }
}
