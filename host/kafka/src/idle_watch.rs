//! One reader for every idle task's partitions, so an idle connector holds no client.
//!
//! A connector's consumer costs librdkafka's threads (main, internal, one per broker) and
//! its fetch and heartbeat timers even when nothing arrives: at 1,000 idle connectors, four
//! threads and nearly half a core. A task idle long enough gives its consumer up
//! ([`crate::Release`]) and registers its partitions here, each from the offset where its
//! unread records would start; the host's one watch client reads them all (assigned by hand,
//! no group) and wakes a task as soon as any of its partitions has a record at or after its
//! offset. Nothing is committed here and no record is handed on: the woken task's new
//! consumer reads from its group's offsets, which the release left exactly there.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer as _};
use rdkafka::message::Message as _;
use rdkafka::{Offset, TopicPartitionList};
use tokio::sync::Notify;

use crate::{KafkaError, WatchPoint};

/// How long the watch thread waits for a record before it checks whether to stop.
const POLL: Duration = Duration::from_millis(500);

/// How often the watched topics' partition counts are read unless the host's `kafka:` sets a
/// shorter `topic.metadata.refresh.interval.ms` (librdkafka's own consumers notice new
/// partitions that often, 5 minutes by default; the watch looks more often).
const METADATA_EVERY: Duration = Duration::from_secs(60);

/// The librdkafka setting that, when the host sets it shorter than [`METADATA_EVERY`], is
/// used instead: an operator who wants new partitions noticed sooner says so once.
const METADATA_REFRESH_SETTING: &str = "topic.metadata.refresh.interval.ms";

/// The shortest partition-count interval: each check asks the broker about every topic (one
/// request, however many topics are watched), so it is not made more often than this.
const METADATA_EVERY_MIN: Duration = Duration::from_secs(5);

/// How long the broker may hold a fetch that finds no record, unless the host's `kafka:` sets
/// it (librdkafka's default is 500 ms). The watch's fetches mostly find nothing, and each
/// empty answer costs librdkafka a search through every watched topic for each partition:
/// at 1,000 idle connectors that was about 1 % of a core, and fewer answers cost less. A
/// record that arrives ends the wait at once, so no wake-up waits for this, except on a
/// partition added to the watch while a fetch is held: it is asked for from the next one.
const FETCH_WAIT: Duration = Duration::from_millis(2_000);
const FETCH_WAIT_SETTING: &str = "fetch.wait.max.ms";

/// Least time between two warnings that the watch cannot read.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// Longest wait for one topic's metadata.
const METADATA_TIMEOUT: Duration = Duration::from_secs(10);

/// Settings of the host's `kafka:` that belong to a consumer group; the watch joins none.
const GROUP_SETTINGS: &[&str] = &["group.", "partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms"];

/// The host's watch over idle tasks' partitions; its thread ends when it is dropped.
pub struct IdleWatch {
    state: Arc<State>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct State {
    client: BaseConsumer,
    table: Mutex<Table>,
    stop: AtomicBool,
    /// How often the watched topics' partition counts are read.
    metadata_every: Duration,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    /// Per partition the client reads: where it started and what it saw, and the watches.
    partitions: HashMap<(String, i32), Watched>,
    /// Per watch: what wakes it and its partitions.
    watches: HashMap<u64, (Arc<Notify>, Vec<(String, i32)>)>,
    /// Per watched topic, its partition count when first seen: a partition added while its
    /// tasks are idle is read by none of them, so it wakes them all.
    partition_counts: HashMap<String, usize>,
}

struct Watched {
    /// The offset the client was assigned at (lowered when a new watch starts earlier).
    started_at: i64,
    /// The last record's offset the client saw, if any.
    last_seen: Option<i64>,
    /// `(watch id, from)`: a record at `from` or later wakes the watch.
    watches: Vec<(u64, i64)>,
}

/// One task's registration: [`Watch::woken`] resolves once a record arrives at or after one
/// of its points. Dropping it stops watching its partitions.
pub struct Watch {
    id: u64,
    woken: Arc<Notify>,
    state: Arc<State>,
}

impl IdleWatch {
    /// Creates the watch client from the host's `kafka:` settings and starts its thread.
    pub fn new(settings: &[(String, String)]) -> Result<Self, KafkaError> {
        let mut config = crate::client_config::client_config_except(settings, |k| GROUP_SETTINGS.iter().any(|g| k.starts_with(g)));
        // A group id only because librdkafka assigns by hand only with one; it never joins
        // it and commits nothing. A watched offset out of range (the records were deleted)
        // starts from the oldest left, so any record there still wakes its task.
        config
            .set("group.id", "turnpike-idle-watch")
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("auto.offset.reset", "earliest")
            .set("queued.max.messages.kbytes", "1024");
        if !settings.iter().any(|(k, _)| k == FETCH_WAIT_SETTING) {
            config.set(FETCH_WAIT_SETTING, FETCH_WAIT.as_millis().to_string());
        }
        let client: BaseConsumer = config.create().map_err(|source| KafkaError::Client { role: "idle watch", source })?;
        let state = Arc::new(State { client, table: Mutex::default(), stop: AtomicBool::new(false), metadata_every: metadata_every(settings) });
        let reader = state.clone();
        let thread = std::thread::Builder::new()
            .name("turnpike-idle-watch".into())
            .spawn(move || reader.read())
            .map_err(|e| KafkaError::Blocking(format!("could not start the idle watch thread: {e}")))?;
        Ok(Self { state, thread: Some(thread) })
    }

    /// Watches `points` for one task. Blocking (each newly read partition is assigned to the
    /// watch client). On an error nothing is watched.
    pub fn watch(&self, points: &[WatchPoint]) -> Result<Watch, KafkaError> {
        // Each new topic's partition count, asked before the table is locked (it is a broker
        // call): a partition added from now on wakes the topic's watches.
        let mut topics: Vec<&str> = points.iter().map(|p| p.topic.as_str()).collect();
        topics.sort_unstable();
        topics.dedup();
        let known: Vec<String> = self.state.lock().partition_counts.keys().cloned().collect();
        let counts: Vec<(String, usize)> = topics.into_iter().filter(|t| !known.iter().any(|k| k == t)).filter_map(|t| self.state.partition_count(t).map(|n| (t.to_owned(), n))).collect();
        let mut table = self.state.lock();
        for (topic, count) in counts {
            table.partition_counts.entry(topic).or_insert(count);
        }
        // The client first, the table after: a failed call leaves the table as it was.
        let (mut assign, mut reassign, mut seen) = (TopicPartitionList::new(), TopicPartitionList::new(), false);
        for point in points {
            match table.partitions.get(&(point.topic.clone(), point.partition)) {
                // The client already read a record at or after the point: wake at once.
                Some(watched) if watched.last_seen.is_some_and(|last| last >= point.from) => seen = true,
                // It reads from later: read again from the point, so a record between wakes it.
                Some(watched) if point.from < watched.started_at => {
                    reassign.add_partition(&point.topic, point.partition);
                    assign.add_partition_offset(&point.topic, point.partition, Offset::Offset(point.from)).map_err(KafkaError::Offsets)?;
                }
                Some(_) => {}
                None => assign.add_partition_offset(&point.topic, point.partition, Offset::Offset(point.from)).map_err(KafkaError::Offsets)?,
            }
        }
        if reassign.count() > 0 {
            self.state.client.incremental_unassign(&reassign).map_err(KafkaError::Offsets)?;
        }
        if assign.count() > 0 {
            if let Err(e) = self.state.client.incremental_assign(&assign) {
                self.state.undo_reassign(&mut *table, &reassign);
                return Err(KafkaError::Offsets(e));
            }
        }
        let id = table.next_id;
        table.next_id += 1;
        for point in points {
            let reassigned = assign.find_partition(&point.topic, point.partition).is_some();
            let watched = table.partitions.entry((point.topic.clone(), point.partition)).or_insert(Watched { started_at: point.from, last_seen: None, watches: Vec::new() });
            if reassigned {
                (watched.started_at, watched.last_seen) = (point.from, None);
            }
            watched.watches.push((id, point.from));
        }
        let woken = Arc::new(Notify::new());
        if seen {
            woken.notify_one();
        }
        table.watches.insert(id, (woken.clone(), points.iter().map(|p| (p.topic.clone(), p.partition)).collect()));
        drop(table);
        Ok(Watch { id, woken, state: self.state.clone() })
    }

    /// Partitions read now (for tests and status).
    pub fn partitions(&self) -> usize {
        self.state.lock().partitions.len()
    }
}

impl Drop for IdleWatch {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::error!("the idle watch thread panicked");
            }
        }
    }
}

impl Watch {
    /// Resolves once a record arrived at or after one of the watched offsets (at once if
    /// one already did).
    pub async fn woken(&self) {
        self.woken.notified().await;
    }
}

impl Drop for Watch {
    /// Stops reading the partitions no other task watches. If the client cannot stop, they
    /// stay in the table without watches: the client still reads them, and a later watch
    /// of one needs no new assignment (which the client would refuse).
    fn drop(&mut self) {
        let mut table = self.state.lock();
        let Some((_, keys)) = table.watches.remove(&self.id) else { return };
        let mut unwatched = Vec::new();
        for key in keys {
            let Some(watched) = table.partitions.get_mut(&key) else { continue };
            watched.watches.retain(|(id, _)| *id != self.id);
            if watched.watches.is_empty() {
                unwatched.push(key);
            }
        }
        if unwatched.is_empty() {
            return;
        }
        let mut unassign = TopicPartitionList::new();
        for (topic, partition) in &unwatched {
            unassign.add_partition(topic, *partition);
        }
        match self.state.client.incremental_unassign(&unassign) {
            Ok(()) => {
                for key in &unwatched {
                    table.partitions.remove(key);
                }
                let table = &mut *table;
                let partitions = &table.partitions;
                table.partition_counts.retain(|topic, _| partitions.keys().any(|(t, _)| t == topic));
            }
            Err(e) => tracing::warn!(error = %e, "the idle watch could not stop reading partitions; it reads them until the host stops"),
        }
    }
}

/// The partition-count interval: the host's [`METADATA_REFRESH_SETTING`] when it sets one
/// above 0 and below [`METADATA_EVERY`] (librdkafka refuses a malformed value when the host's
/// clients are created), no shorter than [`METADATA_EVERY_MIN`]; else [`METADATA_EVERY`].
fn metadata_every(settings: &[(String, String)]) -> Duration {
    let set = settings.iter().find(|(k, _)| k == METADATA_REFRESH_SETTING).and_then(|(_, v)| v.trim().parse::<u64>().ok());
    set.filter(|ms| *ms > 0).map_or(METADATA_EVERY, |ms| Duration::from_millis(ms).clamp(METADATA_EVERY_MIN, METADATA_EVERY))
}

/// A warning worth repeating while its cause lasts, but no more than once per [`WARN_EVERY`]:
/// librdkafka reports a lasting error again and again.
#[derive(Default)]
struct Warning {
    last: Option<Instant>,
}

impl Warning {
    /// Whether to warn now (else the caller logs at debug).
    fn due(&mut self) -> bool {
        let due = self.last.is_none_or(|at| at.elapsed() >= WARN_EVERY);
        if due {
            self.last = Some(Instant::now());
        }
        due
    }
}

impl State {
    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The watch thread: reads until the watch is dropped, waking the tasks each record
    /// concerns, and every `metadata_every` the tasks of topics that grew partitions.
    fn read(&self) {
        let mut metadata_due = Instant::now() + self.metadata_every;
        // Idle tasks look healthy while the watch cannot read for them: say so at warn.
        let (mut read_warning, mut metadata_warning) = (Warning::default(), Warning::default());
        while !self.stop.load(Ordering::Relaxed) {
            match self.client.poll(POLL) {
                None => {}
                Some(Ok(record)) => self.arrived(record.topic(), record.partition(), record.offset()),
                Some(Err(e)) if read_warning.due() => {
                    tracing::warn!(error = %e, "the idle watch cannot read idle tasks' partitions; retrying (a record there wakes its task once it can)");
                    std::thread::sleep(POLL);
                }
                Some(Err(e)) => {
                    tracing::debug!(error = %e, "idle watch read error; retried");
                    std::thread::sleep(POLL);
                }
            }
            if Instant::now() >= metadata_due {
                self.check_partition_counts(&mut metadata_warning);
                metadata_due = Instant::now() + self.metadata_every;
            }
        }
    }

    /// A record at `offset` wakes every watch of its partition from that offset or before.
    fn arrived(&self, topic: &str, partition: i32, offset: i64) {
        let mut table = self.lock();
        let table = &mut *table;
        let Some(watched) = table.partitions.get_mut(&(topic.to_owned(), partition)) else { return };
        watched.last_seen = Some(watched.last_seen.map_or(offset, |last| last.max(offset)));
        for (id, from) in &watched.watches {
            if *from <= offset {
                if let Some((woken, _)) = table.watches.get(id) {
                    woken.notify_one();
                }
            }
        }
    }

    /// `topic`'s partition count, if the broker says (a topic it reports an error for, or no
    /// partitions, has none).
    fn partition_count(&self, topic: &str) -> Option<usize> {
        let metadata = self.client.fetch_metadata(Some(topic), METADATA_TIMEOUT).ok()?;
        let found = metadata.topics().first().filter(|t| t.error().is_none())?;
        (!found.partitions().is_empty()).then(|| found.partitions().len())
    }

    /// A failed assignment after the re-read partitions were unassigned: they are read again
    /// from where they were; if even that fails, their watches are woken (their tasks take a
    /// consumer again) and they leave the table.
    fn undo_reassign(&self, table: &mut Table, reassign: &TopicPartitionList) {
        if reassign.count() == 0 {
            return;
        }
        let mut back = TopicPartitionList::new();
        for e in reassign.elements() {
            if let Some(watched) = table.partitions.get(&(e.topic().to_owned(), e.partition())) {
                let _ = back.add_partition_offset(e.topic(), e.partition(), Offset::Offset(watched.started_at));
            }
        }
        if let Err(e) = self.client.incremental_assign(&back) {
            tracing::warn!(error = %e, "the idle watch lost partitions it read; waking their tasks");
            for e in reassign.elements() {
                let Some(watched) = table.partitions.remove(&(e.topic().to_owned(), e.partition())) else { continue };
                for (id, _) in watched.watches {
                    if let Some((woken, _)) = table.watches.get(&id) {
                        woken.notify_one();
                    }
                }
            }
        }
    }

    /// Wakes the watches on a topic whose partition count grew since it was first watched.
    fn check_partition_counts(&self, warning: &mut Warning) {
        let metadata = match self.client.fetch_metadata(None, METADATA_TIMEOUT) {
            Ok(metadata) => metadata,
            Err(e) if warning.due() => return tracing::warn!(error = %e, "the idle watch cannot read the topics' partition counts (new partitions do not wake idle tasks); retrying"),
            Err(e) => return tracing::debug!(error = %e, "idle watch: could not read the topics' partitions"),
        };
        let mut table = self.lock();
        let table = &mut *table;
        for topic in metadata.topics().iter().filter(|t| t.error().is_none() && !t.partitions().is_empty()) {
            let (name, count) = (topic.name(), topic.partitions().len());
            let Some(known) = table.partition_counts.get(name).copied() else { continue };
            if count > known {
                let topic = name.to_owned();
                tracing::info!(%topic, from = known, to = count, "partitions added to a topic idle tasks read; waking them");
                table.partition_counts.insert(topic.clone(), count);
                for (woken, partitions) in table.watches.values() {
                    if partitions.iter().any(|(t, _)| *t == topic) {
                        woken.notify_one();
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
