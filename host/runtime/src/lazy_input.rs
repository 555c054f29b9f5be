//! A lazy transform's input (contract `0.1.5`; `0.1.6`'s passing transform is one too): the
//! batch's columns without its bytes, and `batch-input`, which copies the bytes into the plugin
//! only if it asks. The batch is lent to the plugin's store for the length of one call.
//!
//! Why a pointer and not a copy or an `Arc`: the point is that a plugin which never reads the
//! bytes costs nothing for them, so the host must not copy them ahead of the call either, and
//! the batch is the caller's (`&InputBatch`, borrowed all through the chain). So the store gets
//! the batch's address, for as long as a [`Lent`] borrowed from the batch lives, and the import
//! copies the bytes from the batch straight into the plugin's memory. Everything that lends
//! lives in this module, in [`LazyTransform::call`]; nothing else can set the address.

use std::marker::PhantomData;
use std::pin::pin;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

use wasmtime::component::{ComponentType, Func, Lift, Linker, Lower, ResourceAny, TypedFunc};
use wasmtime::{AsContext, Store};

use crate::state::HostState;
use crate::{InputBatch, PluginError};

/// The interface's name in the linker; a plugin built against any later `0.1.x` matches it.
const INTERFACE: &str = "turnpike:plugin/batch-input@0.1.6";

/// An `input-batch` as a lazy transform receives it: every column but `data`, which goes in
/// empty. Borrowed from the host's batch, so the columns are copied only into the plugin.
#[derive(ComponentType, Lower)]
#[component(record)]
struct Columns<'a> {
    data: &'a [u8],
    topics: &'a [String],
    records: &'a [u32],
    positions: &'a [i64],
    headers: &'a [u32],
}

impl<'a> Columns<'a> {
    fn of(batch: &'a InputBatch) -> Self {
        Self { data: &[], topics: &batch.topics, records: &batch.records, positions: &batch.positions, headers: &batch.headers }
    }
}

type Params<'a> = (ResourceAny, Columns<'a>);
type Results<R> = (Result<R, PluginError>,);

/// A lazy `transform` export (`lazy-transform`, or since `0.1.6` `passing-transform`), its
/// type checked once. `R` is what it returns on success.
pub(crate) struct LazyTransform<R> {
    func: Func,
    returns: PhantomData<fn() -> R>,
}

impl<R> Clone for LazyTransform<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for LazyTransform<R> {}

impl<R: ComponentType + Lift + Send + Sync + 'static> LazyTransform<R> {
    /// Checks `func` against the types [`LazyTransform::call`] uses (the bindings check it
    /// against theirs, which differ in owning the columns), once per instance rather than on
    /// every call (~150 ns each).
    pub(crate) fn new(func: Func, store: impl AsContext) -> wasmtime::Result<Self> {
        func.typed::<Params<'_>, Results<R>>(store)?;
        Ok(Self { func, returns: PhantomData })
    }

    /// One batch: its columns go in, and its bytes are lent to the store for this call only.
    pub(crate) async fn call(self, store: &mut Store<HostState>, transformer: ResourceAny, batch: &InputBatch) -> wasmtime::Result<Result<R, PluginError>> {
        #[allow(unsafe_code, reason = "the type was checked in `new`; see the safety comment")]
        // SAFETY: `new` checked this very function against these very types (a lifetime is not
        // part of a component type), as wasmtime's own bindings do before calling unchecked.
        let typed = unsafe { TypedFunc::<Params<'_>, Results<R>>::new_unchecked(self.func) };
        let _lent = store.data().lent.lend(batch);
        // Declared after `_lent`, so dropped before it, on return or when this future is dropped
        // mid-call (a timeout): the guest never runs again with the batch taken back.
        let call = pin!(typed.call_async(&mut *store, (transformer, Columns::of(batch))));
        let (result,) = call.await?;
        Ok(result)
    }
}

/// Where a store finds the batch lent to it: null when none is.
#[derive(Clone, Default)]
pub(crate) struct BatchSlot(Arc<AtomicPtr<InputBatch>>);

/// While this lives, `batch-data` in the store that owns the slot returns the lent batch's
/// bytes; dropping it (the call ended, or its future was dropped) takes them back.
struct Lent<'a> {
    slot: BatchSlot,
    _batch: PhantomData<&'a InputBatch>,
}

impl BatchSlot {
    /// Lends `batch` to the store until the returned guard is dropped. Only
    /// [`LazyTransform::call`] lends, and it never leaks the guard. (A caller that leaks the
    /// whole call's future leaves a stale address behind, but no guest code runs in that store
    /// again before the next call lends its own batch over it.)
    fn lend<'a>(&self, batch: &'a InputBatch) -> Lent<'a> {
        self.0.store(ptr::from_ref(batch).cast_mut(), Ordering::Release);
        Lent { slot: self.clone(), _batch: PhantomData }
    }

    /// The lent batch's bytes, or none.
    fn data(&self) -> &'static [u8] {
        let batch = self.0.load(Ordering::Acquire);
        if batch.is_null() {
            return &[];
        }
        #[allow(unsafe_code, reason = "the batch is lent by address; see the safety comment")]
        // SAFETY: the address is set only by `lend`, from a batch borrowed (shared, so alive
        // and unchanged) for as long as the `Lent` it returns, whose drop clears it. It is read
        // only here, from the import below, which runs inside the call `LazyTransform::call`
        // makes while holding that `Lent`. wasmtime then copies the slice into the plugin,
        // calling the plugin's allocator first; if the call's future is dropped while the
        // plugin is there (a timeout or an interrupt at an epoch yield: `interrupt::guarded`),
        // wasmtime resumes it with an error before the copy, and only then is the `Lent`
        // dropped (see `call`). This holds while
        // the call runs one wasm call at a time on its own fiber: with wasmtime's
        // `component-model-async` (not compiled in: see the root Cargo.toml) calls could interleave, and this
        // must be thought through again. The `'static` is what `func_wrap` asks of a return
        // value; the slice lives no longer than that copy.
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
