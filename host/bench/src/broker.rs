//! What the benchmarks on a real broker share: the broker itself (the project's test broker,
//! started here unless `TURNPIKE_BENCH_BOOTSTRAP` names one), topics, preloaded records and
//! waiting for a connector to have written them.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use turnpike_kafka::{OutgoingRecord, Producer};
use turnpike_pipeline::Host;

/// A ~340-byte JSON order with four fields pii-mask has work to do on.
pub fn order(i: u64) -> String {
    format!(
        r#"{{"id":{i},"customer":{{"name":"Customer Number {i}","email":"customer{i}@example.com","phone":"+44 20 7946 {:04}","address":"{} Long Street, Springfield"}},"order":{{"sku":"SKU-{:06}","quantity":{},"price_cents":{},"notes":"please leave the parcel with the neighbour if nobody is at home, thank you"}},"ts":"2026-12-02T10:00:00Z"}}"#,
        i % 10_000,
        i % 500,
        i % 999_983,
        i % 7 + 1,
        1_000 + i % 50_000
    )
}

/// The broker a benchmark runs against: the one `TURNPIKE_BENCH_BOOTSTRAP` names, or the
/// project's test broker (tests/kafka/kafka.sh: real Apache Kafka from Maven Central, KRaft,
/// loopback), started now and stopped on drop.
pub struct BenchBroker {
    pub bootstrap: String,
    /// The broker's process, when known (started here, or `TURNPIKE_BENCH_BROKER_PID`), so
    /// that a bench can say what the broker spent beside what the host spent.
    pub pid: Option<u32>,
    started: Option<PathBuf>,
}

impl BenchBroker {
    pub fn get() -> anyhow::Result<Self> {
        if let Ok(bootstrap) = std::env::var("TURNPIKE_BENCH_BOOTSTRAP") {
            let pid = std::env::var("TURNPIKE_BENCH_BROKER_PID").ok().and_then(|p| live_pid(&p));
            return Ok(Self { bootstrap, pid, started: None });
        }
        let run_dir = workspace().join(".cache/kafka-bench");
        eprintln!("starting the test broker in {} (TURNPIKE_BENCH_BOOTSTRAP=host:port uses a running one)", run_dir.display());
        let out = kafka_sh("start", &run_dir)?;
        let bootstrap = out.lines().last().unwrap_or_default().trim().to_owned();
        ensure!(!bootstrap.is_empty(), "tests/kafka/kafka.sh start printed no address");
        let pid = std::fs::read_to_string(run_dir.join("broker.pid")).ok().and_then(|p| live_pid(&p));
        Ok(Self { bootstrap, pid, started: Some(run_dir) })
    }
}

impl Drop for BenchBroker {
    fn drop(&mut self) {
        if let Some(run_dir) = &self.started {
            if let Err(e) = kafka_sh("stop", run_dir) {
                eprintln!("stopping the test broker: {e:#}");
            }
        }
    }
}

/// `text` as the pid of a running process this one can read; otherwise `None`, said once (a
/// bench then reports the broker's CPU as not measured).
fn live_pid(text: &str) -> Option<u32> {
    let pid = text.trim().parse::<u32>().ok().filter(|pid| std::path::Path::new(&format!("/proc/{pid}/stat")).exists());
    if pid.is_none() {
        eprintln!("the broker's pid {:?} is not a running process here: its CPU is not measured", text.trim());
    }
    pid
}

/// The workspace root: benchmarks run from their package's directory.
fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn kafka_sh(verb: &str, run_dir: &std::path::Path) -> anyhow::Result<String> {
    let script = workspace().join("tests/kafka/kafka.sh");
    let out = Command::new("bash").arg(&script).arg(verb).arg(run_dir).output().with_context(|| format!("running {}", script.display()))?;
    if !out.status.success() {
        bail!("kafka.sh {verb} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Creates `names` with `partitions` partitions each, in requests of 200 topics.
pub async fn create_topics(bootstrap: &str, names: &[String], partitions: i32) -> anyhow::Result<()> {
    use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
    let admin: AdminClient<rdkafka::client::DefaultClientContext> = rdkafka::config::ClientConfig::new().set("bootstrap.servers", bootstrap).create()?;
    for chunk in names.chunks(200) {
        let topics: Vec<NewTopic<'_>> = chunk.iter().map(|n| NewTopic::new(n, partitions, TopicReplication::Fixed(1))).collect();
        for result in admin.create_topics(&topics, &AdminOptions::new()).await? {
            result.map_err(|(topic, code)| anyhow::anyhow!("creating {topic}: {code}"))?;
        }
    }
    Ok(())
}

/// Writes records `0..records` (key `i`, value `value(i)`) to `topic` and waits until the
/// broker has acknowledged every one.
pub async fn preload(producer: &Producer, topic: &str, records: u64, value: impl Fn(u64) -> String) -> anyhow::Result<()> {
    let mut pending = std::collections::VecDeque::new();
    for i in 0..records {
        let (key, value) = (i.to_string(), value(i));
        pending.push_back(producer.send(OutgoingRecord { topic, key: Some(key.as_bytes()), value: Some(value.as_bytes()), timestamp: None }, []).await?);
        // Acknowledgements are collected as they come, so a million of them are never all
        // held at once.
        while pending.len() > 100_000 {
            pending.pop_front().map(|d| d.wait()).context("a delivery")?.await?;
        }
    }
    for delivery in pending {
        delivery.wait().await?;
    }
    Ok(())
}

/// When a connector's records began to flow: its first record read, and its first written
/// with how many were out by then (a rate from either leaves its group join out).
#[derive(Debug, Clone, Copy)]
pub struct Flow {
    pub first_read: Instant,
    pub first_written: Instant,
    pub written_then: u64,
}

/// Waits until connector `name` has written `records` records (`within` at most, failing
/// early if it fails), and says when its records began to flow.
pub async fn wait_written(host: &Host, name: &str, records: u64, within: Duration) -> anyhow::Result<Flow> {
    let began = Instant::now();
    let (mut first_read, mut first_written) = (None, None);
    loop {
        let status = host.status(name).with_context(|| format!("{name} vanished"))?;
        if status.records_in > 0 && first_read.is_none() {
            first_read = Some(Instant::now());
        }
        if status.records_out > 0 && first_written.is_none() {
            first_written = Some((Instant::now(), status.records_out));
        }
        if status.records_out >= records {
            let (first_written, written_then) = first_written.unwrap_or((began, 0));
            return Ok(Flow { first_read: first_read.unwrap_or(began), first_written, written_then });
        }
        if let Some(error) = status.error {
            bail!("{name} failed: {}", error.message);
        }
        ensure!(began.elapsed() < within, "{name}: {} of {records} records out ({} in) after {within:?}", status.records_out, status.records_in);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
