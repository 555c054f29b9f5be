//! The `sink-progress` capability: a sink holds a partition's commit back to the first
//! offset that is not durable yet (an object still open). Holds are collected during one
//! `flush` and taken by the sink task when it commits; each flush starts with none.

use std::collections::BTreeMap;

use wasmtime::component::{HasSelf, Linker};

use super::{Capability, CapabilityStates};
use crate::bindings::sink::turnpike::plugin::sink_progress::Host;
use crate::bindings::types::TopicPartition;
use crate::labels::InstanceLabels;

/// `(topic, partition)` → the lowest held offset.
pub type Holds = BTreeMap<(String, i32), i64>;

/// The holds made during the current flush.
#[derive(Default)]
pub(crate) struct ProgressState {
    holds: Holds,
}

impl ProgressState {
    /// Forgets the holds of the last flush (a flush is starting).
    pub(crate) fn clear(&mut self) {
        self.holds.clear();
    }

    /// The holds made since [`ProgressState::clear`].
    pub(crate) fn take(&mut self) -> Holds {
        std::mem::take(&mut self.holds)
    }
}

impl Host for ProgressState {
    fn hold(&mut self, partition: TopicPartition, offset: i64) {
        let held = self.holds.entry((partition.topic, partition.partition)).or_insert(offset);
        *held = (*held).min(offset);
    }
}

/// The `sink-progress` capability; every sink has it.
pub(crate) struct SinkProgressCapability;

impl Capability for SinkProgressCapability {
    type Grant = ();
    type State = ProgressState;

    fn prepare(_grant: &(), _labels: &InstanceLabels) -> ProgressState {
        ProgressState::default()
    }

    fn add_to_linker<T: CapabilityStates>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        crate::bindings::sink::turnpike::plugin::sink_progress::add_to_linker::<T, HasSelf<ProgressState>>(linker, T::sink_progress)
    }
}
