//! A live source plugin instance: created with its last stored position, then polled.

use wasmtime::component::ResourceAny;

use crate::bindings::source::SourcePlugin;
use crate::error::{CallError, CreateError, Fault};
use crate::interrupt::guarded;
use crate::labels::InstanceLabels;
use crate::limits::InstanceLimits;
use crate::plugin::{Plugin, PluginKind};
use crate::sandbox::{wrong_kind, Sandbox};
use crate::usage::{cpu_timed, Usage};
use crate::source_batch::{check_poll, Polled};

/// A created source: its sandbox, bindings and `reader` resource. Poisoned after a fault,
/// like [`crate::TransformInstance`].
pub struct SourceInstance {
    sandbox: Sandbox,
    bindings: SourcePlugin,
    reader: ResourceAny,
    output_topic: String,
}

impl SourceInstance {
    /// Instantiates `plugin` and calls `create` with its config and the position to resume
    /// after (`None` on a first run). Records without a topic of their own go to
    /// `output_topic`.
    pub async fn create(
        plugin: &Plugin,
        config_json: &str,
        position: Option<&[u8]>,
        output_topic: &str,
        labels: InstanceLabels,
        limits: InstanceLimits,
    ) -> Result<Self, CreateError> {
        let pre = plugin.pre().source().ok_or_else(|| wrong_kind(plugin, PluginKind::Source))?;
        let mut sandbox = Sandbox::new(plugin, labels, limits);
        let timeout = sandbox.begin_create();
        let (store, cpu) = (&mut sandbox.store, &mut sandbox.cpu);
        let created = cpu_timed(cpu, async {
            let bindings = pre.instantiate_async(&mut *store).await?;
            let reader = bindings.turnpike_plugin_source().reader();
            let result = reader.call_create(&mut *store, config_json, position).await?;
            wasmtime::Result::Ok((bindings, result))
        });
        let outcome = guarded(timeout, &sandbox.limits.interrupt, created).await;
        let (bindings, result) = sandbox.settle(outcome)?;
        match result {
            Ok(reader) => Ok(Self { sandbox, bindings, reader, output_topic: output_topic.to_owned() }),
            Err(e) => Err(sandbox.config_error(e)),
        }
    }

    /// Asks for at most `max_records` new records.
    pub async fn poll(&mut self, max_records: u32) -> Result<Polled, CallError> {
        let timeout = self.sandbox.begin_call()?;
        let reader = self.bindings.turnpike_plugin_source().reader();
        let outcome = guarded(timeout, &self.sandbox.limits.interrupt, cpu_timed(&mut self.sandbox.cpu, reader.call_poll(&mut self.sandbox.store, self.reader, max_records))).await;
        match self.sandbox.settle(outcome)? {
            Err(e) => Err(CallError::Plugin { kind: e.kind, message: self.sandbox.explain(e.message) }),
            Ok(batch) => match check_poll(batch, &self.output_topic, max_records as usize) {
                Ok(mut polled) => {
                    self.sandbox.explain_records(&mut polled.errors);
                    Ok(polled)
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
}
