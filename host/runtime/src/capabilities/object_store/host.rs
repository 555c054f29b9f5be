//! The `object-store` imports: check the key against the grant, take the bytes (waiting for
//! budget), start the network work on the host, and return. What the store answers is waited
//! for by [`StoreState::settle`], after the sink's flush.

use bytes::Bytes;
use wasmtime::component::Resource;

use super::grant::StorageGrant;
use super::state::{StoreState, UploadSlot};
use super::upload::Upload;
use crate::bindings::sink::turnpike::plugin::object_store::{Host, HostUpload, StoreError};

impl StoreState {
    fn granted(&self) -> Result<&StorageGrant, StoreError> {
        self.grant.as_ref().ok_or(StoreError::NotGranted)
    }

    fn checked(&self, key: &str) -> Result<StorageGrant, StoreError> {
        let grant = self.granted()?;
        match grant.refuse_key(key) {
            Some(why) => Err(StoreError::KeyRefused(why)),
            None => Ok(grant.clone()),
        }
    }
}

impl Host for StoreState {
    async fn prefix(&mut self) -> Result<String, StoreError> {
        Ok(self.granted()?.prefix().to_owned())
    }

    async fn put(&mut self, key: String, data: Vec<u8>, if_none_match: bool) -> Result<(), StoreError> {
        let grant = self.checked(&key)?;
        let permits = grant.budget.clone().acquire_many_owned(data.len().min(grant.budget_bytes) as u32).await.expect("the budget semaphore is never closed");
        let bucket = grant.bucket.clone();
        let task = tokio::spawn(async move {
            let _permits = permits;
            bucket.put(&key, Bytes::from(data), if_none_match).await.map(drop).map_err(|e| format!("writing {key:?}: {e}"))
        });
        self.started(task);
        Ok(())
    }

    async fn open_upload(&mut self, key: String) -> Result<Resource<UploadSlot>, StoreError> {
        let grant = self.checked(&key)?;
        self.opened(Upload::new(grant, key)).map_err(StoreError::Closed)
    }
}

impl HostUpload for StoreState {
    async fn write(&mut self, upload: Resource<UploadSlot>, chunk: Vec<u8>) -> Result<(), StoreError> {
        let upload = self.upload(&upload).map_err(StoreError::Closed)?;
        upload.write(&chunk).await.map_err(StoreError::Closed)
    }

    async fn complete(&mut self, upload: Resource<UploadSlot>, if_none_match: bool) -> Result<(), StoreError> {
        // The resource stays for the guest to drop; its host side is taken and finished here.
        let Some(taken) = self.take_open(&upload) else {
            return Err(StoreError::Closed("the upload was already completed or aborted".into()));
        };
        let task = taken.complete(if_none_match).map_err(StoreError::Closed)?;
        self.started(task);
        Ok(())
    }

    async fn abort(&mut self, upload: Resource<UploadSlot>) {
        if let Some(taken) = self.take_open(&upload) {
            if let Some(task) = taken.abort() {
                self.started(task);
            }
        }
    }

    async fn drop(&mut self, upload: Resource<UploadSlot>) -> wasmtime::Result<()> {
        if let Some(taken) = self.remove(upload) {
            if let Some(task) = taken.abort() {
                self.started(task);
            }
        }
        Ok(())
    }
}
