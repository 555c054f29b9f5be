//! Records progress only after every output derived from it is acknowledged by the broker,
//! batch by batch and in order. This is the at-least-once guarantee. Progress is consumer
//! offsets for connectors that read Kafka, and the source's position for source connectors.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use turnpike_kafka::{Consumer, Delivery, FencedPositions, KafkaError, Offsets, OutgoingRecord, Producer};
use turnpike_runtime::FaultClass;

use crate::connector_state::ConnectorState;
use crate::status::{FaultInfo, LiveStatus};

/// Batches whose outputs are in flight, at most. Bounds memory and makes a slow broker slow
/// the connector down (backpressure) instead of buffering without end.
pub(crate) const IN_FLIGHT_BATCHES: usize = 8;

/// How often acknowledged progress is saved while running (busy or idle); also saved at
/// shutdown. A crash re-reads at most this much acknowledged work (duplicates, never losses).
const COMMIT_INTERVAL: Duration = Duration::from_secs(1);

/// Where progress is saved.
pub(crate) trait Checkpoint: Send + Sync + 'static {
    /// What one batch completes.
    type Progress: Default + Send + 'static;
    /// Folds a later batch's progress into what is acknowledged.
    fn merge(acknowledged: &mut Self::Progress, batch: Self::Progress);
    /// Saves the acknowledged progress; `sync` waits for the broker. `Ok(true)`: saved, and
    /// the broker said so. `Ok(false)`: not known to be saved: sent without waiting (an
    /// asynchronous commit, whose failure nobody hears of), or failed in a way that may pass
    /// (logged); the progress is saved again at the next interval, even if nothing new
    /// arrives (progress only grows). `Err` says no save can succeed any more (a fenced
    /// writer), which fails the connector.
    fn save(&self, acknowledged: &Self::Progress, sync: bool) -> impl Future<Output = Result<bool, FaultInfo>> + Send;
    /// Told each batch's progress once its outputs are acknowledged, between saves.
    fn acknowledged(&self, _batch: &Self::Progress) {}
}

/// A consumer group's offsets: for connectors that read Kafka.
pub(crate) struct GroupOffsets {
    pub(crate) consumer: Arc<Consumer>,
    pub(crate) connector: String,
}

impl Checkpoint for GroupOffsets {
    type Progress = Offsets;

    fn merge(acknowledged: &mut Offsets, batch: Offsets) {
        acknowledged.merge(&batch);
    }

    async fn save(&self, acknowledged: &Offsets, sync: bool) -> Result<bool, FaultInfo> {
        match self.consumer.commit_off_thread(acknowledged, sync).await {
            Ok(()) => Ok(sync),
            Err(e) => {
                tracing::warn!(connector = %self.connector, error = %e, "offset commit failed; the next save commits these offsets again");
                Ok(false)
            }
        }
    }

    /// What a rebalance commits before partitions leave: everything acknowledged so far.
    fn acknowledged(&self, batch: &Offsets) {
        self.consumer.acknowledged(batch);
    }
}

/// A source's position, saved in the compacted positions topic under the connector's name.
pub(crate) struct SourcePosition {
    pub(crate) writer: PositionWriter,
    pub(crate) topic: String,
    pub(crate) connector: String,
}

/// How a source's positions are written.
pub(crate) enum PositionWriter {
    /// Through the host's producer: on a host of its own, nothing else runs the source.
    Shared(Producer),
    /// In a transaction of the source's own fenced writer: in a cluster the source may move,
    /// and the host it left must not save over its successor.
    Fenced(Arc<FencedPositions>),
}

impl Checkpoint for SourcePosition {
    /// The position after the batch's last record, if any record carried one.
    type Progress = Option<Vec<u8>>;

    fn merge(acknowledged: &mut Option<Vec<u8>>, batch: Option<Vec<u8>>) {
        if batch.is_some() {
            *acknowledged = batch;
        }
    }

    async fn save(&self, acknowledged: &Option<Vec<u8>>, _sync: bool) -> Result<bool, FaultInfo> {
        let Some(position) = acknowledged else { return Ok(true) };
        // Always waits for the acknowledgement: the committer is its own task, and the next
        // save should not overtake this one.
        let saved = match &self.writer {
            PositionWriter::Shared(producer) => {
                let record = OutgoingRecord { topic: &self.topic, key: Some(self.connector.as_bytes()), value: Some(position), timestamp: None };
                match producer.send(record, []).await {
                    Ok(delivery) => delivery.wait().await,
                    Err(e) => Err(e),
                }
            }
            PositionWriter::Fenced(writer) => {
                let (writer, position) = (writer.clone(), position.clone());
                tokio::task::spawn_blocking(move || writer.save(&position)).await.unwrap_or_else(|e| Err(KafkaError::Blocking(e.to_string())))
            }
        };
        match saved {
            Ok(()) => Ok(true),
            Err(KafkaError::Fenced(why)) => Err(FaultInfo::new(FaultClass::Fenced, why)),
            Err(KafkaError::PositionWriter(why)) => Err(FaultInfo::new(FaultClass::Kafka, why)),
            Err(e) => {
                tracing::warn!(connector = %self.connector, error = %e, "saving the source position failed; the next save writes it again");
                Ok(false)
            }
        }
    }
}

/// One batch's outputs in flight and the progress they complete.
pub(crate) struct PendingBatch<P> {
    pub(crate) deliveries: Vec<Delivery>,
    pub(crate) progress: P,
}

/// Runs until the task drops its sender, then saves what is acknowledged and returns.
/// On a delivery failure it saves what was acknowledged before, marks the connector failed
/// and cancels `failed` so the task stops reading.
pub(crate) async fn run<C: Checkpoint>(
    mut batches: mpsc::Receiver<PendingBatch<C::Progress>>,
    checkpoint: C,
    status: Arc<LiveStatus>,
    (connector, task): (String, usize),
    failed: CancellationToken,
) {
    let mut acknowledged = C::Progress::default();
    let (mut last_save, mut last_batch) = (tokio::time::Instant::now(), tokio::time::Instant::now());
    // Whether `acknowledged` has progress not known to be saved. While batches come, a save
    // is sent without waiting for the broker (the committer awaits deliveries meanwhile);
    // once none came for an interval, the timer saves it once more and waits, so an idle
    // connector's progress is known to be saved (or is saved again an interval later).
    let mut dirty = false;
    'batches: loop {
        let due = last_save.max(last_batch) + COMMIT_INTERVAL;
        let batch = tokio::select! {
            batch = batches.recv() => batch,
            _ = tokio::time::sleep_until(due), if dirty => {
                match checkpoint.save(&acknowledged, true).await {
                    Ok(saved) => (last_save, dirty) = (tokio::time::Instant::now(), !saved),
                    Err(fault) => return cannot_save(&status, &connector, fault, &failed),
                }
                continue;
            }
        };
        let Some(batch) = batch else { break };
        // Dead letters are counted as such where they are sent, not as outputs.
        let outputs = batch.deliveries.iter().filter(|d| !d.is_dead_letter());
        let (outputs, bytes) = outputs.fold((0u64, 0u64), |(n, b), d| (n + 1, b + d.bytes() as u64));
        for delivery in batch.deliveries {
            if let Err(e) = delivery.wait().await {
                tracing::error!(%connector, error = %e, "output not acknowledged; stopping without saving this batch's progress");
                status.set(ConnectorState::Failed, Some(FaultInfo::new(FaultClass::Kafka, e.to_string())));
                failed.cancel();
                break 'batches;
            }
        }
        status.count_out(task, outputs, bytes);
        checkpoint.acknowledged(&batch.progress);
        C::merge(&mut acknowledged, batch.progress);
        (dirty, last_batch) = (true, tokio::time::Instant::now());
        if last_save.elapsed() >= COMMIT_INTERVAL {
            match checkpoint.save(&acknowledged, false).await {
                Ok(saved) => (last_save, dirty) = (tokio::time::Instant::now(), !saved),
                Err(fault) => {
                    batches.close();
                    return cannot_save(&status, &connector, fault, &failed);
                }
            }
        }
    }
    // Refuse further batches at once, so a task blocked on a full channel wakes up.
    batches.close();
    if let Err(fault) = checkpoint.save(&acknowledged, true).await {
        cannot_save(&status, &connector, fault, &failed);
    }
}

/// Progress can no longer be saved: the connector fails, and its task stops reading.
fn cannot_save(status: &LiveStatus, connector: &str, fault: FaultInfo, failed: &CancellationToken) {
    tracing::error!(%connector, class = %fault.class, error = %fault.message, "cannot save progress any more; stopping");
    status.set(ConnectorState::Failed, Some(fault));
    failed.cancel();
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tokio::time::Instant;

    use super::*;
    use crate::events::Events;

    /// One save as the checkpoint saw it.
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Save {
        progress: u64,
        sync: bool,
        at: Instant,
    }

    /// Records saves; the first `failures` synchronous ones fail in a way that may pass. An
    /// asynchronous one is never confirmed, as with a consumer's commit.
    struct Recording {
        failures: usize,
        saves: Arc<Mutex<Vec<Save>>>,
    }

    impl Checkpoint for Recording {
        type Progress = u64;

        fn merge(acknowledged: &mut u64, batch: u64) {
            *acknowledged = (*acknowledged).max(batch);
        }

        async fn save(&self, acknowledged: &u64, sync: bool) -> Result<bool, FaultInfo> {
            let mut saves = self.saves.lock().expect("saves");
            saves.push(Save { progress: *acknowledged, sync, at: Instant::now() });
            let synchronous = saves.iter().filter(|s| s.sync).count();
            Ok(sync && synchronous > self.failures)
        }
    }

    fn start(failures: usize) -> (mpsc::Sender<PendingBatch<u64>>, tokio::task::JoinHandle<()>, Arc<Mutex<Vec<Save>>>) {
        let saves = Arc::new(Mutex::new(Vec::new()));
        let (send, batches) = mpsc::channel(IN_FLIGHT_BATCHES);
        let status = Arc::new(LiveStatus::new("c", Arc::new(Events::default())));
        let committer = tokio::spawn(run(batches, Recording { failures, saves: saves.clone() }, status, ("c".into(), 0), CancellationToken::new()));
        (send, committer, saves)
    }

    fn taken(saves: &Mutex<Vec<Save>>) -> Vec<Save> {
        saves.lock().expect("saves").clone()
    }

    /// An idle connector whose save failed saves again a second later, without new batches:
    /// nothing else would ever save that progress.
    #[tokio::test(start_paused = true)]
    async fn a_failed_save_is_tried_again_on_the_timer_without_new_batches() {
        let (send, committer, saves) = start(2);
        send.send(PendingBatch { deliveries: Vec::new(), progress: 7 }).await.expect("send");
        tokio::time::sleep(COMMIT_INTERVAL * 6).await;
        let seen = taken(&saves);
        assert_eq!(seen.iter().map(|s| (s.progress, s.sync)).collect::<Vec<_>>(), vec![(7, true); 3], "two failed saves, then one that went through, and no more: {seen:?}");
        assert!(seen.windows(2).all(|w| w[1].at - w[0].at >= COMMIT_INTERVAL), "a second between tries: {seen:?}");
        drop(send);
        committer.await.expect("committer");
    }

    /// While batches come, saves are sent without waiting; once they stop, the last progress
    /// is saved once more, waiting for the broker: a commit sent without waiting may have
    /// failed unseen, and an idle connector saves nothing else.
    #[tokio::test(start_paused = true)]
    async fn saves_sent_while_busy_are_confirmed_once_batches_stop() {
        let (send, committer, saves) = start(0);
        for progress in 1..=10 {
            send.send(PendingBatch { deliveries: Vec::new(), progress }).await.expect("send");
            tokio::time::sleep(COMMIT_INTERVAL * 3 / 10).await;
        }
        tokio::time::sleep(COMMIT_INTERVAL * 5).await;
        let seen = taken(&saves);
        let (busy, quiet) = seen.split_at(seen.len() - 1);
        assert!(!busy.is_empty() && busy.iter().all(|s| !s.sync), "saves while busy are sent without waiting: {seen:?}");
        assert_eq!((quiet[0].progress, quiet[0].sync), (10, true), "then one confirmed save of the last progress, and no more: {seen:?}");
        drop(send);
        committer.await.expect("committer");
    }
}
