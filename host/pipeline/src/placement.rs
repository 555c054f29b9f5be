//! Where a connector runs in a cluster. Transform and sink connectors run on every host (the
//! broker spreads their partitions among the hosts' consumers). A source reads no partitions,
//! so it runs only on the host that owns its slot (`turnpike_kafka::Slots`), and moves when
//! its slot does: the host stops it (its position saved) before the slot goes.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use turnpike_config::{Connector, Flow};
use turnpike_runtime::FaultClass;

use crate::connector_state::ConnectorState;
use crate::status::LiveStatus;
use crate::stopping::{end_within, Stopping, STOP_GRACE};
use crate::supervisor::{Controls, Shared};
use crate::task_pool::run_tasks;

/// How long a host whose source was taken over waits for its slots to change before it may
/// run the source again (if the broker still gives it the slot, it is the owner after all).
const FENCED_WAIT: Duration = Duration::from_secs(60);

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
        // Its own interrupt: a slot moving away ends this stuck call, not the connector's.
        let here = Controls { interrupt: controls.interrupt.child(), ..controls.clone() };
        let mut running = std::pin::pin!(run_tasks(shared, latest.clone(), status, &run, &here));
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
            // Stopped like a shutdown: its last position is saved before the lease goes, and
            // a poll still running after the grace period is ended (its records are read
            // again by the slot's next owner).
            run.cancel();
            end_within(Stopping { connector: &name, task: None }, STOP_GRACE, &here.interrupt, running).await;
        }
        drop(lease);
        if cancel.is_cancelled() {
            return;
        }
        if !moved && status.state() == ConnectorState::Failed && status.error_class().as_deref() == Some(FaultClass::Fenced.as_str()) {
            // Another host opened the source's writer: the broker gave it the slot, and this
            // host has not heard yet (it was frozen, say). Taking the slot again now would
            // fence that host in turn; wait for this host's slots to change first.
            tracing::warn!(connector = %name, slot, "another host took the source over; waiting for this host's slots to change");
            status.set(ConnectorState::Unassigned, None);
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return },
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(FENCED_WAIT) => {}
            }
            continue;
        }
        if !moved {
            return;
        }
        tracing::info!(connector = %name, slot, "the source's slot moved to another host: stopped here");
        status.set(ConnectorState::Unassigned, None);
    }
}
