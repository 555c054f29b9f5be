//! One object written in pieces. Bytes gather in a buffer until a part is full; the first
//! full part starts a task that opens a multipart upload and uploads the parts it is sent, in
//! order, while the plugin goes on. An object that never fills a part is written with one
//! request at `complete`. The task aborts the multipart upload when it fails or when it is told to
//! stop (the plugin aborted or dropped the upload), so nothing is left behind.
//!
//! The connector's budget bounds the parts handed over and not yet uploaded: a full part
//! waits for room, which frees as earlier parts reach the store, so a plugin writing faster
//! than the store takes slows down; the part still being filled is not counted (each open
//! object holds at most one), so many open objects can never starve each other.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use tokio::sync::{mpsc, OwnedSemaphorePermit};
use tokio::task::JoinHandle;

use super::grant::StorageGrant;

/// The outcome of a store operation the host ran for the plugin: `Err` says what failed.
pub(crate) type StoreTask = JoinHandle<Result<(), String>>;

/// What the multipart task is sent.
enum Piece {
    Part(Bytes, OwnedSemaphorePermit),
    /// The last bytes (possibly none), then complete.
    Last(Bytes, OwnedSemaphorePermit, bool),
}

/// An object being written (the `upload` resource's host side).
pub struct Upload {
    grant: StorageGrant,
    key: String,
    /// Bytes of the part being filled (at most one part: not counted against the budget,
    /// which bounds the parts waiting for the store).
    buffer: Vec<u8>,
    /// The multipart task, once the first part was full.
    multipart: Option<(mpsc::UnboundedSender<Piece>, StoreTask)>,
    /// Set by the multipart task when it failed, so the plugin hears of it at its next call.
    failure: Arc<OnceLock<String>>,
}

impl Upload {
    pub(crate) fn new(grant: StorageGrant, key: String) -> Self {
        Self { grant, key, buffer: Vec::new(), multipart: None, failure: Arc::new(OnceLock::new()) }
    }

    /// Where the multipart task reports a failure (shared with the instance's state).
    pub(crate) fn failure_slot(&self) -> Arc<OnceLock<String>> {
        self.failure.clone()
    }

    /// Why the upload can take no more bytes, if it failed.
    pub(crate) fn failure(&self) -> Option<&str> {
        self.failure.get().map(String::as_str)
    }

    /// Appends `chunk`; each part that fills is handed to the multipart task once the
    /// connector's budget has room for it (a wait only while earlier parts are uploading).
    pub(crate) async fn write(&mut self, chunk: &[u8]) -> Result<(), String> {
        if let Some(why) = self.failure() {
            return Err(why.to_owned());
        }
        let mut rest = chunk;
        while !rest.is_empty() {
            let room = self.grant.part_size - self.buffer.len();
            let (now, later) = rest.split_at(room.min(rest.len()));
            self.buffer.extend_from_slice(now);
            rest = later;
            if self.buffer.len() == self.grant.part_size {
                let part = Bytes::from(std::mem::take(&mut self.buffer));
                let permits = acquire(&self.grant, part.len()).await;
                self.send(Piece::Part(part, permits))?;
            }
        }
        Ok(())
    }

    /// Finishes the object; the returned task ends when the store has it.
    pub(crate) fn complete(mut self, if_none_match: bool) -> Result<StoreTask, String> {
        if let Some(why) = self.failure() {
            return Err(why.to_owned());
        }
        let last = Bytes::from(std::mem::take(&mut self.buffer));
        // The last bytes are at most one part: they go at once, beyond the budget if need be
        // (waiting here could only wait on this connector's own earlier parts).
        let permits = self.grant.budget.clone().try_acquire_many_owned(last.len().min(self.grant.budget_bytes) as u32).ok();
        match self.multipart.take() {
            Some((tx, task)) => {
                let permits = permits.unwrap_or_else(|| empty_permit(&self.grant));
                tx.send(Piece::Last(last, permits, if_none_match)).map_err(|_| self.failure().unwrap_or("the upload stopped").to_owned())?;
                Ok(task)
            }
            None => {
                let (bucket, key) = (self.grant.bucket.clone(), std::mem::take(&mut self.key));
                Ok(tokio::spawn(async move {
                    let _permits = permits;
                    bucket.put(&key, last, if_none_match).await.map(drop).map_err(|e| format!("writing {key:?}: {e}"))
                }))
            }
        }
    }

    /// Gives the object up. The returned task (if parts were uploaded) ends when the
    /// multipart upload is aborted.
    pub(crate) fn abort(mut self) -> Option<StoreTask> {
        // Dropping the sender tells the task to abort.
        self.multipart.take().map(|(_, task)| task)
    }

    fn send(&mut self, piece: Piece) -> Result<(), String> {
        if self.multipart.is_none() {
            let (tx, rx) = mpsc::unbounded_channel();
            let task = tokio::spawn(multipart(self.grant.clone(), self.key.clone(), rx, self.failure.clone()));
            self.multipart = Some((tx, task));
        }
        let (tx, _) = self.multipart.as_ref().expect("just started");
        tx.send(piece).map_err(|_| self.failure().unwrap_or("the upload stopped").to_owned())
    }
}

/// Waits for `bytes` of budget (all of it, for a piece larger than the whole budget).
async fn acquire(grant: &StorageGrant, bytes: usize) -> OwnedSemaphorePermit {
    let n = bytes.min(grant.budget_bytes) as u32;
    grant.budget.clone().acquire_many_owned(n).await.expect("the budget semaphore is never closed")
}

fn empty_permit(grant: &StorageGrant) -> OwnedSemaphorePermit {
    grant.budget.clone().try_acquire_many_owned(0).expect("zero permits are always there")
}

/// The multipart upload of one object: opened at the first part, parts uploaded in order,
/// completed at the last piece, aborted on failure or when the sender goes away first.
async fn multipart(grant: StorageGrant, key: String, mut pieces: mpsc::UnboundedReceiver<Piece>, failure: Arc<OnceLock<String>>) -> Result<(), String> {
    let bucket = &grant.bucket;
    let fail = |why: String| {
        let _ = failure.set(why.clone());
        why
    };
    let id = bucket.start_multipart(&key).await.map_err(|e| fail(format!("starting the upload of {key:?}: {e}")))?;
    let mut parts: Vec<(i32, String)> = Vec::new();
    let outcome: Result<bool, String> = async {
        while let Some(piece) = pieces.recv().await {
            let (body, _permits, last) = match piece {
                Piece::Part(body, permits) => (body, permits, None),
                Piece::Last(body, permits, if_none_match) => (body, permits, Some(if_none_match)),
            };
            if !body.is_empty() || parts.is_empty() {
                let number = parts.len() as i32 + 1;
                let etag = bucket.upload_part(&key, &id, number, body).await.map_err(|e| format!("uploading part {number} of {key:?}: {e}"))?;
                parts.push((number, etag));
            }
            if let Some(if_none_match) = last {
                bucket.complete_multipart(&key, &id, &parts, if_none_match).await.map_err(|e| format!("completing {key:?}: {e}"))?;
                return Ok(true);
            }
        }
        Ok(false)
    }
    .await;
    match outcome {
        Ok(true) => Ok(()),
        Ok(false) => bucket.abort_multipart(&key, &id).await.map_err(|e| format!("aborting the upload of {key:?}: {e}")),
        Err(why) => {
            if let Err(e) = bucket.abort_multipart(&key, &id).await {
                tracing::warn!(key = %key, error = %e, "could not abort a failed multipart upload; the next start of the connector aborts it");
            }
            Err(fail(why))
        }
    }
}
