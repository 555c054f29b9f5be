//! The `s3-sink` built-in when things go wrong: a host killed mid-object, a bucket that does
//! not exist, the store gone for ten seconds, a stop while the store is gone. Against a real
//! Kafka broker and moto.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use turnpike_tests::s3::{fresh_bucket, incomplete_uploads, s3_endpoint};
use turnpike_tests::*;

use crate::s3_sink::{assert_each_once, committed, id, json_lines, lake_host, objects, progress, status_of, Lake, SignIn, PREFIX, SECRET};

/// `(key, {"id": i})`.
fn record(i: u64) -> (String, String) {
    (format!("k{i}"), format!(r#"{{"id":{i}}}"#))
}

/// The ids in every object written for `topic`, each object holding exactly `size` records,
/// and the objects' start offsets in key order.
fn read_back(bucket: &str, topic: &str, size: usize) -> Result<(Vec<u64>, Vec<i64>)> {
    let (mut ids, mut starts) = (Vec::new(), Vec::new());
    for object in objects(bucket, topic)? {
        let lines = json_lines(bucket, &object.key)?;
        assert_eq!(lines.len(), size, "{} holds flush.size records", object.key);
        ids.extend(lines.iter().map(id).collect::<Result<Vec<_>>>()?);
        starts.push(object.start);
    }
    Ok((ids, starts))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_killed_mid_object_loses_nothing_and_leaves_no_upload_open() -> Result<()> {
    const TOTAL: u64 = 5_000;
    const SIZE: u64 = 500;
    // Four whole objects and 480 records of a fifth: with 12 KB records and 5 MiB parts, the
    // fifth object's first part is uploaded while the object is still open.
    const BEFORE_KILL: u64 = 4 * SIZE + 480;
    let pad = "x".repeat(12_000);
    let big = |i: u64| (format!("k{i}"), format!(r#"{{"id":{i},"pad":"{pad}"}}"#));
    let (topic, bucket) = (unique("lake-kill"), fresh_bucket("lake-kill"));
    create_topic(&topic, 1).await?;
    let producer = producer()?;
    produce(&producer, &topic, &(0..BEFORE_KILL).map(&big).collect::<Vec<_>>()).await?;
    let lake = Lake::new("killed", &topic, &bucket).storage("part_size_mib: 5").option(&format!("flush.size: {SIZE}")).option("format.class: json");
    let (config, env) = lake_host(&[&lake]);
    let dir = std::env::temp_dir().join(unique("turnpike-s3-kill"));
    let mut first = HostProcess::start_with_env(&dir, &config, &env)?;
    first.wait_state("killed", "RUNNING", Duration::from_secs(120))?;
    wait_until("four whole objects and the fifth one's multipart upload under way", Duration::from_secs(180), || {
        Ok((objects(&bucket, &topic)?.len() >= 4 && incomplete_uploads(&bucket) >= 1).then_some(()))
    })
    .with_context(|| status_of(&first, "killed"))?;
    assert_eq!(objects(&bucket, &topic)?.len(), 4, "the fifth object is still open");
    first.kill_hard()?;

    // The rest arrives while no host runs; a new host on the same state directory takes over.
    produce(&producer, &topic, &(BEFORE_KILL..TOTAL).map(&big).collect::<Vec<_>>()).await?;
    let mut second = HostProcess::start_with_env(&dir, &config, &env)?;
    second.wait_state("killed", "RUNNING", Duration::from_secs(120))?;
    wait_until("every record written and committed after the restart", Duration::from_secs(180), || {
        Ok((committed(&progress(&second, "killed")?, 0) == TOTAL as i64).then_some(()))
    })
    .with_context(|| status_of(&second, "killed"))?;
    let (ids, starts) = read_back(&bucket, &topic, SIZE as usize)?;
    let whole: Vec<i64> = (0..(TOTAL / SIZE) as i64).map(|n| n * SIZE as i64).collect();
    assert_eq!(starts, whole, "deterministic keys: the range read again was written under the same keys");
    assert_each_once(ids, 0..TOTAL);
    assert_eq!(incomplete_uploads(&bucket), 0, "the upload the kill left open was aborted");
    assert!(second.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_bucket_fails_as_object_store_commits_nothing_and_the_secret_never_shows() -> Result<()> {
    // moto checks no signature, so refused credentials cannot be tested against it; a missing
    // bucket is the store's other answer that retrying cannot fix.
    let topic = unique("lake-nobucket");
    create_topic(&topic, 1).await?;
    produce(&producer()?, &topic, &[record(0)]).await?;
    let missing = unique("no-such-bucket");
    let lake = Lake::new("gone", &topic, &missing).sign_in(SignIn::Reference).option("format.class: json");
    let (config, env) = lake_host(&[&lake]);
    let mut host = HostProcess::start_with_env(&std::env::temp_dir().join(unique("turnpike-s3-nobucket")), &config, &env)?;
    let status = host.wait_state("gone", "FAILED", Duration::from_secs(120))?;
    assert_eq!(status["error"]["class"], "object_store", "{status}");
    let message = status["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&missing), "names the bucket: {message}");
    assert_eq!(status["storage"]["bucket"], missing.as_str(), "the status shows the grant: {status}");
    assert_eq!(status["storage"]["prefix"], PREFIX, "{status}");
    let offsets = progress(&host, "gone")?;
    assert!(!offsets.is_empty() && offsets.iter().all(|p| p.committed.is_none()), "nothing committed: {offsets:?}");

    // validate tries the bucket: refused under `connector.storage`, naming it; a bucket that
    // exists passes.
    let body = |bucket: &str| {
        serde_json::json!({
            "topics": [topic],
            "sink": { "plugin": "s3-sink", "flush_interval_ms": 500, "config": { "topics.dir": "topics", "format.class": "json" } },
            "storage": {
                // A prefix of its own: one overlapping `gone`'s in the same bucket is refused.
                "bucket": bucket, "prefix": "probe/", "endpoint": s3_endpoint(), "path_style": true, "region": "us-east-1",
                "credentials": { "access_key_id": "test", "secret_access_key": "${env:TURNPIKE_TEST_S3_SECRET}" },
            },
        })
    };
    let (code, answer) = http_json(&host.admin, "POST", "/v1/connectors/probe/validate", &body(&missing))?;
    assert_eq!(code, 422, "{answer}");
    let problems = answer["problems"].as_array().cloned().unwrap_or_default();
    let names_bucket = |p: &serde_json::Value| p["key"] == "connector.storage" && p["message"].as_str().is_some_and(|m| m.contains(&missing));
    assert!(problems.iter().any(names_bucket), "{answer}");
    let (code, answer) = http_json(&host.admin, "POST", "/v1/connectors/probe/validate", &body(&fresh_bucket("lake-exists")))?;
    assert_eq!((code, &answer["valid"]), (200, &serde_json::json!(true)), "{answer}");

    // The secret's value appears in no answer and no log line (the assertion does not print it).
    let (_, list) = host.get("/v1/connectors")?;
    let (_, shown) = host.get("/v1/connectors/gone")?;
    for (place, text) in [("the status", shown.to_string()), ("the connector list", list.to_string()), ("the host log", host.log_text())] {
        assert!(!text.contains(SECRET), "the secret access key shows in {place}");
    }
    assert!(host.stop()?.success());
    Ok(())
}

/// A connector `name` writing objects of 100 records to moto through a relay the test takes
/// down (moto keeps buckets in memory only, so stopping moto itself would lose the objects
/// already written): 500 records written and committed, then the relay down, 500 more
/// produced, and the host seen retrying the store within `retrying_within`.
struct Outage {
    name: &'static str,
    topic: String,
    bucket: String,
    relay: Relay,
    /// The host's config and environment, to start it again.
    config: String,
    env: Vec<(&'static str, &'static str)>,
    dir: std::path::PathBuf,
    host: HostProcess,
    /// When the relay went down.
    down_at: Instant,
}

impl Outage {
    async fn begin(name: &'static str, sections: &str, retrying_within: Duration) -> Result<Self> {
        let (topic, bucket) = (unique(name), fresh_bucket(name));
        create_topic(&topic, 1).await?;
        let endpoint = s3_endpoint();
        let relay = Relay::start(endpoint.trim_start_matches("http://").trim_end_matches('/'))?;
        let lake = Lake::new(name, &topic, &bucket).endpoint(&relay.url()).option("flush.size: 100").option("format.class: json");
        let producer = producer()?;
        produce(&producer, &topic, &(0..500).map(record).collect::<Vec<_>>()).await?;
        let (config, env) = (host_config_with(free_port(), sections, &lake.yaml()), lake.env());
        let dir = std::env::temp_dir().join(unique(&format!("turnpike-{name}")));
        let host = HostProcess::start_with_env(&dir, &config, &env)?;
        let mut outage = Self { name, topic, bucket, relay, config, env, dir, host, down_at: Instant::now() };
        outage.host.wait_state(name, "RUNNING", Duration::from_secs(120))?;
        outage.wait_committed("the first 500 records committed", 500)?;
        let retries_before = outage.retries()?;

        outage.relay.down();
        outage.down_at = Instant::now();
        produce(&producer, &outage.topic, &(500..1_000).map(record).collect::<Vec<_>>()).await?;
        wait_until("the host retrying the store while it is gone", retrying_within, || Ok((outage.retries()? > retries_before).then_some(())))
            .with_context(|| status_of(&outage.host, name))?;
        Ok(outage)
    }

    fn committed(&self) -> Result<i64> {
        Ok(committed(&progress(&self.host, self.name)?, 0))
    }

    fn wait_committed(&self, what: &str, records: i64) -> Result<()> {
        wait_until(what, Duration::from_secs(120), || Ok((self.committed()? == records).then_some(()))).with_context(|| status_of(&self.host, self.name))
    }

    fn retries(&self) -> Result<u64> {
        Ok(self.host.get(&format!("/v1/connectors/{}", self.name))?.1["storage"]["retries"].as_u64().unwrap_or(0))
    }

    /// Every record written once, in ten objects of 100.
    fn assert_all_written_once(&self) -> Result<()> {
        let (ids, starts) = read_back(&self.bucket, &self.topic, 100)?;
        assert_eq!(starts, (0..10).map(|n| n * 100).collect::<Vec<i64>>(), "ten objects of flush.size records");
        assert_each_once(ids, 0..1_000);
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_store_gone_for_ten_seconds_is_retried_and_nothing_is_lost() -> Result<()> {
    const OUTAGE: Duration = Duration::from_secs(10);
    let mut outage = Outage::begin("weathered", "", OUTAGE).await?;
    assert!(outage.committed()? <= 500, "nothing is committed while its objects cannot be written");
    let (_, status) = outage.host.get("/v1/connectors/weathered")?;
    assert_eq!(status["state"], "RUNNING", "a store gone for less than the retry budget fails nothing: {status}");
    // The outage's length is the scenario itself, not a wait for something to happen.
    std::thread::sleep((outage.down_at + OUTAGE).saturating_duration_since(Instant::now()));
    outage.relay.up()?;

    outage.wait_committed("every record committed once the store is back", 1_000)?;
    outage.assert_all_written_once()?;
    let (_, status) = outage.host.get("/v1/connectors/weathered")?;
    assert_eq!(status["state"], "RUNNING", "{status}");
    println!("store gone for {OUTAGE:?}: {} requests retried, 1000 of 1000 records written", status["storage"]["retries"]);
    assert!(outage.host.stop()?.success());
    Ok(())
}

/// A stop that waits for objects the store cannot take (it is gone) ends at the host's
/// `shutdown_timeout_ms`: the host exits with an error naming the connector, nothing of the
/// unwritten objects is committed, and the next start writes them.
#[tokio::test(flavor = "multi_thread")]
async fn a_stop_held_by_a_store_that_is_gone_ends_at_the_shutdown_timeout_and_loses_nothing() -> Result<()> {
    let mut outage = Outage::begin("stranded", "shutdown_timeout_ms: 3000\n", Duration::from_secs(60)).await?;
    let asked = Instant::now();
    let exit = outage.host.stop()?;
    let took = asked.elapsed();
    let log = outage.host.log_text();
    assert!(took < Duration::from_secs(20), "SIGTERM took {took:?}, past shutdown_timeout_ms; log:\n{log}");
    assert!(!exit.success(), "a stop that left a connector behind is not a clean exit: {exit}; log:\n{log}");
    assert!(log.contains("connectors still stopping after shutdown_timeout_ms (3000 ms): stranded;"), "{log}");

    outage.relay.up()?;
    outage.host = HostProcess::start_with_env(&outage.dir, &outage.config, &outage.env)?;
    outage.host.wait_state("stranded", "RUNNING", Duration::from_secs(120))?;
    outage.wait_committed("every record committed after the restart", 1_000)?;
    outage.assert_all_written_once()?;
    assert!(outage.host.stop()?.success());
    Ok(())
}
