//! What a connector's `storage` grant gives one instance: the host's client for the granted
//! bucket, the prefix every key must lie under, the part size, and the connector's budget for
//! bytes waiting to be uploaded (shared by its instances, so a replaced instance's uploads
//! still count).

use std::fmt;
use std::sync::Arc;

use tokio::sync::Semaphore;
use turnpike_object_store::Bucket;

/// S3's longest key.
const MAX_KEY_BYTES: usize = 1024;

/// A granted bucket and prefix. Cheap to clone: every field is shared.
#[derive(Clone)]
pub struct StorageGrant {
    pub(crate) bucket: Arc<Bucket>,
    pub(crate) prefix: Arc<str>,
    pub(crate) part_size: usize,
    pub(crate) budget: Arc<Semaphore>,
    pub(crate) budget_bytes: usize,
}

impl StorageGrant {
    /// A grant of `prefix` in `bucket`, uploading in parts of `part_size` bytes with at most
    /// `budget_bytes` waiting at once.
    pub fn new(bucket: Arc<Bucket>, prefix: &str, part_size: usize, budget_bytes: usize) -> Self {
        let budget_bytes = budget_bytes.clamp(1, Semaphore::MAX_PERMITS);
        Self { bucket, prefix: prefix.into(), part_size: part_size.max(1), budget: Arc::new(Semaphore::new(budget_bytes)), budget_bytes }
    }

    /// The client, for the checks and clean-up the pipeline makes when a connector starts.
    pub fn bucket(&self) -> &Arc<Bucket> {
        &self.bucket
    }

    /// The granted prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Why the plugin may not write `key`, in words for the plugin's author.
    pub(crate) fn refuse_key(&self, key: &str) -> Option<String> {
        if key.is_empty() {
            return Some("the key is empty".into());
        }
        if key.len() > MAX_KEY_BYTES {
            return Some(format!("the key is {} bytes long; S3 keys hold at most {MAX_KEY_BYTES}", key.len()));
        }
        if !key.starts_with(&*self.prefix) {
            return Some(format!("{key:?} is not under the granted prefix {:?}", &*self.prefix));
        }
        if key.chars().any(char::is_control) {
            return Some(format!("{key:?} holds a control character"));
        }
        if let Some(bad) = key.split('/').find(|s| s.is_empty() || *s == "." || *s == "..") {
            return Some(format!("{key:?} has an {} segment", if bad.is_empty() { "empty".to_owned() } else { format!("{bad:?}") }));
        }
        None
    }
}

impl fmt::Debug for StorageGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StorageGrant").field("bucket", &self.bucket.bucket()).field("prefix", &self.prefix).field("part_size", &self.part_size).finish()
    }
}
