//! The host's one Kafka producer, shared by every connector's tasks.
//!
//! Every connector's clients use the host's `kafka:` settings, and a librdkafka producer is
//! thread-safe, so one producer serves them all. One per task cost each idle connector a
//! producer's threads (librdkafka's main thread and one per broker) and its timers. Each
//! task still awaits its own deliveries, so what a connector counts and commits stays its
//! own. The producer's broker errors reach every run through [`BrokerHealth::forward_to`].

use std::sync::{Arc, Mutex};

use turnpike_kafka::{BrokerHealth, KafkaError, Producer};

/// Settings the shared producer gets unless the host's `kafka:` sets them: its queue serves
/// every connector, so one connector whose output stalls (a partition without a leader)
/// should not fill it for all. librdkafka's default is 100,000 records; the byte bound
/// (`queue.buffering.max.kbytes`, 1 GiB by default) stays.
const SHARED_DEFAULTS: &[(&str, &str)] = &[("queue.buffering.max.messages", "2000000")];

/// Created at the first connector start: a host with no connectors holds no producer.
#[derive(Default)]
pub(crate) struct SharedProducer {
    inner: Mutex<Option<(Producer, Arc<BrokerHealth>)>>,
}

impl SharedProducer {
    /// The producer (created from `kafka` the first time), with its broker errors passed on
    /// to `run_health` for as long as that run lives.
    pub(crate) fn get(&self, kafka: &[(String, String)], run_health: &Arc<BrokerHealth>) -> Result<Producer, KafkaError> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        // A producer with a fatal error sends nothing again: the runs that used it fail, and
        // their restarts get a new one (as each connector's own producer used to be).
        if inner.as_ref().is_some_and(|(producer, _)| producer.is_broken()) {
            tracing::warn!("the shared producer hit a fatal error; replacing it");
            *inner = None;
        }
        let (producer, health) = match inner.as_ref() {
            Some(existing) => existing,
            None => {
                let mut settings: Vec<(String, String)> =
                    SHARED_DEFAULTS.iter().filter(|(key, _)| !kafka.iter().any(|(k, _)| k == key)).map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
                settings.extend_from_slice(kafka);
                let health = Arc::new(BrokerHealth::default());
                let producer = Producer::with_health(&settings, health.clone())?;
                inner.insert((producer, health))
            }
        };
        health.forward_to(run_health);
        Ok(producer.clone())
    }
}
