//! Object storage for sinks (S3 and S3-compatible stores), and holding partitions
//! uncommitted while an object is still open.
//!
//! The host holds the credentials and the client: a plugin names keys under the connector's
//! granted [`prefix`] and hands over bytes. [`put`] and [`Upload::complete`] return once the
//! host has *taken* the bytes; the network work happens on the host, which waits for all of it
//! after the sink's next `flush` succeeds and before it commits any offset. An object the host
//! cannot write fails the connector (class `object_store`) and nothing is committed, so the
//! records are read again: errors here are only those the host sees at once (no grant, a key
//! outside the prefix, an upload already closed). Use deterministic keys, so that a re-read
//! range writes the same object again.
//!
//! A sink that gathers records into objects larger than one flush calls [`hold`] in its
//! `flush` for every partition whose object is still open: the host then commits that
//! partition only up to the held offset.
//!
//! Off WebAssembly (in `cargo test`), every call goes to an in-memory store, granted with an
//! empty prefix until [`crate::testing::set_storage_prefix`] says otherwise; the
//! [`crate::testing`] functions read what was stored and held.

use std::fmt;

// Compiled everywhere, so that `testing` reads the same on every target; only native builds
// route calls to it.
#[cfg_attr(target_arch = "wasm32", allow(dead_code, reason = "the host serves these calls"))]
pub(crate) mod fake;

/// Why the host refused a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageError {
    /// The connector grants no object storage (no `storage:` in its config).
    NotGranted,
    /// The key is not under the granted prefix, is empty or longer than 1024 bytes, has an
    /// empty, `.` or `..` segment, or holds a control character; the text says which.
    KeyRefused(String),
    /// The upload was already completed or aborted, or failed earlier; the text says how.
    Closed(String),
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::NotGranted => f.write_str("the connector grants no object storage"),
            StorageError::KeyRefused(why) => write!(f, "the object key was refused: {why}"),
            StorageError::Closed(why) => write!(f, "the upload is closed: {why}"),
        }
    }
}

impl std::error::Error for StorageError {}

/// The granted key prefix (empty, or ending with `/`): every key must start with it.
pub fn prefix() -> Result<String, StorageError> {
    imp::prefix()
}

/// Writes one whole object. With `if_none_match`, an object already at `key` is left as it
/// is (the write counts as done), so a re-read range never replaces an object.
pub fn put(key: &str, data: &[u8], if_none_match: bool) -> Result<(), StorageError> {
    imp::put(key, data, if_none_match)
}

/// Commits `partition` of `topic` no further than `offset` (its first record that is not yet
/// durable) at the end of the current `flush`. Call it from [`crate::Sink::flush`]; holds
/// apply to the flush during which they are made, and the lowest hold of a partition wins.
pub fn hold(topic: &str, partition: i32, offset: i64) {
    imp::hold(topic, partition, offset);
}

/// An object written in pieces. The host buffers the pieces into parts and uploads each as
/// soon as it is full, so a plugin need not keep the object in memory. Dropped without
/// [`Upload::complete`], it is aborted.
pub struct Upload {
    inner: imp::Upload,
}

impl Upload {
    /// Starts an object at `key`.
    pub fn open(key: &str) -> Result<Upload, StorageError> {
        imp::Upload::open(key).map(|inner| Upload { inner })
    }

    /// Appends bytes to the object. Waits while the connector's upload budget is spent.
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), StorageError> {
        self.inner.write(chunk)
    }

    /// Finishes the object; `if_none_match` as for [`put`].
    pub fn complete(self, if_none_match: bool) -> Result<(), StorageError> {
        self.inner.complete(if_none_match)
    }

    /// Gives the object up: nothing is written and the parts uploaded so far are deleted.
    pub fn abort(self) {
        self.inner.abort();
    }
}

impl fmt::Debug for Upload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Upload")
    }
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::StorageError;
    use crate::bindings::sink::turnpike::plugin::object_store as host;
    use crate::bindings::sink::turnpike::plugin::sink_progress;
    use crate::bindings::turnpike::plugin::types::TopicPartition;

    fn error(e: host::StoreError) -> StorageError {
        match e {
            host::StoreError::NotGranted => StorageError::NotGranted,
            host::StoreError::KeyRefused(why) => StorageError::KeyRefused(why),
            host::StoreError::Closed(why) => StorageError::Closed(why),
        }
    }

    pub(super) fn prefix() -> Result<String, StorageError> {
        host::prefix().map_err(error)
    }

    pub(super) fn put(key: &str, data: &[u8], if_none_match: bool) -> Result<(), StorageError> {
        host::put(key, data, if_none_match).map_err(error)
    }

    pub(super) fn hold(topic: &str, partition: i32, offset: i64) {
        sink_progress::hold(&TopicPartition { topic: topic.to_owned(), partition }, offset);
    }

    /// The host's upload resource; dropping it without `complete` aborts the upload.
    pub(super) struct Upload(host::Upload);

    impl Upload {
        pub(super) fn open(key: &str) -> Result<Upload, StorageError> {
            host::open_upload(key).map(Upload).map_err(error)
        }

        pub(super) fn write(&mut self, chunk: &[u8]) -> Result<(), StorageError> {
            self.0.write(chunk).map_err(error)
        }

        pub(super) fn complete(self, if_none_match: bool) -> Result<(), StorageError> {
            self.0.complete(if_none_match).map_err(error)
        }

        pub(super) fn abort(self) {
            self.0.abort();
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    pub(super) use super::fake::{hold, prefix, put, Upload};
}
