//! The client against a real S3-compatible server: moto, which `tests/run.sh` starts and
//! names in `TURNPIKE_TEST_S3_ENDPOINT` (or start it yourself: `tests/s3/moto.sh start
//! .cache/moto-run`). Tests that need the server print a note and pass without it; the suite
//! always sets the variable. Each test uses a bucket of its own, so they run side by side.
//! Buckets are created and objects read back with a plain SDK client, not the crate's.

use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, Instant};

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
use bytes::Bytes;
use turnpike_object_store::{Bucket, StaticCredentials, StoreConfig, StoreError, Written};

const MIB: usize = 1024 * 1024;

/// The server's address, or `None` (with a note) when the suite was not started by run.sh.
fn endpoint() -> Option<String> {
    match std::env::var("TURNPIKE_TEST_S3_ENDPOINT") {
        Ok(endpoint) if !endpoint.is_empty() => Some(endpoint),
        _ => {
            eprintln!("skipped: TURNPIKE_TEST_S3_ENDPOINT is not set (tests/run.sh starts moto and sets it)");
            None
        }
    }
}

/// A plain SDK client for setting up and reading back.
fn raw(endpoint: &str) -> aws_sdk_s3::Client {
    let http = aws_smithy_http_client::Builder::new().tls_provider(Provider::Rustls(CryptoMode::Ring)).build_https();
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .force_path_style(true)
        .credentials_provider(Credentials::new("test", "test", None, None, "turnpike-tests"))
        .http_client(http)
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

fn unique(hint: &str) -> String {
    format!("{hint}-{:016x}", RandomState::new().hash_one(Instant::now()))
}

async fn fresh_bucket(raw: &aws_sdk_s3::Client, hint: &str) -> String {
    let name = unique(hint);
    raw.create_bucket().bucket(&name).send().await.expect("create bucket");
    name
}

fn config(endpoint: &str, bucket: &str) -> StoreConfig {
    StoreConfig {
        region: Some("us-east-1".into()),
        endpoint: Some(endpoint.to_owned()),
        path_style: true,
        credentials: Some(StaticCredentials { access_key_id: "test".into(), secret_access_key: "test".into(), session_token: None }),
        retry_budget: Duration::from_secs(10),
        ..StoreConfig::new(bucket)
    }
}

async fn read(raw: &aws_sdk_s3::Client, bucket: &str, key: &str) -> Vec<u8> {
    let object = raw.get_object().bucket(bucket).key(key).send().await.expect("get object");
    object.body.collect().await.expect("object body").into_bytes().to_vec()
}

async fn open_uploads(raw: &aws_sdk_s3::Client, bucket: &str) -> Vec<String> {
    let listed = raw.list_multipart_uploads().bucket(bucket).send().await.expect("list uploads");
    let mut keys: Vec<String> = listed.uploads().iter().filter_map(|u| u.key().map(str::to_owned)).collect();
    keys.sort();
    keys
}

/// `len` bytes that differ from part to part, so parts in the wrong order read back wrong.
fn part(seed: u8, len: usize) -> Bytes {
    (0..len).map(|i| (i % 251) as u8 ^ seed).collect::<Vec<u8>>().into()
}

#[tokio::test]
async fn put_reads_back_and_if_none_match_keeps_the_first_object() {
    let Some(endpoint) = endpoint() else { return };
    let raw = raw(&endpoint);
    let bucket_name = fresh_bucket(&raw, "put").await;
    let bucket = Bucket::connect(config(&endpoint, &bucket_name)).await.expect("connect");
    bucket.check().await.expect("the bucket exists");
    assert_eq!(bucket.bucket(), bucket_name);

    assert_eq!(bucket.put("t/0.json", Bytes::from_static(b"first"), false).await, Ok(Written::Created));
    assert_eq!(read(&raw, &bucket_name, "t/0.json").await, b"first");
    assert_eq!(bucket.put("t/0.json", Bytes::from_static(b"second"), false).await, Ok(Written::Created));
    assert_eq!(read(&raw, &bucket_name, "t/0.json").await, b"second", "without the condition, a put replaces");

    assert_eq!(bucket.put("t/1.json", Bytes::from_static(b"a"), true).await, Ok(Written::Created));
    assert_eq!(bucket.put("t/1.json", Bytes::from_static(b"b"), true).await, Ok(Written::AlreadyExisted));
    assert_eq!(read(&raw, &bucket_name, "t/1.json").await, b"a", "with the condition, the first object stays");
    assert_eq!(bucket.retries(), 0);
}

#[tokio::test]
async fn multipart_of_three_parts_reads_back_and_is_not_completed_twice() {
    let Some(endpoint) = endpoint() else { return };
    let raw = raw(&endpoint);
    let bucket_name = fresh_bucket(&raw, "multipart").await;
    let bucket = Bucket::connect(config(&endpoint, &bucket_name)).await.expect("connect");
    let key = "t/0+0+100.jsonl";
    let parts = [part(1, 5 * MIB), part(2, 5 * MIB), part(3, 5 * MIB + 7)];

    let upload_id = bucket.start_multipart(key).await.expect("start");
    let mut tags = Vec::new();
    for (number, body) in (1..).zip(&parts) {
        tags.push((number, bucket.upload_part(key, &upload_id, number, body.clone()).await.expect("part")));
    }
    assert_eq!(bucket.complete_multipart(key, &upload_id, &tags, true).await, Ok(Written::Created));
    let whole: Vec<u8> = parts.iter().flat_map(|p| p.iter().copied()).collect();
    assert!(read(&raw, &bucket_name, key).await == whole, "the object is the three parts in order");

    // A re-delivered range uploads the same key again: the completion finds the object.
    let again = bucket.start_multipart(key).await.expect("start again");
    let tag = bucket.upload_part(key, &again, 1, part(9, 10)).await.expect("part");
    assert_eq!(bucket.complete_multipart(key, &again, &[(1, tag)], true).await, Ok(Written::AlreadyExisted));
    assert!(read(&raw, &bucket_name, key).await == whole, "the first object stays");
    assert!(open_uploads(&raw, &bucket_name).await.is_empty(), "the second upload was aborted");
}

#[tokio::test]
async fn a_small_part_before_the_last_is_rejected_with_the_stores_reason() {
    let Some(endpoint) = endpoint() else { return };
    let raw = raw(&endpoint);
    let bucket_name = fresh_bucket(&raw, "small").await;
    let bucket = Bucket::connect(config(&endpoint, &bucket_name)).await.expect("connect");
    let upload_id = bucket.start_multipart("k").await.expect("start");
    let first = bucket.upload_part("k", &upload_id, 1, part(1, 1024)).await.expect("part 1");
    let second = bucket.upload_part("k", &upload_id, 2, part(2, 1024)).await.expect("part 2");
    match bucket.complete_multipart("k", &upload_id, &[(1, first), (2, second)], false).await {
        Err(StoreError::Rejected(message)) => assert!(message.contains("EntityTooSmall"), "{message}"),
        other => panic!("expected Rejected(EntityTooSmall), got {other:?}"),
    }
    assert_eq!(bucket.retries(), 0, "a refusal is not retried");
}

#[tokio::test]
async fn abort_incomplete_removes_the_open_uploads_under_the_prefix_only() {
    let Some(endpoint) = endpoint() else { return };
    let raw = raw(&endpoint);
    let bucket_name = fresh_bucket(&raw, "abort").await;
    let bucket = Bucket::connect(config(&endpoint, &bucket_name)).await.expect("connect");
    let with_part = bucket.start_multipart("conn-a/x").await.expect("start");
    bucket.upload_part("conn-a/x", &with_part, 1, part(1, 100)).await.expect("part");
    bucket.start_multipart("conn-a/y").await.expect("start");
    bucket.start_multipart("conn-b/z").await.expect("start");
    assert_eq!(open_uploads(&raw, &bucket_name).await, ["conn-a/x", "conn-a/y", "conn-b/z"]);

    assert_eq!(bucket.abort_incomplete("conn-a/").await, Ok(2));
    assert_eq!(open_uploads(&raw, &bucket_name).await, ["conn-b/z"]);
    assert_eq!(bucket.abort_incomplete("conn-a/").await, Ok(0));
    bucket.abort_multipart("conn-a/x", &with_part).await.expect("aborting an upload that is gone is fine");
}

#[tokio::test]
async fn check_names_a_bucket_that_does_not_exist() {
    let Some(endpoint) = endpoint() else { return };
    let missing = unique("missing");
    let bucket = Bucket::connect(config(&endpoint, &missing)).await.expect("connect");
    match bucket.check().await {
        Err(StoreError::Denied(message)) => {
            assert!(message.contains(&format!("bucket {missing:?} does not exist")), "{message}");
        }
        other => panic!("expected Denied, got {other:?}"),
    }
    assert_eq!(bucket.retries(), 0, "a missing bucket is not retried");
}

/// Needs no server: nothing listens on the port.
#[tokio::test]
async fn a_dead_endpoint_is_unavailable_once_the_budget_is_spent() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let mut config = config(&format!("http://127.0.0.1:{port}"), "logs");
    config.retry_budget = Duration::from_secs(1);
    let bucket = Bucket::connect(config).await.expect("connect sends nothing");
    // Bounded, so that a hang fails the test instead of stalling the suite.
    let answer = tokio::time::timeout(Duration::from_secs(30), bucket.put("k", Bytes::from_static(b"x"), true)).await;
    match answer.expect("the retries end with the budget") {
        Err(StoreError::Unavailable(message)) => assert!(message.contains("PutObject of \"k\""), "{message}"),
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert!(bucket.retries() > 0, "the failures were retried");
}
