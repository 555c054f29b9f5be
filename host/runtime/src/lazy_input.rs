//! A lazy transform's input (contract `0.1.5`): the batch's columns without its bytes, and
//! `batch-input`, which copies the bytes into the plugin only if it asks. The batch is lent to
//! the plugin's store for the length of one call.
//!
//! Why a pointer and not a copy or an `Arc`: the point is that a plugin which never reads the
//! bytes costs nothing for them, so the host must not copy them ahead of the call either, and
//! the batch is the caller's (`&InputBatch`, borrowed all through the chain). So the store gets
//! the batch's address, valid for as long as a [`Lent`] borrowed from the batch lives; the
//! import copies the bytes straight from the batch into the plugin's memory.

use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

use wasmtime::component::{ComponentType, Linker, Lower};

use crate::state::HostState;
use crate::InputBatch;

/// The interface's name in the linker; a plugin built against any later `0.1.x` matches it.
const INTERFACE: &str = "turnpike:plugin/batch-input@0.1.5";

/// An `input-batch` as a lazy transform receives it: every column but `data`, which goes in
/// empty. Borrowed from the host's batch, so the columns are copied only into the plugin.
#[derive(ComponentType, Lower)]
#[component(record)]
pub(crate) struct Columns<'a> {
    data: &'a [u8],
    topics: &'a [String],
    records: &'a [u32],
    positions: &'a [i64],
    headers: &'a [u32],
}

impl<'a> Columns<'a> {
    pub(crate) fn of(batch: &'a InputBatch) -> Self {
        Self { data: &[], topics: &batch.topics, records: &batch.records, positions: &batch.positions, headers: &batch.headers }
    }
}

/// Where a store finds the batch lent to it: null when none is.
#[derive(Clone, Default)]
pub(crate) struct BatchSlot(Arc<AtomicPtr<InputBatch>>);

/// While this lives, `batch-data` in the store that owns the slot returns the lent batch's
/// bytes; dropping it (the call ended, or its future was dropped) takes them back.
pub(crate) struct Lent<'a> {
    slot: BatchSlot,
    _batch: PhantomData<&'a InputBatch>,
}

impl BatchSlot {
    /// Lends `batch` to the store until the returned guard is dropped.
    pub(crate) fn lend<'a>(&self, batch: &'a InputBatch) -> Lent<'a> {
        self.0.store(ptr::from_ref(batch).cast_mut(), Ordering::Release);
        Lent { slot: self.clone(), _batch: PhantomData }
    }

    /// The lent batch's bytes, or none.
    fn data(&self) -> &'static [u8] {
        let batch = self.0.load(Ordering::Acquire);
        if batch.is_null() {
            return &[];
        }
        // SAFETY: the pointer is set only by `lend`, from a batch borrowed for as long as the
        // `Lent` it returns, whose drop clears it: while it is set, the batch is alive and
        // unchanged (shared borrow). The slice is only read by the import below, which lowers
        // it into the plugin before returning, within the wasm call that the `Lent` outlives
        // (the call's future is declared after the guard, so it is dropped first). The
        // `'static` is what `func_wrap` asks of a return value; it does not escape.
        #[allow(unsafe_code, reason = "the batch is lent by address; see the safety comment")]
        unsafe {
            &*ptr::from_ref((*batch).data.as_slice())
        }
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        self.slot.0.store(ptr::null_mut(), Ordering::Release);
    }
}

/// Links `batch-input` for every plugin: outside a lazy transform's call it returns no bytes.
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.instance(INTERFACE)?.func_wrap("batch-data", |store, (): ()| Ok((store.data().lent.data(),)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_lent_only_while_its_guard_lives() {
        let slot = BatchSlot::default();
        assert!(slot.data().is_empty(), "nothing lent yet");
        let batch = InputBatch { data: b"bytes".to_vec(), ..InputBatch::default() };
        let lent = slot.lend(&batch);
        assert_eq!(slot.data(), b"bytes");
        drop(lent);
        assert!(slot.data().is_empty(), "taken back");
    }
}
