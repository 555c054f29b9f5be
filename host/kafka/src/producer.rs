//! Producing records, with one delivery future per record so the caller can commit input
//! offsets only after every derived output is acknowledged.

use std::sync::Arc;
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::message::{Header, Message as _, OwnedHeaders};
use rdkafka::producer::{DeliveryFuture, FutureProducer, FutureRecord, Producer as _};

use crate::health::HealthContext;
use crate::{BrokerHealth, KafkaError};

/// A record to produce, borrowed from the transform output that holds it.
#[derive(Debug, Clone, Copy)]
pub struct OutgoingRecord<'a> {
    /// Destination topic.
    pub topic: &'a str,
    /// `None` for a null key.
    pub key: Option<&'a [u8]>,
    /// `None` for a tombstone.
    pub value: Option<&'a [u8]>,
    /// Milliseconds since the epoch; `None` lets the producer stamp it.
    pub timestamp: Option<i64>,
}

/// A record handed to the producer, not yet acknowledged.
pub struct Delivery {
    /// Key, value and header bytes of the record, for the connector's byte counts.
    bytes: usize,
    future: DeliveryFuture,
    /// A failed record sent to the dead-letter topic: counted apart from the outputs.
    dead_letter: bool,
}

impl Delivery {
    /// The same delivery, marked as a dead letter (not an output of the connector).
    pub fn into_dead_letter(self) -> Self {
        Self { dead_letter: true, ..self }
    }

    /// Whether it is a dead letter rather than an output.
    pub fn is_dead_letter(&self) -> bool {
        self.dead_letter
    }

    /// The record's key, value and header bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Waits until the broker acknowledges the record (or it definitely failed).
    pub async fn wait(self) -> Result<(), KafkaError> {
        match self.future.await {
            Ok(Ok(_)) => Ok(()),
            // The topic comes back with the failed record: no copy of it is kept per record.
            Ok(Err((source, record))) => Err(KafkaError::Delivery { topic: record.topic().to_owned(), source }),
            Err(_) => Err(KafkaError::Cancelled),
        }
    }
}

/// A producer configured for at-least-once delivery without duplicates from retries:
/// `acks=all` and idempotence on, unless the settings say otherwise.
#[derive(Clone)]
pub struct Producer {
    inner: FutureProducer<HealthContext>,
}

/// How long to wait for room when librdkafka's local queue is full (backpressure).
const QUEUE_FULL_BACKOFF: Duration = Duration::from_millis(2);

impl Producer {
    /// Creates a producer from librdkafka settings.
    pub fn new(settings: &[(String, String)]) -> Result<Self, KafkaError> {
        Self::with_health(settings, Arc::default())
    }

    /// [`Producer::new`], reporting whether brokers are reachable to `health`.
    pub fn with_health(settings: &[(String, String)], health: Arc<BrokerHealth>) -> Result<Self, KafkaError> {
        let mut config = ClientConfig::new();
        config.set("acks", "all").set("enable.idempotence", "true").set("linger.ms", "5");
        for (k, v) in settings {
            config.set(k, v);
        }
        let inner = config.create_with_context(HealthContext { health, client: "producer" }).map_err(|source| KafkaError::Client { role: "producer", source })?;
        Ok(Self { inner })
    }

    /// Hands a record to the producer, waiting while its queue is full, and returns the
    /// future of its acknowledgement.
    pub async fn send<'h>(
        &self,
        record: OutgoingRecord<'_>,
        headers: impl IntoIterator<Item = (&'h str, &'h [u8])>,
    ) -> Result<Delivery, KafkaError> {
        // Counted as the consumer counts what it reads: keys, values and headers.
        let mut bytes = record.key.map_or(0, <[u8]>::len) + record.value.map_or(0, <[u8]>::len);
        let mut owned = OwnedHeaders::new();
        for (key, value) in headers {
            bytes += key.len() + value.len();
            owned = owned.insert(Header { key, value: Some(value) });
        }
        let mut future_record: FutureRecord<'_, [u8], [u8]> = FutureRecord::to(record.topic).headers(owned);
        if let Some(k) = record.key {
            future_record = future_record.key(k);
        }
        if let Some(v) = record.value {
            future_record = future_record.payload(v);
        }
        if let Some(ts) = record.timestamp {
            future_record = future_record.timestamp(ts);
        }
        loop {
            match self.inner.send_result(future_record) {
                Ok(future) => return Ok(Delivery { bytes, future, dead_letter: false }),
                Err((rdkafka::error::KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                    future_record = back;
                    tokio::time::sleep(QUEUE_FULL_BACKOFF).await;
                }
                Err((source, _)) => return Err(KafkaError::Delivery { topic: record.topic.to_owned(), source }),
            }
        }
    }

    /// Whether the producer hit a fatal error (an idempotent producer's broken sequence, say):
    /// it cannot send again and must be replaced.
    pub fn is_broken(&self) -> bool {
        self.inner.client().fatal_error().is_some()
    }

    /// Whether a broker answers a metadata request within `timeout` (on a blocking thread).
    pub async fn reaches_broker(&self, timeout: Duration) -> bool {
        let producer = self.clone();
        tokio::task::spawn_blocking(move || producer.inner.client().fetch_metadata(None, timeout).is_ok()).await.unwrap_or(false)
    }

    /// Waits up to `timeout` for every queued record to be delivered. Blocks the thread: from
    /// async code use [`Producer::flush_off_thread`].
    pub fn flush(&self, timeout: Duration) -> Result<(), KafkaError> {
        self.inner.flush(timeout).map_err(|source| KafkaError::Delivery { topic: "*".into(), source })
    }

    /// [`Producer::flush`] on a blocking thread, so a slow broker never holds an async worker
    /// (a few connectors stopping at once would otherwise freeze the admin API).
    pub async fn flush_off_thread(&self, timeout: Duration) -> Result<(), KafkaError> {
        let producer = self.clone();
        match tokio::task::spawn_blocking(move || producer.flush(timeout)).await {
            Ok(flushed) => flushed,
            Err(e) => Err(KafkaError::Blocking(e.to_string())),
        }
    }
}
