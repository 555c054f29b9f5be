//! Upload throughput to an S3-compatible store, records' bytes sent straight through
//! `turnpike_object_store::Bucket`: the baseline for the S3 sink, whose path through the
//! runtime is measured beside it in the same run and reported as a ratio to it.
//!
//! Needs a store: `tests/s3/moto.sh start .cache/moto-run`, then
//! `TURNPIKE_TEST_S3_ENDPOINT=$(cat .cache/moto-run/endpoint) cargo bench -p turnpike-bench --bench s3`.
//! `TURNPIKE_BENCH_S3_MIB` sets the volume per round (default 64). Against moto the figures
//! are moto's (a Python server); the ratio is what carries over. Not a test: it asserts
//! nothing beyond every object being written.

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
use bytes::Bytes;
use turnpike_bench::customer;
use turnpike_object_store::{Bucket, StaticCredentials, StoreConfig, Written};
use turnpike_runtime::{BatchBuilder, InstanceLabels, InstanceLimits, Plugin, RecordRef, Runtime, SinkInstance, StorageGrant};

const MIB: usize = 1024 * 1024;
/// Multipart part size, and parts per object (32 MiB objects).
const PART: usize = 8 * MIB;
const PARTS_PER_OBJECT: usize = 4;
/// Size of the objects written with one PutObject each.
const SMALL_OBJECT: usize = MIB;
/// Rounds per measurement; the fastest is reported.
const ROUNDS: usize = 3;

/// One measured way of getting the same bytes into the store.
struct Row {
    path: &'static str,
    bytes: usize,
    best: Duration,
}

fn main() -> anyhow::Result<()> {
    let Ok(endpoint) = std::env::var("TURNPIKE_TEST_S3_ENDPOINT") else {
        println!("TURNPIKE_TEST_S3_ENDPOINT is not set: start a store with `tests/s3/moto.sh start .cache/moto-run` and set it to the address printed");
        return Ok(());
    };
    let mib: usize = std::env::var("TURNPIKE_BENCH_S3_MIB").ok().and_then(|v| v.parse().ok()).unwrap_or(64);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(run(&endpoint, mib))
}

async fn run(endpoint: &str, mib: usize) -> anyhow::Result<()> {
    let bucket_name = format!("bench-{:016x}", RandomState::new().hash_one(Instant::now()));
    raw_client(endpoint).create_bucket().bucket(&bucket_name).send().await?;
    let bucket = Bucket::connect(StoreConfig {
        region: Some("us-east-1".into()),
        endpoint: Some(endpoint.to_owned()),
        path_style: true,
        credentials: Some(StaticCredentials { access_key_id: "test".into(), secret_access_key: "test".into(), session_token: None }),
        ..StoreConfig::new(&bucket_name)
    })
    .await?;
    bucket.check().await?;
    let data = records(mib * MIB);
    let lines: Vec<String> = String::from_utf8_lossy(&data).lines().map(str::to_owned).collect();
    let bucket = Arc::new(bucket);
    // Compiled once, outside the rounds: a connector compiles its plugin once too.
    let wasm = turnpike_builtins::get("s3-sink").ok_or_else(|| anyhow::anyhow!("s3-sink is built in"))?.wasm;
    let plugin = Runtime::new()?.load(wasm)?;

    // The baseline comes first: every other row is reported relative to it. The S3 sink
    // through the runtime (records from Kafka, encoded by the plugin, uploaded by the host's
    // object-store capability) joins as a further `Row` of the same bytes.
    let rows = vec![
        Row { path: "multipart straight through Bucket (baseline)", bytes: data.len(), best: best_of(|r| multipart(&bucket, &data, r)).await? },
        Row { path: "PutObject per 1 MiB straight through Bucket", bytes: data.len(), best: best_of(|r| puts(&bucket, &data, r)).await? },
        Row { path: "s3-sink through the runtime (batches of 1,000)", bytes: data.len(), best: best_of(|r| through_sink(&plugin, &bucket, &lines, r)).await? },
    ];

    println!(
        "\nS3 upload throughput, {mib} MiB of ~420-byte JSON records per round, best of {ROUNDS} rounds, store at {endpoint}; multipart: {} MiB parts, {PARTS_PER_OBJECT} per object",
        PART / MIB
    );
    println!("{:<48} {:>8} {:>9} {:>9} {:>12}", "path", "MiB", "best s", "MB/s", "vs baseline");
    let baseline = rows[0].best.as_secs_f64();
    for row in &rows {
        let secs = row.best.as_secs_f64();
        let rate = row.bytes as f64 / 1e6 / secs;
        println!("{:<48} {:>8} {:>9.2} {:>9.1} {:>11.2}x", row.path, row.bytes / MIB, secs, rate, baseline / secs);
    }
    println!("retries during the run: {}", bucket.retries());
    Ok(())
}

/// The fastest of [`ROUNDS`] runs of `round(number)`.
async fn best_of<F, Fut>(mut round: F) -> anyhow::Result<Duration>
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let mut best = Duration::MAX;
    for number in 0..ROUNDS {
        let start = Instant::now();
        round(number).await?;
        best = best.min(start.elapsed());
    }
    Ok(best)
}

/// `data` as objects of [`PARTS_PER_OBJECT`] parts of [`PART`] bytes (the last ones shorter),
/// parts sent one after another.
async fn multipart(bucket: &Bucket, data: &Bytes, round: usize) -> anyhow::Result<()> {
    for (object, start) in (0..data.len()).step_by(PART * PARTS_PER_OBJECT).enumerate() {
        let key = format!("multipart/{round}/{object:06}.jsonl");
        let end = (start + PART * PARTS_PER_OBJECT).min(data.len());
        let upload_id = bucket.start_multipart(&key).await?;
        let mut parts = Vec::new();
        for (number, from) in (1..).zip((start..end).step_by(PART)) {
            let body = data.slice(from..(from + PART).min(end));
            parts.push((number, bucket.upload_part(&key, &upload_id, number, body).await?));
        }
        anyhow::ensure!(bucket.complete_multipart(&key, &upload_id, &parts, true).await? == Written::Created, "{key} existed");
    }
    Ok(())
}

/// The same records through the `s3-sink` built-in in a real sandbox, with the host's
/// object-store capability doing the uploads: batches of 1,000 records written, then the
/// flush and the host's wait for the uploads (what precedes a commit). One object holds the
/// whole round (`flush.size` = every record), uploaded in [`PART`]-byte parts while the
/// plugin goes on. Kafka is left out: its read path is measured by the other benchmarks.
async fn through_sink(plugin: &Plugin, bucket: &Arc<Bucket>, lines: &[String], round: usize) -> anyhow::Result<()> {
    let grant = StorageGrant::new(bucket.clone(), &format!("sink/{round}/"), PART, 64 * MIB);
    let limits = InstanceLimits { storage: Some(grant), memory_bytes: 256 << 20, ..InstanceLimits::default() };
    let config = serde_json::json!({ "flush.size": lines.len(), "format.class": "json" }).to_string();
    let labels = InstanceLabels { connector: "bench".into(), plugin: "s3-sink".into() };
    let mut sink = SinkInstance::create(plugin, &config, labels, limits).await?;
    for (n, chunk) in lines.chunks(1_000).enumerate() {
        let mut b = BatchBuilder::with_capacity(chunk.len(), chunk.iter().map(String::len).sum());
        for (i, line) in chunk.iter().enumerate() {
            let offset = (n * 1_000 + i) as i64;
            b.push(RecordRef { key: None, value: Some(line.as_bytes()), timestamp: Some(1_700_000_000_000), topic: "bench", partition: 0, offset }, []);
        }
        let rejected = sink.write(&b.finish()).await?;
        anyhow::ensure!(rejected.is_empty(), "the sink rejected records: {:?}", rejected.first());
    }
    sink.flush().await?;
    sink.settle_storage().await.map_err(|e| anyhow::anyhow!(e))?;
    anyhow::ensure!(sink.take_holds().is_empty(), "the object closed at flush.size, so nothing is held");
    Ok(())
}

/// `data` as objects of [`SMALL_OBJECT`] bytes, one PutObject each.
async fn puts(bucket: &Bucket, data: &Bytes, round: usize) -> anyhow::Result<()> {
    for (object, start) in (0..data.len()).step_by(SMALL_OBJECT).enumerate() {
        let key = format!("put/{round}/{object:06}.jsonl");
        let body = data.slice(start..(start + SMALL_OBJECT).min(data.len()));
        anyhow::ensure!(bucket.put(&key, body, true).await? == Written::Created, "{key} existed");
    }
    Ok(())
}

/// At least `size` bytes of newline-delimited customer records.
fn records(size: usize) -> Bytes {
    let mut out = Vec::with_capacity(size + 512);
    let mut i = 0;
    while out.len() < size {
        out.extend_from_slice(customer(i).as_bytes());
        out.push(b'\n');
        i += 1;
    }
    out.into()
}

/// A plain SDK client, to create the bucket.
fn raw_client(endpoint: &str) -> aws_sdk_s3::Client {
    let http = aws_smithy_http_client::Builder::new().tls_provider(Provider::Rustls(CryptoMode::Ring)).build_https();
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .force_path_style(true)
        .credentials_provider(Credentials::new("test", "test", None, None, "turnpike-bench"))
        .http_client(http)
        .build();
    aws_sdk_s3::Client::from_conf(config)
}
