//! The one Kafka read loop of the transform and sink tasks: build a batch from the consumer,
//! hand it to the task, and pause and resume fetching with the connector. What differs
//! between the two (a sink flushes before it pauses and when a flush is due; a transform
//! switches plugin versions between batches and while paused) comes in through
//! [`ReadHooks`].

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use tokio_util::sync::CancellationToken;
use turnpike_config::{ConnectorConfig, StartFrom};
use turnpike_kafka::{BatchLimits, ConsumedRecord, Consumer, FatalError, Offsets, Release};
use turnpike_runtime::{BatchBuilder, FaultClass, InputBatch, RecordRef};

use super::{Exit, PauseHooks, TaskContext};
use crate::status::FaultInfo;

/// What a task adds to the read loop.
pub(crate) trait ReadHooks: PauseHooks {
    /// Before each read: a sink tells its plugin about rebalances and flushes when due; a
    /// transform switches to newly published plugin versions.
    fn before_read(&mut self, cx: &mut TaskContext) -> impl Future<Output = Result<(), Exit>> + Send;

    /// Before fetching pauses: a sink flushes what it wrote, so a long pause holds nothing
    /// uncommitted.
    fn before_pause(&mut self, cx: &mut TaskContext) -> impl Future<Output = Result<(), Exit>> + Send;

    /// Before an idle task reads where its partitions stand, to give its consumer up: a sink
    /// flushes, so that everything it read can be committed.
    fn before_release(&mut self, cx: &mut TaskContext) -> impl Future<Output = Result<(), Exit>> + Send;

    /// Ends an idle wait for records, besides a pause (a sink: the next flush is due; a
    /// transform: a plugin swap); the loop then goes round again. A batch already started
    /// is completed.
    fn interrupt(&mut self) -> impl Future<Output = ()> + Send;

    /// One batch as read: its records, their offsets, and the records that cannot be handed
    /// to a plugin as they are (`(index, why)`).
    fn batch(&mut self, cx: &mut TaskContext, batch: InputBatch, offsets: Offsets, unreadable: Vec<(u32, String)>) -> impl Future<Output = Result<(), Exit>> + Send;
}

/// Reads batches until the connector stops, `also_stop` is cancelled (both a shutdown), a
/// hook fails it, or (with `idle_after`) no record came for that long and the consumer can
/// be given up without losing one: then it returns `Ok` with where the partitions stand.
///
/// Stopping may drop a batch being read: nothing after it is committed in this run, so it
/// is read again on the next start. (A pause longer than the consumer's
/// `max.poll.interval.ms` also hands its partitions back to the group until resumed.)
pub(crate) async fn read_loop<H: ReadHooks>(cx: &mut TaskContext, consumer: &Arc<Consumer>, hooks: &mut H, also_stop: Option<&CancellationToken>, idle_after: Option<Duration>) -> Result<Release, Exit> {
    let limits = batch_limits(cx.connector.config());
    let mut last_record = Instant::now();
    // Where the consumer's partitions would be watched from, read once it was idle for
    // `idle_after`: it is given up (`Ok`) if one more short read finds nothing.
    let mut releasing: Option<Release> = None;
    // Per partition, the offset after the last record this consumer handed over.
    let mut read_so_far = Offsets::default();
    let earliest = cx.connector.config().start_from == StartFrom::Earliest;
    loop {
        if let Err(exit) = hooks.before_read(cx).await {
            return Err(exit);
        }
        if *cx.paused.borrow() {
            if let Err(exit) = hooks.before_pause(cx).await {
                return Err(exit);
            }
            if let Err(e) = consumer.pause_all() {
                tracing::warn!(connector = %cx.connector.name(), error = %e, "could not pause fetching");
            }
            if let Some(exit) = cx.wait_while_paused(hooks).await {
                return Err(exit);
            }
            if let Err(e) = consumer.resume_all() {
                tracing::warn!(connector = %cx.connector.name(), error = %e, "could not resume fetching");
            }
            (last_record, releasing) = (Instant::now(), None);
        }
        let mut builder = BatchBuilder::with_capacity(limits.records, 64 * 1024);
        let mut offsets = Offsets::default();
        let mut unreadable = Vec::new();
        let paused = &mut cx.paused;
        let interrupt = hooks.interrupt();
        let last_look = releasing.is_some();
        let idle_until = match (&releasing, idle_after) {
            (Some(_), _) => Some(Instant::now() + LAST_LOOK),
            (None, Some(after)) => Some(last_record + after),
            (None, None) => None,
        };
        // A pause (or the hook, or the idle deadline) interrupts only an idle wait; a batch
        // already started is completed (on the plugin versions it started with).
        let idle_ends = async move {
            let deadline = async move {
                match idle_until {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = paused.changed() => if changed.is_err() { std::future::pending::<()>().await },
                // Not during the last look: a sink's flush timer shorter than it would end
                // every look early, and the sink would never go idle.
                () = interrupt, if !last_look => {}
                () = deadline => {}
            }
        };
        let stopped = async move {
            match also_stop {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let read = tokio::select! {
            biased;
            _ = cx.cancel.cancelled() => return Err(Exit::Shutdown),
            () = stopped => return Err(Exit::Shutdown),
            n = consumer.fill(limits, |r| read_record(&r, &mut builder, &mut offsets, &mut unreadable), idle_ends) => n,
        };
        if read == 0 {
            if let Some(fatal) = consumer.fatal_error() {
                return Err(Exit::Failed(consumer_failed(&fatal)));
            }
            // Given up only when the last look ran its course: a pause or a plugin swap that
            // ended it is handled at the top of the loop first (and the release read again).
            if let Some(release) = releasing.take() {
                if idle_until.is_some_and(|at| Instant::now() >= at) {
                    return Ok(release);
                }
            }
            if idle_after.is_some_and(|after| last_record.elapsed() >= after) && !*cx.paused.borrow() {
                if let Err(exit) = hooks.before_release(cx).await {
                    return Err(exit);
                }
                releasing = release_points(cx.connector.name().as_str(), cx.task, consumer, &read_so_far, earliest).await;
                last_record = Instant::now();
            }
            continue;
        }
        releasing = None;
        last_record = Instant::now();
        read_so_far.merge(&offsets);
        cx.status.count_in(cx.task, read as u64, builder.bytes() as u64);
        let began = std::time::Instant::now();
        let handled = hooks.batch(cx, builder.finish(), offsets, unreadable).await;
        cx.status.measures.batch_took(began.elapsed());
        if let Err(exit) = handled {
            return Err(exit);
        }
    }
}

/// How long an idle task reads once more after it read where its partitions would be
/// watched from: a record written before a partition's end was read (and so before the
/// offset committed for a partition it never read from) may still be on its way to the
/// consumer; this read takes it, and the task reads on.
const LAST_LOOK: Duration = Duration::from_millis(200);

/// Where the consumer's partitions would be watched from, or `None` (logged) if it cannot be
/// given up now; then the task tries again after another idle period.
async fn release_points(connector: &str, task: usize, consumer: &Arc<Consumer>, read: &Offsets, earliest: bool) -> Option<Release> {
    let (reading, read) = (consumer.clone(), read.clone());
    match tokio::task::spawn_blocking(move || reading.release_points(&read, earliest)).await {
        Ok(Ok(release)) => Some(release),
        Ok(Err(why)) => {
            tracing::debug!(%connector, task = task + 1, %why, "idle, but keeping the consumer for now");
            None
        }
        Err(e) => {
            tracing::warn!(%connector, error = %e, "reading where an idle consumer's partitions stand failed");
            None
        }
    }
}

/// The fault of a consumer librdkafka stopped for good, with the fix when it is known.
fn consumer_failed(fatal: &FatalError) -> FaultInfo {
    let hint = if fatal.group_protocol_refused {
        "; the broker refused the consumer group protocol: set group.protocol: classic in kafka: (or enable KIP-848 on the cluster: kafka-features.sh upgrade --feature group.version=1)"
    } else {
        ""
    };
    FaultInfo::new(FaultClass::Kafka, format!("the Kafka consumer stopped for good: {}{hint}", fatal.reason))
}

/// When a batch read from Kafka closes, from the connector's `batch` settings.
fn batch_limits(config: &ConnectorConfig) -> BatchLimits {
    let b = &config.batch;
    BatchLimits { records: b.max_records.get() as usize, bytes: b.max_bytes.get() as usize, wait: Duration::from_millis(b.max_wait_ms.get()) }
}

/// Adds a consumed record to the batch being built and notes its offset. A record whose
/// headers cannot be handed to a plugin as they are is added (with its keys made readable,
/// for the dead-letter copy) and noted in `unreadable` with the reason.
fn read_record(r: &ConsumedRecord<'_>, builder: &mut BatchBuilder, offsets: &mut Offsets, unreadable: &mut Vec<(u32, String)>) {
    offsets.done(r.topic(), r.partition(), r.offset());
    let headers = r.headers();
    if let Some(why) = headers.problem {
        unreadable.push((builder.len() as u32, why));
    }
    let record = RecordRef { key: r.key(), value: r.value(), timestamp: r.timestamp(), topic: r.topic(), partition: r.partition(), offset: r.offset() };
    builder.push(record, headers.list.iter().map(|(k, v)| (k.as_ref(), *v)));
}
