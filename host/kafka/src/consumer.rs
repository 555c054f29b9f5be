//! A consumer that reads records in batches and commits only the offsets it is told are safe.

use std::sync::Arc;
use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{CommitMode, Consumer as _, StreamConsumer};
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::message::{BorrowedMessage, Message as _};
use rdkafka::{Offset, TopicPartitionList};
use tokio::time::Instant;

use crate::close::{CloseDeadline, CLOSE_WAIT};
use crate::rebalance::{GroupContext, PartitionChange, PartitionsTaken};
use crate::{BrokerHealth, KafkaError, Offsets};

/// What a connector's consumer reads.
#[derive(Debug, Clone, Default)]
pub struct ConsumerOptions {
    /// Consumer group id (one per connector).
    pub group_id: String,
    /// Where a group without committed offsets starts: `earliest` or `latest`.
    pub start_from: String,
    /// Topics to subscribe to.
    pub topics: Vec<String>,
    /// Counts what the group takes from this consumer. Shared, so a connector's count
    /// outlives its consumers.
    pub taken: Arc<PartitionsTaken>,
    /// Bounds the wait for this consumer's close once its host shuts down.
    pub close_deadline: Arc<CloseDeadline>,
    /// Whether the task reads the partitions assigned and revoked
    /// ([`Consumer::take_partition_changes`]; a sink does, to open and flush per partition).
    /// Otherwise they are not kept: nobody would take them, and they would pile up, one entry
    /// per rebalance, for the consumer's whole life.
    pub keep_partition_changes: bool,
}

/// A record just consumed, borrowed from the client's buffer.
pub struct ConsumedRecord<'a> {
    msg: &'a BorrowedMessage<'a>,
}

impl<'a> ConsumedRecord<'a> {
    /// Key, `None` if null.
    pub fn key(&self) -> Option<&'a [u8]> {
        self.msg.key()
    }
    /// Value, `None` if null.
    pub fn value(&self) -> Option<&'a [u8]> {
        self.msg.payload()
    }
    /// Topic.
    pub fn topic(&self) -> &'a str {
        self.msg.topic()
    }
    /// Partition.
    pub fn partition(&self) -> i32 {
        self.msg.partition()
    }
    /// Offset.
    pub fn offset(&self) -> i64 {
        self.msg.offset()
    }
    /// Milliseconds since the epoch, if the record has a timestamp.
    pub fn timestamp(&self) -> Option<i64> {
        self.msg.timestamp().to_millis()
    }
    /// Headers in order; a null header value reads as empty. Keys are read as raw bytes, so
    /// no record can panic the reader: a key that is not UTF-8 is given lossily and named in
    /// [`RecordHeaders::problem`], for the caller's error policy.
    pub fn headers(&self) -> RecordHeaders<'a> {
        let mut problem = None;
        let list = crate::raw_headers::headers(self.msg)
            .into_iter()
            .enumerate()
            .map(|(i, (key, value))| {
                let key = String::from_utf8_lossy(key);
                if matches!(key, std::borrow::Cow::Owned(_)) && problem.is_none() {
                    problem = Some(format!("header {i} has a key that is not valid UTF-8 ({key:?})"));
                }
                (key, value)
            })
            .collect();
        RecordHeaders { list, problem }
    }
}

/// A consumed record's headers, keys as text.
pub struct RecordHeaders<'a> {
    /// `(key, value)` in order; keys that were not UTF-8 are converted lossily.
    pub list: Vec<(std::borrow::Cow<'a, str>, &'a [u8])>,
    /// Why the headers are not what the producer wrote, if they are not: the record should
    /// be treated as unreadable.
    pub problem: Option<String>,
}

/// A consumer's fatal error: librdkafka never retries after one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct FatalError {
    /// librdkafka's reason and error code.
    pub reason: String,
    /// Whether the broker refused the consumer group protocol (KIP-848 listed but not
    /// enabled, or not known), which `group.protocol: classic` avoids.
    pub group_protocol_refused: bool,
}

/// When a batch being read closes.
#[derive(Debug, Clone, Copy)]
pub struct BatchLimits {
    /// Records at most.
    pub records: usize,
    /// Bytes at most (keys, values, header keys and values); the record that reaches the cap
    /// is the batch's last, so one huge record still makes a batch of one.
    pub bytes: usize,
    /// Longest wait after the first record.
    pub wait: Duration,
}

/// What a record adds to a batch: key, value and headers.
fn record_size(msg: &BorrowedMessage<'_>) -> usize {
    let headers: usize = crate::raw_headers::headers(msg).iter().map(|(k, v)| k.len() + v.len()).sum();
    msg.key().map_or(0, <[u8]>::len) + msg.payload().map_or(0, <[u8]>::len) + headers
}

/// A connector's consumer. Auto-commit is off: offsets are committed only through
/// [`Consumer::commit`], after the caller knows the records' outputs are safely written.
pub struct Consumer {
    /// Always present; taken only by `drop`, to close it where blocking is allowed.
    client: Option<StreamConsumer<GroupContext>>,
    /// Its group, named when its close is left behind.
    group: String,
    /// Its host's shutdown deadline, which may shorten the wait for its close.
    close_deadline: Arc<CloseDeadline>,
}

/// Pause after a consumer error before reading again, so a broker outage is not a busy loop.
const ERROR_BACKOFF: Duration = Duration::from_millis(200);

impl Drop for Consumer {
    /// Closing a consumer blocks: it leaves its group (the revocation commits first), then its
    /// client stops its threads. On a runtime worker that blocked every task queued there: a
    /// host shutting down 300 connectors closed them about two at a time (15 s). On a
    /// multi-threaded runtime the close runs with `block_in_place`, which hands the worker's
    /// other tasks to another thread, so closes run side by side and each finishes before
    /// its task goes on (a `STOPPED` connector has left its group), unless it stalls inside
    /// librdkafka ([`crate::close`]): then the task goes on after [`CLOSE_WAIT`] (sooner once
    /// its host shuts down: [`CloseDeadline`]), and the
    /// stalled member stays in the group until its close ends, if ever. After a fatal error the
    /// close never ends: it is left behind at once, so the task ends and reports the error.
    fn drop(&mut self) {
        let Some(client) = self.client.take() else { return };
        client.context().closing.store(true, std::sync::atomic::Ordering::Relaxed);
        let what = format!("consumer of group {}", self.group);
        if client.client().fatal_error().is_some() {
            return crate::close::close_left_behind(client, &what);
        }
        let deadline = self.close_deadline.clone();
        let close = move || {
            crate::close::close_within(client, &what, CLOSE_WAIT, &deadline);
        };
        let multi_thread = tokio::runtime::Handle::try_current().is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if multi_thread {
            tokio::task::block_in_place(close);
        } else {
            close();
        }
    }
}

impl Consumer {
    /// The client, present from creation until drop.
    pub(crate) fn inner(&self) -> &StreamConsumer<GroupContext> {
        self.client.as_ref().expect("a consumer's client is taken only when it is dropped")
    }

    /// Creates the consumer and subscribes it.
    pub fn new(settings: &[(String, String)], options: &ConsumerOptions) -> Result<Self, KafkaError> {
        Self::with_health(settings, options, Arc::default())
    }

    /// [`Consumer::new`], reporting whether brokers are reachable to `health`.
    pub fn with_health(settings: &[(String, String)], options: &ConsumerOptions, health: Arc<BrokerHealth>) -> Result<Self, KafkaError> {
        let mut config = ClientConfig::new();
        // Defaults first so the user's settings can override them, except the two that make
        // delivery at-least-once, which are set last. The timeouts and the assignor are the
        // classic group protocol's: with `group.protocol: consumer` (KIP-848) the broker
        // decides them and librdkafka refuses to create a consumer that sets them. The
        // cooperative assignor moves only the partitions that change owner; the others keep
        // flowing through a rebalance (the eager default stops every member's partitions).
        let kip848 = settings.iter().any(|(k, v)| k == "group.protocol" && v.trim().eq_ignore_ascii_case("consumer"));
        if !kip848 {
            config.set("session.timeout.ms", "10000").set("heartbeat.interval.ms", "2000").set("partition.assignment.strategy", "cooperative-sticky");
        }
        for (k, v) in settings {
            config.set(k, v);
        }
        config
            .set("group.id", &options.group_id)
            .set("auto.offset.reset", &options.start_from)
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false");
        let inner: StreamConsumer<GroupContext> = config.create_with_context(GroupContext { health, taken: options.taken.clone(), keeps_changes: options.keep_partition_changes, ..GroupContext::default() }).map_err(|source| KafkaError::Client { role: "consumer", source })?;
        let topics: Vec<&str> = options.topics.iter().map(String::as_str).collect();
        inner
            .subscribe(&topics)
            .map_err(|source| KafkaError::Subscribe { topics: options.topics.clone(), source })?;
        Ok(Self { client: Some(inner), group: options.group_id.clone(), close_deadline: options.close_deadline.clone() })
    }

    /// Waits for at least one record, then keeps reading until `limits.records` records or
    /// `limits.bytes` bytes (keys, values and headers; the record that reaches it is the last)
    /// or `limits.wait` after the first, calling `on_record` for each. Returns how many were
    /// read. `idle_interrupt` ends the wait with 0 records, but only while none has been
    /// read: once one has, the batch is completed, so no record read from the client is
    /// dropped. Dropping the future loses no record that `on_record` did not see.
    ///
    /// A fatal client error (which librdkafka never retries) ends the read: the caller asks
    /// [`Consumer::fatal_error`] after a batch, or after a read of none.
    pub async fn fill(&self, limits: BatchLimits, mut on_record: impl FnMut(ConsumedRecord<'_>), idle_interrupt: impl std::future::Future<Output = ()>) -> usize {
        if self.fatal_error().is_some() {
            return 0;
        }
        let (mut count, mut bytes) = (0, 0usize);
        let mut deadline: Option<Instant> = None;
        let mut idle_interrupt = std::pin::pin!(idle_interrupt);
        while count < limits.records && bytes < limits.bytes {
            let received = match deadline {
                None => tokio::select! {
                    r = self.inner().recv() => r,
                    _ = &mut idle_interrupt => return 0,
                },
                Some(d) => match tokio::time::timeout_at(d, self.inner().recv()).await {
                    Ok(r) => r,
                    Err(_elapsed) => break,
                },
            };
            match received {
                Ok(msg) => {
                    bytes = bytes.saturating_add(record_size(&msg));
                    on_record(ConsumedRecord { msg: &msg });
                    count += 1;
                    deadline.get_or_insert_with(|| Instant::now() + limits.wait);
                }
                Err(e) => {
                    if matches!(e, rdkafka::error::KafkaError::MessageConsumptionFatal(_)) || self.fatal_error().is_some() {
                        break;
                    }
                    // Retried below; an outage is reported once, by the broker watch.
                    crate::health::client_error(&self.inner().context().health, "consumer", &e, "");
                    if count > 0 {
                        break;
                    }
                    tokio::time::sleep(ERROR_BACKOFF).await;
                }
            }
        }
        count
    }

    /// Why the client stopped for good, if it did: librdkafka raises a fatal error (a broker
    /// that refuses the group protocol, say) once and never retries, so reading on would
    /// leave a connector `RUNNING` that reads nothing.
    pub fn fatal_error(&self) -> Option<FatalError> {
        self.inner().client().fatal_error().map(|(code, reason)| FatalError {
            // A broker that lists KIP-848 but has not enabled it answers UNSUPPORTED_VERSION;
            // one that does not know the heartbeat request at all, UNSUPPORTED_FEATURE.
            group_protocol_refused: matches!(code, RDKafkaErrorCode::UnsupportedVersion | RDKafkaErrorCode::UnsupportedFeature),
            reason: format!("{reason} ({code:?})"),
        })
    }

    /// Records in the assigned partitions not yet read, from what the client last heard
    /// from the broker (no request); `None` until it knows.
    pub fn lag(&self) -> Option<i64> {
        let lags = self.partition_lag();
        (!lags.is_empty()).then(|| lags.iter().map(|(_, _, lag)| lag).sum())
    }

    /// [`Consumer::lag`] per partition read from so far: `(topic, partition, lag)`.
    pub fn partition_lag(&self) -> Vec<(String, i32, i64)> {
        crate::lag::cached_lag(self.inner())
    }

    /// The `(topic, partition)`s assigned to this consumer now.
    pub fn assigned(&self) -> Vec<(String, i32)> {
        self.inner().assignment().map(|tpl| tpl.elements().iter().map(|e| (e.topic().to_owned(), e.partition())).collect()).unwrap_or_default()
    }

    /// Stops fetching from every assigned partition (records already buffered stay put and
    /// are read after [`Consumer::resume_all`]).
    pub fn pause_all(&self) -> Result<(), KafkaError> {
        let assigned = self.inner().assignment().map_err(KafkaError::Pause)?;
        self.inner().pause(&assigned).map_err(KafkaError::Pause)
    }

    /// Fetches again from every assigned partition.
    pub fn resume_all(&self) -> Result<(), KafkaError> {
        let assigned = self.inner().assignment().map_err(KafkaError::Pause)?;
        self.inner().resume(&assigned).map_err(KafkaError::Pause)
    }

    /// Partitions assigned or revoked since the last call, in order; always none unless the
    /// consumer was made with [`ConsumerOptions::keep_partition_changes`].
    pub fn take_partition_changes(&self) -> Vec<PartitionChange> {
        std::mem::take(&mut *self.inner().context().changes.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Remembers `offsets` (next offsets to read) as safe without committing them yet: a
    /// revocation commits them before its partitions go, so their next owner starts after
    /// every acknowledged record, not after the last periodic commit (a second of work,
    /// read and written again). Entries for partitions no longer held are harmless: a
    /// revocation commits only its own partitions, never below the group's offset as it was
    /// when they were assigned (and, during a close, none assigned meanwhile).
    pub fn acknowledged(&self, offsets: &Offsets) {
        self.inner().context().safe.lock().unwrap_or_else(|p| p.into_inner()).merge(offsets);
    }

    /// Commits `offsets` (next offsets to read). `sync` waits for the broker's answer; use it
    /// at shutdown so the last acknowledged work is not re-read. The offsets are also
    /// remembered as safe: they are committed again, synchronously, right before their
    /// partitions are revoked in a rebalance.
    pub fn commit(&self, offsets: &Offsets, sync: bool) -> Result<(), KafkaError> {
        if offsets.is_empty() {
            return Ok(());
        }
        // Only partitions this consumer holds now: after its partitions moved (a host frozen
        // past its session, say), the group may take a commit from the consumer's new
        // generation for partitions another member reads now, moving their offsets back.
        // And none below what the group had when the partition was assigned here.
        let held = self.assigned();
        let mut owned = offsets.clone();
        let floors = self.inner().context().floors.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let gone: Vec<(String, i32)> = offsets
            .iter()
            .filter(|(t, p, next)| !held.iter().any(|(ht, hp)| ht == t && hp == p) || floors.get(&((*t).to_owned(), *p)).is_some_and(|floor| next < floor))
            .map(|(t, p, _)| (t.to_owned(), p))
            .collect();
        if !gone.is_empty() {
            tracing::debug!(partitions = ?gone, "not committing offsets of partitions not assigned here, or below the group's");
            owned.forget(&gone);
        }
        if owned.is_empty() {
            return Ok(());
        }
        self.inner().context().safe.lock().unwrap_or_else(|p| p.into_inner()).merge(&owned);
        let mut tpl = TopicPartitionList::new();
        for (topic, partition, next) in owned.iter() {
            tpl.add_partition_offset(topic, partition, Offset::Offset(next)).map_err(KafkaError::Commit)?;
        }
        let mode = if sync { CommitMode::Sync } else { CommitMode::Async };
        self.inner().commit(&tpl, mode).map_err(KafkaError::Commit)
    }

    /// [`Consumer::commit`] from async code: a synchronous commit waits for the broker, so it
    /// runs on a blocking thread and never holds an async worker.
    pub async fn commit_off_thread(self: &std::sync::Arc<Self>, offsets: &Offsets, sync: bool) -> Result<(), KafkaError> {
        if !sync {
            return self.commit(offsets, false);
        }
        let (consumer, offsets) = (self.clone(), offsets.clone());
        match tokio::task::spawn_blocking(move || consumer.commit(&offsets, true)).await {
            Ok(committed) => committed,
            Err(e) => Err(KafkaError::Blocking(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests;
