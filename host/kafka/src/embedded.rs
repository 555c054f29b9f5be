//! An in-process Kafka-compatible broker: librdkafka's mock cluster. It speaks the Kafka
//! protocol on a loopback port, so the rest of the host uses it like any broker. For demos
//! and quick local runs only: it keeps data in memory and loses it on exit.

use rdkafka::mocking::MockCluster;
use rdkafka::producer::DefaultProducerContext;

use crate::KafkaError;

/// A running embedded broker. Dropping it stops the broker.
pub struct EmbeddedBroker {
    cluster: MockCluster<'static, DefaultProducerContext>,
}

impl EmbeddedBroker {
    /// Starts a one-broker cluster on a free loopback port.
    pub fn start() -> Result<Self, KafkaError> {
        let cluster = MockCluster::new(1).map_err(|source| KafkaError::Client { role: "embedded broker", source })?;
        Ok(Self { cluster })
    }

    /// The `bootstrap.servers` value to reach it.
    pub fn bootstrap_servers(&self) -> String {
        self.cluster.bootstrap_servers()
    }

    /// Creates a topic with `partitions` partitions.
    pub fn create_topic(&self, topic: &str, partitions: i32) -> Result<(), KafkaError> {
        self.cluster
            .create_topic(topic, partitions, 1)
            .map_err(|source| KafkaError::CreateTopic { topic: topic.to_owned(), source })
    }
}

#[cfg(test)]
impl EmbeddedBroker {
    /// A mock cluster with `topic` (`partitions` partitions, made here: the mock cluster
    /// answers no CreateTopics), and the settings that reach it.
    pub(crate) fn with_topic(topic: &str, partitions: i32) -> (Self, Vec<(String, String)>) {
        let broker = Self::start().expect("mock cluster");
        broker.create_topic(topic, partitions).expect("topic");
        let settings = vec![("bootstrap.servers".to_owned(), broker.bootstrap_servers())];
        (broker, settings)
    }

    /// A mock cluster whose one-partition `topic` holds `count` records of `value`, and the
    /// settings that reach it: what most of this crate's broker tests start from.
    pub(crate) async fn with_records(topic: &str, count: usize, value: &[u8]) -> (Self, Vec<(String, String)>) {
        let (broker, settings) = Self::with_topic(topic, 1);
        let producer = crate::Producer::new(&settings).expect("producer");
        for _ in 0..count {
            let record = crate::OutgoingRecord { topic, key: None, value: Some(value), timestamp: None };
            producer.send(record, []).await.expect("send").wait().await.expect("delivered");
        }
        (broker, settings)
    }

    /// Makes the broker answer every request after two minutes, as one that stopped
    /// answering would.
    pub(crate) fn stall(&self) {
        self.cluster.broker_round_trip_time(1, std::time::Duration::from_secs(120)).expect("mock broker round trip");
    }
}
