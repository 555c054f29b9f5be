//! A connector's transform chain: each stage's outputs are the next stage's inputs, and every
//! output keeps track of the Kafka record it derives from (for offsets and error reports).
//!
//! Faults are contained here. After a fault the instance is discarded and the batch retried
//! once on a fresh one; if it faults again and the connector tolerates errors, the batch is
//! re-run one record at a time so that only the records that make the plugin fault fail.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use turnpike_config::{ErrorTolerance, ErrorsConfig, RecordSelector};
use turnpike_runtime::{
    input_len, CallError, CreateError, ErrorKind, Fault, InputBatch, InstanceLabels, InstanceLimits, OutputBatch, OutputView, PluginError,
    RecordError, TransformInstance,
};

use crate::batches::{input_source, next_stage_input, single, subset, ChainBatch, OutputMerger, Source};
use crate::failures::FailedRecord;
use crate::measures::transform_stage;
use crate::registry::PluginInfo;
use crate::status::LiveStatus;
use crate::retry::{Attempt, Retry, RetryLog};
use crate::selection;
use crate::swap::{StageSpec, Stages};

/// One stage: a plugin version, its config, and its live instance (re-created after a fault).
pub(crate) struct Stage {
    pub(crate) info: PluginInfo,
    config_json: String,
    /// The step's predicate: the records the plugin sees; `None`: all.
    selector: Option<RecordSelector>,
    instance: Option<TransformInstance>,
}

impl Stage {
    pub(crate) fn new(info: PluginInfo, config: &serde_json::Value, selector: Option<RecordSelector>) -> Self {
        Self { info, config_json: config.to_string(), selector, instance: None }
    }
}

/// What a batch became.
pub(crate) struct ChainOutput<'a> {
    /// The last stage's output, or the batch read itself when the chain has no transform.
    pub(crate) batch: ChainBatch<'a>,
    /// For each output of `batch` to send: its index in `batch`, and the destination chosen
    /// by this or an earlier stage (else the connector's output topic).
    pub(crate) sends: Vec<(usize, Option<String>)>,
    /// For each entry of `sends`: the index of the record it derives from in the batch as
    /// read.
    pub(crate) origins: Vec<u32>,
    /// Inputs that failed, one entry each.
    pub(crate) failed: Vec<FailedRecord>,
}

/// A stage could not run at all; the connector cannot go on.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChainError {
    #[error("plugin {plugin}: {source}")]
    Create { plugin: String, source: CreateError },
    #[error("plugin {plugin}: {source} (again after re-creating the instance)")]
    Fault { plugin: String, source: Fault },
    /// The connector is being stopped while the batch waited to be retried: the batch is
    /// neither failed nor committed.
    #[error("stopped while retrying")]
    Stopping,
}

impl ChainError {
    pub(crate) fn class(&self) -> turnpike_runtime::FaultClass {
        match self {
            ChainError::Create { source, .. } => source.class(),
            ChainError::Fault { source, .. } => source.class(),
            ChainError::Stopping => turnpike_runtime::FaultClass::Stopping,
        }
    }
}

/// Creates one stage's instance; a fault in `create` is counted and reported. A free function
/// (not a `&Chain` method) because the chain holds wasmtime stores, which are not `Sync`.
async fn create(info: &PluginInfo, config_json: &str, connector: &str, limits: &InstanceLimits, status: &LiveStatus) -> Result<TransformInstance, ChainError> {
    let labels = InstanceLabels { connector: connector.to_owned(), plugin: info.label() };
    let created = TransformInstance::create(&info.plugin, config_json, labels, limits.clone()).await;
    match created {
        Err(CreateError::Stopped) => Err(ChainError::Stopping),
        Err(CreateError::Fault(fault)) => {
            status.fault(&info.label(), fault.class(), &fault.to_string());
            Err(ChainError::Create { plugin: info.label(), source: CreateError::Fault(fault) })
        }
        created => created.map_err(|source| ChainError::Create { plugin: info.label(), source }),
    }
}

/// Why a record a plugin routed to `topic` is refused.
pub(crate) fn route_refused(topic: &str, writable: &[String]) -> String {
    format!("the plugin routed a record to {topic:?}, which this connector may not write to (it may write to {}; add the topic to `routes` to allow it)", writable.join(", "))
}

/// A batch-level plugin error as a failure of every record in the batch.
fn fail_all(input: &InputBatch, error: PluginError) -> StageOutput {
    let mut merger = OutputMerger::default();
    for input in 0..input_len(input) as u32 {
        merger.fail(input, error.clone());
    }
    StageOutput { out: merger.finish(), poisoned: Vec::new() }
}

/// Faults tolerated while isolating the records of one batch. Past this the plugin faults on
/// (nearly) everything: isolating further would only burn CPU, so the connector fails.
const MAX_ISOLATION_FAULTS: usize = 5;

/// A stage's result for one batch: its output, and the inputs that made it fault.
struct StageOutput {
    out: OutputBatch,
    poisoned: Vec<(u32, Fault)>,
}

pub(crate) struct Chain {
    stages: Vec<Stage>,
    connector: String,
    limits: InstanceLimits,
    errors: ErrorsConfig,
    status: Arc<LiveStatus>,
    /// Topics a plugin may route a record to; any other choice fails the record. `None` for a
    /// sink connector, whose records go to its sink whatever a transform routes.
    writable: Option<Vec<String>>,
    cancel: CancellationToken,
    task: usize,
}

/// What a chain runs with besides its stages.
pub(crate) struct ChainContext {
    pub(crate) connector: String,
    pub(crate) limits: InstanceLimits,
    pub(crate) errors: ErrorsConfig,
    pub(crate) status: Arc<LiveStatus>,
    /// The connector's `output_topic` and `routes`; `None` for a sink connector.
    pub(crate) writable: Option<Vec<String>>,
    /// Cancelled when the connector stops: ends retry pauses.
    pub(crate) cancel: CancellationToken,
    /// Which of the connector's tasks runs this chain (from 0).
    pub(crate) task: usize,
}

impl Chain {
    pub(crate) fn new(stages: Vec<Stage>, cx: ChainContext) -> Self {
        let ChainContext { connector, limits, errors, status, writable, cancel, task } = cx;
        Self { stages, connector, limits, errors, status, writable, cancel, task }
    }

    pub(crate) fn plugin_labels(&self) -> Vec<String> {
        self.stages.iter().map(|s| s.info.label()).collect()
    }

    /// Creates every stage's instance, so a bad plugin config fails the connector at start.
    pub(crate) async fn prepare(&mut self) -> Result<(), ChainError> {
        for i in 0..self.stages.len() {
            self.instance(i).await?;
        }
        Ok(())
    }

    async fn instance(&mut self, i: usize) -> Result<&mut TransformInstance, ChainError> {
        let stage = &mut self.stages[i];
        if stage.instance.as_ref().is_some_and(TransformInstance::is_poisoned) {
            stage.instance = None;
        }
        if stage.instance.is_none() {
            let (info, config) = (stage.info.clone(), stage.config_json.clone());
            let created = create(&info, &config, &self.connector, &self.limits, &self.status).await?;
            self.stages[i].instance = Some(created);
        }
        Ok(self.stages[i].instance.as_mut().expect("instance was just created"))
    }

    /// Replaces the chain's stages, between two batches. Every new instance is created first;
    /// if any fails, the running stages stay as they were and the error says why. The new
    /// instances, and those made after them, hide what the new configs' references resolved to.
    pub(crate) async fn swap(&mut self, stages: Stages) -> Result<(), ChainError> {
        let Stages { steps, scrub } = stages;
        let limits = InstanceLimits { scrub, ..self.limits.clone() };
        let mut fresh = Vec::with_capacity(steps.len());
        for StageSpec { info, config, selector } in steps {
            let mut stage = Stage::new(info, &config, selector);
            stage.instance = Some(create(&stage.info, &stage.config_json, &self.connector, &limits, &self.status).await?);
            fresh.push(stage);
        }
        self.stages = fresh;
        self.limits = limits;
        self.status.measures.stages_replaced(self.task);
        Ok(())
    }

    /// One call on stage `i`'s instance; a fault discards the instance and is reported.
    async fn call_once(&mut self, i: usize, input: &InputBatch) -> Result<Result<OutputBatch, CallError>, ChainError> {
        let instance = self.instance(i).await?;
        let result = instance.transform(input).await;
        let usage = instance.take_usage();
        let replace = result.is_ok() && instance.needs_replacing();
        let stage = transform_stage(i);
        self.status.measures.note_usage(self.task, &stage, &self.stages[i].info.label(), usage);
        if replace {
            tracing::debug!(connector = %self.connector, plugin = %self.stages[i].info.label(), "instance memory near its limit; replacing it before the next batch");
            self.stages[i].instance = None;
            self.status.measures.released(self.task, &stage);
            LiveStatus::add(&self.status.instance_replacements, 1);
        }
        match &result {
            Err(CallError::Fault(fault)) => {
                self.stages[i].instance = None;
                self.status.measures.released(self.task, &stage);
                LiveStatus::add(&self.status.instance_restarts, 1);
                self.status.fault(&self.stages[i].info.label(), fault.class(), &fault.to_string());
            }
            // Ended by the host, not the plugin's doing: nothing to count or report.
            Err(CallError::Stopped) => {
                self.stages[i].instance = None;
                self.status.measures.released(self.task, &stage);
                return Err(ChainError::Stopping);
            }
            _ => {}
        }
        Ok(result)
    }

    /// Runs one stage on a batch: retries a faulting batch once on a fresh instance, then
    /// (when errors are tolerated) isolates the records that make the plugin fault. A
    /// batch-level plugin error becomes a failure of every record in the batch.
    async fn call(&mut self, i: usize, input: &InputBatch) -> Result<StageOutput, ChainError> {
        let mut faults = 0;
        let mut retry = Retry::new(&self.errors, &self.cancel);
        let plugin = self.stages[i].info.label();
        loop {
            let result = self.call_once(i, input).await?;
            let log = RetryLog { status: &self.status, connector: &self.connector, plugin: &plugin, what: "plugin asked to retry the batch" };
            match retry.settle(result, log).await {
                Attempt::Done(out) => return Ok(StageOutput { out, poisoned: Vec::new() }),
                Attempt::Again => {}
                Attempt::Stopped | Attempt::Failed(CallError::Stopped) => return Err(ChainError::Stopping),
                Attempt::GaveUp(message) => return Ok(fail_all(input, PluginError { kind: ErrorKind::Retriable, message })),
                Attempt::Failed(CallError::Fault(fault)) => {
                    faults += 1;
                    // A stopping connector does not try the batch again (another whole batch
                    // timeout, for a plugin that spins): nothing of it is committed, so the
                    // next start reads it again and retries or isolates it then.
                    if self.cancel.is_cancelled() {
                        return Err(ChainError::Stopping);
                    }
                    if faults > 1 {
                        return match self.errors.tolerance {
                            ErrorTolerance::All => self.isolate(i, input).await,
                            ErrorTolerance::None => Err(ChainError::Fault { plugin, source: fault }),
                        };
                    }
                }
                Attempt::Failed(CallError::Plugin { kind, message }) => return Ok(fail_all(input, PluginError { kind, message })),
            }
        }
    }

    /// Runs stage `i` on the records its predicate selects (all, without one); the others
    /// pass the stage unchanged. `routed` is where earlier stages sent each record.
    async fn call_selected(&mut self, i: usize, input: &InputBatch, routed: &[Option<String>]) -> Result<StageOutput, ChainError> {
        let picked = match &self.stages[i].selector {
            Some(selector) => selection::selected(selector, input, routed),
            None => return self.call(i, input).await,
        };
        if picked.len() == input_len(input) {
            return self.call(i, input).await;
        }
        let part = match picked.is_empty() {
            true => None,
            false => Some(self.call(i, &subset(input, &picked)).await?),
        };
        let (part, poisoned) = part.map_or((None, Vec::new()), |p| (Some(p.out), p.poisoned));
        let (out, poisoned) = selection::merge(input, &picked, part, poisoned);
        Ok(StageOutput { out, poisoned })
    }

    /// Re-runs a batch one record at a time, so that only records that make the plugin fault
    /// are failed; gives up when the plugin faults on too many of them.
    async fn isolate(&mut self, i: usize, input: &InputBatch) -> Result<StageOutput, ChainError> {
        tracing::warn!(connector = %self.connector, plugin = %self.stages[i].info.label(), records = input_len(input), "batch faulted twice; running its records one by one to find the cause");
        let mut merger = OutputMerger::default();
        let mut poisoned = Vec::new();
        for j in 0..input_len(input) {
            if self.cancel.is_cancelled() {
                return Err(ChainError::Stopping);
            }
            let one = single(input, j);
            match self.call_once(i, &one).await? {
                Ok(out) => merger.push(out, j as u32),
                Err(CallError::Plugin { kind, message }) => merger.fail(j as u32, PluginError { kind, message }),
                Err(CallError::Stopped) => return Err(ChainError::Stopping),
                Err(CallError::Fault(fault)) => {
                    if poisoned.len() >= MAX_ISOLATION_FAULTS {
                        return Err(ChainError::Fault { plugin: self.stages[i].info.label(), source: fault });
                    }
                    poisoned.push((j as u32, fault));
                }
            }
        }
        Ok(StageOutput { out: merger.finish(), poisoned })
    }

    /// The connector's writable topics (for records routed by the source).
    pub(crate) fn writable(&self) -> &[String] {
        self.writable.as_deref().unwrap_or_default()
    }

    /// Runs a batch through every stage. With `route_by_topic`, each record's own topic is
    /// where its outputs go unless a stage picks another (records polled from a source carry
    /// their destination); otherwise outputs go to the connector's output topic.
    /// An empty chain hands `batch` on as it is: nothing is copied.
    pub(crate) async fn run<'a>(&mut self, batch: &'a InputBatch, route_by_topic: bool) -> Result<ChainOutput<'a>, ChainError> {
        let n = input_len(batch);
        let route_of = |i: usize| route_by_topic.then(|| batch.topics[input_source(batch, i).topic as usize].clone());
        if self.stages.is_empty() {
            let sends = (0..n).map(|i| (i, route_of(i))).collect();
            let origins = (0..n as u32).collect();
            return Ok(ChainOutput { batch: ChainBatch::Passed(batch), sends, origins, failed: Vec::new() });
        }
        // Where each Kafka record came from; every later stage sees its inputs as coming from
        // the same topic, partition and offset.
        let sources: Vec<Source> = (0..n).map(|i| input_source(batch, i)).collect();
        // Per input of the current stage: the Kafka record it derives from, and the
        // destination an earlier stage chose.
        let mut origins: Vec<u32> = (0..n as u32).collect();
        let mut routes: Vec<Option<String>> = (0..n).map(route_of).collect();
        let mut failed_mask = vec![false; n];
        let mut failed = Vec::new();
        let mut owned: Option<InputBatch> = None;

        for i in 0..self.stages.len() {
            let input = owned.as_ref().unwrap_or(batch);
            let StageOutput { out, poisoned } = self.call_selected(i, input, &routes).await?;
            let plugin = self.stages[i].info.label();
            let mut fail = |input: u32, kind: ErrorKind, class: &str, message: String| {
                let origin = origins[input as usize];
                if !std::mem::replace(&mut failed_mask[origin as usize], true) {
                    failed.push(FailedRecord { origin, stage: format!("transforms[{i}]"), plugin: plugin.clone(), kind, class: class.to_owned(), message });
                }
            };
            for RecordError { input, error } in &out.errors {
                fail(*input, error.kind, turnpike_runtime::FaultClass::RecordError.as_str(), error.message.clone());
            }
            for (input, fault) in poisoned {
                fail(input, ErrorKind::InvalidRecord, fault.class().as_str(), fault.to_string());
            }
            let view = OutputView::new(&out);
            // A sink connector writes to its sink, where a route means nothing.
            if let Some(writable) = &self.writable {
                for p in view.iter() {
                    if let Some(topic) = p.topic.filter(|t| !writable.iter().any(|w| w == t)) {
                        fail(p.input, ErrorKind::InvalidRecord, turnpike_runtime::FaultClass::RouteRefused.as_str(), route_refused(topic, writable));
                    }
                }
            }
            let kept: Vec<(usize, u32, Option<String>)> = view
                .iter()
                .enumerate()
                .filter(|(_, p)| !failed_mask[origins[p.input as usize] as usize])
                .map(|(j, p)| (j, origins[p.input as usize], p.topic.map(str::to_owned).or_else(|| routes[p.input as usize].clone())))
                .collect();
            if i + 1 == self.stages.len() {
                let origins = kept.iter().map(|k| k.1).collect();
                let sends = kept.into_iter().map(|(j, _, route)| (j, route)).collect();
                return Ok(ChainOutput { batch: ChainBatch::Transformed(out), sends, origins, failed });
            }
            let keep: Vec<(usize, Source)> = kept.iter().map(|&(j, origin, _)| (j, sources[origin as usize])).collect();
            origins = kept.iter().map(|k| k.1).collect();
            routes = kept.into_iter().map(|k| k.2).collect();
            owned = Some(next_stage_input(out, &keep, batch.topics.clone()));
        }
        unreachable!("an empty chain returned before the loop")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Events;
    use turnpike_runtime::{BatchBuilder, RecordRef};

    fn chain_of(stages: Vec<Stage>, limits: InstanceLimits, cancel: CancellationToken) -> Chain {
        let status = Arc::new(LiveStatus::new("c", Arc::new(Events::default())));
        let cx = ChainContext { connector: "c".into(), limits, errors: ErrorsConfig::default(), status, writable: None, cancel, task: 0 };
        Chain::new(stages, cx)
    }

    fn empty_chain() -> Chain {
        chain_of(Vec::new(), InstanceLimits::default(), CancellationToken::new())
    }

    /// A faulted batch is tried once more on a fresh instance, but not by a stopping
    /// connector: a plugin that spins would hold the stop for a second batch timeout.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_stopping_chain_does_not_try_a_faulted_batch_again() {
        let runtime = turnpike_runtime::Runtime::new().expect("engine");
        let plugin = runtime.load(turnpike_test_components::FAULTY).expect("load faulty");
        let info = crate::PluginInfo { name: turnpike_config::PluginName::parse("faulty").unwrap(), version: "1".into(), plugin, uploaded_at: std::time::SystemTime::now(), team: None };
        let limits = InstanceLimits { batch_timeout: std::time::Duration::from_millis(300), ..InstanceLimits::default() };
        let cancel = CancellationToken::new();
        let mut chain = chain_of(vec![Stage::new(info, &serde_json::json!({ "fault": "loop" }), None)], limits, cancel.clone());
        chain.prepare().await.expect("faulty creates");
        let mut b = BatchBuilder::default();
        b.push(RecordRef { key: None, value: Some(b"spin"), timestamp: None, topic: "a", partition: 0, offset: 0 }, []);
        let batch = b.finish();
        cancel.cancel();
        let ran = chain.run(&batch, false).await;
        assert!(matches!(ran, Err(ChainError::Stopping)), "stopped after the first timeout, not faulted after a second: {:?}", ran.err());
    }

    /// Sinks and sources without transforms used to copy every batch into an output batch;
    /// an empty chain now hands the batch read through as it is.
    #[tokio::test]
    async fn an_empty_chain_hands_its_input_through_without_copying() {
        let mut b = BatchBuilder::default();
        b.push(RecordRef { key: None, value: Some(b"one"), timestamp: Some(1), topic: "a", partition: 0, offset: 5 }, [("h", &b"x"[..])]);
        b.push(RecordRef { key: Some(b"k"), value: Some(b"two"), timestamp: None, topic: "b", partition: 1, offset: 6 }, []);
        let batch = b.finish();
        let mut chain = empty_chain();
        let out = chain.run(&batch, true).await.expect("an empty chain runs no plugin");
        assert!(matches!(&out.batch, ChainBatch::Passed(passed) if std::ptr::eq(*passed, &batch)), "the batch read itself, not a copy");
        let second = out.batch.get(1);
        assert!(second.value.is_some_and(|v| batch.data.as_ptr_range().contains(&v.as_ptr())), "values point into the batch read");
        assert_eq!((second.key, second.value, second.timestamp), (Some(&b"k"[..]), Some(&b"two"[..]), None));
        assert_eq!(out.batch.get(0).headers.collect::<Vec<_>>(), [("h", &b"x"[..])]);
        assert_eq!(out.sends, [(0, Some("a".to_owned())), (1, Some("b".to_owned()))], "each record routed by its own topic");
        assert_eq!(out.origins, [0, 1]);
        assert!(out.failed.is_empty());
    }
}
