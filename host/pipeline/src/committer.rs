//! Commits consumed offsets only after every output derived from them is acknowledged by
//! the broker, batch by batch and in order. This is the at-least-once guarantee.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use turnpike_kafka::{Consumer, Delivery, Offsets};

use crate::status::{ConnectorState, FaultInfo, LiveStatus};

/// Batches whose outputs are in flight, at most. Bounds memory and makes a slow broker slow
/// the consumer down (backpressure) instead of buffering without end.
pub(crate) const IN_FLIGHT_BATCHES: usize = 8;

/// How often acknowledged offsets are committed while running (busy or idle); also
/// committed at shutdown. A crash re-reads at most this much acknowledged work (duplicates,
/// never losses).
const COMMIT_INTERVAL: Duration = Duration::from_secs(1);

/// Commits without waiting; a failure is retried at the next commit (offsets only grow).
fn commit(consumer: &Consumer, acknowledged: &Offsets, connector: &str) {
    if let Err(e) = consumer.commit(acknowledged, false) {
        tracing::warn!(%connector, error = %e, "offset commit failed; will retry");
    }
}

/// One batch's outputs in flight and the offsets they complete.
pub(crate) struct PendingBatch {
    pub(crate) deliveries: Vec<Delivery>,
    pub(crate) offsets: Offsets,
}

/// Runs until the task drops its sender, then commits what is acknowledged and returns.
/// On a delivery failure it commits what was acknowledged before, marks the connector
/// failed and cancels `failed` so the task stops reading.
pub(crate) async fn run(
    mut batches: mpsc::Receiver<PendingBatch>,
    consumer: Arc<Consumer>,
    status: Arc<LiveStatus>,
    connector: String,
    failed: CancellationToken,
) {
    let mut acknowledged = Offsets::default();
    let mut last_commit = Instant::now();
    // Whether `acknowledged` has offsets not yet committed; an idle connector commits them
    // on the timer, not only when the next batch arrives.
    let mut dirty = false;
    'batches: loop {
        let due = tokio::time::Instant::from_std(last_commit + COMMIT_INTERVAL);
        let batch = tokio::select! {
            batch = batches.recv() => batch,
            _ = tokio::time::sleep_until(due), if dirty => {
                commit(&consumer, &acknowledged, &connector);
                (last_commit, dirty) = (Instant::now(), false);
                continue;
            }
        };
        let Some(batch) = batch else { break };
        let outputs = batch.deliveries.len() as u64;
        for delivery in batch.deliveries {
            if let Err(e) = delivery.wait().await {
                tracing::error!(%connector, error = %e, "output not acknowledged; stopping without committing this batch");
                status.set(ConnectorState::Failed, Some(FaultInfo { class: "kafka".into(), message: e.to_string() }));
                failed.cancel();
                break 'batches;
            }
        }
        LiveStatus::add(&status.records_out, outputs);
        acknowledged.merge(&batch.offsets);
        dirty = true;
        if last_commit.elapsed() >= COMMIT_INTERVAL {
            commit(&consumer, &acknowledged, &connector);
            (last_commit, dirty) = (Instant::now(), false);
        }
    }
    // Refuse further batches at once, so a task blocked on a full channel wakes up.
    batches.close();
    if let Err(e) = consumer.commit(&acknowledged, true) {
        tracing::warn!(%connector, error = %e, "final offset commit failed; acknowledged records may be re-read");
    }
}
