//! One connector's throughput at `tasks: 1, 2, 4` on this machine's cores: a CPU-bound
//! plugin (pii-mask on ~340-byte JSON records) over a 12-partition topic preloaded with the
//! same records for each run; records/s from the first record read until every record is
//! acknowledged, and the ratio to `tasks: 1` from the same run.
//!
//! Run with `TURNPIKE_BENCH_BOOTSTRAP=host:port cargo bench -p turnpike-bench --bench tasks`
//! against a real broker (`tests/kafka/kafka.sh start .cache/kafka-run` prints one); without
//! it the embedded mock broker is used, whose own cost in this process hides the plugin's
//! (14 k records/s at any task count here).

use std::time::Duration;

use turnpike_config::{HostConfig, KafkaSettings, PluginName};
use turnpike_bench::broker::{create_topics, order, preload, wait_written};
use turnpike_kafka::{EmbeddedBroker, Producer};
use turnpike_pipeline::{Host, Runtime, SandboxConfig};

/// Records preloaded per run.
const RECORDS: u64 = 100_000;
/// Partitions of the input topic.
const PARTITIONS: i32 = 12;

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let embedded = match std::env::var("TURNPIKE_BENCH_BOOTSTRAP") {
        Ok(_) => None,
        Err(_) => Some(EmbeddedBroker::start()?),
    };
    let bootstrap = embedded.as_ref().map_or_else(|| std::env::var("TURNPIKE_BENCH_BOOTSTRAP").unwrap_or_default(), EmbeddedBroker::bootstrap_servers);
    let kafka = KafkaSettings::bootstrap(bootstrap.clone()).pairs();
    let run_id = std::process::id();
    let host = Host::new(Runtime::new()?, kafka.clone(), SandboxConfig::default());
    let pii_mask = turnpike_builtins::get("pii-mask").ok_or_else(|| anyhow::anyhow!("pii-mask is built in"))?.wasm.to_vec();
    host.load_plugin(PluginName::parse("pii-mask")?, "1".into(), pii_mask).await?;
    let producer = Producer::new(&kafka)?;
    let sample = order(123_456);
    let broker_kind = if embedded.is_some() { "embedded mock broker" } else { "real broker" };
    println!("tasks: {RECORDS} records of ~{} bytes on {PARTITIONS} partitions, pii-mask hashing 4 fields, {broker_kind} {bootstrap}, {} cores", sample.len(), std::thread::available_parallelism().map_or(0, |n| n.get()));

    let mut baseline = None;
    for tasks in [1u64, 2, 4] {
        let topic = format!("bench-tasks-{run_id}-in-{tasks}");
        let output = format!("bench-tasks-{run_id}-out-{tasks}");
        create_topics(&bootstrap, &[topic.clone(), output.clone()], PARTITIONS).await?;
        preload(&producer, &topic, RECORDS, order).await?;
        let name = format!("wide-{run_id}-{tasks}");
        let yaml = format!(
            "name: {name}\ntopics: [{topic}]\noutput_topic: {output}\ntasks: {tasks}\ntransforms:\n  - plugin: pii-mask\n    config: {{ default_mode: hash, fields: [customer.email, customer.phone, customer.name, customer.address] }}\n"
        );
        host.put_connector(HostConfig::parse_connector_yaml(&yaml, "bench")?).await?;
        // From the first record read: the start (the first run compiles pii-mask, every run
        // joins its group) is not the throughput of its tasks.
        let flow = wait_written(&host, &name, RECORDS, Duration::from_secs(120)).await?;
        let rate = RECORDS as f64 / flow.first_read.elapsed().as_secs_f64();
        let ratio = rate / *baseline.get_or_insert(rate);
        let cpu = host.status(&name).map_or(0.0, |s| s.plugin_cpu_seconds);
        println!("tasks: {tasks}: {:>9.0} records/s  {:>6.1} MB/s  {ratio:.2}× tasks: 1  (plugin CPU {cpu:.1} s)", rate, rate * sample.len() as f64 / 1e6);
        host.delete_connector(&name).await?;
    }
    turnpike_bench::shut_down(&host).await?;
    Ok(())
}
