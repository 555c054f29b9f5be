//! One live plugin instance (one wasmtime `Store`), reused across batches until it faults.

use std::time::{Duration, Instant};

use wasmtime::component::ResourceAny;
use wasmtime::{Store, Trap, UpdateDeadline};

use crate::batch::{input_len, output_len, validate_output};
use crate::bindings::TransformPlugin;
use crate::error::{CallError, CreateError, Fault};
use crate::state::HostState;
use crate::{InputBatch, OutputBatch, Plugin};

/// Labels attached to everything an instance logs.
#[derive(Debug, Clone)]
pub struct InstanceLabels {
    /// The connector running the instance.
    pub connector: String,
    /// The plugin, as `name@version`.
    pub plugin: String,
}

/// Limits one instance runs under.
#[derive(Debug, Clone)]
pub struct InstanceLimits {
    /// Cap on each linear memory. Default 64 MiB.
    pub memory_bytes: usize,
    /// CPU deadline for one batch. Default 5 s.
    pub batch_timeout: Duration,
    /// Deadline for instantiation plus `create`. Default 10 s.
    pub create_timeout: Duration,
    /// Bytes one batch's output may carry from the plugin to the host (data and columns).
    /// Default 64 MiB. Enforced while copying, so a plugin cannot make the host allocate more.
    pub max_output_bytes: usize,
    /// Output records one batch may produce. Default 100,000.
    pub max_output_records: usize,
}

impl Default for InstanceLimits {
    fn default() -> Self {
        Self {
            memory_bytes: 64 << 20,
            batch_timeout: Duration::from_secs(5),
            create_timeout: Duration::from_secs(10),
            max_output_bytes: 64 << 20,
            max_output_records: 100_000,
        }
    }
}

/// Slack on top of a deadline before the async timeout drops the call outright. The epoch
/// deadline normally fires first (within a tick); this only catches a call stuck elsewhere.
const TIMEOUT_SLACK: Duration = Duration::from_secs(1);

/// A created transform: its store, its bindings and its `transformer` resource.
///
/// After any [`Fault`] the store is poisoned (wasmtime refuses every later call into it):
/// drop the instance and create a new one from the same [`Plugin`].
pub struct TransformInstance {
    store: Store<HostState>,
    bindings: TransformPlugin,
    transformer: ResourceAny,
    limits: InstanceLimits,
    poisoned: bool,
}

impl TransformInstance {
    /// Instantiates `plugin` and calls its `create` with `config_json`.
    pub async fn create(
        plugin: &Plugin,
        config_json: &str,
        labels: InstanceLabels,
        limits: InstanceLimits,
    ) -> Result<Self, CreateError> {
        let mut store = Store::new(plugin.runtime().engine(), HostState::new(labels, limits.memory_bytes));
        store.limiter(|s| &mut s.limiter);
        // Caps what one call may copy out of the guest: a plugin returning a huge batch fails
        // while it is being copied, before the host has allocated it all.
        store.set_hostcall_fuel(limits.max_output_bytes);
        store.set_max_component_handles(10_000);
        // Each epoch tick: yield to tokio so a long call never hogs a worker thread, and
        // interrupt the call once its deadline has passed.
        store.epoch_deadline_callback(|ctx| {
            if Instant::now() >= ctx.data().deadline {
                Ok(UpdateDeadline::Interrupt)
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        store.set_epoch_deadline(1);
        store.data_mut().deadline = Instant::now() + limits.create_timeout;

        let limit_ms = millis(limits.create_timeout);
        store.data_mut().creating = true;
        let created = tokio::time::timeout(limits.create_timeout + TIMEOUT_SLACK, async {
            let bindings = plugin.pre().instantiate_async(&mut store).await?;
            let result = bindings
                .turnpike_plugin_transform()
                .transformer()
                .call_create(&mut store, config_json)
                .await?;
            wasmtime::Result::Ok((bindings, result))
        })
        .await;
        let (bindings, result) = match created {
            Err(_elapsed) => return Err(Fault::Timeout { limit_ms }.into()),
            Ok(Err(e)) => return Err(classify(&store, e, &limits).into()),
            Ok(Ok(pair)) => pair,
        };
        store.data_mut().creating = false;
        match result {
            Ok(transformer) => Ok(Self { store, bindings, transformer, limits, poisoned: false }),
            Err(e) => Err(CreateError::Config { key: e.key, message: e.message }),
        }
    }

    /// Runs one batch. On `Err(CallError::Fault(_))` the instance is poisoned.
    pub async fn transform(&mut self, batch: &InputBatch) -> Result<OutputBatch, CallError> {
        if self.poisoned {
            return Err(Fault::Trap { message: "instance already faulted; create a new one".into() }.into());
        }
        let limit_ms = millis(self.limits.batch_timeout);
        self.store.data_mut().deadline = Instant::now() + self.limits.batch_timeout;
        let guest = self.bindings.turnpike_plugin_transform().transformer();
        let call = guest.call_transform(&mut self.store, self.transformer, batch);
        let outcome = tokio::time::timeout(self.limits.batch_timeout + TIMEOUT_SLACK, call).await;
        let result = match outcome {
            Err(_elapsed) => Err(Fault::Timeout { limit_ms }),
            Ok(Err(e)) => Err(classify(&self.store, e, &self.limits)),
            Ok(Ok(r)) => Ok(r),
        };
        match result {
            Err(fault) => {
                self.poisoned = true;
                Err(fault.into())
            }
            Ok(Err(e)) => Err(CallError::Plugin { kind: e.kind, message: e.message }),
            Ok(Ok(output)) if output_len(&output) > self.limits.max_output_records => {
                self.poisoned = true;
                Err(Fault::OutputLimit { limit: format!("{} records per batch", self.limits.max_output_records) }.into())
            }
            Ok(Ok(output)) => match validate_output(&output, input_len(batch)) {
                Ok(()) => Ok(output),
                Err(why) => {
                    // Invalid output is a bug, and the plugin state that produced it is suspect.
                    self.poisoned = true;
                    Err(Fault::InvalidOutput(why).into())
                }
            },
        }
    }

    /// Whether this instance faulted and must be replaced.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }
}

/// wasmtime's message when a call copies more than its hostcall fuel out of the guest. The
/// error type is private to wasmtime, so its (stable) message is what identifies it.
const HOSTCALL_FUEL_EXHAUSTED: &str = "fuel allocated for hostcalls has been exhausted";

/// Turns a wasmtime error from a guest call into the fault a user can act on.
fn classify(store: &Store<HostState>, error: wasmtime::Error, limits: &InstanceLimits) -> Fault {
    if store.data().limiter.refused {
        return Fault::MemoryLimit { limit_mib: mib(limits.memory_bytes) };
    }
    let trap = error.downcast_ref::<Trap>().copied();
    if trap == Some(Trap::Interrupt) {
        let deadline = if store.data().creating { limits.create_timeout } else { limits.batch_timeout };
        return Fault::Timeout { limit_ms: millis(deadline) };
    }
    let text = format!("{error:#}");
    if text.contains(HOSTCALL_FUEL_EXHAUSTED) {
        return Fault::OutputLimit { limit: format!("{} MiB per batch", limits.max_output_bytes >> 20) };
    }
    if text.contains("maximum concurrent") || text.contains("pooling allocator") {
        return Fault::HostCapacity(text);
    }
    let mut message = match trap {
        Some(t) => t.to_string(),
        None => format!("{error}"),
    };
    let stderr = store.data().stderr.text();
    if !stderr.is_empty() {
        message = format!("{message}; plugin error output: {stderr}");
    }
    Fault::Trap { message }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn mib(bytes: usize) -> u32 {
    u32::try_from(bytes >> 20).unwrap_or(u32::MAX)
}
