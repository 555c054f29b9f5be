//! Where a cluster's source connectors run. A source reads no partitions the broker could
//! spread, so the hosts share a data-less "slots" topic instead: one cluster-wide consumer
//! group reads it, the broker gives each host some of its partitions (slots), and a host runs
//! the sources whose slot it owns (a connector's slot is a hash of its name). Before a slot
//! leaves a host (a rebalance moves it, or the host was gone past its session), the host
//! stops the sources on it, which save their position, and only then lets it go.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer as _, ConsumerContext, Rebalance};
use rdkafka::TopicPartitionList;
use tokio::sync::watch;

use crate::close::CLOSE_WAIT;
use crate::KafkaError;

/// How long creating the topic or reading its metadata may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// How long a revocation waits for the sources on its slots to stop and save their
/// position; past it the slot goes anyway (the next owner's fenced writer keeps a late save
/// from landing).
const REVOKE_WAIT: Duration = Duration::from_secs(60);

/// Which slots this host owns, and which have sources running on them.
pub struct Slots {
    count: i32,
    state: Mutex<SlotState>,
    /// Woken when a source stops: a revocation waits on it.
    released: Condvar,
    /// Bumped on every change of ownership, for the supervisors waiting for a slot.
    changed: watch::Sender<u64>,
}

#[derive(Default)]
struct SlotState {
    owned: BTreeSet<i32>,
    running: HashMap<i32, usize>,
}

/// A source running on a slot: the slot is not given up while the lease is held.
pub struct SlotLease {
    slots: Arc<Slots>,
    slot: i32,
}

impl Drop for SlotLease {
    fn drop(&mut self) {
        let mut state = self.slots.state();
        if let Some(n) = state.running.get_mut(&self.slot) {
            *n = n.saturating_sub(1);
        }
        self.slots.released.notify_all();
    }
}

impl Slots {
    fn new(count: i32) -> Self {
        Self { count: count.max(1), state: Mutex::default(), released: Condvar::new(), changed: watch::channel(0).0 }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The slot of connector `name`: the same on every host (CRC-32 of the name, modulo the
    /// slots topic's partition count).
    pub fn slot_of(&self, name: &str) -> i32 {
        (crc32fast::hash(name.as_bytes()) % self.count as u32) as i32
    }

    /// Whether this host owns `slot` now.
    pub fn owns(&self, slot: i32) -> bool {
        self.state().owned.contains(&slot)
    }

    /// The slots this host owns now.
    pub fn owned(&self) -> BTreeSet<i32> {
        self.state().owned.clone()
    }

    /// Changes of ownership, to wait for one.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// A lease on `slot` if this host owns it: checked and taken at once, so a revocation
    /// either sees the lease and waits for it, or comes first and there is none.
    pub fn try_lease(self: &Arc<Self>, slot: i32) -> Option<SlotLease> {
        let mut state = self.state();
        if !state.owned.contains(&slot) {
            return None;
        }
        *state.running.entry(slot).or_default() += 1;
        Some(SlotLease { slots: self.clone(), slot })
    }

    fn assign(&self, slots: &[i32]) {
        self.state().owned.extend(slots.iter().copied());
        self.changed.send_modify(|n| *n += 1);
        tracing::info!(slots = ?slots, "source slots assigned to this host");
    }

    /// Gives `slots` up once no source runs on them (or after [`REVOKE_WAIT`]).
    fn revoke(&self, slots: &[i32]) {
        let mut state = self.state();
        for slot in slots {
            state.owned.remove(slot);
        }
        self.changed.send_modify(|n| *n += 1);
        let deadline = Instant::now() + REVOKE_WAIT;
        while slots.iter().any(|s| state.running.get(s).is_some_and(|&n| n > 0)) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tracing::warn!(slots = ?slots, "sources on revoked slots did not stop in time; giving the slots up anyway");
                break;
            }
            state = self.released.wait_timeout(state, left).unwrap_or_else(|p| p.into_inner()).0;
        }
        tracing::info!(slots = ?slots, "source slots revoked from this host");
    }
}

/// The slots consumer's context: rebalances change this host's slots.
struct SlotContext {
    slots: Arc<Slots>,
}

impl ClientContext for SlotContext {}

fn partitions(tpl: &TopicPartitionList) -> Vec<i32> {
    tpl.elements().iter().map(|e| e.partition()).collect()
}

impl ConsumerContext for SlotContext {
    fn pre_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(tpl) = rebalance {
            self.slots.revoke(&partitions(tpl));
        }
    }

    fn post_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        match rebalance {
            Rebalance::Assign(tpl) => self.slots.assign(&partitions(tpl)),
            Rebalance::Revoke(_) => {}
            Rebalance::Error(e) => tracing::warn!(error = %e, "source slots rebalance failed"),
        }
    }
}

/// This host's membership of the slots group: read on a thread of its own until dropped.
pub struct SlotOwner {
    slots: Arc<Slots>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SlotOwner {
    /// Creates `topic` with `count` partitions if missing and joins `group`, which reads it.
    /// The slot count is the topic's, whatever `count` says, so every host agrees.
    pub async fn join(settings: &[(String, String)], topic: &str, count: i32, group: &str) -> Result<Self, KafkaError> {
        // Short retention: nothing is ever written to it.
        crate::create_topic::create_unless_exists(settings, topic, count, &[("retention.ms", "60000")], "the source slots topic").await?;
        let (config, topic_name, group) = (crate::client_config::client_config(settings), topic.to_owned(), group.to_owned());
        tokio::task::spawn_blocking(move || Self::start(config, &topic_name, &group, CLOSE_WAIT)).await.map_err(|e| KafkaError::Blocking(e.to_string()))?
    }

    /// Joins `group`; its reader thread, once stopped, waits `close_wait` at most for the
    /// consumer to close.
    fn start(mut config: ClientConfig, topic: &str, group: &str, close_wait: Duration) -> Result<Self, KafkaError> {
        let count = partition_count(&config, topic)?;
        let slots = Arc::new(Slots::new(count));
        config.set("group.id", group).set("enable.auto.commit", "false").set("enable.partition.eof", "false");
        let uses_kip_848 = config.get("group.protocol").is_some_and(|p| p == "consumer");
        if !uses_kip_848 {
            config.set("partition.assignment.strategy", "cooperative-sticky");
        }
        let consumer: BaseConsumer<SlotContext> = config.create_with_context(SlotContext { slots: slots.clone() }).map_err(|source| KafkaError::Client { role: "slots reader", source })?;
        consumer.subscribe(&[topic]).map_err(|source| KafkaError::Subscribe { topics: vec![topic.to_owned()], source })?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("turnpike-slots".into())
            .spawn({
                let stop = stop.clone();
                let slots = slots.clone();
                move || {
                    while !stop.load(Ordering::Relaxed) {
                        // The topic holds no records: polling serves the rebalances.
                        if let Some(Err(e)) = consumer.poll(Duration::from_millis(200)) {
                            tracing::debug!(error = %e, "source slots consumer");
                        }
                        if let Some((code, reason)) = consumer.client().fatal_error() {
                            // librdkafka never retries, and never finishes closing such a
                            // consumer: this host gives its slots up (the broker gives them
                            // to the others) and leaves the client behind.
                            tracing::error!(error = %reason, ?code, "the source slots consumer failed for good; this host runs no source until it restarts");
                            slots.revoke(&slots.owned().into_iter().collect::<Vec<_>>());
                            return crate::close::close_left_behind(consumer, "slots consumer");
                        }
                    }
                    // Closing leaves the group: its slots are revoked (nothing runs on them
                    // by now) and move to the other hosts at once. A close that stalls is
                    // left behind: the broker moves the slots when the session ends.
                    crate::close::close_within(consumer, "slots consumer", close_wait, &crate::close::CloseDeadline::default());
                }
            })
            .map_err(|e| KafkaError::Blocking(format!("starting the slots reader thread: {e}")))?;
        tracing::info!(%topic, slots = count, %group, "joined the source slots group");
        Ok(Self { slots, stop, thread: Some(thread) })
    }

    /// The slots this host owns, for the supervisors.
    pub fn slots(&self) -> Arc<Slots> {
        self.slots.clone()
    }

    /// Leaves the slots group (after this host's sources stopped) and waits until it left.
    pub fn leave(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for SlotOwner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The slots topic's partition count, asked until the broker knows the topic (one created a
/// moment ago may not be in the metadata yet).
fn partition_count(config: &ClientConfig, topic: &str) -> Result<i32, KafkaError> {
    let client: BaseConsumer = config.create().map_err(|source| KafkaError::Client { role: "slots reader", source })?;
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let metadata = client.fetch_metadata(Some(topic), TIMEOUT).map_err(KafkaError::Offsets)?;
        let listed = metadata.topics().iter().find(|t| t.name() == topic);
        let count = listed.filter(|t| t.error().is_none()).map_or(0, |t| t.partitions().len() as i32);
        if count > 0 {
            return Ok(count);
        }
        if Instant::now() >= deadline {
            return Err(KafkaError::NoSlots { topic: topic.to_owned() });
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_leased_only_while_owned_and_a_revocation_waits_for_its_lease() {
        let slots = Arc::new(Slots::new(12));
        assert!(slots.try_lease(3).is_none(), "not owned yet");
        slots.assign(&[3, 4]);
        let lease = slots.try_lease(3).expect("owned");
        let revoking = std::thread::spawn({
            let slots = slots.clone();
            move || {
                let began = Instant::now();
                slots.revoke(&[3]);
                began.elapsed()
            }
        });
        // The revocation has removed the slot at once, and waits for the lease.
        let deadline = Instant::now() + Duration::from_secs(5);
        while slots.owns(3) && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(!slots.owns(3) && slots.try_lease(3).is_none(), "a revoked slot is not leased again");
        std::thread::sleep(Duration::from_millis(200));
        assert!(!revoking.is_finished(), "the revocation waits while a source runs on the slot");
        drop(lease);
        assert!(revoking.join().expect("revocation") >= Duration::from_millis(200));
        assert_eq!(slots.owned(), BTreeSet::from([4]));
    }

    /// A close that cannot finish (here: a source still on a slot, so the revocation waits
    /// for it) does not hold the host's exit: leaving waits for it a bounded time.
    #[tokio::test(flavor = "multi_thread")]
    async fn leaving_waits_a_bounded_time_for_a_close_that_does_not_finish() {
        // Made by the mock cluster, then joined (it answers no CreateTopics).
        let (_broker, settings) = crate::EmbeddedBroker::with_topic("slots", 4);
        let config = crate::client_config::client_config(&settings);
        let close_wait = Duration::from_millis(500);
        let mut owner = tokio::task::spawn_blocking(move || SlotOwner::start(config, "slots", "slots-group", close_wait)).await.expect("thread").expect("joined");
        let deadline = Instant::now() + Duration::from_secs(20);
        while owner.slots().owned().len() < 4 {
            assert!(Instant::now() < deadline, "the only member owns every slot");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let slots = owner.slots();
        let lease = slots.try_lease(0).expect("owned");
        let began = Instant::now();
        tokio::task::spawn_blocking(move || owner.leave()).await.expect("left");
        let took = began.elapsed();
        assert!(took < Duration::from_secs(5), "leaving waited {took:?} for a close held for {REVOKE_WAIT:?}");
        // The close did reach the revocation, which still waits for the lease.
        let deadline = Instant::now() + Duration::from_secs(10);
        while slots.owns(0) {
            assert!(Instant::now() < deadline, "the close never revoked the slots");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(slots.try_lease(0).is_none(), "a revoked slot is not leased again");
        drop(lease);
    }

    #[test]
    fn every_host_puts_a_connector_in_the_same_slot() {
        let slots = Slots::new(12);
        assert_eq!(slots.slot_of("orders-from-db"), (crc32fast::hash(b"orders-from-db") % 12) as i32);
        let spread: BTreeSet<i32> = (0..100).map(|i| slots.slot_of(&format!("source-{i}"))).collect();
        assert!(spread.len() > 6, "names spread over the slots: {spread:?}");
    }
}
