//! The error policy, the same at every stage: log every failed record with its context, stop
//! the connector when errors are not tolerated (or the plugin says fatal), else dead-letter
//! the record unchanged with headers saying where it came from and why it failed.

use std::sync::Arc;

use turnpike_config::{Connector, ErrorTolerance};
use turnpike_kafka::{Delivery, OutgoingRecord, Producer};
use turnpike_runtime::{escape_control, input_len, input_record, BatchBuilder, ErrorKind, FaultClass, InputBatch};

use crate::status::{FailingRecord, FaultInfo, LiveStatus};

/// Failed records logged one by one per batch; the rest are counted in one line, so a plugin
/// failing every record cannot flood the host log.
const LOGGED_PER_BATCH: usize = 5;

/// The stage and plugin label of records the host itself could not hand to a plugin.
const READ_STAGE: &str = "read";
const HOST_LABEL: &str = "turnpike-host";

/// A record that failed at some stage.
#[derive(Debug, Clone)]
pub(crate) struct FailedRecord {
    /// Index of the record in the batch as read (from Kafka or the source).
    pub(crate) origin: u32,
    /// `source`, `transforms[N]` or `sink`.
    pub(crate) stage: String,
    /// `name@version` of the plugin.
    pub(crate) plugin: String,
    pub(crate) kind: ErrorKind,
    /// `record_error` when the plugin rejected the record, else the fault class it caused.
    pub(crate) class: String,
    pub(crate) message: String,
}

impl FailedRecord {
    /// A record read from Kafka that cannot be handed to a plugin as it is (e.g. a header
    /// key that is not UTF-8): it goes through the error policy like a rejected record.
    pub(crate) fn unreadable(origin: u32, why: String) -> Self {
        Self { origin, stage: READ_STAGE.into(), plugin: HOST_LABEL.into(), kind: ErrorKind::InvalidRecord, class: FaultClass::UnreadableRecord.into(), message: why }
    }
}

/// The batch without the `failed` records (`None` when none failed). Linear in the batch.
pub(crate) fn without(batch: &InputBatch, failed: &[FailedRecord]) -> Option<InputBatch> {
    if failed.is_empty() {
        return None;
    }
    let n = input_len(batch);
    let mut drop = vec![false; n];
    for f in failed {
        if let Some(d) = drop.get_mut(f.origin as usize) {
            *d = true;
        }
    }
    let mut builder = BatchBuilder::default();
    for (i, _) in drop.iter().enumerate().filter(|(_, d)| !**d) {
        let (record, headers) = input_record(batch, i);
        builder.push(record, headers);
    }
    Some(builder.finish())
}

/// Where the records of a batch were read from, for error context.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ReadFrom<'a> {
    /// Consumed from Kafka: each record has its topic, partition and offset.
    Kafka,
    /// Polled from a source plugin: the batch reaches this position.
    Source { position: Option<&'a [u8]> },
}

/// A connector's error policy and dead-letter topic.
pub(crate) struct ErrorPolicy {
    connector: String,
    tolerance: ErrorTolerance,
    dead_letter_topic: Option<String>,
    status: Arc<LiveStatus>,
}

impl ErrorPolicy {
    pub(crate) fn new(connector: &Connector, status: Arc<LiveStatus>) -> Self {
        let errors = &connector.config().errors;
        Self {
            connector: connector.name().to_string(),
            tolerance: errors.tolerance,
            dead_letter_topic: errors.dead_letter_topic.as_ref().map(ToString::to_string),
            status,
        }
    }

    /// Logs the first failed records of the batch (and how many more there were); says
    /// whether the connector must stop, and why.
    pub(crate) fn judge(&self, failed: &[FailedRecord], batch: &InputBatch, from: ReadFrom<'_>) -> Option<FaultInfo> {
        let connector = self.connector.as_str();
        for f in failed.iter().take(LOGGED_PER_BATCH) {
            let (record, _) = input_record(batch, f.origin as usize);
            let error = escape_control(&f.message);
            match from {
                ReadFrom::Kafka => tracing::warn!(connector, stage = %f.stage, plugin = %f.plugin, topic = record.topic, partition = record.partition, offset = record.offset, class = %f.class, %error, "record failed"),
                ReadFrom::Source { .. } => tracing::warn!(connector, stage = %f.stage, plugin = %f.plugin, destination = record.topic, index = record.offset, class = %f.class, %error, "record failed"),
            }
        }
        if failed.len() > LOGGED_PER_BATCH {
            tracing::warn!(connector, more = failed.len() - LOGGED_PER_BATCH, "more records of the batch failed (not logged one by one; see the dead-letter topic and the status counters)");
        }
        let stopping = failed.iter().find(|f| f.kind == ErrorKind::Fatal || self.tolerance == ErrorTolerance::None);
        let Some(stop) = stopping else {
            LiveStatus::add(&self.status.records_failed, failed.len() as u64);
            return None;
        };
        let (record, _) = input_record(batch, stop.origin as usize);
        let at = match from {
            ReadFrom::Kafka => format!("the record at {}/{}@{}", record.topic, record.partition, record.offset),
            ReadFrom::Source { .. } => format!("a record for {}", record.topic),
        };
        let why = if stop.kind == ErrorKind::Fatal { "the plugin marked the error fatal" } else { "errors.tolerance is none" };
        let place = matches!(from, ReadFrom::Kafka).then_some((record.partition, record.offset));
        let failing = FailingRecord::new(record.topic, place, record.key, record.value);
        Some(FaultInfo { class: stop.class.clone(), message: format!("{} ({}) failed {at}: {} ({why})", stop.plugin, stop.stage, stop.message), record: Some(Box::new(failing)) })
    }

    /// Sets aside the records the host could not read (`(index, why)`): judged and
    /// dead-lettered like failed records. Returns the batch the plugins should get (`None`:
    /// the whole batch) and the dead letters' deliveries.
    pub(crate) async fn set_aside_unreadable(&self, producer: &Producer, batch: &InputBatch, unreadable: Vec<(u32, String)>) -> Result<(Option<InputBatch>, Vec<Delivery>), FaultInfo> {
        if unreadable.is_empty() {
            return Ok((None, Vec::new()));
        }
        let failed: Vec<FailedRecord> = unreadable.into_iter().map(|(i, why)| FailedRecord::unreadable(i, why)).collect();
        if let Some(fault) = self.judge(&failed, batch, ReadFrom::Kafka) {
            return Err(fault);
        }
        let deliveries = self.dead_letter(producer, batch, &failed, ReadFrom::Kafka).await?;
        Ok((without(batch, &failed), deliveries))
    }

    /// Writes failed records, unchanged, to the dead-letter topic (if there is one), with
    /// `turnpike.error.*` headers. Call after [`ErrorPolicy::judge`] let the batch go on.
    pub(crate) async fn dead_letter(&self, producer: &Producer, batch: &InputBatch, failed: &[FailedRecord], from: ReadFrom<'_>) -> Result<Vec<Delivery>, FaultInfo> {
        let Some(topic) = &self.dead_letter_topic else { return Ok(Vec::new()) };
        let mut deliveries = Vec::with_capacity(failed.len());
        for f in failed {
            let (record, mut headers) = input_record(batch, f.origin as usize);
            let (plugin_name, plugin_version) = f.plugin.rsplit_once('@').unwrap_or((f.plugin.as_str(), ""));
            let (partition, offset) = (record.partition.to_string(), record.offset.to_string());
            let mut context: Vec<(&str, &[u8])> = vec![
                ("turnpike.error.connector", self.connector.as_bytes()),
                ("turnpike.error.stage", f.stage.as_bytes()),
                ("turnpike.error.plugin", plugin_name.as_bytes()),
                ("turnpike.error.plugin.version", plugin_version.as_bytes()),
                ("turnpike.error.class", f.class.as_bytes()),
                ("turnpike.error.message", f.message.as_bytes()),
            ];
            match from {
                ReadFrom::Kafka => context.extend([
                    ("turnpike.error.topic", record.topic.as_bytes()),
                    ("turnpike.error.partition", partition.as_bytes()),
                    ("turnpike.error.offset", offset.as_bytes()),
                ]),
                ReadFrom::Source { position } => {
                    context.push(("turnpike.error.destination", record.topic.as_bytes()));
                    if let Some(p) = position {
                        context.push(("turnpike.error.position", p));
                    }
                }
            }
            headers.extend(context);
            let out = OutgoingRecord { topic, key: record.key, value: record.value, timestamp: record.timestamp };
            let delivery = producer
                .send(out, headers)
                .await
                .map_err(|e| FaultInfo::new(FaultClass::Kafka, format!("dead-letter topic: {e}")))?;
            deliveries.push(delivery.into_dead_letter());
        }
        LiveStatus::add(&self.status.records_dead_lettered, deliveries.len() as u64);
        Ok(deliveries)
    }
}
