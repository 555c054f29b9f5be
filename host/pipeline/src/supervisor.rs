//! One supervisor per connector: builds its task (transform, source or sink), runs it, and
//! restarts it after a failure as the connector's restart policy allows.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use tokio_util::sync::CancellationToken;
use turnpike_config::{Connector, Flow, Limits, PluginRef, RestartPolicy, TeamName};
use turnpike_kafka::{BrokerHealth, ConsumerOptions, KafkaError};
use turnpike_runtime::{FaultClass, HttpGrant, InstanceLimits, Interrupt, PluginKind, Scrub};
use turnpike_state::SecretStore;

use crate::chain::{Chain, ChainContext, Stage};
use crate::connector_state::ConnectorState;
use crate::events::EventKind;
use crate::failures::ErrorPolicy;
use crate::registry::{PluginInfo, PluginRegistry, RegistryError};
use crate::resolve::{one_line, resolve_connector};
use crate::status::{FaultInfo, LiveStatus};
use crate::swap::SwapRequest;
use crate::tasks::sink::SinkTask;
use crate::tasks::source::{SourcePlugin, SourceTask};
use crate::tasks::transform::TransformTask;
use crate::tasks::idle::ConsumerOpener;
use crate::tasks::TaskContext;

/// What every connector's supervisor needs from the host.
pub(crate) struct Shared {
    pub(crate) registry: PluginRegistry,
    pub(crate) kafka: Vec<(String, String)>,
    pub(crate) events: Arc<crate::events::Events>,
    /// The compacted topic source positions are kept in.
    pub(crate) positions_topic: String,
    /// What `${secret:NAME}` references resolve to, read each time a connector starts.
    pub(crate) secrets: SecretStore,
    /// The one broker probe every connector's broker watch asks during an outage.
    pub(crate) probe: Arc<crate::broker_watch::BrokerProbe>,
    /// The one producer every connector's tasks send through.
    pub(crate) producer: crate::shared_producer::SharedProducer,
    /// In a cluster, the source slots this host owns: a source runs only on the host that
    /// owns its slot, and saves its position through a fenced writer (`crate::placement`).
    pub(crate) slots: std::sync::OnceLock<Arc<turnpike_kafka::Slots>>,
    /// What idle transform tasks wait on once they gave their consumer up.
    pub(crate) idle_watch: Arc<crate::tasks::idle::SharedIdleWatch>,
    /// Set when the host shuts down: its consumers' closes must be over by then.
    pub(crate) close_deadline: Arc<turnpike_kafka::CloseDeadline>,
}

/// What the host steers a connector's run with: pause, plugin swaps, and the interrupt that
/// ends its plugin calls once a stop's grace period is over (`Run::stop`).
#[derive(Clone)]
pub(crate) struct Controls {
    pub(crate) paused: tokio::sync::watch::Receiver<bool>,
    pub(crate) swaps: tokio::sync::watch::Receiver<SwapRequest>,
    pub(crate) interrupt: Interrupt,
}

/// Runs a connector until cancelled; restarts it after failures as its policy allows.
///
/// Each run is a task of its own, and its join result is checked: a run that panics (a bug
/// in the host or a library it calls, never a plugin's doing) is a failure like any other,
/// `FAILED` with class `panic` and an event, and the restart policy applies. Before this, a
/// panic ended the supervisor silently while the status kept saying `RUNNING`.
///
/// Each run is built from the connector as it is then (`connector` changes when a hot swap
/// succeeds), so a restart never goes back to plugin versions the connector left.
pub(crate) async fn supervise(shared: Arc<Shared>, connector: tokio::sync::watch::Receiver<Connector>, status: Arc<LiveStatus>, cancel: CancellationToken, controls: Controls) {
    let (name, policy) = {
        let c = connector.borrow();
        (c.name().to_string(), c.config().restart.clone())
    };
    let mut budget = FailureBudget::new(Duration::from_secs(policy.window_s.get()));
    loop {
        let started = Instant::now();
        let run = {
            let latest = connector.clone();
            let (shared, status, cancel, controls) = (shared.clone(), status.clone(), cancel.clone(), controls.clone());
            tokio::spawn(async move { crate::placement::run_placed(&shared, latest, &status, &cancel, &controls).await })
        };
        let ended = run.await;
        status.measures.run_ended();
        if let Err(e) = ended {
            let fault = FaultInfo::new(FaultClass::Panic, format!("the connector's task ended abnormally ({}); this is a bug in the host, please report it with the host log", panic_message(e)));
            tracing::error!(connector = %name, error = %fault.message, "connector task panicked");
            status.set(ConnectorState::Failed, Some(fault));
        }
        if cancel.is_cancelled() || status.state() != ConnectorState::Failed || !policy.enabled {
            return;
        }
        let attempt = budget.record(started, Instant::now());
        if u64::from(attempt) >= policy.max_failures.get() {
            status.events().emit(&name, EventKind::GaveUp { failures: attempt, window_s: policy.window_s.get() });
            return;
        }
        let delay = backoff(&policy, attempt);
        status.set(ConnectorState::Restarting, None);
        status.events().emit(&name, EventKind::RestartScheduled { attempt, delay_ms: delay.as_millis() as u64 });
        tokio::select! {
            _ = tokio::time::sleep(delay) => LiveStatus::add(&status.restarts, 1),
            _ = cancel.cancelled() => {
                status.set(ConnectorState::Failed, None);
                return;
            }
        }
    }
}

/// Runs a connector's supervisor and checks how it ended: if the supervisor itself panics
/// (outside any run, which [`supervise`] already checks), the connector is `FAILED` with
/// class `panic` and an event, never silently gone while showing `RUNNING`.
pub(crate) async fn guarded(status: Arc<LiveStatus>, supervisor: impl std::future::Future<Output = ()> + Send + 'static) {
    if let Err(e) = tokio::spawn(supervisor).await {
        let message = format!("the connector's supervisor ended abnormally ({}); this is a bug in the host, please report it with the host log", panic_message(e));
        tracing::error!(connector = %status.name(), error = %message, "connector supervisor panicked");
        status.set(ConnectorState::Failed, Some(FaultInfo::new(FaultClass::Panic, message)));
    }
}

/// What a panicked or cancelled task's join error says, for a person.
pub(crate) fn panic_message(e: tokio::task::JoinError) -> String {
    if !e.is_panic() {
        return "cancelled".into();
    }
    let payload = e.into_panic();
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

/// Counts failures towards giving up, two ways; the larger count is the one that matters:
/// - failures within the last `window` (the documented `max_failures` within `window_s`);
/// - quick failures in a row: runs that failed less than [`QUICK_FAILURE`] after they began.
///   Any longer run ends the streak.
///
/// Why the second: with a tiny backoff (`base_ms: 1`) and a large `max_failures`, restarts
/// take longer than the window allows for the count to fill, so the window alone would never
/// give up and the supervisor would loop hot forever. A hot loop is made of quick failures,
/// and a streak of them cannot be outrun.
struct FailureBudget {
    window: Duration,
    recent: VecDeque<Instant>,
    quick_streak: u32,
}

/// A run that fails sooner than this after it began counts towards the quick-failure streak.
const QUICK_FAILURE: Duration = Duration::from_secs(1);

impl FailureBudget {
    fn new(window: Duration) -> Self {
        Self { window, recent: VecDeque::new(), quick_streak: 0 }
    }

    /// Records a failure at `now` of a run that began at `started`; returns the count that
    /// matters, this failure included.
    fn record(&mut self, started: Instant, now: Instant) -> u32 {
        self.recent.push_back(now);
        while self.recent.front().is_some_and(|t| now.duration_since(*t) > self.window) {
            self.recent.pop_front();
        }
        self.quick_streak = if now.duration_since(started) < QUICK_FAILURE { self.quick_streak.saturating_add(1) } else { 0 };
        (self.recent.len() as u32).max(self.quick_streak)
    }
}

/// `base × 2^(attempt-1)`, capped at `max`, varied by ± `jitter_percent`.
fn backoff(policy: &RestartPolicy, attempt: u32) -> Duration {
    let exp = policy.base_ms.get().saturating_mul(1u64 << attempt.saturating_sub(1).min(32));
    let capped = exp.min(policy.max_ms.get()) as f64;
    let jitter = policy.jitter_percent.get() as f64 / 100.0;
    let factor = if jitter > 0.0 { 1.0 + rand::rng().random_range(-jitter..=jitter) } else { 1.0 };
    Duration::from_millis((capped * factor).max(1.0) as u64)
}

/// One pipeline of a connector, built and ready to run.
pub(crate) enum Task {
    Transform(TransformTask),
    Source(SourceTask),
    Sink(SinkTask),
}

impl Task {
    pub(crate) async fn run(self) {
        match self {
            Task::Transform(task) => task.run().await,
            Task::Source(task) => task.run().await,
            Task::Sink(task) => task.run().await,
        }
    }
}

/// The sandbox limits and HTTP grant of every plugin instance of a connector.
pub(crate) fn instance_limits(connector: &Connector) -> InstanceLimits {
    limits_with(&connector.config().limits, HttpGrant::granted(connector.http()))
}

/// `limits` as an instance's limits, with `http` granted.
pub(crate) fn limits_with(l: &Limits, http: HttpGrant) -> InstanceLimits {
    InstanceLimits {
        memory_bytes: (l.memory_mib.get() as usize) << 20,
        batch_timeout: Duration::from_millis(l.batch_timeout_ms.get()),
        create_timeout: Duration::from_millis(l.create_timeout_ms.get()),
        max_output_bytes: (l.max_output_mib.get() as usize) << 20,
        max_output_records: l.max_output_records.get() as usize,
        http,
        // What to hide: the connector's resolved references, set where they are resolved.
        scrub: Scrub::default(),
        // Opened when a sink connector starts (`storage::open`): it needs the network.
        storage: None,
        // Opened when a source connector starts (`database::open`): it needs the network.
        sql: None,
        // The task's, set where it is built (`build_task`).
        interrupt: Interrupt::default(),
    }
}

/// Resolves a plugin reference and checks it is of the kind the stage needs.
pub(crate) fn resolve_kind(registry: &PluginRegistry, reference: &PluginRef, wanted: PluginKind, team: Option<&TeamName>) -> Result<PluginInfo, FaultInfo> {
    let info = registry.resolve_for(reference, team).map_err(|e: RegistryError| FaultInfo { class: e.class().into(), message: e.to_string(), record: None })?;
    let actual = info.plugin.kind();
    if actual != wanted {
        let message = format!("{} is a {} plugin; this stage needs a {} plugin", info.label(), actual.as_str(), wanted.as_str());
        return Err(FaultInfo::new(FaultClass::WrongKind, message));
    }
    Ok(info)
}

/// One task's own stop, so it can stop while the rest of its run goes on: its token and its
/// interrupt, children of the run's (a stop of the run reaches them).
pub(crate) struct TaskStop {
    pub(crate) cancel: CancellationToken,
    pub(crate) interrupt: Interrupt,
}

/// Resolves the connector's plugins and creates task `index`'s Kafka clients, which report to
/// the run's `health`. The task stops when the run does, or alone by its own stop (returned).
pub(crate) fn build_task(shared: &Shared, connector: &Connector, status: &Arc<LiveStatus>, run: &CancellationToken, controls: &Controls, index: usize, health: &Arc<BrokerHealth>) -> Result<(Task, TaskStop), FaultInfo> {
    let cancel = &run.child_token();
    let Controls { paused, swaps, interrupt: run_interrupt } = controls;
    let interrupt = run_interrupt.child();
    // Until this run resolves them, the status shows the references as configured, so a run
    // failing on a new version does not show the old one's label.
    status.forget_plugins();
    let config = connector.config();
    // Its team's plugins and secrets only, checked at every start: a plugin name free when
    // the connector was accepted may since belong to another team.
    let team = config.team.as_ref();
    // References resolve now, for this run only (a secret stored since the last run is what
    // this one gets); one that does not fails the run with every problem, and no value.
    let mut resolved = resolve_connector(config, "", &shared.secrets).map_err(|problems| FaultInfo::new(FaultClass::Config, format!("not started: {}", one_line(&problems))))?;
    let stages = connector
        .transforms()
        .iter()
        .zip(&resolved.transforms)
        .map(|(step, config)| {
            let selector = crate::selection::selector(step).map_err(|problems| FaultInfo::new(FaultClass::Config, format!("not started: {}", one_line(&problems))))?;
            Ok(Stage::new(resolve_kind(&shared.registry, &step.plugin, PluginKind::Transform, team)?, config, selector))
        })
        .collect::<Result<Vec<_>, FaultInfo>>()?;
    let kafka_fault = |e: KafkaError| FaultInfo::new(FaultClass::Kafka, e.to_string());
    let mut limits = instance_limits(connector);
    limits.scrub = resolved.scrub.clone();
    limits.interrupt = interrupt.clone();
    // A sink connector writes to its sink, whatever a transform routes: `None`.
    let writable = connector.output().map(|output| output.writable().filter(|t| t.as_str() != shared.positions_topic).map(ToString::to_string).collect());
    let chain_cx = ChainContext { connector: connector.name().to_string(), limits: limits.clone(), errors: config.errors.clone(), status: status.clone(), writable, cancel: cancel.clone(), task: index };
    let chain = Chain::new(stages, chain_cx);
    let producer = shared.producer.get(&shared.kafka, health).map_err(kafka_fault)?;
    let policy = ErrorPolicy::new(connector, status.clone());
    let mut labels: Vec<String> = chain.plugin_labels();
    let opener = || ConsumerOpener {
        connector: connector.name().to_string(),
        kafka: shared.kafka.clone(),
        options: ConsumerOptions {
            group_id: connector.group_id(),
            start_from: config.start_from.as_str().to_owned(),
            topics: connector.topics().iter().map(ToString::to_string).collect(),
            taken: status.measures.partitions_taken.clone(),
            close_deadline: shared.close_deadline.clone(),
            // Only a sink opens and flushes per partition.
            keep_partition_changes: matches!(connector.flow(), Flow::Sink { .. }),
        },
        health: health.clone(),
        status: status.clone(),
        task: index,
        watch: shared.idle_watch.clone(),
    };
    let cx = TaskContext { connector: connector.clone(), chain, producer, policy, status: status.clone(), cancel: cancel.clone(), run: run.clone(), paused: paused.clone(), task: index };
    let task = match connector.flow() {
        Flow::Source { source, output } => {
            let info = resolve_kind(&shared.registry, &source.plugin, PluginKind::Source, team)?;
            labels.insert(0, info.label());
            let mut step = source.clone();
            step.config = resolved.source.take().unwrap_or(step.config);
            let plugin = SourcePlugin { info, step, output_topic: output.topic.clone(), limits };
            Task::Source(SourceTask {
                cx,
                plugin,
                kafka: shared.kafka.clone(),
                positions_topic: shared.positions_topic.clone(),
                fenced: shared.slots.get().is_some(),
                health: health.clone(),
                secrets: shared.secrets.for_team(config.team.clone()),
            })
        }
        Flow::Sink { sink, .. } => {
            let plugin = resolve_kind(&shared.registry, &sink.plugin, PluginKind::Sink, team)?;
            labels.push(plugin.label());
            let mut step = sink.clone();
            step.config = resolved.sink.take().unwrap_or(step.config);
            Task::Sink(SinkTask { consumer: opener().open()?, opener: opener(), cx, step, plugin, limits, secrets: shared.secrets.for_team(config.team.clone()) })
        }
        Flow::Transform { output, .. } => Task::Transform(TransformTask {
            consumer: opener().open()?,
            opener: opener(),
            cx,
            output_topic: output.topic.clone(),
            applied_swap: swaps.borrow().generation,
            swaps: swaps.clone(),
        }),
    };
    status.set_plugins(labels);
    Ok((task, TaskStop { cancel: cancel.clone(), interrupt }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnpike_config::Ranged;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let policy = RestartPolicy { jitter_percent: Ranged::constant(0), base_ms: Ranged::constant(100), max_ms: Ranged::constant(1_000), ..RestartPolicy::default() };
        let delays: Vec<u128> = (1..=6).map(|a| backoff(&policy, a).as_millis()).collect();
        assert_eq!(delays, [100, 200, 400, 800, 1000, 1000]);
    }

    #[tokio::test]
    async fn a_panicking_supervisor_leaves_the_connector_failed_with_an_event() {
        let events = Arc::new(crate::events::Events::default());
        let mut seen = events.subscribe();
        let status = Arc::new(LiveStatus::new("c", events.clone()));
        status.set(ConnectorState::Running, None);
        guarded(status.clone(), async { panic!("a bug") }).await;
        assert_eq!(status.state(), ConnectorState::Failed);
        let failed = loop {
            match seen.recv().await.expect("events").kind {
                EventKind::StateChanged { state: ConnectorState::Failed, error } => break error,
                _ => continue,
            }
        };
        assert!(failed.is_some_and(|e| e.starts_with("panic: ") && e.contains("a bug")));
    }

    #[test]
    fn failures_in_quick_succession_exhaust_the_budget_even_with_a_tiny_backoff() {
        // base_ms 1, max_failures 1000, window 1 s: a run that fails 1 ms in, every 2 ms.
        // Counting only the failures of the last second would never reach 1000.
        let mut budget = FailureBudget::new(Duration::from_secs(1));
        let start = Instant::now();
        let counts: Vec<u32> = (0..1000u64).map(|i| budget.record(start + Duration::from_millis(2 * i), start + Duration::from_millis(2 * i + 1))).collect();
        assert_eq!(counts.last(), Some(&1000));
    }

    #[test]
    fn failures_counted_within_the_window_and_a_long_run_ends_the_streak() {
        let mut budget = FailureBudget::new(Duration::from_secs(600));
        let start = Instant::now();
        let at = |s: u64| start + Duration::from_secs(s);
        // Failing every 9 minutes after running 9 minutes: at most 2 within 10 minutes, ever.
        let counts: Vec<u32> = (0..10).map(|i| budget.record(at(540 * i), at(540 * (i + 1)))).collect();
        assert!(counts.iter().all(|&c| c <= 2), "{counts:?}");
        // Five within the window count five however long each ran.
        let mut budget = FailureBudget::new(Duration::from_secs(600));
        let counts: Vec<u32> = (0..5).map(|i| budget.record(at(60 * i), at(60 * i + 30))).collect();
        assert_eq!(counts, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn jitter_stays_within_its_percentage() {
        let policy = RestartPolicy { jitter_percent: Ranged::constant(20), base_ms: Ranged::constant(1_000), ..RestartPolicy::default() };
        for _ in 0..200 {
            let d = backoff(&policy, 1).as_millis();
            assert!((800..=1200).contains(&d), "{d}");
        }
    }
}
