//! A source's position writer that the source's next owner fences. In a cluster a source
//! moves between hosts, and a host that froze past its session (a zombie) must not overwrite
//! the position its successor saved. Each save is a transaction of a producer whose
//! transactional id is the connector's, so the next owner's `init_transactions` fences the
//! old writer: its next save fails for good, and its source stops. Positions are read
//! `read_committed` (librdkafka's default), so a save that did not commit is never read.
//! Blocking calls: run them on a blocking thread.

use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer as _};

use crate::KafkaError;

/// How long starting the writer (which fences the previous one) or one save may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Saves one source's positions, fenced against an older writer of the same source.
pub struct FencedPositions {
    producer: BaseProducer,
    topic: String,
    connector: String,
}

/// Why a save failed: for good (`Fenced`), or for now (retried at the next save).
fn classify(e: rdkafka::error::KafkaError, connector: &str) -> KafkaError {
    match &e {
        rdkafka::error::KafkaError::Transaction(rd) if rd.is_fatal() => KafkaError::Fenced(format!(
            "the position writer of source {connector:?} was fenced ({rd}): a newer writer took over, so this source runs on another host now"
        )),
        _ => KafkaError::Delivery { topic: format!("positions of {connector}"), source: e },
    }
}

impl FencedPositions {
    /// Opens the writer of `connector`'s positions in `topic`, fencing any earlier writer
    /// with the same transactional id, and waiting for that writer's open transaction to
    /// end first.
    pub fn open(settings: &[(String, String)], topic: &str, connector: &str, transactional_id: &str) -> Result<Self, KafkaError> {
        let mut config = ClientConfig::new();
        for (k, v) in settings {
            config.set(k, v);
        }
        config.set("transactional.id", transactional_id);
        let producer: BaseProducer = config.create().map_err(|source| KafkaError::Client { role: "position writer", source })?;
        producer.init_transactions(TIMEOUT).map_err(|e| classify(e, connector))?;
        Ok(Self { producer, topic: topic.to_owned(), connector: connector.to_owned() })
    }

    /// Saves `position` in a transaction of its own. [`KafkaError::Fenced`] when a newer
    /// writer took over (the source must stop); any other error may pass (save again later).
    pub fn save(&self, position: &[u8]) -> Result<(), KafkaError> {
        self.producer.begin_transaction().map_err(|e| classify(e, &self.connector))?;
        let record = BaseRecord::to(&self.topic).key(self.connector.as_bytes()).payload(position);
        if let Err((e, _)) = self.producer.send(record) {
            let _ = self.producer.abort_transaction(TIMEOUT);
            return Err(classify(e, &self.connector));
        }
        let committed = self.producer.commit_transaction(TIMEOUT);
        // Delivery reports: nothing to learn from them after the commit's answer.
        self.producer.poll(Duration::ZERO);
        committed.map_err(|e| {
            if matches!(&e, rdkafka::error::KafkaError::Transaction(rd) if rd.txn_requires_abort()) {
                let _ = self.producer.abort_transaction(TIMEOUT);
            }
            classify(e, &self.connector)
        })
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
        let broker = crate::EmbeddedBroker::start().expect("mock cluster");
        broker.create_topic("positions", 1).expect("topic");
        let settings = vec![("bootstrap.servers".to_owned(), broker.bootstrap_servers())];
        let writer = FencedPositions::open(&settings, "positions", "src", "turnpike-position-src").expect("writer");
        writer.save(b"10").expect("saved");
        writer.save(b"11").expect("saved");
        let began = std::time::Instant::now();
        let position = crate::read_position(&settings, "positions", "src", std::sync::Arc::default()).expect("read");
        assert_eq!(position.as_deref(), Some(&b"11"[..]));
        assert!(began.elapsed() < Duration::from_secs(10), "read to the end in {:?}", began.elapsed());
    }
}
