//! What one instance keeps for object storage: its grant, its open uploads (in a resource
//! table of their own) and the store operations it started that have not been waited for.

use std::sync::{Arc, OnceLock};

use wasmtime::component::{Resource, ResourceTable};

use super::grant::StorageGrant;
use super::upload::{StoreTask, Upload};

/// The table entry behind a guest's `upload` handle: the upload, until it is completed or
/// aborted (the handle itself lives on until the guest drops it).
pub struct UploadSlot(Option<Upload>);

/// The `object-store` capability's state in one store.
pub(crate) struct StoreState {
    pub(crate) grant: Option<StorageGrant>,
    pub(crate) uploads: ResourceTable,
    /// Completed puts and uploads, and aborts, not waited for yet.
    pending: Vec<StoreTask>,
    /// The failure slots of uploads opened, so a failed part is reported even while the
    /// plugin keeps its upload open.
    open: Vec<Arc<OnceLock<String>>>,
}

impl StoreState {
    pub(crate) fn new(grant: Option<StorageGrant>) -> Self {
        Self { grant, uploads: ResourceTable::new(), pending: Vec::new(), open: Vec::new() }
    }

    pub(crate) fn started(&mut self, task: StoreTask) {
        self.pending.push(task);
    }

    pub(crate) fn opened(&mut self, upload: Upload) -> Result<Resource<UploadSlot>, String> {
        self.open.retain(|slot| Arc::strong_count(slot) > 1);
        self.open.push(upload.failure_slot());
        self.uploads.push(UploadSlot(Some(upload))).map_err(|e| format!("too many open uploads: {e}"))
    }

    /// The open upload behind `handle`.
    pub(crate) fn upload(&mut self, handle: &Resource<UploadSlot>) -> Result<&mut Upload, String> {
        let slot = self.uploads.get_mut(handle).map_err(|e| format!("no such upload: {e}"))?;
        slot.0.as_mut().ok_or_else(|| "the upload was already completed or aborted".to_owned())
    }

    /// Takes the open upload out of its slot, to complete or abort it.
    pub(crate) fn take_open(&mut self, handle: &Resource<UploadSlot>) -> Option<Upload> {
        self.uploads.get_mut(handle).ok()?.0.take()
    }

    /// Removes the slot (the guest dropped its handle), with the upload if still open.
    pub(crate) fn remove(&mut self, handle: Resource<UploadSlot>) -> Option<Upload> {
        self.uploads.delete(handle).ok()?.0
    }

    /// Waits for every store operation started so far. `Err` says what could not be written;
    /// an open upload whose parts failed counts too, since its object can never complete.
    pub(crate) async fn settle(&mut self) -> Result<(), String> {
        let mut first_error = None;
        for task in std::mem::take(&mut self.pending) {
            let outcome = task.await.unwrap_or_else(|e| Err(format!("the upload task ended: {e}")));
            if let Err(why) = outcome {
                first_error.get_or_insert(why);
            }
        }
        self.open.retain(|slot| Arc::strong_count(slot) > 1);
        if first_error.is_none() {
            first_error = self.open.iter().find_map(|slot| slot.get().cloned());
        }
        first_error.map_or(Ok(()), Err)
    }
}
