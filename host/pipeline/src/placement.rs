//! Where a connector runs in a cluster. Transform and sink connectors run on every host (the
//! broker spreads their partitions among the hosts' consumers). A source reads no partitions,
//! so it runs only on the host that owns its slot (`turnpike_kafka::Slots`), and moves when
//! its slot does: the host stops it (its position saved) before the slot goes.

use std::sync::Arc;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use turnpike_config::{Connector, Flow};

use crate::connector_state::ConnectorState;
use crate::status::LiveStatus;
use crate::supervisor::{Controls, Shared};
use crate::task_pool::run_tasks;

/// Runs the connector's tasks where they belong: here at once, or, for a source in a
/// cluster, whenever this host owns its slot (`UNASSIGNED` in between). Returns when the
/// connector is cancelled, or when a run ends on its own (failed or finished), for the
/// supervisor's restart policy.
pub(crate) async fn run_placed(shared: &Shared, latest: watch::Receiver<Connector>, status: &Arc<LiveStatus>, cancel: &CancellationToken, controls: &Controls) {
    let source = matches!(latest.borrow().flow(), Flow::Source { .. });
    let Some(slots) = shared.slots.get().filter(|_| source) else {
        return run_tasks(shared, latest, status, cancel, controls).await;
    };
    let name = latest.borrow().name().to_string();
    let slot = slots.slot_of(&name);
    let mut changes = slots.changes();
    loop {
        let lease = loop {
            if let Some(lease) = slots.try_lease(slot) {
                break lease;
            }
            if status.state() != ConnectorState::Unassigned {
                status.set(ConnectorState::Unassigned, None);
            }
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return },
                _ = cancel.cancelled() => return,
            }
        };
        tracing::info!(connector = %name, slot, "this host owns the source's slot: running it here");
        let run = cancel.child_token();
        let mut running = std::pin::pin!(run_tasks(shared, latest.clone(), status, &run, controls));
        let lost = async {
            loop {
                if changes.changed().await.is_err() {
                    return std::future::pending().await;
                }
                if !slots.owns(slot) {
                    return;
                }
            }
        };
        let moved = tokio::select! {
            () = &mut running => false,
            () = lost => true,
        };
        if moved {
            // Stopped like a shutdown: its last position is saved before the lease goes.
            run.cancel();
            running.await;
        }
        drop(lease);
        if !moved || cancel.is_cancelled() {
            return;
        }
        tracing::info!(connector = %name, slot, "the source's slot moved to another host: stopped here, its position saved");
        status.set(ConnectorState::Unassigned, None);
    }
}
