//! One live plugin instance (one wasmtime `Store`), reused across batches until it faults.

use wasmtime::component::ResourceAny;

use crate::batch::{input_len, merge_passed, output_len, resolve_forwarded, validate_output};
use crate::bindings::forwarding::ForwardingTransformPlugin;
use crate::bindings::lazy::exports::turnpike::plugin::lazy_transform::ForwardingBatch;
use crate::bindings::passing::exports::turnpike::plugin::passing_transform::PassingBatch;
use crate::bindings::transform::TransformPlugin;
use crate::bindings::types::{InputBatch, OutputBatch};
use crate::error::{CallError, CreateError, Fault};
use crate::interrupt::guarded;
use crate::labels::InstanceLabels;
use crate::lazy_input::LazyTransform;
use crate::limits::InstanceLimits;
use crate::plugin::{Plugin, PluginKind, TransformPre};
use crate::sandbox::{wrong_kind, Sandbox};
use crate::usage::{cpu_timed, Usage};
use turnpike_batch_layout::LayoutError;

/// A created transform: its sandbox, its bindings and its `transformer` resource.
///
/// After any [`Fault`] the store is poisoned (wasmtime refuses every later call into it):
/// drop the instance and create a new one from the same [`Plugin`].
pub struct TransformInstance {
    sandbox: Sandbox,
    bindings: Bindings,
    transformer: ResourceAny,
}

/// The export the host calls: the newest transform interface the plugin has.
enum Bindings {
    /// Called with the batch's columns only (the bindings' own call would copy the whole batch
    /// in), as `Lazy` is.
    Passing(LazyTransform<PassingBatch>),
    /// Called with the batch's columns only (the bindings' own call would copy the whole batch
    /// in).
    Lazy(LazyTransform<ForwardingBatch>),
    Forwarding(ForwardingTransformPlugin),
    Plain(TransformPlugin),
}

impl Bindings {
    async fn instantiate(pre: &TransformPre, store: &mut wasmtime::Store<crate::state::HostState>, config: &str) -> wasmtime::Result<(Self, Result<ResourceAny, crate::ConfigError>)> {
        Ok(match pre {
            TransformPre::Passing(pre) => {
                let bindings = pre.instantiate_async(&mut *store).await?;
                let exports = bindings.turnpike_plugin_passing_transform().transformer();
                let transform = LazyTransform::new(*exports.func_transform().func(), &*store)?;
                let created = exports.call_create(&mut *store, config).await?;
                (Bindings::Passing(transform), created)
            }
            TransformPre::Lazy(pre) => {
                let bindings = pre.instantiate_async(&mut *store).await?;
                let exports = bindings.turnpike_plugin_lazy_transform().transformer();
                let transform = LazyTransform::new(*exports.func_transform().func(), &*store)?;
                let created = exports.call_create(&mut *store, config).await?;
                (Bindings::Lazy(transform), created)
            }
            TransformPre::Forwarding(pre) => {
                let bindings = pre.instantiate_async(&mut *store).await?;
                let created = bindings.turnpike_plugin_forwarding_transform().transformer().call_create(&mut *store, config).await?;
                (Bindings::Forwarding(bindings), created)
            }
            TransformPre::Plain(pre) => {
                let bindings = pre.instantiate_async(&mut *store).await?;
                let created = bindings.turnpike_plugin_transform().transformer().call_create(&mut *store, config).await?;
                (Bindings::Plain(bindings), created)
            }
        })
    }

    /// One batch, as the plugin returned it: a forwarding plugin's outputs with their forwarded
    /// parts unresolved, a passing plugin's passed inputs apart.
    async fn transform(&self, store: &mut wasmtime::Store<crate::state::HostState>, transformer: ResourceAny, batch: &InputBatch) -> wasmtime::Result<Result<Returned, crate::PluginError>> {
        let returned = |outputs, forwarded| Returned { outputs, forwarded, passed: Vec::new() };
        Ok(match self {
            Bindings::Passing(transform) => {
                let result = transform.call(store, transformer, batch).await?;
                result.map(|p| Returned { outputs: p.outputs, forwarded: p.forwarded, passed: p.passed })
            }
            Bindings::Lazy(transform) => transform.call(store, transformer, batch).await?.map(|l| returned(l.outputs, l.forwarded)),
            Bindings::Forwarding(b) => b.turnpike_plugin_forwarding_transform().transformer().call_transform(store, transformer, batch).await?.map(|f| returned(f.outputs, f.forwarded)),
            Bindings::Plain(b) => b.turnpike_plugin_transform().transformer().call_transform(store, transformer, batch).await?.map(|outputs| returned(outputs, Vec::new())),
        })
    }
}

/// What a transform returned, whichever export: outputs written row by row, the flags of their
/// forwarded parts (empty from a plain transform), and the inputs passed on whole (empty but
/// from a passing transform).
struct Returned {
    outputs: OutputBatch,
    forwarded: Vec<u32>,
    passed: Vec<u32>,
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
        let config = plugin.create_config(config_json);
        let created = cpu_timed(cpu, Bindings::instantiate(pre, store, &config));
        let outcome = guarded(timeout, &sandbox.limits.interrupt, created).await;
        let (bindings, result) = sandbox.settle(outcome)?;
        match result {
            Ok(transformer) => Ok(Self { sandbox, bindings, transformer }),
            Err(e) => Err(sandbox.config_error(e)),
        }
    }

    /// Runs one batch. On `Err(CallError::Fault(_))` or `Err(CallError::Stopped)` the
    /// instance is poisoned.
    pub async fn transform(&mut self, batch: &InputBatch) -> Result<OutputBatch, CallError> {
        let timeout = self.sandbox.begin_call()?;
        let call = self.bindings.transform(&mut self.sandbox.store, self.transformer, batch);
        let outcome = guarded(timeout, &self.sandbox.limits.interrupt, cpu_timed(&mut self.sandbox.cpu, call)).await;
        let max_records = self.sandbox.limits.max_output_records;
        let forwards = !matches!(self.bindings, Bindings::Plain(_));
        match self.sandbox.settle(outcome)? {
            Err(e) => Err(CallError::Plugin { kind: e.kind, message: self.sandbox.explain(e.message) }),
            Ok(output) if output_len(&output.outputs).saturating_add(output.passed.len()) > max_records => {
                let limit = format!("{max_records} records per batch");
                Err(self.sandbox.poison(Fault::OutputLimit { limit }).into())
            }
            // Invalid output is a bug, and the plugin state that produced it is suspect.
            Ok(Returned { mut outputs, mut forwarded, passed }) => {
                if let Err(why) = validate_output(&outputs, input_len(batch)) {
                    return Err(self.sandbox.poison(Fault::InvalidOutput(why)).into());
                }
                // Passed inputs become forwarded rows in their places, resolved with the rest.
                if let Err(why) = merge_passed(&mut outputs, &mut forwarded, &passed, batch) {
                    return Err(self.sandbox.poison(Fault::InvalidOutput(why.to_string())).into());
                }
                if forwards {
                    // No more than the plugin could have returned by copying: its output cap,
                    // and the memory it would have had to hold the copies in.
                    let max_bytes = self.sandbox.limits.max_output_bytes.min(self.sandbox.limits.memory_bytes);
                    match resolve_forwarded(&mut outputs, &forwarded, batch, max_bytes) {
                        Ok(()) => {}
                        Err(LayoutError::ForwardedTooLarge { .. }) => {
                            let limit = format!("{} MiB per batch (with the parts it forwards)", max_bytes >> 20);
                            return Err(self.sandbox.poison(Fault::OutputLimit { limit }).into());
                        }
                        Err(why) => return Err(self.sandbox.poison(Fault::InvalidOutput(why.to_string())).into()),
                    }
                }
                self.sandbox.explain_records(&mut outputs.errors);
                Ok(outputs)
            }
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
