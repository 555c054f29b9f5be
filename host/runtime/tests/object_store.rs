//! The `object-store` capability through a real sink component (`tests/components/store-probe`,
//! which stores each record's value as a key): keys outside the grant are refused with an
//! error code the plugin sees (never a trap), a connector without a grant gets `not-granted`,
//! a `0.1.0` sink still loads, and a store that cannot be reached is reported by
//! `settle_storage` (the host's wait before committing), not swallowed.

use std::sync::Arc;
use std::time::Duration;

use turnpike_object_store::{Bucket, StaticCredentials, StoreConfig};
use turnpike_runtime::{BatchBuilder, InputBatch, InstanceLabels, InstanceLimits, Plugin, PluginKind, RecordRef, Runtime, SinkInstance, StorageGrant};

fn probe() -> Plugin {
    Runtime::new().expect("engine").load(turnpike_test_components::STORE_PROBE).expect("load store-probe")
}

fn labels() -> InstanceLabels {
    InstanceLabels { connector: "test".into(), plugin: "store-probe@1".into() }
}

/// A grant of `ok/` in a bucket at an endpoint nothing listens on: key checks happen before
/// any request, and a request that is made fails fast (a 1 s retry budget).
async fn grant() -> StorageGrant {
    let config = StoreConfig {
        region: Some("us-east-1".into()),
        endpoint: Some("http://127.0.0.1:9".into()),
        path_style: true,
        credentials: Some(StaticCredentials { access_key_id: "test".into(), secret_access_key: "test-secret".into(), session_token: None }),
        retry_budget: Duration::from_secs(1),
        ..StoreConfig::new("probe-bucket")
    };
    let bucket = Bucket::connect(config).await.expect("client");
    StorageGrant::new(Arc::new(bucket), "ok/", 5 << 20, 16 << 20)
}

fn keys(keys: &[&str]) -> InputBatch {
    let mut b = BatchBuilder::default();
    for (i, key) in keys.iter().enumerate() {
        b.push(RecordRef { key: None, value: Some(key.as_bytes()), timestamp: None, topic: "in", partition: 0, offset: i as i64 }, []);
    }
    b.finish()
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_outside_the_grant_are_refused_with_an_error_code_never_a_trap() {
    let limits = InstanceLimits { storage: Some(grant().await), ..InstanceLimits::default() };
    let mut sink = SinkInstance::create(&probe(), "{}", labels(), limits).await.expect("create");
    let bad = ["other/x", "ok/../x", "ok//x", "ok/./x", "", "upload:other/y", &format!("ok/{}", "k".repeat(1100)), "ok/a\u{7}b"];
    let rejected = sink.write(&keys(&bad)).await.expect("a refusal is not a fault");
    let messages: Vec<String> = rejected.iter().map(|r| r.error.message.clone()).collect();
    assert_eq!(rejected.len(), bad.len(), "every bad key refused: {messages:?}");
    assert!(messages[0].contains("not under the granted prefix \"ok/\""), "{}", messages[0]);
    assert!(messages[1].contains("\"..\" segment"), "{}", messages[1]);
    assert!(messages[2].contains("empty segment"), "{}", messages[2]);
    assert!(messages[4].contains("the key is empty"), "{}", messages[4]);
    assert!(messages[5].contains("not under the granted prefix"), "uploads are checked too: {}", messages[5]);
    assert!(messages[6].contains("at most 1024"), "{}", messages[6]);
    assert!(messages[7].contains("control character"), "{}", messages[7]);
    assert!(!sink.is_poisoned(), "the instance lives on");
    sink.flush().await.expect("flush");
    sink.settle_storage().await.expect("nothing was handed over, so nothing can fail");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_grant_every_call_answers_not_granted() {
    let mut sink = SinkInstance::create(&probe(), "{}", labels(), InstanceLimits::default()).await.expect("create");
    let rejected = sink.write(&keys(&["ok/a", "upload:ok/b"])).await.expect("write");
    assert_eq!(rejected.len(), 2);
    for r in &rejected {
        assert!(r.error.message.contains("grants no object storage"), "{}", r.error.message);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_object_the_store_cannot_take_fails_the_settle_that_precedes_a_commit() {
    let limits = InstanceLimits { storage: Some(grant().await), ..InstanceLimits::default() };
    let mut sink = SinkInstance::create(&probe(), "{}", labels(), limits).await.expect("create");
    let rejected = sink.write(&keys(&["ok/a.json", "upload:ok/b.json"])).await.expect("write");
    assert!(rejected.is_empty(), "the host took both: {rejected:?}");
    sink.flush().await.expect("the plugin's flush has nothing to do");
    let settled = sink.settle_storage().await;
    let why = settled.expect_err("nothing listens at the endpoint: the objects were not written");
    assert!(why.contains("ok/a.json") || why.contains("ok/b.json"), "{why}");
    assert!(!why.contains("test-secret"), "no credential in the message: {why}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sink_built_against_the_0_1_0_contract_still_loads_as_a_sink() {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/plugins-0.1.0/partition-sink.wasm")).expect("fixture");
    let plugin = Runtime::new().expect("engine").load(&bytes).expect("a 0.1.0 component loads");
    assert_eq!(plugin.kind(), PluginKind::Sink);
    let config = r#"{"url": "http://127.0.0.1:9"}"#;
    let mut sink = SinkInstance::create(&plugin, config, labels(), InstanceLimits::default()).await.expect("a 0.1.0 sink is created");
    sink.flush().await.expect("and flushed");
    assert!(sink.take_holds().is_empty(), "a 0.1.0 sink holds nothing");
}
