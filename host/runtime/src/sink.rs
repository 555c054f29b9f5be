//! A live sink plugin instance: written to per batch, flushed before offsets are committed,
//! told about partition assignment.

use wasmtime::component::ResourceAny;

use crate::batch::input_len;
use crate::bindings::sink::SinkPlugin;
use crate::capabilities::sink_progress::Holds;
use crate::bindings::types::{InputBatch, RecordError, TopicPartition};
use crate::error::{CallError, CreateError, Fault};
use crate::interrupt::guarded;
use crate::labels::InstanceLabels;
use crate::limits::InstanceLimits;
use crate::plugin::{Plugin, PluginKind};
use crate::sandbox::{wrong_kind, Sandbox};
use crate::usage::{cpu_timed, Usage};

/// A created sink: its sandbox, bindings and `writer` resource. Poisoned after a fault, like
/// [`crate::TransformInstance`].
pub struct SinkInstance {
    sandbox: Sandbox,
    bindings: SinkPlugin,
    writer: ResourceAny,
}

impl SinkInstance {
    /// Instantiates `plugin` and calls `create` with its config.
    pub async fn create(plugin: &Plugin, config_json: &str, labels: InstanceLabels, limits: InstanceLimits) -> Result<Self, CreateError> {
        let pre = plugin.pre().sink().ok_or_else(|| wrong_kind(plugin, PluginKind::Sink))?;
        let mut sandbox = Sandbox::new(plugin, labels, limits);
        let timeout = sandbox.begin_create();
        let (store, cpu) = (&mut sandbox.store, &mut sandbox.cpu);
        let created = cpu_timed(cpu, async {
            let bindings = pre.instantiate_async(&mut *store).await?;
            let result = bindings.turnpike_plugin_sink().writer().call_create(&mut *store, config_json).await?;
            wasmtime::Result::Ok((bindings, result))
        });
        let outcome = guarded(timeout, &sandbox.limits.interrupt, created).await;
        let (bindings, result) = sandbox.settle(outcome)?;
        match result {
            Ok(writer) => Ok(Self { sandbox, bindings, writer }),
            Err(e) => Err(sandbox.config_error(e)),
        }
    }

    /// Hands a batch to the sink. Returns the records it rejected for good.
    pub async fn write(&mut self, batch: &InputBatch) -> Result<Vec<RecordError>, CallError> {
        let timeout = self.sandbox.begin_call()?;
        let writer = self.bindings.turnpike_plugin_sink().writer();
        let outcome = guarded(timeout, &self.sandbox.limits.interrupt, cpu_timed(&mut self.sandbox.cpu, writer.call_write(&mut self.sandbox.store, self.writer, batch))).await;
        match self.sandbox.settle(outcome)? {
            Err(e) => Err(CallError::Plugin { kind: e.kind, message: self.sandbox.explain(e.message) }),
            Ok(rejected) => {
                let n = input_len(batch);
                if let Some(bad) = rejected.iter().find(|r| r.input as usize >= n) {
                    let why = format!("record error for input {} out of range (batch of {n})", bad.input);
                    return Err(self.sandbox.poison(Fault::InvalidOutput(why)).into());
                }
                let rejected = rejected.into_iter().map(|mut r| {
                    r.error.message = self.sandbox.explain(r.error.message);
                    r
                });
                Ok(rejected.collect())
            }
        }
    }

    /// Makes everything written so far durable, as far as the plugin goes: objects it handed
    /// to the host are still being written ([`SinkInstance::settle_storage`]), and it may have
    /// held partitions back ([`SinkInstance::take_holds`]).
    pub async fn flush(&mut self) -> Result<(), CallError> {
        let timeout = self.sandbox.begin_call()?;
        self.sandbox.store.data_mut().progress.clear();
        let writer = self.bindings.turnpike_plugin_sink().writer();
        let outcome = guarded(timeout, &self.sandbox.limits.interrupt, cpu_timed(&mut self.sandbox.cpu, writer.call_flush(&mut self.sandbox.store, self.writer))).await;
        match self.sandbox.settle(outcome)? {
            Err(e) => Err(CallError::Plugin { kind: e.kind, message: self.sandbox.explain(e.message) }),
            Ok(()) => Ok(()),
        }
    }

    /// Waits, outside the plugin's deadline, for every object the plugin handed to the host so
    /// far. `Err` says what could not be written: the caller must not commit.
    pub async fn settle_storage(&mut self) -> Result<(), String> {
        self.sandbox.store.data_mut().store.settle().await
    }

    /// The partitions the plugin held back during the last `flush`, each with the offset of
    /// its first record that is not durable yet.
    pub fn take_holds(&mut self) -> Holds {
        self.sandbox.store.data_mut().progress.take()
    }

    /// Tells the sink which partitions it now has (`assigned`) or is losing (`!assigned`).
    pub async fn partitions(&mut self, partitions: &[TopicPartition], assigned: bool) -> Result<(), CallError> {
        let timeout = self.sandbox.begin_call()?;
        let writer = self.bindings.turnpike_plugin_sink().writer();
        let (store, cpu) = (&mut self.sandbox.store, &mut self.sandbox.cpu);
        let outcome = if assigned {
            guarded(timeout, &self.sandbox.limits.interrupt, cpu_timed(cpu, writer.call_assigned(store, self.writer, partitions))).await
        } else {
            guarded(timeout, &self.sandbox.limits.interrupt, cpu_timed(cpu, writer.call_revoked(store, self.writer, partitions))).await
        };
        Ok(self.sandbox.settle(outcome)?)
    }

    /// Whether this instance faulted and must be replaced.
    pub fn is_poisoned(&self) -> bool {
        self.sandbox.is_poisoned()
    }

    /// CPU time its calls used since the last take, and the linear memory it holds now.
    pub fn take_usage(&mut self) -> Usage {
        self.sandbox.take_usage()
    }
}
