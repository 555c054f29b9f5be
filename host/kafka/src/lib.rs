//! The only crate that talks to rdkafka (librdkafka): a batching consumer whose offsets are
//! committed only when the caller says the data is safe, a producer that hands back one
//! delivery future per record, and the embedded mock broker for `turnpike dev`.
//!
//! Nothing here knows about WebAssembly.

mod batch_offsets;
mod client_config;
mod close;
mod consumer;
mod create_topic;
mod embedded;
mod error;
mod fenced_positions;
mod group_protocol;
mod health;
mod idle_watch;
mod lag;
mod offsets;
mod positions;
mod producer;
mod raw_headers;
mod rebalance;
mod release;
mod shared_log;
mod slots;
mod topics;

pub use batch_offsets::Offsets;
pub use close::{CloseDeadline, CLOSE_WAIT};
pub use consumer::{BatchLimits, ConsumedRecord, Consumer, ConsumerOptions, FatalError, RecordHeaders};
pub use embedded::EmbeddedBroker;
pub use error::KafkaError;
pub use fenced_positions::FencedPositions;
pub use group_protocol::{choose_group_protocol, decided_by_settings, GroupProtocol, GroupProtocolConflict};
pub use health::{BrokerHealth, Unreachable};
pub use idle_watch::{IdleWatch, Watch};
pub use offsets::{group_offsets, reset_group_offsets, PartitionOffsets, ResetTo};
pub use positions::{ensure_positions_topic, read_position, DEFAULT_POSITIONS_TOPIC};
pub use producer::{Delivery, OutgoingRecord, Producer};
pub use rebalance::{PartitionChange, PartitionsTaken};
pub use release::{NotReleasable, Release, WatchPoint};
pub use slots::{SlotLease, SlotOwner, Slots};
pub use shared_log::{ensure_log_topic, tail, LogRecord, LogWriter, Tailed};
pub use topics::{list_topics, sample_topic, SampledRecord, TopicInfo};
