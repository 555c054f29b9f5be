//! Test support: a real Kafka broker (started by `tests/run.sh`), unique topics, producing
//! and consuming, and a real `turnpike` host process to start, query and kill; [`s3`] for
//! the S3-compatible server beside the broker; [`sql`] for the PostgreSQL and MariaDB servers,
//! [`sql_pipeline`] for `sql-source` connectors reading them.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rdkafka::admin::{AdminClient, AdminOptions, NewPartitions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::{BorrowedMessage, Message};
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};

pub mod browser;
mod group_type;
mod http_server;
mod poison;
mod positions;
mod relay;
pub mod s3;
pub mod sql;
pub mod sql_pipeline;
pub use group_type::{group_members, group_type};
pub use http_server::{json, Answer, Received, TestServer};
pub use poison::produce_with_raw_header_key;
pub use positions::{all_saved_positions, end_offset, saved_positions};
pub use relay::Relay;

/// A record read back from Kafka with its headers (as text).
#[derive(Debug, Clone)]
pub struct ReadRecord {
    /// Key, lossily as text.
    pub key: String,
    /// Value, lossily as text.
    pub value: String,
    /// Headers, values lossily as text.
    pub headers: HashMap<String, String>,
}

/// A consumer of its own group, reading `topic` from the beginning, committing nothing.
fn reader(topic: &str) -> Result<StreamConsumer> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .set("group.id", unique("verifier"))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()?;
    consumer.subscribe(&[topic])?;
    Ok(consumer)
}

/// Reads `topic` from the start until `count` records arrived or `timeout` passed.
pub async fn read_with_headers(topic: &str, count: usize, timeout: Duration) -> Result<Vec<ReadRecord>> {
    read_until(topic, timeout, |m| ReadRecord { key: text(m.key()), value: text(m.payload()), headers: headers(m) }, |got| got.len() >= count).await
}

/// Reads `topic` from the start until `done(records so far)` says stop or `timeout` passes:
/// each record's key, partition and timestamp (ms; the broker's append time on a topic with
/// `message.timestamp.type: LogAppendTime`, which is when the record became readable).
pub async fn read_timestamps(topic: &str, timeout: Duration, done: impl FnMut(&[(String, i32, i64)]) -> bool) -> Result<Vec<(String, i32, i64)>> {
    read_until(topic, timeout, |m| (text(m.key()), m.partition(), m.timestamp().to_millis().unwrap_or(-1)), done).await
}

/// A record's headers, values lossily as text.
fn headers(m: &BorrowedMessage<'_>) -> HashMap<String, String> {
    use rdkafka::message::Headers;
    m.headers().map(|h| h.iter().map(|h| (h.key.to_owned(), text(h.value))).collect()).unwrap_or_default()
}

/// Polls `check` every 100 ms until it returns `Some` (or an error) or `timeout` passes; says
/// what it waited for when it gives up. The one "wait until" of the tests. It blocks its
/// thread: call it from a test's body (a `#[tokio::test]` body runs on the test's own thread),
/// never from a task spawned on a runtime that drives traffic.
pub fn wait_until<T>(what: &str, timeout: Duration, mut check: impl FnMut() -> Result<Option<T>>) -> Result<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(found) = check()? {
            return Ok(found);
        }
        if Instant::now() > deadline {
            bail!("timed out after {timeout:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The broker's address, from `TURNPIKE_TEST_BOOTSTRAP` (set by `tests/run.sh`).
pub fn bootstrap() -> String {
    std::env::var("TURNPIKE_TEST_BOOTSTRAP").expect(
        "TURNPIKE_TEST_BOOTSTRAP is not set: run the suite with tests/run.sh, which starts a real Kafka broker",
    )
}

/// A topic name no other test uses.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{:016x}", rand::random::<u64>())
}

/// Creates a topic and waits until the broker confirms it.
pub async fn create_topic(name: &str, partitions: i32) -> Result<()> {
    create_topic_with(name, partitions, &[]).await
}

/// Like [`create_topic`], with topic configs (`("retention.ms", "-1")` keeps records whose
/// timestamps lie in the past, which time-based retention would otherwise delete).
pub async fn create_topic_with(name: &str, partitions: i32, configs: &[(&str, &str)]) -> Result<()> {
    let admin: AdminClient<DefaultClientContext> =
        ClientConfig::new().set("bootstrap.servers", bootstrap()).create().context("admin client")?;
    let topic = configs.iter().fold(NewTopic::new(name, partitions, TopicReplication::Fixed(1)), |t, (k, v)| t.set(k, v));
    let results = admin.create_topics([&topic], &AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)))).await?;
    for r in results {
        r.map_err(|(t, e)| anyhow::anyhow!("creating topic {t}: {e}"))?;
    }
    Ok(())
}

/// Grows `name` to `total` partitions and waits until the broker confirms it.
pub async fn add_partitions(name: &str, total: usize) -> Result<()> {
    let admin: AdminClient<DefaultClientContext> =
        ClientConfig::new().set("bootstrap.servers", bootstrap()).create().context("admin client")?;
    let results = admin.create_partitions([&NewPartitions::new(name, total)], &AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)))).await?;
    for r in results {
        r.map_err(|(t, e)| anyhow::anyhow!("adding partitions to {t}: {e}"))?;
    }
    Ok(())
}

/// A producer for test input.
pub fn producer() -> Result<FutureProducer> {
    Ok(ClientConfig::new().set("bootstrap.servers", bootstrap()).set("linger.ms", "5").create()?)
}

/// Produces `(key, value)` records and waits for every acknowledgement.
pub async fn produce(producer: &FutureProducer, topic: &str, records: &[(String, String)]) -> Result<()> {
    let built: Vec<FutureRecord<'_, str, str>> = records.iter().map(|(k, v)| FutureRecord::to(topic).key(k.as_str()).payload(v.as_str())).collect();
    send_all(producer, built).await
}

/// A record to produce where a test needs more than a key and a value.
#[derive(Debug, Clone, Default)]
pub struct Outgoing {
    /// Key.
    pub key: String,
    /// Value.
    pub value: String,
    /// The partition to write to (default: the key's).
    pub partition: Option<i32>,
    /// The record's timestamp, ms since the epoch (default: when it is sent).
    pub timestamp: Option<i64>,
}

/// Produces records with explicit partitions or timestamps, waiting for every acknowledgement.
pub async fn produce_records(producer: &FutureProducer, topic: &str, records: &[Outgoing]) -> Result<()> {
    let built: Vec<FutureRecord<'_, str, str>> = records.iter().map(|o| {
        let record = FutureRecord::to(topic).key(o.key.as_str()).payload(o.value.as_str());
        let record = match o.partition {
            Some(p) => record.partition(p),
            None => record,
        };
        match o.timestamp {
            Some(t) => record.timestamp(t),
            None => record,
        }
    }).collect();
    send_all(producer, built).await
}

/// Sends every record, waiting for what is in flight whenever the local queue is full, then
/// for every acknowledgement.
async fn send_all(producer: &FutureProducer, records: Vec<FutureRecord<'_, str, str>>) -> Result<()> {
    let mut pending = Vec::new();
    for mut record in records {
        loop {
            match producer.send_result(record) {
                Ok(f) => {
                    pending.push(f);
                    break;
                }
                // The local queue is full: wait for what is in flight, then try again.
                Err((_, back)) => {
                    record = back;
                    for f in pending.drain(..) {
                        f.await?.map_err(|(e, _)| anyhow::anyhow!("delivery: {e}"))?;
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }
    }
    for f in pending {
        f.await?.map_err(|(e, _)| anyhow::anyhow!("delivery: {e}"))?;
    }
    producer.flush(Duration::from_secs(30))?;
    Ok(())
}

/// Reads `topic` from the beginning until `done(records so far)` says stop or `timeout`
/// passes; returns every `(key, value)` read, duplicates included.
pub async fn consume_until(topic: &str, timeout: Duration, done: impl FnMut(&[(String, String)]) -> bool) -> Result<Vec<(String, String)>> {
    read_until(topic, timeout, |m| (text(m.key()), text(m.payload())), done).await
}

/// The one read loop: `topic` from the beginning, each record turned into an `R` by `read`,
/// until `done(records so far)` says stop or `timeout` passes.
async fn read_until<R>(topic: &str, timeout: Duration, read: impl Fn(&BorrowedMessage<'_>) -> R, mut done: impl FnMut(&[R]) -> bool) -> Result<Vec<R>> {
    let consumer = reader(topic)?;
    let deadline = Instant::now() + timeout;
    let mut out = Vec::new();
    while !done(&out) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match tokio::time::timeout(left.min(Duration::from_millis(500)), consumer.recv()).await {
            Ok(Ok(m)) => out.push(read(&m)),
            Ok(Err(e)) => eprintln!("verifier consumer: {e}"),
            Err(_) => {}
        }
    }
    Ok(out)
}

/// Bytes read back, lossily as text (absent: empty).
fn text(bytes: Option<&[u8]>) -> String {
    String::from_utf8_lossy(bytes.unwrap_or_default()).into_owned()
}

/// A stop condition for [`consume_until`]: `n` distinct keys read. It counts only what is new
/// at each call (recounting everything per record made long reads quadratic: 20,000 records
/// took minutes of the test's own CPU).
pub fn distinct_keys_reach(n: usize) -> impl FnMut(&[(String, String)]) -> bool {
    let (mut keys, mut counted) = (std::collections::HashSet::new(), 0);
    move |got| {
        for (k, _) in &got[counted..] {
            keys.insert(k.clone());
        }
        counted = got.len();
        keys.len() >= n
    }
}

/// Counts records per key: `(distinct keys, duplicates)`.
pub fn distinct_and_duplicates(records: &[(String, String)]) -> (usize, usize) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (k, _) in records {
        *seen.entry(k).or_default() += 1;
    }
    (seen.len(), records.len() - seen.len())
}

/// The `turnpike` binary built beside this test binary (`tests/run.sh` builds it first), or
/// `TURNPIKE_BIN`.
pub fn turnpike_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("TURNPIKE_BIN") {
        return p.into();
    }
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().and_then(Path::parent).expect("target/<profile>/deps");
    let bin = dir.join("turnpike");
    assert!(bin.exists(), "{} is missing: run `cargo build -p turnpike` (tests/run.sh does)", bin.display());
    bin
}

/// The version the host registers its built-in plugins under: its own, as `turnpike --version`
/// prints it (`turnpike 0.1.0`), so no test repeats a number the workspace manifest owns.
pub fn host_version() -> Result<String> {
    let out = Command::new(turnpike_bin()).arg("--version").output().context("running turnpike --version")?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.split_whitespace().nth(1).map(str::to_owned).with_context(|| format!("turnpike --version printed {text:?}"))
}

/// A free loopback port for an admin API.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("free port")
}

/// Points the default state directory's compiled-code cache (`<dir>/turnpike-state/compiled`)
/// at one directory for the whole run, unless the config names its own `state_dir`: each host
/// then reads the built-ins compiled by the first instead of compiling them again (16 s of
/// CPU per start, which starved the tests running beside).
fn share_compiled_cache(dir: &Path, config: &str) -> Result<()> {
    if config.lines().any(|l| l.starts_with("state_dir:")) {
        return Ok(());
    }
    let shared = std::env::temp_dir().join("turnpike-tests-compiled");
    std::fs::create_dir_all(&shared)?;
    let state = dir.join("turnpike-state");
    std::fs::create_dir_all(&state)?;
    let link = state.join("compiled");
    if link.symlink_metadata().is_err() {
        std::os::unix::fs::symlink(&shared, &link)?;
    }
    Ok(())
}

/// A `turnpike run` process.
pub struct HostProcess {
    child: Child,
    pub admin: String,
    pub log: PathBuf,
}

impl HostProcess {
    /// Starts `turnpike run -c <dir>/turnpike.yaml` with `config` written there.
    pub fn start(dir: &Path, config: &str) -> Result<Self> {
        Self::start_with_env(dir, config, &[])
    }

    /// Like [`HostProcess::start`], with extra environment variables for the process (what
    /// `${env:NAME}` references and the AWS credential chain read).
    pub fn start_with_env(dir: &Path, config: &str, env: &[(&str, &str)]) -> Result<Self> {
        std::fs::create_dir_all(dir)?;
        share_compiled_cache(dir, config)?;
        let path = dir.join("turnpike.yaml");
        std::fs::write(&path, config)?;
        let admin = config
            .lines()
            .find_map(|l| l.trim().strip_prefix("listen:"))
            .map(|s| s.trim().trim_matches('"').to_owned())
            .context("config must set admin.listen")?;
        let log = dir.join(format!("host-{}.log", rand::random::<u32>()));
        let child = Command::new(turnpike_bin())
            .args(["run", "-c"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .env("TURNPIKE_LOG", "info,librdkafka=warn")
            .envs(env.iter().copied())
            .spawn()
            .context("starting turnpike")?;
        Ok(Self { child, admin, log })
    }

    /// GETs an admin API path; `(status, JSON body)`.
    pub fn get(&self, path: &str) -> Result<(u16, serde_json::Value)> {
        http_get(&self.admin, path)
    }

    /// How many events of `kind` (`gave_up`, `restarted`, …) the host counted, by its
    /// `turnpike_events_total` metric (0 before the first).
    pub fn events_counted(&self, kind: &str) -> Result<u64> {
        let (_, metrics) = http(&self.admin, "GET", "/metrics")?;
        let series = format!("turnpike_events_total{{kind=\"{kind}\"}} ");
        Ok(metrics.lines().find_map(|l| l.strip_prefix(series.as_str())).map_or(Ok(0), str::parse)?)
    }

    /// Waits until the connector reports `state`, or fails with the host's log.
    pub fn wait_state(&mut self, connector: &str, state: &str, timeout: Duration) -> Result<serde_json::Value> {
        let found = wait_until(&format!("{connector} to be {state}"), timeout, || {
            if let Ok(Some(status)) = self.child.try_wait() {
                bail!("turnpike exited ({status}) before {connector} was {state}");
            }
            Ok(match self.get(&format!("/v1/connectors/{connector}")) {
                Ok((200, body)) if body["state"] == state => Some(body),
                _ => None,
            })
        });
        found.with_context(|| format!("log:\n{}", self.log_text()))
    }

    /// The host's log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends `signal` (`STOP`, `CONT`, …) to the process.
    pub fn signal(&self, signal: &str) -> Result<()> {
        let sent = Command::new("kill").arg(format!("-{signal}")).arg(self.child.id().to_string()).status()?;
        anyhow::ensure!(sent.success(), "kill -{signal} failed");
        Ok(())
    }

    /// Kills the process at once (SIGKILL): no shutdown, no final commit.
    pub fn kill_hard(&mut self) -> Result<()> {
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }

    /// Asks the process to stop (SIGTERM) and waits for it; kills it if it has not stopped
    /// within 60 s.
    pub fn stop(&mut self) -> Result<std::process::ExitStatus> {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let stopped = wait_until("turnpike to stop after SIGTERM", Duration::from_secs(60), || Ok(self.child.try_wait()?));
        if stopped.is_err() {
            self.child.kill()?;
        }
        stopped
    }
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal HTTP/1.1 GET for the admin API (loopback only, JSON answers).
pub fn http_get(address: &str, path: &str) -> Result<(u16, serde_json::Value)> {
    let (status, body) = http(address, "GET", path)?;
    Ok((status, serde_json::from_str(&body).with_context(|| format!("JSON body: {body}"))?))
}

/// A minimal HTTP/1.1 request without a body; `(status, body text)`.
pub fn http(address: &str, method: &str, path: &str) -> Result<(u16, String)> {
    http_with_body(address, method, path, "")
}

/// A minimal HTTP/1.1 request with a JSON body; `(status, JSON answer or null)`.
pub fn http_json(address: &str, method: &str, path: &str, body: &serde_json::Value) -> Result<(u16, serde_json::Value)> {
    let (status, text) = http_with_body(address, method, path, &body.to_string())?;
    Ok((status, serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)))
}

fn http_with_body(address: &str, method: &str, path: &str, body: &str) -> Result<(u16, String)> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status: u16 = response.split(' ').nth(1).context("status line")?.parse()?;
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    Ok((status, body.to_owned()))
}

/// Opens `GET /v1/events` and returns a reader of its raw lines, once the response headers
/// arrived (so the server has subscribed: every event from now on is in the stream).
pub fn event_stream(address: &str) -> Result<std::io::BufReader<TcpStream>> {
    use std::io::BufRead;
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    write!(stream, "GET /v1/events HTTP/1.1\r\nHost: {address}\r\n\r\n")?;
    let mut reader = std::io::BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            return Ok(reader);
        }
    }
}

/// Uploads a component through the admin API; `(status, response text)`.
pub fn upload_plugin(address: &str, name: &str, version: &str, bytes: &[u8]) -> Result<(u16, String)> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    write!(
        stream,
        "POST /v1/plugins?name={name}&version={version} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/wasm\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        bytes.len()
    )?;
    stream.write_all(bytes)?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response.split(' ').nth(1).context("status line")?.parse()?;
    Ok((status, response))
}

/// A built-in plugin's component bytes (embedded by `turnpike-builtins`).
pub fn builtin(name: &str) -> Result<Vec<u8>> {
    Ok(turnpike_builtins::get(name).context("no such built-in")?.wasm.to_vec())
}

/// Runs the CLI with `token` as `TURNPIKE_TOKEN` (none: no token at all, not even from a
/// config file); `(exit code, stdout, stderr)`.
pub fn turnpike_cli(args: &[&str], token: Option<&str>) -> Result<(i32, String, String)> {
    let mut command = Command::new(turnpike_bin());
    command.args(args).env_remove("TURNPIKE_TOKEN").env("XDG_CONFIG_HOME", std::env::temp_dir().join(unique("no-config")));
    if let Some(token) = token {
        command.env("TURNPIKE_TOKEN", token);
    }
    let out = command.output().context("run turnpike")?;
    Ok((out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned()))
}

/// Waits until `GET /healthz` answers.
pub fn wait_healthy(host: &HostProcess) -> Result<()> {
    let healthy = wait_until("GET /healthz to answer 200", Duration::from_secs(120), || {
        Ok((http(&host.admin, "GET", "/healthz").map(|r| r.0).unwrap_or(0) == 200).then_some(()))
    });
    healthy.with_context(|| format!("host never served; log:\n{}", host.log_text()))
}

/// One fixture from `tests/components` (`faulty`, `tagger`, `wrong_world`, `partition_sink`),
/// embedded by `turnpike-test-components`.
pub fn fixture(name: &str) -> Result<Vec<u8>> {
    Ok(turnpike_test_components::get(name).with_context(|| format!("no test fixture {name}"))?.to_vec())
}

/// A fixture written to a file, for configs that name a plugin by path.
pub fn fixture_file(name: &str) -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("turnpike-fixtures-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{name}.wasm"));
    std::fs::write(&path, fixture(name)?)?;
    Ok(path)
}

/// The fault fixtures as files: `(faulty.wasm, wrong_world.wasm)`.
pub fn fixtures() -> Result<(PathBuf, PathBuf)> {
    Ok((fixture_file("faulty")?, fixture_file("wrong_world")?))
}

/// A host config with no connectors (they are added through the API), on the test broker,
/// with the admin API on a free port.
pub fn bare_host_config() -> String {
    format!("kafka:\n  bootstrap.servers: {}\n  session.timeout.ms: 6000\nadmin:\n  listen: 127.0.0.1:{}\n", bootstrap(), free_port())
}

/// A host config for connectors (a YAML list), on the test broker, admin API on `port`.
pub fn host_config(port: u16, connector_yaml: &str) -> String {
    host_config_with(port, "", connector_yaml)
}

/// Like [`host_config`], with extra top-level sections (`plugins:`, `sandbox:`).
pub fn host_config_with(port: u16, sections: &str, connector_yaml: &str) -> String {
    let indented: String = connector_yaml.lines().map(|l| format!("  {l}\n")).collect();
    format!(
        "kafka:\n  bootstrap.servers: {}\n  session.timeout.ms: 6000\nadmin:\n  listen: 127.0.0.1:{port}\n{sections}connectors:\n{indented}",
        bootstrap()
    )
}
