//! The in-memory object store that [`crate::storage`] calls off WebAssembly, so plugin logic
//! runs in `cargo test`. It refuses keys by the host's rules, so a test fails on a key the
//! host would refuse. One store per thread (each test runs on its own thread).

use std::cell::RefCell;
use std::collections::BTreeMap;

use super::StorageError;

/// A hold a sink made (see [`crate::storage::hold`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hold {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The first offset not to commit.
    pub offset: i64,
}

/// S3's longest key.
const MAX_KEY_BYTES: usize = 1024;

struct Bucket {
    /// `None`: the connector grants no storage.
    prefix: Option<String>,
    /// Completed objects.
    objects: BTreeMap<String, Vec<u8>>,
    /// Open uploads by id: key and bytes so far.
    uploads: BTreeMap<u64, (String, Vec<u8>)>,
    next_upload: u64,
    /// Keys of uploads aborted or dropped, in order.
    aborted: Vec<String>,
    /// Every hold, in order.
    holds: Vec<Hold>,
}

impl Bucket {
    const fn new() -> Self {
        Self { prefix: Some(String::new()), objects: BTreeMap::new(), uploads: BTreeMap::new(), next_upload: 0, aborted: Vec::new(), holds: Vec::new() }
    }

    /// The host's key rules.
    fn check(&self, key: &str) -> Result<(), StorageError> {
        let prefix = self.prefix.as_deref().ok_or(StorageError::NotGranted)?;
        let refuse = |why: String| Err(StorageError::KeyRefused(why));
        if key.is_empty() {
            return refuse("the key is empty".into());
        }
        if key.len() > MAX_KEY_BYTES {
            return refuse(format!("{key:?} is {} bytes long; at most {MAX_KEY_BYTES}", key.len()));
        }
        if !key.starts_with(prefix) {
            return refuse(format!("{key:?} is not under the granted prefix {prefix:?}"));
        }
        if key.chars().any(char::is_control) {
            return refuse(format!("{key:?} holds a control character"));
        }
        if let Some(bad) = key.split('/').find(|s| s.is_empty() || *s == "." || *s == "..") {
            return refuse(format!("{key:?} has a {bad:?} segment"));
        }
        Ok(())
    }

    fn store(&mut self, key: String, data: Vec<u8>, if_none_match: bool) {
        if !(if_none_match && self.objects.contains_key(&key)) {
            self.objects.insert(key, data);
        }
    }
}

thread_local! {
    static BUCKET: RefCell<Bucket> = const { RefCell::new(Bucket::new()) };
}

fn with<R>(f: impl FnOnce(&mut Bucket) -> R) -> R {
    BUCKET.with(|b| f(&mut b.borrow_mut()))
}

pub(crate) fn prefix() -> Result<String, StorageError> {
    with(|b| b.prefix.clone().ok_or(StorageError::NotGranted))
}

pub(crate) fn put(key: &str, data: &[u8], if_none_match: bool) -> Result<(), StorageError> {
    with(|b| {
        b.check(key)?;
        b.store(key.to_owned(), data.to_vec(), if_none_match);
        Ok(())
    })
}

pub(crate) fn hold(topic: &str, partition: i32, offset: i64) {
    with(|b| b.holds.push(Hold { topic: topic.to_owned(), partition, offset }));
}

/// An open upload in the fake store; dropped while open, it is aborted (as by the host).
pub(crate) struct Upload {
    id: u64,
}

impl Upload {
    pub(crate) fn open(key: &str) -> Result<Upload, StorageError> {
        with(|b| {
            b.check(key)?;
            let id = b.next_upload;
            b.next_upload += 1;
            b.uploads.insert(id, (key.to_owned(), Vec::new()));
            Ok(Upload { id })
        })
    }

    pub(crate) fn write(&mut self, chunk: &[u8]) -> Result<(), StorageError> {
        with(|b| match b.uploads.get_mut(&self.id) {
            Some((_, data)) => {
                data.extend_from_slice(chunk);
                Ok(())
            }
            None => Err(closed()),
        })
    }

    pub(crate) fn complete(self, if_none_match: bool) -> Result<(), StorageError> {
        with(|b| {
            let (key, data) = b.uploads.remove(&self.id).ok_or_else(closed)?;
            b.store(key, data, if_none_match);
            Ok(())
        })
    }

    pub(crate) fn abort(self) {
        // Drop does it.
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        // `try_with`: a test thread that is ending may have dropped the store already.
        let _ = BUCKET.try_with(|b| {
            let mut b = b.borrow_mut();
            if let Some((key, _)) = b.uploads.remove(&self.id) {
                b.aborted.push(key);
            }
        });
    }
}

fn closed() -> StorageError {
    StorageError::Closed("the upload was already completed or aborted".into())
}

// What `crate::testing` reads and sets.

pub(crate) fn set_prefix(prefix: Option<&str>) {
    with(|b| b.prefix = prefix.map(str::to_owned));
}

pub(crate) fn objects() -> BTreeMap<String, Vec<u8>> {
    with(|b| b.objects.clone())
}

pub(crate) fn open_keys() -> Vec<String> {
    with(|b| b.uploads.values().map(|(k, _)| k.clone()).collect())
}

pub(crate) fn aborted() -> Vec<String> {
    with(|b| b.aborted.clone())
}

pub(crate) fn take_holds() -> Vec<Hold> {
    with(|b| std::mem::take(&mut b.holds))
}

/// Holds made since the `from`-th one, without taking them.
pub(crate) fn holds_since(from: usize) -> Vec<Hold> {
    with(|b| b.holds.get(from..).map(<[Hold]>::to_vec).unwrap_or_default())
}

pub(crate) fn hold_count() -> usize {
    with(|b| b.holds.len())
}

pub(crate) fn reset() {
    with(|b| *b = Bucket::new());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_outside_the_grant_are_refused() {
        reset();
        set_prefix(Some("team/"));
        assert!(put("team/a.json", b"x", false).is_ok());
        for bad in ["other/a.json", "team//a", "team/../a", "team/a/", "", "team/a\nb"] {
            assert!(matches!(put(bad, b"x", false), Err(StorageError::KeyRefused(_))), "{bad:?}");
        }
        set_prefix(None);
        assert_eq!(put("team/a.json", b"x", false), Err(StorageError::NotGranted));
        assert_eq!(prefix(), Err(StorageError::NotGranted));
    }

    #[test]
    fn uploads_complete_abort_or_drop() {
        reset();
        let mut u = Upload::open("a").unwrap();
        u.write(b"he").unwrap();
        u.write(b"llo").unwrap();
        assert_eq!(open_keys(), ["a"]);
        u.complete(false).unwrap();
        let dropped = Upload::open("b").unwrap();
        drop(dropped);
        Upload::open("c").unwrap().abort();
        assert_eq!(objects().get("a").map(Vec::as_slice), Some(&b"hello"[..]));
        assert_eq!(aborted(), ["b", "c"]);
        assert!(open_keys().is_empty());
    }

    #[test]
    fn if_none_match_keeps_the_first_object() {
        reset();
        put("k", b"first", true).unwrap();
        put("k", b"second", true).unwrap();
        assert_eq!(objects()["k"], b"first");
        put("k", b"third", false).unwrap();
        assert_eq!(objects()["k"], b"third");
    }
}
