//! Kafka errors with the context an operator needs.

/// A Kafka client operation failed.
#[derive(Debug, thiserror::Error)]
pub enum KafkaError {
    /// A blocking client call moved off the async workers did not complete.
    #[error("a blocking Kafka call did not complete: {0}")]
    Blocking(String),
    /// A client could not be created (usually a bad librdkafka setting).
    #[error("could not create the Kafka {role}: {source}")]
    Client {
        /// `consumer`, `producer` or `embedded broker`.
        role: &'static str,
        /// librdkafka's error.
        source: rdkafka::error::KafkaError,
    },
    /// Subscribing to the input topics failed.
    #[error("could not subscribe to {topics:?}: {source}")]
    Subscribe {
        /// The topics.
        topics: Vec<String>,
        /// librdkafka's error.
        source: rdkafka::error::KafkaError,
    },
    /// Pausing or resuming fetches failed.
    #[error("could not pause or resume the consumer: {0}")]
    Pause(rdkafka::error::KafkaError),
    /// Reading offsets or partition metadata failed.
    #[error("could not read offsets: {0}")]
    Offsets(rdkafka::error::KafkaError),
    /// An explicit offset names a partition the connector's topics do not have.
    #[error("topic {topic:?} has no partition {partition} among the connector's input topics")]
    NoSuchPartition {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// Committing offsets failed.
    #[error("could not commit offsets: {0}")]
    Commit(rdkafka::error::KafkaError),
    /// A record could not be produced or was not acknowledged by the broker.
    #[error("could not deliver a record to topic {topic:?}: {source}")]
    Delivery {
        /// Destination topic.
        topic: String,
        /// librdkafka's error.
        source: rdkafka::error::KafkaError,
    },
    /// The producer was shut down while a delivery was pending.
    #[error("the producer shut down before the broker acknowledged a record")]
    Cancelled,
    /// Creating a topic (on the embedded broker, or a cluster's log topic) failed.
    #[error("could not create topic {topic:?}: {source}")]
    CreateTopic {
        /// The topic.
        topic: String,
        /// librdkafka's error.
        source: rdkafka::error::KafkaError,
    },
    /// The positions topic's metadata kept carrying an error: its positions cannot be read.
    #[error("the source positions topic {topic:?} is not readable: {problem}")]
    PositionsUnavailable {
        /// The topic.
        topic: String,
        /// What the broker said.
        problem: String,
    },
    /// The positions topic could not be read to its end in time.
    #[error("could not read the source positions topic {topic:?} to its end in time")]
    PositionsTimeout {
        /// The topic.
        topic: String,
    },
    /// The cluster's source slots topic has no partitions this host can see.
    #[error("the source slots topic {topic:?} has no partitions")]
    NoSlots {
        /// The topic.
        topic: String,
    },
    /// A transactional writer failed for good: fenced by a newer writer with the same
    /// transactional id (the source runs on another host now), or refused.
    #[error("{0}")]
    Fenced(String),
    /// A transactional writer is left in a state it cannot save from (a failed save whose
    /// transaction could not be aborted).
    #[error("{0}")]
    PositionWriter(String),
}
