//! The `s3-sink` built-in against a real Kafka broker and a real S3-compatible server (moto,
//! started by `tests/run.sh`): objects of `flush.size` records under Confluent's key layout,
//! each record once; an idle partition's object closed on schedule and committed only once it
//! exists; time-based partitioning; Parquet read back by pyarrow. Faults: `s3_sink_faults`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use turnpike_tests::s3::{fresh_bucket, get_object, list_objects, s3_endpoint};
use turnpike_tests::*;

/// The key prefix every test grants (`storage.prefix`).
pub(crate) const PREFIX: &str = "lake/";

/// The secret access key behind `${env:TURNPIKE_TEST_S3_SECRET}`: distinctive, so a test can
/// look for it in answers and logs. (moto checks no signature, so any value signs in.)
pub(crate) const SECRET: &str = "s3sink-secret-Zq7vX2pL9w";

/// How a connector's host signs in to the store.
#[derive(Debug, Clone, Copy)]
pub(crate) enum SignIn {
    /// `storage.credentials`, the secret as a `${env:…}` reference.
    Reference,
    /// No `credentials`: the host's AWS chain, from its `AWS_ACCESS_KEY_ID` and
    /// `AWS_SECRET_ACCESS_KEY`.
    HostChain,
}

/// An `s3-sink` connector as a test writes it; `restart` is off, so a failure stays visible.
pub(crate) struct Lake {
    name: String,
    topic: String,
    bucket: String,
    endpoint: String,
    sign_in: SignIn,
    storage: Vec<String>,
    options: Vec<String>,
}

impl Lake {
    /// `name` on `topic`, writing to `bucket` on the suite's moto, signing in by the host chain.
    pub(crate) fn new(name: &str, topic: &str, bucket: &str) -> Self {
        let (name, topic, bucket) = (name.to_owned(), topic.to_owned(), bucket.to_owned());
        Self { name, topic, bucket, endpoint: s3_endpoint(), sign_in: SignIn::HostChain, storage: Vec::new(), options: Vec::new() }
    }

    /// One `key: value` line of the plugin's `config`.
    pub(crate) fn option(mut self, line: &str) -> Self {
        self.options.push(line.to_owned());
        self
    }

    /// One `key: value` line of the `storage` grant.
    pub(crate) fn storage(mut self, line: &str) -> Self {
        self.storage.push(line.to_owned());
        self
    }

    pub(crate) fn endpoint(mut self, url: &str) -> Self {
        self.endpoint = url.to_owned();
        self
    }

    pub(crate) fn sign_in(mut self, how: SignIn) -> Self {
        self.sign_in = how;
        self
    }

    /// The connector, as an item of the host config's `connectors:` list.
    pub(crate) fn yaml(&self) -> String {
        let mut y = format!(
            "- name: {}\n  topics: [{}]\n  restart: {{ enabled: false }}\n  storage:\n    bucket: {}\n    prefix: {PREFIX}\n    endpoint: \"{}\"\n    path_style: true\n    region: us-east-1\n",
            self.name, self.topic, self.bucket, self.endpoint
        );
        if let SignIn::Reference = self.sign_in {
            y.push_str("    credentials:\n      access_key_id: test\n      secret_access_key: \"${env:TURNPIKE_TEST_S3_SECRET}\"\n");
        }
        for line in &self.storage {
            y.push_str(&format!("    {line}\n"));
        }
        y.push_str("  sink:\n    plugin: s3-sink\n    flush_interval_ms: 500\n    config:\n      topics.dir: topics\n");
        for line in &self.options {
            y.push_str(&format!("      {line}\n"));
        }
        y
    }

    /// What the host process needs in its environment to sign in this way.
    pub(crate) fn env(&self) -> Vec<(&'static str, &'static str)> {
        match self.sign_in {
            SignIn::Reference => vec![("TURNPIKE_TEST_S3_SECRET", SECRET)],
            // Metadata lookups off: the chain must not wait for an EC2 endpoint that is not there.
            SignIn::HostChain => vec![("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test"), ("AWS_EC2_METADATA_DISABLED", "true")],
        }
    }
}

/// A host config running `lakes` (admin API on a free port) and the environment it needs.
pub(crate) fn lake_host(lakes: &[&Lake]) -> (String, Vec<(&'static str, &'static str)>) {
    let connectors: String = lakes.iter().map(|l| l.yaml()).collect();
    (host_config(free_port(), &connectors), lakes.iter().flat_map(|l| l.env()).collect())
}

/// Where the connector writes `topic`'s objects.
pub(crate) fn folder(topic: &str) -> String {
    format!("{PREFIX}topics/{topic}/")
}

/// An object key as the sink writes it:
/// `<prefix><topics.dir>/<topic>/<encoded partition>/<topic>+<kafka partition>+<start offset, 10 digits>.<ext>`.
#[derive(Debug, Clone)]
pub(crate) struct ObjectKey {
    pub key: String,
    /// `partition=0`, `year=2024/month=03/…`.
    pub encoded: String,
    pub partition: i32,
    pub start: i64,
    pub ext: String,
}

/// `key` parsed, or `None` when it does not follow the layout exactly.
pub(crate) fn parse_key(key: &str, topic: &str) -> Option<ObjectKey> {
    let rest = key.strip_prefix(folder(topic).as_str())?;
    let (encoded, file) = rest.rsplit_once('/')?;
    let (numbers, ext) = file.strip_prefix(topic)?.strip_prefix('+')?.split_once('.')?;
    let (partition, start) = numbers.split_once('+')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if encoded.is_empty() || !digits(partition) || start.len() != 10 || !digits(start) || !["json", "json.gz", "bin", "bin.gz", "parquet", "snappy.parquet"].contains(&ext) {
        return None;
    }
    let (partition, start) = (partition.parse::<i32>().ok()?, start.parse::<i64>().ok()?);
    Some(ObjectKey { key: key.to_owned(), encoded: encoded.to_owned(), partition, start, ext: ext.to_owned() })
}

/// Every complete object written for `topic`, keys parsed; an error names a key off the layout.
pub(crate) fn objects(bucket: &str, topic: &str) -> Result<Vec<ObjectKey>> {
    let listed = list_objects(bucket, &folder(topic));
    listed.into_iter().map(|(key, _)| parse_key(&key, topic).ok_or_else(|| anyhow!("{key:?} does not follow the key layout"))).collect()
}

/// One partition of a connector's consumer group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Progress {
    pub partition: i32,
    /// The next offset the group reads (`None`: it never committed).
    pub committed: Option<i64>,
    /// Where the partition ends.
    pub end: i64,
}

/// `GET /v1/connectors/{connector}/offsets`, by partition.
pub(crate) fn progress(host: &HostProcess, connector: &str) -> Result<Vec<Progress>> {
    let (status, body) = host.get(&format!("/v1/connectors/{connector}/offsets"))?;
    if status != 200 {
        bail!("GET offsets of {connector} answered {status}: {body}");
    }
    let partitions = body["partitions"].as_array().into_iter().flatten();
    let mut out: Vec<Progress> = partitions
        .map(|p| Progress { partition: p["partition"].as_i64().unwrap_or(-1) as i32, committed: p["committed"].as_i64(), end: p["latest"].as_i64().unwrap_or(-1) })
        .collect();
    out.sort_by_key(|p| p.partition);
    Ok(out)
}

/// The committed offset of `partition` in `now` (0 when none was committed).
pub(crate) fn committed(now: &[Progress], partition: i32) -> i64 {
    now.iter().find(|p| p.partition == partition).and_then(|p| p.committed).unwrap_or(0)
}

/// The connector's status as text, for failure messages.
pub(crate) fn status_of(host: &HostProcess, connector: &str) -> String {
    let status = host.get(&format!("/v1/connectors/{connector}")).map(|(_, body)| body.to_string());
    format!("status: {}\nlog:\n{}", status.unwrap_or_else(|e| e.to_string()), host.log_text())
}

/// An object of JSON lines, each line parsed.
pub(crate) fn json_lines(bucket: &str, key: &str) -> Result<Vec<Value>> {
    let text = String::from_utf8(get_object(bucket, key)).with_context(|| format!("{key} is not UTF-8"))?;
    let lines = text.lines().filter(|l| !l.is_empty());
    lines.map(|l| serde_json::from_str::<Value>(l).with_context(|| format!("{key}: a line that is not JSON: {l:.200}"))).collect()
}

/// A record's `id`.
pub(crate) fn id(record: &Value) -> Result<u64> {
    record["id"].as_u64().with_context(|| format!("a record without an id: {:.200}", record.to_string()))
}

/// Fails unless `ids` holds every id of `expected` exactly once, and nothing else.
pub(crate) fn assert_each_once(ids: impl IntoIterator<Item = u64>, expected: std::ops::Range<u64>) {
    let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
    for id in ids {
        *seen.entry(id).or_default() += 1;
    }
    let repeated: Vec<u64> = seen.iter().filter(|(_, n)| **n > 1).map(|(id, _)| *id).take(10).collect();
    let missing: Vec<u64> = expected.clone().filter(|id| !seen.contains_key(id)).take(10).collect();
    let foreign: Vec<u64> = seen.keys().filter(|id| !expected.contains(*id)).copied().take(10).collect();
    assert!(repeated.is_empty() && missing.is_empty() && foreign.is_empty(), "ids repeated {repeated:?}, missing {missing:?}, unexpected {foreign:?} (at most 10 of each)");
}

#[tokio::test(flavor = "multi_thread")]
async fn records_land_once_each_in_objects_of_flush_size_under_the_confluent_layout() -> Result<()> {
    const TOTAL: u64 = 10_000;
    const SIZE: i64 = 1_000;
    let (topic, bucket) = (unique("lake-orders"), fresh_bucket("lake-json"));
    create_topic(&topic, 2).await?;
    let order = |i: u64| format!(r#"{{"id":{i},"item":"order {i}"}}"#);
    let producer = producer()?;
    produce(&producer, &topic, &(0..TOTAL).map(|i| (format!("k{i}"), order(i))).collect::<Vec<_>>()).await?;
    let lake = Lake::new("lake", &topic, &bucket).sign_in(SignIn::Reference).option(&format!("flush.size: {SIZE}")).option("format.class: json");
    let (config, env) = lake_host(&[&lake]);
    let mut host = HostProcess::start_with_env(&std::env::temp_dir().join(unique("turnpike-s3-json")), &config, &env)?;
    host.wait_state("lake", "RUNNING", Duration::from_secs(120))?;
    let ends = progress(&host, "lake")?;
    assert_eq!(ends.iter().map(|p| p.end).sum::<i64>(), TOTAL as i64, "{ends:?}");

    // An object per flush.size records; each partition's remainder stays in an open object,
    // whose records are not committed.
    let whole = |end: i64| end / SIZE;
    let count_in = |written: &[ObjectKey], partition: i32| written.iter().filter(|o| o.partition == partition).count() as i64;
    wait_until("every whole object written and committed", Duration::from_secs(180), || {
        let (written, now) = (objects(&bucket, &topic)?, progress(&host, "lake")?);
        let done = ends.iter().all(|p| count_in(&written, p.partition) >= whole(p.end) && committed(&now, p.partition) >= whole(p.end) * SIZE);
        Ok(done.then_some(()))
    })
    .with_context(|| status_of(&host, "lake"))?;
    let (written, now) = (objects(&bucket, &topic)?, progress(&host, "lake")?);
    for p in &ends {
        assert_eq!(count_in(&written, p.partition), whole(p.end), "objects close at flush.size records only: partition {}", p.partition);
        assert_eq!(committed(&now, p.partition), whole(p.end) * SIZE, "the open object's records stay uncommitted: partition {} ends at {}", p.partition, p.end);
    }

    // Topping every partition up to a multiple of flush.size closes its last object.
    let mut next = TOTAL;
    let mut top_up = Vec::new();
    for p in &ends {
        for _ in 0..(SIZE - p.end % SIZE) % SIZE {
            top_up.push(Outgoing { key: format!("k{next}"), value: order(next), partition: Some(p.partition), timestamp: None });
            next += 1;
        }
    }
    produce_records(&producer, &topic, &top_up).await?;
    let mut expected = BTreeSet::new();
    for p in &ends {
        for n in 0..(p.end + SIZE - 1) / SIZE {
            expected.insert(format!("{PREFIX}topics/{topic}/partition={0}/{topic}+{0}+{1:010}.json", p.partition, n * SIZE));
        }
    }
    let keys = || list_objects(&bucket, &folder(&topic)).into_iter().map(|(key, _)| key).collect::<BTreeSet<_>>();
    wait_until("every object written and every offset committed", Duration::from_secs(120), || {
        let now = progress(&host, "lake")?;
        let done = ends.iter().all(|p| committed(&now, p.partition) == (p.end + SIZE - 1) / SIZE * SIZE);
        Ok((done && expected.is_subset(&keys())).then_some(()))
    })
    .with_context(|| status_of(&host, "lake"))?;
    let keys = keys();
    assert_eq!(keys, expected, "ceil(n / flush.size) objects per partition, keyed <prefix>topics/<topic>/partition=<p>/<topic>+<p>+<start>.json");
    let mut ids = Vec::new();
    for key in &keys {
        let lines = json_lines(&bucket, key)?;
        assert_eq!(lines.len() as i64, SIZE, "{key} holds flush.size records");
        ids.extend(lines.iter().map(id).collect::<Result<Vec<_>>>()?);
    }
    assert_each_once(ids, 0..next);
    assert!(host.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_partitions_object_is_closed_on_schedule_and_committed_only_once_it_exists() -> Result<()> {
    let (topic, bucket) = (unique("lake-idle"), fresh_bucket("lake-idle"));
    create_topic(&topic, 1).await?;
    produce(&producer()?, &topic, &(0..5).map(|i| (format!("k{i}"), format!(r#"{{"id":{i}}}"#))).collect::<Vec<_>>()).await?;
    let lake = Lake::new("idle", &topic, &bucket).option("flush.size: 1000").option("rotate.schedule.interval.ms: 2000").option("format.class: json");
    let (config, env) = lake_host(&[&lake]);
    let mut host = HostProcess::start_with_env(&std::env::temp_dir().join(unique("turnpike-s3-idle")), &config, &env)?;
    host.wait_state("idle", "RUNNING", Duration::from_secs(120))?;

    // Offsets are read before the listing: an offset committed before its object existed
    // shows as a commit followed by an empty listing. 20 s covers the group join, the 2 s
    // schedule and the 500 ms flush interval; no further record arrives to close the object.
    let written = wait_until("the object closed on schedule", Duration::from_secs(20), || {
        let committed = committed(&progress(&host, "idle")?, 0);
        let listed = list_objects(&bucket, &folder(&topic));
        if listed.is_empty() && committed > 0 {
            bail!("offset {committed} was committed before any object existed");
        }
        Ok((!listed.is_empty()).then_some(listed))
    })
    .with_context(|| status_of(&host, "idle"))?;
    let key = format!("{PREFIX}topics/{topic}/partition=0/{topic}+0+0000000000.json");
    assert_eq!(written.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), [key.as_str()]);
    let ids = json_lines(&bucket, &key)?.iter().map(id).collect::<Result<Vec<_>>>()?;
    assert_eq!(ids, [0, 1, 2, 3, 4]);
    wait_until("offset 5 committed once the object exists", Duration::from_secs(30), || Ok((committed(&progress(&host, "idle")?, 0) == 5).then_some(())))
        .with_context(|| status_of(&host, "idle"))?;
    assert!(host.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_time_partitioner_files_each_record_under_the_hour_of_its_timestamp() -> Result<()> {
    // 2024-03-05 10:15, 11:15 and 13:15 UTC.
    const HOURS: [(i64, &str); 3] = [(1_709_633_700_000, "10"), (1_709_637_300_000, "11"), (1_709_644_500_000, "13")];
    // Interleaved: record `i` is stamped in hour `HOURS[PATTERN[i]]`.
    const PATTERN: [usize; 9] = [0, 1, 2, 0, 2, 1, 0, 2, 2];
    let (topic, bucket) = (unique("lake-hours"), fresh_bucket("lake-hours"));
    // Kept forever: time-based retention would delete records stamped in 2024.
    create_topic_with(&topic, 1, &[("retention.ms", "-1")]).await?;
    let records: Vec<Outgoing> = PATTERN
        .iter()
        .enumerate()
        .map(|(i, &h)| Outgoing { key: format!("k{i}"), value: format!(r#"{{"id":{i}}}"#), partition: None, timestamp: Some(HOURS[h].0 + i as i64 * 1_000) })
        .collect();
    produce_records(&producer()?, &topic, &records).await?;
    let lake = Lake::new("hours", &topic, &bucket)
        .option("flush.size: 1000")
        .option("rotate.schedule.interval.ms: 2000")
        .option("partitioner.class: time")
        .option(r#"path.format: "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH""#)
        .option("partition.duration.ms: 3600000")
        .option("timestamp.extractor: Record")
        .option("timezone: UTC")
        .option("format.class: json");
    let (config, env) = lake_host(&[&lake]);
    let mut host = HostProcess::start_with_env(&std::env::temp_dir().join(unique("turnpike-s3-hours")), &config, &env)?;
    host.wait_state("hours", "RUNNING", Duration::from_secs(120))?;
    wait_until("all 9 records in closed objects and committed", Duration::from_secs(60), || Ok((committed(&progress(&host, "hours")?, 0) == 9).then_some(())))
        .with_context(|| status_of(&host, "hours"))?;

    let mut by_path: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for object in objects(&bucket, &topic)? {
        assert_eq!((object.partition, object.ext.as_str()), (0, "json"), "{}", object.key);
        let ids = json_lines(&bucket, &object.key)?.iter().map(id).collect::<Result<Vec<_>>>()?;
        // One partition, produced in order: a record's offset is its id.
        assert_eq!(ids.iter().min().copied(), Some(object.start as u64), "{} is named after its first record's offset", object.key);
        by_path.entry(object.encoded).or_default().extend(ids);
    }
    let expected: BTreeMap<String, BTreeSet<u64>> = HOURS
        .iter()
        .enumerate()
        .map(|(h, (_, hour))| (format!("year=2024/month=03/day=05/hour={hour}"), PATTERN.iter().enumerate().filter(|(_, p)| **p == h).map(|(i, _)| i as u64).collect()))
        .collect();
    assert_eq!(by_path, expected, "each record under the hour of its timestamp");
    assert!(host.stop()?.success());
    Ok(())
}

/// Prints, for each Parquet file named, its column types and rows as one JSON line.
const READ_PARQUET: &str = r#"
import json, sys
import pyarrow.parquet as pq
for path in sys.argv[1:]:
    table = pq.read_table(path)
    print(json.dumps({"types": {f.name: str(f.type) for f in table.schema}, "rows": table.to_pylist()}))
"#;

#[tokio::test(flavor = "multi_thread")]
async fn parquet_objects_read_back_by_pyarrow_hold_every_row_with_its_column_types() -> Result<()> {
    const TOTAL: u64 = 1_000;
    let python = std::env::var("TURNPIKE_TEST_PYTHON").context("TURNPIKE_TEST_PYTHON is not set: run the suite with tests/run.sh, which names a Python with pyarrow")?;
    let row = |i: u64| serde_json::json!({ "id": i, "name": format!("item {i}"), "price": i as f64 + 0.25, "ok": i.is_multiple_of(3) });
    let (topic, bucket) = (unique("lake-parquet"), fresh_bucket("lake-parquet"));
    create_topic(&topic, 1).await?;
    produce(&producer()?, &topic, &(0..TOTAL).map(|i| (format!("k{i}"), row(i).to_string())).collect::<Vec<_>>()).await?;
    let lake = Lake::new("columns", &topic, &bucket).option("flush.size: 1000").option("format.class: parquet").option("parquet.codec: snappy");
    let (config, env) = lake_host(&[&lake]);
    let mut host = HostProcess::start_with_env(&std::env::temp_dir().join(unique("turnpike-s3-parquet")), &config, &env)?;
    host.wait_state("columns", "RUNNING", Duration::from_secs(120))?;
    wait_until("the 1,000 records written and committed", Duration::from_secs(120), || Ok((committed(&progress(&host, "columns")?, 0) == TOTAL as i64).then_some(())))
        .with_context(|| status_of(&host, "columns"))?;

    let written = objects(&bucket, &topic)?;
    let expected_key = format!("{PREFIX}topics/{topic}/partition=0/{topic}+0+0000000000.snappy.parquet");
    assert_eq!(written.iter().map(|o| o.key.as_str()).collect::<Vec<_>>(), [expected_key.as_str()]);
    let scratch = std::env::temp_dir().join(unique("turnpike-parquet-read"));
    std::fs::create_dir_all(&scratch)?;
    let mut files = Vec::new();
    for (n, object) in written.iter().enumerate() {
        let path = scratch.join(format!("{n}.parquet"));
        std::fs::write(&path, get_object(&bucket, &object.key))?;
        files.push(path);
    }
    let out = std::process::Command::new(&python).arg("-c").arg(READ_PARQUET).args(&files).output().with_context(|| format!("running {python}"))?;
    if !out.status.success() {
        bail!("pyarrow could not read the objects: {}", String::from_utf8_lossy(&out.stderr));
    }
    let mut rows = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let file: Value = serde_json::from_str(line).with_context(|| format!("pyarrow printed {line:.200}"))?;
        assert_eq!(file["types"], serde_json::json!({ "id": "int64", "name": "string", "price": "double", "ok": "bool" }), "column types");
        rows.extend(file["rows"].as_array().cloned().unwrap_or_default());
    }
    rows.sort_by_key(|r| r["id"].as_u64());
    assert_eq!(rows, (0..TOTAL).map(row).collect::<Vec<_>>(), "every row, as produced");
    assert!(host.stop()?.success());
    Ok(())
}
