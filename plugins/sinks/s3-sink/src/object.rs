//! One open object: an upload on the host, the content not yet handed over, and what decides
//! when it closes (its record count, first timestamp and scheduled close).

use turnpike_sdk::storage::{StorageError, Upload};
use turnpike_sdk::RecordError;

use crate::format::{Body, Piece};

/// Bytes handed to the host per `write`: large enough to cross the boundary rarely, small
/// enough that an open object holds little in the plugin (the host buffers parts).
pub const CHUNK: usize = 256 * 1024;

/// What a connector without a grant is told.
pub const NOT_GRANTED: &str = "the connector grants no object storage: add `storage: {bucket: …}` to the connector";

/// A storage refusal as the error it is: a refused key is the record's (its fields made the
/// key), anything else stops the connector.
pub fn store_error(key: &str, e: StorageError) -> RecordError {
    match e {
        StorageError::NotGranted => RecordError::fatal(NOT_GRANTED),
        StorageError::KeyRefused(why) => RecordError::invalid(format!("the host refused the object key {key:?}: {why}")),
        StorageError::Closed(why) => RecordError::fatal(format!("writing {key:?}: {why}")),
    }
}

/// Where an object starts, for its key, its hold and its rotation.
#[derive(Debug, Clone, Copy)]
pub struct Start {
    /// The offset of its first record.
    pub offset: i64,
    /// Its first record's timestamp, if the settings read timestamps.
    pub timestamp: Option<i64>,
    /// When the schedule closes it (UTC ms), if `rotate.schedule.interval.ms` is set.
    pub deadline: Option<i64>,
}

/// An object being written.
pub struct OpenObject {
    key: String,
    upload: Upload,
    body: Body,
    pub start: Start,
    /// Records in it.
    pub records: u64,
}

impl OpenObject {
    /// Opens the object at `key` with its first record. The record is added to `body`
    /// before the upload starts, so a record that does not fit leaves nothing behind.
    pub fn start(key: String, mut body: Body, first: Piece, start: Start) -> Result<OpenObject, RecordError> {
        body.push(first)?;
        let upload = Upload::open(&key).map_err(|e| store_error(&key, e))?;
        let mut object = OpenObject { key, upload, body, start, records: 1 };
        object.hand_over()?;
        Ok(object)
    }

    /// Adds a record.
    pub fn push(&mut self, piece: Piece) -> Result<(), RecordError> {
        self.body.push(piece)?;
        self.records += 1;
        self.hand_over()
    }

    /// Whether a record at `timestamp` belongs in a new object under `rotate.interval.ms`.
    pub fn expired_by(&self, timestamp: Option<i64>, interval_ms: Option<i64>) -> bool {
        match (self.start.timestamp, timestamp, interval_ms) {
            (Some(first), Some(ts), Some(interval)) => ts >= first.saturating_add(interval),
            _ => false,
        }
    }

    /// Whether the schedule closes it at `now`.
    pub fn due(&self, now: i64) -> bool {
        self.start.deadline.is_some_and(|d| now >= d)
    }

    /// Hands the host what is ready.
    fn hand_over(&mut self) -> Result<(), RecordError> {
        while let Some(chunk) = self.body.take_ready(CHUNK) {
            self.upload.write(&chunk).map_err(|e| store_error(&self.key, e))?;
        }
        Ok(())
    }

    /// Finishes the object. It replaces an object at the same key: that can only be this
    /// range written before, with the same records.
    pub fn close(self) -> Result<(), RecordError> {
        let OpenObject { key, mut upload, body, .. } = self;
        let rest = body.finish()?;
        for chunk in rest.chunks(CHUNK) {
            upload.write(chunk).map_err(|e| store_error(&key, e))?;
        }
        upload.complete(false).map_err(|e| store_error(&key, e))
    }

    /// Gives the object up (its records will be read again).
    pub fn abort(self) {
        self.upload.abort();
    }
}
