//! The sink trait and the glue that exports it.

use std::cell::RefCell;

use serde::de::DeserializeOwned;

use crate::bindings::sink::exports::turnpike::plugin::sink as export;
use crate::bindings::turnpike::plugin::types as wit;
use crate::{parse_config, Batch, ConfigError, RecordError};

/// A sink: writes records consumed from Kafka to the outside world.
///
/// The host commits consumer offsets only after [`Sink::flush`] succeeds, so a sink that
/// buffers must make everything written so far durable in `flush`. Delivery is at least
/// once: after a crash, records written since the last flush are written again.
pub trait Sink: Sized + 'static {
    /// The plugin's configuration, parsed from the connector's `sink.config` mapping.
    type Config: DeserializeOwned;

    /// Builds the sink. Do not write to the outside world here (the host may call `create`
    /// to validate a configuration).
    fn create(config: Self::Config) -> Result<Self, ConfigError>;

    /// Writes (or buffers) a batch. Return the records rejected for good, by
    /// [`crate::Record::index`], each with why: the host dead-letters them or fails the
    /// connector, per its error policy. An `Err` concerns the whole batch: a
    /// [`RecordError::retriable`] makes the host retry the same batch with backoff, so do not
    /// keep half of a failed batch.
    fn write(&mut self, batch: Batch<'_>) -> Result<Vec<(u32, RecordError)>, RecordError>;

    /// Makes everything written so far durable. The default does nothing (for sinks that
    /// write synchronously in [`Sink::write`]). A sink that keeps records in objects still
    /// open calls [`crate::storage::hold`] here, so their partitions are not committed past them.
    fn flush(&mut self) -> Result<(), RecordError> {
        Ok(())
    }

    /// Partitions newly assigned to this task, as `(topic, partition)`.
    fn assigned(&mut self, _partitions: &[(String, i32)]) {}

    /// Partitions about to be taken away, after a final flush.
    fn revoked(&mut self, _partitions: &[(String, i32)]) {}
}

/// One write through a sink, as the host makes it.
pub(crate) fn run_write<S: Sink>(sink: &mut S, batch: &wit::InputBatch) -> Result<Vec<wit::RecordError>, RecordError> {
    let rejected = sink.write(Batch::sent(batch))?;
    Ok(rejected.into_iter().map(|(input, e)| wit::RecordError { input, error: e.into_wit() }).collect())
}

fn pairs(partitions: Vec<wit::TopicPartition>) -> Vec<(String, i32)> {
    partitions.into_iter().map(|p| (p.topic, p.partition)).collect()
}

/// The component-model resource wrapping a user's sink.
#[doc(hidden)]
pub struct SinkResource<S>(RefCell<S>);

impl<S: Sink> export::GuestWriter for SinkResource<S> {
    fn create(config: String) -> Result<export::Writer, wit::ConfigError> {
        match parse_config::<S::Config>(&config).and_then(S::create) {
            Ok(s) => Ok(export::Writer::new(SinkResource(RefCell::new(s)))),
            Err(e) => Err(e.into_wit()),
        }
    }

    fn write(&self, batch: wit::InputBatch) -> Result<Vec<wit::RecordError>, wit::PluginError> {
        run_write(&mut *self.0.borrow_mut(), &batch).map_err(RecordError::into_wit)
    }

    fn flush(&self) -> Result<(), wit::PluginError> {
        self.0.borrow_mut().flush().map_err(RecordError::into_wit)
    }

    fn assigned(&self, partitions: Vec<wit::TopicPartition>) {
        self.0.borrow_mut().assigned(&pairs(partitions));
    }

    fn revoked(&self, partitions: Vec<wit::TopicPartition>) {
        self.0.borrow_mut().revoked(&pairs(partitions));
    }
}

/// Exports a [`Sink`] implementation as the plugin's sink. Use it once, in `lib.rs`.
#[macro_export]
macro_rules! export_sink {
    ($t:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct __TurnpikeSinkPlugin;
            impl $crate::bindings::sink::exports::turnpike::plugin::sink::Guest for __TurnpikeSinkPlugin {
                type Writer = $crate::__private::SinkResource<$t>;
            }
            $crate::bindings::sink::export_sink_world!(__TurnpikeSinkPlugin with_types_in $crate::bindings::sink);
        };
    };
}
