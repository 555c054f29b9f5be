//! The operator's metrics on real Kafka: `/metrics` passes promlint (the rules of `promtool
//! check metrics`), lag shows a backlog and returns to 0 once it drains, plugin CPU time and
//! memory are counted; and a connector whose broker is gone says so (status, count, events)
//! instead of reporting `RUNNING` and nothing else.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context as _};
use turnpike_tests::*;

/// Runs promlint (`TURNPIKE_TEST_PROMLINT`, built by `tests/run.sh`) on a scrape; fails
/// with every problem it names.
fn promlint(text: &str) -> anyhow::Result<()> {
    let tool = std::env::var("TURNPIKE_TEST_PROMLINT").context("set TURNPIKE_TEST_PROMLINT to the promlint binary (tests/run.sh builds tests/metrics/promlint)")?;
    let mut child = Command::new(tool).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    child.stdin.take().context("stdin")?.write_all(text.as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!("promlint refused /metrics:\n{}{}\n--- scrape ---\n{text}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

/// The value of the sample `name{labels}` (labels exactly as rendered, in order).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')).and_then(|v| v.trim().parse().ok()))
}

fn scrape(host: &HostProcess) -> anyhow::Result<String> {
    let (code, text) = http(&host.admin, "GET", "/metrics")?;
    anyhow::ensure!(code == 200, "GET /metrics answered {code}: {text}");
    Ok(text)
}

/// A backlog read by a transform that stalls on one record (it spins until the batch
/// deadline, twice, then once more alone): meanwhile the lag shows what is waiting; after,
/// it is 0 in the gauge, per partition and in the status, and the spinning shows as CPU time.
#[tokio::test(flavor = "multi_thread")]
async fn lag_shows_a_backlog_and_returns_to_zero_and_the_scrape_passes_promlint() -> anyhow::Result<()> {
    let (faulty_wasm, _) = fixtures()?;
    let topic = unique("metrics-in");
    create_topic(&topic, 2).await?;
    let records: Vec<_> = (0..1_000).map(|i| (format!("k{i}"), if i == 0 { "STALL".to_owned() } else { format!("v{i}") })).collect();
    produce(&producer()?, &topic, &records).await?;
    let connector = format!(
        "- name: meter\n  topics: [{topic}]\n  output_topic: {topic}-out\n  batch: {{ max_records: 50 }}\n  limits: {{ batch_timeout_ms: 1500 }}\n  errors: {{ tolerance: all }}\n  transforms:\n    - plugin: faulty\n      config: {{ fault: loop, marker: STALL }}\n"
    );
    let sections = format!("plugins:\n  faulty: {{ path: {} }}\n", faulty_wasm.display());
    let dir = std::env::temp_dir().join(unique("turnpike-metrics"));
    let mut host = HostProcess::start(&dir, &host_config_with(free_port(), &sections, &connector))?;
    host.wait_state("meter", "RUNNING", Duration::from_secs(120))?;

    // The stalled record is the first of its partition: about half the backlog waits behind it.
    let lag_series = r#"turnpike_connector_lag_records{connector="meter"}"#;
    let stalled = wait_until("lag ≥ 400 while the plugin stalls", Duration::from_secs(60), || {
        let text = scrape(&host)?;
        Ok(sample(&text, lag_series).filter(|lag| *lag >= 400.0).map(|_| text))
    })
    .with_context(|| host.log_text())?;
    promlint(&stalled)?;

    let drained = wait_until("the backlog to drain", Duration::from_secs(120), || {
        let text = scrape(&host)?;
        let read = sample(&text, r#"turnpike_connector_records_total{connector="meter",outcome="in"}"#);
        // Records are counted in when read, a batch's duration once it is handled: wait for
        // the last batch too, not only its records.
        let batches = sample(&text, r#"turnpike_connector_batch_duration_seconds_count{connector="meter"}"#).unwrap_or(0.0);
        Ok((read == Some(1_000.0) && sample(&text, lag_series) == Some(0.0) && batches >= 20.0).then_some(text))
    })
    .with_context(|| host.log_text())?;
    promlint(&drained)?;
    for partition in 0..2 {
        let series = format!(r#"turnpike_partition_lag_records{{connector="meter",partition="{partition}",topic="{topic}"}}"#);
        assert_eq!(sample(&drained, &series), Some(0.0), "{series} in:\n{drained}");
    }
    let cpu = sample(&drained, r#"turnpike_connector_plugin_cpu_seconds_total{connector="meter"}"#).context("cpu series")?;
    // Three spins cut off after 1.5 s of wall time each; on a busy machine they get less CPU.
    assert!(cpu >= 0.5, "the spins are CPU time: {cpu} s");
    let memory = sample(&drained, r#"turnpike_connector_plugin_memory_bytes{connector="meter"}"#).context("memory series")?;
    assert!(memory >= 65_536.0, "a live instance holds at least a page: {memory}");
    let label = host.get("/v1/connectors/meter")?.1["plugins"][0].as_str().context("plugin label")?.to_owned();
    let instance = sample(&drained, &format!(r#"turnpike_plugin_memory_bytes{{connector="meter",plugin="{label}",stage="transform-1",task="1"}}"#));
    assert_eq!(instance, Some(memory), "one instance: the connector's total is its memory");
    assert!(sample(&drained, r#"turnpike_connector_batch_duration_seconds_count{connector="meter"}"#).unwrap_or(0.0) >= 20.0, "1,000 records in batches of ≤ 50");
    assert!(sample(&drained, r#"turnpike_connector_batch_duration_seconds_bucket{connector="meter",le="+Inf"}"#).is_some());
    assert!(sample(&drained, r#"turnpike_connector_bytes_total{connector="meter",direction="in"}"#).unwrap_or(0.0) > 5_000.0);
    assert!(sample(&drained, "turnpike_process_resident_memory_bytes").unwrap_or(0.0) > 1e6, "{drained}");
    assert!(sample(&drained, "turnpike_process_threads").unwrap_or(0.0) >= 2.0);

    let status = host.get("/v1/connectors/meter")?.1;
    assert_eq!(status["lag"], 0, "{status}");
    assert_eq!(status["lag_by_partition"].as_array().map(Vec::len), Some(2), "{status}");
    assert!(status["plugin_cpu_seconds"].as_f64().unwrap_or(0.0) >= 0.5, "{status}");
    assert_eq!(status["plugin_memory_bytes"].as_f64(), Some(memory));
    assert_eq!(status["broker_unreachable"], serde_json::Value::Null);
    assert!(host.stop()?.success());
    Ok(())
}

/// The distinct keys read from `topic` on `bootstrap` until `want` of them or the timeout.
async fn read_keys(bootstrap: &str, topic: &str, want: usize, timeout: Duration) -> anyhow::Result<std::collections::BTreeSet<String>> {
    use rdkafka::consumer::{Consumer as _, StreamConsumer};
    use rdkafka::Message as _;
    let consumer: StreamConsumer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique("outage-reader"))
        .set("auto.offset.reset", "earliest")
        .create()?;
    consumer.subscribe(&[topic])?;
    let mut keys = std::collections::BTreeSet::new();
    let deadline = tokio::time::Instant::now() + timeout;
    while keys.len() < want {
        let message = tokio::time::timeout_at(deadline, consumer.recv()).await.with_context(|| format!("only {keys:?} after {timeout:?}"))??;
        keys.insert(String::from_utf8_lossy(message.key().unwrap_or_default()).into_owned());
    }
    Ok(keys)
}

/// A broker of this test's own, started, killed and resumed with `tests/kafka/kafka.sh`.
struct OwnBroker {
    dir: PathBuf,
}

impl OwnBroker {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("kafka/kafka.sh")
    }

    fn run(verb: &str, dir: &Path) -> anyhow::Result<String> {
        let out = Command::new(Self::script()).arg(verb).arg(dir).output()?;
        anyhow::ensure!(out.status.success(), "kafka.sh {verb}: {}", String::from_utf8_lossy(&out.stderr));
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    fn start() -> anyhow::Result<(Self, String)> {
        let dir = std::env::temp_dir().join(unique("turnpike-own-broker"));
        let bootstrap = Self::run("start", &dir)?;
        Ok((Self { dir }, bootstrap))
    }

    /// SIGKILL: the broker is gone at once, as in a crash.
    fn kill(&self) -> anyhow::Result<()> {
        let pid = std::fs::read_to_string(self.dir.join("broker.pid"))?;
        let status = Command::new("kill").arg("-KILL").arg(pid.trim()).status()?;
        anyhow::ensure!(status.success(), "kill -KILL {pid}");
        Ok(())
    }

    fn resume(&self) -> anyhow::Result<()> {
        Self::run("resume", &self.dir).map(drop)
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        let _ = Self::run("stop", &self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// With its broker killed, a connector keeps its state (nothing is lost, it waits) but says
/// since when no broker answers, counts the outage and emits an event; once the broker is
/// back, the condition clears with another event and records flow again, none missing.
#[tokio::test(flavor = "multi_thread")]
async fn a_connector_says_when_its_broker_cannot_be_reached() -> anyhow::Result<()> {
    let (broker, bootstrap) = OwnBroker::start()?;
    let config = format!(
        "kafka:\n  bootstrap.servers: {bootstrap}\n  session.timeout.ms: 6000\nadmin:\n  listen: 127.0.0.1:{}\nconnectors:\n  - name: outage\n    topics: [outage-in]\n    output_topic: outage-out\n    transforms:\n      - plugin: identity\n",
        free_port()
    );
    let producer: rdkafka::producer::FutureProducer = rdkafka::config::ClientConfig::new().set("bootstrap.servers", &bootstrap).create()?;
    let before: Vec<_> = (0..10).map(|i| (format!("k{i}"), format!("before {i}"))).collect();
    produce(&producer, "outage-in", &before).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-outage"));
    let mut host = HostProcess::start(&dir, &config)?;
    host.wait_state("outage", "RUNNING", Duration::from_secs(120))?;
    wait_until("the first records through", Duration::from_secs(60), || Ok((host.get("/v1/connectors/outage")?.1["records_out"] == 10).then_some(())))?;

    broker.kill()?;
    let down = wait_until("the status to say the broker is unreachable", Duration::from_secs(60), || {
        let status = host.get("/v1/connectors/outage")?.1;
        Ok((!status["broker_unreachable"].is_null()).then_some(status))
    })
    .with_context(|| host.log_text())?;
    assert_eq!(down["state"], "RUNNING", "nothing failed: the connector waits for the broker: {down}");
    assert_eq!(down["broker_outages"], 1, "{down}");
    assert!(down["broker_unreachable"]["since"].as_str().is_some_and(|s| s.ends_with('Z')), "{down}");
    assert!(down["broker_unreachable"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{down}");
    let metrics = scrape(&host)?;
    assert_eq!(sample(&metrics, r#"turnpike_connector_broker_unreachable{connector="outage"}"#), Some(1.0), "{metrics}");
    assert_eq!(sample(&metrics, r#"turnpike_events_total{kind="broker_unreachable"}"#), Some(1.0), "{metrics}");

    // A source created now has no consumer and the host's producer said "all brokers down"
    // before it existed: its positions reader is what must notice, while the source starts.
    let source = serde_json::json!({ "output_topic": "outage-gen", "source": { "plugin": "datagen", "poll_interval_ms": 50, "config": { "seed": 1, "key": "id", "count": 5, "fields": [{ "name": "id", "type": "sequence" }] } } });
    let (code, created) = http_json(&host.admin, "PUT", "/v1/connectors/late-source", &source)?;
    assert_eq!(code, 201, "{created}");
    let starting = wait_until("the source started in the outage to say the broker is unreachable", Duration::from_secs(25), || {
        let status = host.get("/v1/connectors/late-source")?.1;
        Ok((!status["broker_unreachable"].is_null()).then_some(status))
    })
    .with_context(|| host.log_text())?;
    assert_ne!(starting["state"], "RUNNING", "it cannot have read its position yet: {starting}");

    broker.resume()?;
    let up = wait_until("the condition to clear once the broker is back", Duration::from_secs(90), || {
        let status = host.get("/v1/connectors/outage")?.1;
        let source = host.get("/v1/connectors/late-source")?.1;
        Ok((status["broker_unreachable"].is_null() && source["broker_unreachable"].is_null()).then_some(status))
    })
    .with_context(|| host.log_text())?;
    assert_eq!(up["broker_outages"], 1, "{up}");
    let metrics = scrape(&host)?;
    assert_eq!(sample(&metrics, r#"turnpike_connector_broker_unreachable{connector="outage"}"#), Some(0.0));
    // One outage each for the transform and the source started in it.
    assert_eq!(sample(&metrics, r#"turnpike_events_total{kind="broker_reachable"}"#), Some(2.0), "{metrics}");

    let after: Vec<_> = (10..20).map(|i| (format!("k{i}"), format!("after {i}"))).collect();
    produce(&producer, "outage-in", &after).await?;
    let keys = read_keys(&bootstrap, "outage-out", 20, Duration::from_secs(90)).await.with_context(|| host.log_text())?;
    assert_eq!(keys.len(), 20, "every record before and after the outage came out: {keys:?}");
    let generated = read_keys(&bootstrap, "outage-gen", 5, Duration::from_secs(90)).await.with_context(|| host.log_text())?;
    assert_eq!(generated.len(), 5, "the source started in the outage ran once the broker was back: {generated:?}");
    let source_status = host.get("/v1/connectors/late-source")?.1;
    assert_eq!(source_status["broker_outages"], 1, "{source_status}");
    assert!(host.stop()?.success());
    Ok(())
}
