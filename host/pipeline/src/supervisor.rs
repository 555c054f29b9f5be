//! One supervisor per connector: builds its task (transform, source or sink), runs it, and
//! restarts it after a failure as the connector's restart policy allows.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use tokio_util::sync::CancellationToken;
use turnpike_config::{ConnectorConfig, ConnectorKind, PluginRef, RestartPolicy};
use turnpike_kafka::{Consumer, ConsumerOptions, KafkaError, Producer};
use turnpike_runtime::{HttpGrant, InstanceLimits, PluginKind};

use crate::chain::{Chain, Stage};
use crate::events::EventKind;
use crate::failures::ErrorPolicy;
use crate::registry::{PluginInfo, PluginRegistry, RegistryError};
use crate::sink_task::SinkTask;
use crate::source_task::SourceTask;
use crate::status::{ConnectorState, FaultInfo, LiveStatus};
use crate::swap::SwapRequest;
use crate::task::ConnectorTask;

/// What every connector's supervisor needs from the host.
pub(crate) struct Shared {
    pub(crate) registry: PluginRegistry,
    pub(crate) kafka: Vec<(String, String)>,
    pub(crate) events: Arc<crate::events::Events>,
    /// The compacted topic source positions are kept in.
    pub(crate) positions_topic: String,
}

/// The channels a connector's task listens to: pause, and plugin swaps.
pub(crate) type Controls = (tokio::sync::watch::Receiver<bool>, tokio::sync::watch::Receiver<SwapRequest>);

/// Runs a connector until cancelled; restarts it after failures as its policy allows.
pub(crate) async fn supervise(shared: Arc<Shared>, config: ConnectorConfig, status: Arc<LiveStatus>, cancel: CancellationToken, controls: Controls) {
    let name = config.name.to_string();
    let policy = config.restart.clone();
    let window = Duration::from_secs(policy.window_s.get());
    let mut failures: VecDeque<Instant> = VecDeque::new();
    loop {
        match build_task(&shared, &config, &status, &cancel, &controls) {
            Ok(Task::Transform(task)) => task.run().await,
            Ok(Task::Source(task)) => task.run().await,
            Ok(Task::Sink(task)) => task.run().await,
            Err(fault) => status.set(ConnectorState::Failed, Some(fault)),
        }
        if cancel.is_cancelled() || status.state() != ConnectorState::Failed || !policy.enabled {
            return;
        }
        let now = Instant::now();
        failures.push_back(now);
        while failures.front().is_some_and(|t| now.duration_since(*t) > window) {
            failures.pop_front();
        }
        let attempt = failures.len() as u32;
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

/// `base × 2^(attempt-1)`, capped at `max`, varied by ± `jitter_percent`.
fn backoff(policy: &RestartPolicy, attempt: u32) -> Duration {
    let exp = policy.base_ms.get().saturating_mul(1u64 << attempt.saturating_sub(1).min(32));
    let capped = exp.min(policy.max_ms.get()) as f64;
    let jitter = policy.jitter_percent.get() as f64 / 100.0;
    let factor = if jitter > 0.0 { 1.0 + rand::rng().random_range(-jitter..=jitter) } else { 1.0 };
    Duration::from_millis((capped * factor).max(1.0) as u64)
}

enum Task {
    Transform(ConnectorTask),
    Source(SourceTask),
    Sink(SinkTask),
}

/// The sandbox limits and HTTP grant of every plugin instance of a connector.
pub(crate) fn instance_limits(config: &ConnectorConfig) -> Result<InstanceLimits, String> {
    let l = &config.limits;
    let h = &config.http;
    let http = HttpGrant::parse(&h.allow)?.with_timeouts(Duration::from_millis(h.connect_timeout_ms.get()), Duration::from_millis(h.timeout_ms.get()));
    Ok(InstanceLimits {
        memory_bytes: (l.memory_mib.get() as usize) << 20,
        batch_timeout: Duration::from_millis(l.batch_timeout_ms.get()),
        create_timeout: Duration::from_millis(l.create_timeout_ms.get()),
        max_output_bytes: (l.max_output_mib.get() as usize) << 20,
        max_output_records: l.max_output_records.get() as usize,
        http,
    })
}

/// Resolves a plugin reference and checks it is of the kind the stage needs.
pub(crate) fn resolve_kind(registry: &PluginRegistry, reference: &PluginRef, wanted: PluginKind) -> Result<PluginInfo, FaultInfo> {
    let info = registry.resolve(reference).map_err(|e: RegistryError| FaultInfo { class: e.class().into(), message: e.to_string() })?;
    let actual = info.plugin.kind();
    if actual != wanted {
        let message = format!("{} is a {} plugin; this stage needs a {} plugin", info.label(), actual.as_str(), wanted.as_str());
        return Err(FaultInfo { class: "wrong_kind".into(), message });
    }
    Ok(info)
}

/// Resolves the connector's plugins and creates its Kafka clients.
fn build_task(shared: &Shared, config: &ConnectorConfig, status: &Arc<LiveStatus>, cancel: &CancellationToken, (paused, swaps): &Controls) -> Result<Task, FaultInfo> {
    let stages = config
        .transforms
        .iter()
        .map(|step| Ok(Stage::new(resolve_kind(&shared.registry, &step.plugin, PluginKind::Transform)?, &step.config)))
        .collect::<Result<Vec<_>, FaultInfo>>()?;
    let kafka_fault = |e: KafkaError| FaultInfo { class: "kafka".into(), message: e.to_string() };
    let limits = instance_limits(config).map_err(|e| FaultInfo { class: "config".into(), message: format!("http.allow: {e}") })?;
    let chain = Chain::new(stages, config.name.to_string(), limits.clone(), config.errors.clone(), status.clone());
    let producer = Producer::new(&shared.kafka).map_err(kafka_fault)?;
    let policy = ErrorPolicy::new(config, status.clone());
    let mut labels: Vec<String> = chain.plugin_labels();
    let consumer = || {
        let options = ConsumerOptions {
            group_id: config.group_id(),
            start_from: config.start_from.as_str().to_owned(),
            topics: config.topics.iter().map(ToString::to_string).collect(),
        };
        Consumer::new(&shared.kafka, &options).map(Arc::new).map_err(kafka_fault)
    };
    let task = match (config.kind(), &config.source, &config.sink) {
        (ConnectorKind::Source, Some(source), _) => {
            let plugin = resolve_kind(&shared.registry, &source.plugin, PluginKind::Source)?;
            labels.insert(0, plugin.label());
            Task::Source(SourceTask {
                config: config.clone(),
                plugin,
                limits,
                chain,
                producer,
                policy,
                kafka: shared.kafka.clone(),
                positions_topic: shared.positions_topic.clone(),
                status: status.clone(),
                cancel: cancel.clone(),
                paused: paused.clone(),
            })
        }
        (ConnectorKind::Sink, _, Some(sink)) => {
            let plugin = resolve_kind(&shared.registry, &sink.plugin, PluginKind::Sink)?;
            labels.push(plugin.label());
            Task::Sink(SinkTask {
                config: config.clone(),
                plugin,
                limits,
                chain,
                consumer: consumer()?,
                producer,
                policy,
                status: status.clone(),
                cancel: cancel.clone(),
                paused: paused.clone(),
            })
        }
        _ => Task::Transform(ConnectorTask {
            config: config.clone(),
            chain,
            consumer: consumer()?,
            producer,
            policy,
            status: status.clone(),
            cancel: cancel.clone(),
            paused: paused.clone(),
            applied_swap: swaps.borrow().generation,
            swaps: swaps.clone(),
        }),
    };
    status.set_plugins(labels);
    Ok(task)
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

    #[test]
    fn jitter_stays_within_its_percentage() {
        let policy = RestartPolicy { jitter_percent: Ranged::constant(20), base_ms: Ranged::constant(1_000), ..RestartPolicy::default() };
        for _ in 0..200 {
            let d = backoff(&policy, 1).as_millis();
            assert!((800..=1200).contains(&d), "{d}");
        }
    }
}
