//! One live plugin instance (one wasmtime `Store`), reused across batches until it faults.

use wasmtime::component::ResourceAny;

use crate::batch::{input_len, output_len, validate_output};
use crate::bindings::transform::TransformPlugin;
use crate::bindings::types::{InputBatch, OutputBatch};
use crate::error::{CallError, CreateError, Fault};
use crate::labels::InstanceLabels;
use crate::limits::InstanceLimits;
use crate::plugin::{Plugin, PluginKind};
use crate::sandbox::{wrong_kind, Sandbox};
use crate::usage::{cpu_timed, Usage};

/// A created transform: its sandbox, its bindings and its `transformer` resource.
///
/// After any [`Fault`] the store is poisoned (wasmtime refuses every later call into it):
/// drop the instance and create a new one from the same [`Plugin`].
pub struct TransformInstance {
    sandbox: Sandbox,
    bindings: TransformPlugin,
    transformer: ResourceAny,
}

impl TransformInstance {
    /// Instantiates `plugin` and calls its `create` with `config_json`.
    pub async fn create(
        plugin: &Plugin,
        config_json: &str,
        labels: InstanceLabels,
        limits: InstanceLimits,
    ) -> Result<Self, CreateError> {
        let pre = plugin.pre().transform().ok_or_else(|| wrong_kind(plugin, PluginKind::Transform))?;
        let mut sandbox = Sandbox::new(plugin, labels, limits);
        let timeout = sandbox.begin_create();
        let (store, cpu) = (&mut sandbox.store, &mut sandbox.cpu);
        let created = cpu_timed(cpu, async {
            let bindings = pre.instantiate_async(&mut *store).await?;
            let result = bindings.turnpike_plugin_transform().transformer().call_create(&mut *store, &plugin.create_config(config_json)).await?;
            wasmtime::Result::Ok((bindings, result))
        });
        let outcome = tokio::time::timeout(timeout, created).await;
        let (bindings, result) = sandbox.settle(outcome)?;
        match result {
            Ok(transformer) => Ok(Self { sandbox, bindings, transformer }),
            Err(e) => Err(sandbox.config_error(e)),
        }
    }

    /// Runs one batch. On `Err(CallError::Fault(_))` the instance is poisoned.
    pub async fn transform(&mut self, batch: &InputBatch) -> Result<OutputBatch, CallError> {
        let timeout = self.sandbox.begin_call()?;
        let guest = self.bindings.turnpike_plugin_transform().transformer();
        let outcome = tokio::time::timeout(timeout, cpu_timed(&mut self.sandbox.cpu, guest.call_transform(&mut self.sandbox.store, self.transformer, batch))).await;
        let max_records = self.sandbox.limits.max_output_records;
        match self.sandbox.settle(outcome)? {
            Err(e) => Err(CallError::Plugin { kind: e.kind, message: self.sandbox.explain(e.message) }),
            Ok(output) if output_len(&output) > max_records => {
                let limit = format!("{max_records} records per batch");
                Err(self.sandbox.poison(Fault::OutputLimit { limit }).into())
            }
            // Invalid output is a bug, and the plugin state that produced it is suspect.
            Ok(mut output) => match validate_output(&output, input_len(batch)) {
                Ok(()) => {
                    self.sandbox.explain_records(&mut output.errors);
                    Ok(output)
                }
                Err(why) => Err(self.sandbox.poison(Fault::InvalidOutput(why)).into()),
            },
        }
    }

    /// Whether this instance faulted and must be replaced.
    pub fn is_poisoned(&self) -> bool {
        self.sandbox.is_poisoned()
    }

    /// CPU time its calls used since the last take, and the linear memory it holds now.
    pub fn take_usage(&mut self) -> Usage {
        self.sandbox.take_usage()
    }

    /// Whether this instance's memory has grown past three quarters of its cap, so that it
    /// should be replaced by a fresh one (from the same config) before the next batch, rather
    /// than run out of memory mid-batch. Transforms keep no state the host relies on between
    /// batches, so replacing one is safe.
    pub fn needs_replacing(&self) -> bool {
        self.sandbox.near_memory_limit()
    }
}
