//! One connector's throughput at `tasks: 1, 2, 4` on this machine's cores: a CPU-bound
//! plugin (pii-mask on ~420-byte JSON records) over a 12-partition topic preloaded with the
//! same records for each run; records/s until every record is acknowledged, and the ratio to
//! `tasks: 1` from the same run.
//!
//! Run with `TURNPIKE_BENCH_BOOTSTRAP=host:port cargo bench -p turnpike-bench --bench tasks`
//! against a real broker (`tests/kafka/kafka.sh start .cache/kafka-run` prints one); without
//! it the embedded mock broker is used, whose own cost in this process hides the plugin's
//! (14 k records/s at any task count here).

use std::time::{Duration, Instant};

use turnpike_config::{HostConfig, KafkaSettings, PluginName};
use turnpike_kafka::{EmbeddedBroker, OutgoingRecord, Producer};
use turnpike_pipeline::{Host, Runtime, SandboxConfig};

/// Records preloaded per run.
const RECORDS: u64 = 100_000;
/// Partitions of the input topic.
const PARTITIONS: i32 = 12;

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(run())
}

/// A ~420-byte JSON record with fields pii-mask has work to do on.
fn record(i: u64) -> String {
    format!(
        r#"{{"id":{i},"customer":{{"name":"Customer Number {i}","email":"customer{i}@example.com","phone":"+44 20 7946 {:04}","address":"{} Long Street, Springfield"}},"order":{{"sku":"SKU-{:06}","quantity":{},"price_cents":{},"notes":"please leave the parcel with the neighbour if nobody is at home, thank you"}},"ts":"2026-12-02T10:00:00Z"}}"#,
        i % 10_000,
        i % 500,
        i % 999_983,
        i % 7 + 1,
        1_000 + i % 50_000
    )
}

fn rdkafka_admin(bootstrap: &str) -> anyhow::Result<rdkafka::admin::AdminClient<rdkafka::client::DefaultClientContext>> {
    Ok(rdkafka::config::ClientConfig::new().set("bootstrap.servers", bootstrap).create()?)
}

async fn create_topics(admin: &rdkafka::admin::AdminClient<rdkafka::client::DefaultClientContext>, names: &[&str]) -> anyhow::Result<()> {
    use rdkafka::admin::{AdminOptions, NewTopic, TopicReplication};
    let topics: Vec<NewTopic<'_>> = names.iter().map(|n| NewTopic::new(n, PARTITIONS, TopicReplication::Fixed(1))).collect();
    for result in admin.create_topics(&topics, &AdminOptions::new()).await? {
        result.map_err(|(topic, code)| anyhow::anyhow!("creating {topic}: {code}"))?;
    }
    Ok(())
}

async fn run() -> anyhow::Result<()> {
    let embedded = match std::env::var("TURNPIKE_BENCH_BOOTSTRAP") {
        Ok(_) => None,
        Err(_) => Some(EmbeddedBroker::start()?),
    };
    let bootstrap = embedded.as_ref().map_or_else(|| std::env::var("TURNPIKE_BENCH_BOOTSTRAP").unwrap_or_default(), EmbeddedBroker::bootstrap_servers);
    let kafka = KafkaSettings::bootstrap(bootstrap.clone()).pairs();
    let admin = rdkafka_admin(&bootstrap)?;
    let run_id = std::process::id();
    let host = Host::new(Runtime::new()?, kafka.clone(), SandboxConfig::default());
    let pii_mask = turnpike_builtins::get("pii-mask").ok_or_else(|| anyhow::anyhow!("pii-mask is built in"))?.wasm.to_vec();
    host.load_plugin(PluginName::parse("pii-mask")?, "1".into(), pii_mask).await?;
    let producer = Producer::new(&kafka)?;
    let sample = record(123_456);
    let broker_kind = if embedded.is_some() { "embedded mock broker" } else { "real broker" };
    println!("tasks: {RECORDS} records of ~{} bytes on {PARTITIONS} partitions, pii-mask hashing 4 fields, {broker_kind} {bootstrap}, {} cores", sample.len(), std::thread::available_parallelism().map_or(0, |n| n.get()));

    let mut baseline = None;
    for tasks in [1u64, 2, 4] {
        let topic = format!("bench-tasks-{run_id}-in-{tasks}");
        let output = format!("bench-tasks-{run_id}-out-{tasks}");
        create_topics(&admin, &[&topic, &output]).await?;
        let mut pending = Vec::with_capacity(RECORDS as usize);
        for i in 0..RECORDS {
            let value = record(i);
            let key = i.to_string();
            pending.push(producer.send(OutgoingRecord { topic: &topic, key: Some(key.as_bytes()), value: Some(value.as_bytes()), timestamp: None }, []).await?);
        }
        for delivery in pending {
            delivery.wait().await?;
        }
        let name = format!("wide-{run_id}-{tasks}");
        let yaml = format!(
            "name: {name}\ntopics: [{topic}]\noutput_topic: {output}\ntasks: {tasks}\ntransforms:\n  - plugin: pii-mask\n    config: {{ default_mode: hash, fields: [customer.email, customer.phone, customer.name, customer.address] }}\n"
        );
        let began = Instant::now();
        host.put_connector(HostConfig::parse_connector_yaml(&yaml, "bench")?).await?;
        loop {
            let status = host.status(&name).ok_or_else(|| anyhow::anyhow!("{name} vanished"))?;
            if status.records_out >= RECORDS {
                break;
            }
            if let Some(error) = status.error {
                anyhow::bail!("{name} failed: {}", error.message);
            }
            if began.elapsed() > Duration::from_secs(120) {
                anyhow::bail!("{name}: only {} of {RECORDS} records out ({} in) after 2 minutes: {status:?}", status.records_out, status.records_in);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let rate = RECORDS as f64 / began.elapsed().as_secs_f64();
        let ratio = rate / *baseline.get_or_insert(rate);
        let cpu = host.status(&name).map_or(0.0, |s| s.plugin_cpu_seconds);
        println!("tasks: {tasks}: {:>9.0} records/s  {:>6.1} MB/s  {ratio:.2}× tasks: 1  (plugin CPU {cpu:.1} s)", rate, rate * sample.len() as f64 / 1e6);
        host.delete_connector(&name).await?;
    }
    host.shutdown().await;
    Ok(())
}
