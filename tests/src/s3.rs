//! Object storage for the tests: the S3-compatible server (moto) that `tests/run.sh` starts,
//! fresh buckets, and reading back what a connector wrote, with a plain SDK client
//! (credentials `test`/`test`, region us-east-1, path-style addressing).
//!
//! The helpers are blocking, like [`crate::wait_until`] which they are meant to be polled
//! from, and can be called from any thread, a `#[tokio::test]` body included: the requests
//! run on a small runtime of their own. They panic, saying what failed, on any error.

use std::future::Future;
use std::sync::OnceLock;

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::error::DisplayErrorContext;
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};

/// The server's address, from `TURNPIKE_TEST_S3_ENDPOINT` (set by `tests/run.sh`).
pub fn s3_endpoint() -> String {
    std::env::var("TURNPIKE_TEST_S3_ENDPOINT").expect(
        "TURNPIKE_TEST_S3_ENDPOINT is not set: run the suite with tests/run.sh, which starts an S3-compatible server \
         (moto), or start one with `tests/s3/moto.sh start .cache/moto-run` and export the address it prints",
    )
}

/// Creates a bucket no other test uses, named after `name_hint`; returns its name.
pub fn fresh_bucket(name_hint: &str) -> String {
    // Bucket names are 3-63 characters of lowercase letters, digits and hyphens.
    let hint: String = name_hint
        .chars()
        .take(40)
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect();
    let hint = hint.trim_matches('-');
    let name = crate::unique(if hint.is_empty() { "bucket" } else { hint });
    let (client, create) = (client(), name.clone());
    if let Err(e) = block(async move { client.create_bucket().bucket(create).send().await }) {
        panic!("creating bucket {name}: {}", DisplayErrorContext(e));
    }
    name
}

/// Every object under `prefix` as `(key, size in bytes)`, sorted by key.
pub fn list_objects(bucket: &str, prefix: &str) -> Vec<(String, u64)> {
    let (client, bucket, prefix) = (client(), bucket.to_owned(), prefix.to_owned());
    let listed = block(async move {
        let mut objects = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let page = client
                .list_objects_v2()
                .bucket(&bucket)
                .prefix(&prefix)
                .set_continuation_token(token.take())
                .send()
                .await
                .map_err(|e| format!("listing {bucket}/{prefix}: {}", DisplayErrorContext(e)))?;
            for object in page.contents() {
                let size = object.size().unwrap_or(0).max(0) as u64;
                objects.push((object.key().unwrap_or_default().to_owned(), size));
            }
            match page.next_continuation_token() {
                Some(next) if page.is_truncated() == Some(true) => token = Some(next.to_owned()),
                _ => break,
            }
        }
        Ok::<_, String>(objects)
    });
    let mut objects = listed.unwrap_or_else(|e| panic!("{e}"));
    objects.sort();
    objects
}

/// The whole content of one object.
pub fn get_object(bucket: &str, key: &str) -> Vec<u8> {
    let (client, bucket, key) = (client(), bucket.to_owned(), key.to_owned());
    block(async move {
        let object = client
            .get_object()
            .bucket(&bucket)
            .key(&key)
            .send()
            .await
            .map_err(|e| format!("reading {bucket}/{key}: {}", DisplayErrorContext(e)))?;
        let body = object.body.collect().await.map_err(|e| format!("reading {bucket}/{key}: {e}"))?;
        Ok::<_, String>(body.into_bytes().to_vec())
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

/// How many multipart uploads are open (started, neither completed nor aborted) in `bucket`.
pub fn incomplete_uploads(bucket: &str) -> usize {
    let (client, bucket) = (client(), bucket.to_owned());
    block(async move {
        client
            .list_multipart_uploads()
            .bucket(&bucket)
            .send()
            .await
            .map(|listed| listed.uploads().len())
            .map_err(|e| format!("listing the uploads of {bucket}: {}", DisplayErrorContext(e)))
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The shared client (a cheap handle). Its requests run only on the helper runtime, where its
/// connection pool then lives.
fn client() -> aws_sdk_s3::Client {
    static CLIENT: OnceLock<aws_sdk_s3::Client> = OnceLock::new();
    let client = CLIENT.get_or_init(|| {
        let http = aws_smithy_http_client::Builder::new().tls_provider(Provider::Rustls(CryptoMode::Ring)).build_https();
        let config = aws_sdk_s3::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .endpoint_url(s3_endpoint())
            .force_path_style(true)
            .credentials_provider(Credentials::new("test", "test", None, None, "turnpike-tests"))
            .http_client(http)
            .build();
        aws_sdk_s3::Client::from_conf(config)
    });
    client.clone()
}

/// Runs `work` on the helper runtime and waits for it, from any thread.
fn block<T: Send + 'static>(work: impl Future<Output = T> + Send + 'static) -> T {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("s3-test-helper")
            .enable_all()
            .build()
            .expect("the S3 helper runtime")
    });
    let (tx, rx) = std::sync::mpsc::channel();
    runtime.spawn(async move {
        let _ = tx.send(work.await);
    });
    rx.recv().expect("an S3 helper request panicked")
}
