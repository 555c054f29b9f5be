//! One run of a connector: its tasks, each spawned on its own so they use several cores, the
//! broker watch beside them, and, with `tasks: { min, max, … }`, tasks started and stopped
//! by lag while the run goes on.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use turnpike_config::{Connector, Flow, Tasks};
use turnpike_kafka::BrokerHealth;

use crate::autoscale::{Scaler, CHECK_EVERY};
use crate::connector_state::ConnectorState;
use crate::events::EventKind;
use crate::status::{FaultInfo, LiveStatus};
use crate::stopping::{end_within, Stopping, STOP_GRACE};
use crate::supervisor::{build_task, Controls, Shared, Task, TaskStop};

/// After a change of the task count, how long the group gets to settle (tasks joining or
/// leaving move partitions) before the next decision: during a rebalance lag and partitions
/// are under-counted, and deciding on them would add and remove tasks in turn.
const SETTLE: Duration = Duration::from_secs(5);

/// The running tasks of one run, by index.
struct Pool<'a> {
    shared: &'a Shared,
    /// The connector as it is now: a task added later runs the plugin versions a hot swap
    /// switched to, not the ones the run began with.
    latest: watch::Receiver<Connector>,
    name: String,
    status: &'a Arc<LiveStatus>,
    controls: &'a Controls,
    health: Arc<BrokerHealth>,
    /// The run's stop from outside (the operator, a shutdown, a cluster slot moving away),
    /// whose caller gives the grace period (`crate::stopping`).
    stop: CancellationToken,
    /// The run's own stop: the outside one, or a task that ended (the others stop with it).
    run_cancel: CancellationToken,
    running: JoinSet<usize>,
    /// Each live task's own stop, a child of the run's.
    tokens: BTreeMap<usize, TaskStop>,
    /// Tasks asked to stop by scaling that have not ended yet: their end is not the run's.
    retiring: BTreeSet<usize>,
    /// No decision before this (the group settling after a change).
    quiet_until: Instant,
}

impl Pool<'_> {
    fn build(&self, index: usize) -> Result<(Task, TaskStop), FaultInfo> {
        let connector = self.latest.borrow().clone();
        build_task(self.shared, &connector, self.status, &self.run_cancel, self.controls, index, &self.health)
    }

    /// Runs the task. Stopped alone (retired) or with the run after another task ended, it
    /// gets the grace period to finish its batch before its plugin calls are ended; stopped
    /// from outside, the run's stopper gives it (a shutdown's may be shorter).
    fn spawn(&mut self, index: usize, task: Task, stop: TaskStop) {
        let (cancel, interrupt, outside) = (stop.cancel.clone(), stop.interrupt.clone(), self.stop.clone());
        let name = self.name.clone();
        self.tokens.insert(index, stop);
        self.running.spawn(async move {
            let mut running = std::pin::pin!(task.run());
            tokio::select! {
                biased;
                () = &mut running => return index,
                () = cancel.cancelled() => {}
            }
            if outside.is_cancelled() {
                running.await;
            } else {
                end_within(Stopping { connector: &name, task: Some(index) }, STOP_GRACE, &interrupt, running).await;
            }
            index
        });
    }

    /// Starts one more task, at the lowest index free; false if it could not be built (its
    /// plugins or clients; the next check tries again). One that is built but cannot create
    /// its instances fails the run, as at the start.
    fn grow(&mut self) -> bool {
        let Some(index) = (0..).find(|i| !self.tokens.contains_key(i) && !self.retiring.contains(i)) else { return false };
        // Building resolves the plugins again and shows them; a failure must not leave the
        // status without the labels of what runs.
        let labels = self.status.plugins();
        match self.build(index) {
            Ok((task, stop)) => {
                self.spawn(index, task, stop);
                true
            }
            Err(fault) => {
                self.status.set_plugins(labels);
                tracing::warn!(connector = %self.name, task = index + 1, error = %fault.message, "could not start another task; trying again at the next check");
                false
            }
        }
    }

    /// Stops the highest-numbered task (it commits what it finished, as at any stop).
    fn shrink(&mut self) {
        if let Some((index, stop)) = self.tokens.pop_last() {
            stop.cancel.cancel();
            self.retiring.insert(index);
        }
    }
}

/// Runs the connector's tasks until one ends (failed, or stopped: the others are stopped too,
/// a run fails or stops as a whole and the restart policy restarts all of it) or the run is
/// cancelled. A task's panic is raised again here, for the supervisor.
pub(crate) async fn run_tasks(shared: &Shared, latest: watch::Receiver<Connector>, status: &Arc<LiveStatus>, cancel: &CancellationToken, controls: &Controls) {
    let connector = latest.borrow().clone();
    let source = matches!(connector.flow(), Flow::Source { .. });
    let count = if source { 1 } else { connector.config().tasks.initial() };
    let mut scaler = match connector.config().tasks {
        Tasks::Auto(auto) if !source => Some(Scaler::new(auto)),
        _ => None,
    };
    let run_cancel = cancel.child_token();
    let mut pool = Pool {
        shared,
        latest,
        name: connector.name().to_string(),
        status,
        controls,
        health: Arc::default(),
        stop: cancel.clone(),
        run_cancel: run_cancel.clone(),
        running: JoinSet::new(),
        tokens: BTreeMap::new(),
        retiring: BTreeSet::new(),
        quiet_until: Instant::now(),
    };
    let mut built = Vec::with_capacity(count);
    for index in 0..count {
        match pool.build(index) {
            Ok((task, stop)) => built.push((index, task, stop)),
            Err(fault) => return status.set(ConnectorState::Failed, Some(fault)),
        }
    }
    for (index, task, stop) in built {
        pool.spawn(index, task, stop);
    }
    // The watch never ends on its own: the run's end drops it.
    let watch = crate::broker_watch::watch(pool.health.clone(), shared.probe.clone(), status.clone());
    let mut watch = std::pin::pin!(watch);
    let mut checks = tokio::time::interval(CHECK_EVERY);
    checks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut panicked = None;
    loop {
        tokio::select! {
            biased;
            joined = pool.running.join_next() => match joined {
                None => break,
                Some(Ok(index)) if pool.retiring.remove(&index) => {
                    status.measures.task_retired(index);
                    // It failed on its way out (its last outputs not acknowledged): the run
                    // fails as a whole, as when any task fails.
                    if status.state() == ConnectorState::Failed {
                        run_cancel.cancel();
                    }
                }
                Some(ended) => {
                    run_cancel.cancel();
                    if let Err(e) = ended {
                        if e.is_panic() {
                            panicked.get_or_insert(e.into_panic());
                        }
                    }
                }
            },
            () = &mut watch => {}
            _ = checks.tick(), if scaler.is_some() && !run_cancel.is_cancelled() => {
                if let Some(scaler) = scaler.as_mut() {
                    scale(&mut pool, scaler);
                }
            }
        }
    }
    if let Some(payload) = panicked {
        std::panic::resume_unwind(payload);
    }
}

/// One scaling check: as many tasks as the lag needs. Only while the connector runs (paused
/// reads nothing; failed is stopping), and not while the group settles after a change.
fn scale(pool: &mut Pool<'_>, scaler: &mut Scaler) {
    let now = Instant::now();
    if *pool.controls.paused.borrow() || pool.status.state() != ConnectorState::Running || !pool.retiring.is_empty() || now < pool.quiet_until {
        return;
    }
    let (lag, partitions) = pool.status.measures.lag_and_partitions();
    let current = pool.tokens.len();
    let wanted = scaler.decide(current, lag, partitions, now);
    if wanted == current {
        return;
    }
    while pool.tokens.len() > wanted {
        pool.shrink();
    }
    while pool.tokens.len() < wanted && pool.grow() {}
    let after = pool.tokens.len();
    if after != current {
        pool.quiet_until = now + SETTLE;
        pool.status.events().emit(&pool.name, EventKind::TasksScaled { from: current, to: after, lag: lag.unwrap_or_default() });
    }
}
