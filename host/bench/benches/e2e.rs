//! End to end on a real broker: a topic preloaded with ~340-byte JSON orders is read and
//! written to another topic by
//!  (a) a plain librdkafka consume → produce loop in this process, with the host's delivery
//!      settings (acks=all, idempotence, linger 5 ms), batches of 500 or 20 ms, at most 8
//!      batches unacknowledged, offsets committed once a second after acknowledgements;
//!  (b) a Turnpike identity connector, (c) a pii-mask connector (four fields hashed), and
//!  (d) the same pii-mask connector with `tasks: 2` (one per core here);
//! all from the same broker in the same run, beside the produce-only rate of the same
//! records (the preload) as the ceiling. Each rate counts from a reader's first output to its
//! last acknowledged one, so group joins are left out. Then latency, produce → output
//! readable, at 1,000 and 10,000 records/s for (a) and for (b) at `batch.max_wait_ms` 5, 20
//! (the default) and 100: p50, p99 and the largest.
//!
//! Run with `cargo bench -p turnpike-bench --bench e2e` (or all benches at once, as the README's
//! figures were made: `host/bench/report.sh`): it starts the project's test broker
//! (tests/kafka/kafka.sh), or uses `TURNPIKE_BENCH_BOOTSTRAP=host:port`.
//! `TURNPIKE_BENCH_RECORDS` sets the records (default 1,000,000).

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use rdkafka::consumer::{CommitMode, Consumer as _, StreamConsumer};
use rdkafka::message::Message as _;
use rdkafka::producer::{DeliveryFuture, FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};
use turnpike_bench::broker::{create_topics, order, preload, wait_written, BenchBroker};
use turnpike_config::{HostConfig, KafkaSettings, PluginName};
use turnpike_kafka::Producer;
use turnpike_pipeline::{Host, Runtime, SandboxConfig};

/// pii-mask hashing four fields of an order, as a transform step's tail in YAML.
const PII_MASK: &str = "pii-mask\n    config: { default_mode: hash, fields: [customer.email, customer.phone, customer.name, customer.address] }";

/// Partitions of the input topic (enough for the tasks to share).
const PARTITIONS: i32 = 12;
/// The host's batch defaults (`batch.max_records`, `batch.max_wait_ms`) and its window of
/// unacknowledged batches, which the plain loop copies.
const BATCH_RECORDS: usize = 500;
const BATCH_WAIT: Duration = Duration::from_millis(20);
const IN_FLIGHT_BATCHES: usize = 8;
/// How often the host commits what is acknowledged.
const COMMIT_EVERY: Duration = Duration::from_secs(1);

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let broker = BenchBroker::get()?;
    let bootstrap = broker.bootstrap.clone();
    let records: u64 = std::env::var("TURNPIKE_BENCH_RECORDS").ok().and_then(|n| n.parse().ok()).unwrap_or(1_000_000);
    let kafka = KafkaSettings::bootstrap(bootstrap.clone()).pairs();
    let run_id = std::process::id();
    let input = format!("bench-e2e-{run_id}-in");
    create_topics(&bootstrap, std::slice::from_ref(&input), PARTITIONS).await?;
    let bytes = order(123_456).len() as f64;
    println!("e2e: {records} records of ~{bytes:.0} bytes on {PARTITIONS} partitions, real broker {bootstrap}, {} cores", std::thread::available_parallelism().map_or(0, |n| n.get()));
    let line = |what: &str, rate: f64, ceiling: f64, raw: Option<f64>| {
        let vs_raw = raw.map_or(String::new(), |raw| format!("  {:.2}× the plain loop", rate / raw));
        println!("e2e: {what:<34} {rate:>9.0} records/s {:>6.1} MB/s  {:.2}× produce-only{vs_raw}", rate * bytes / 1e6, rate / ceiling);
    };

    let producer = Producer::new(&kafka)?;
    let began = Instant::now();
    preload(&producer, &input, records, order).await?;
    let ceiling = records as f64 / began.elapsed().as_secs_f64();
    line("produce only (the ceiling)", ceiling, ceiling, None);

    let raw_output = format!("bench-e2e-{run_id}-raw");
    let readers = [("(b) Turnpike identity", 1, "identity"), ("(c) Turnpike pii-mask", 1, PII_MASK), ("(d) Turnpike pii-mask, tasks: 2", 2, PII_MASK)];
    let names: Vec<String> = readers.iter().map(|(label, _, _)| format!("e2e-{run_id}-{}", label.chars().nth(1).unwrap_or('x'))).collect();
    // Every output topic exists before its reader starts: none is created on a first send.
    let outputs: Vec<String> = names.iter().map(|name| format!("{name}-out")).chain([raw_output.clone()]).collect();
    create_topics(&bootstrap, &outputs, PARTITIONS).await?;

    let raw = plain_loop(&bootstrap, &input, &raw_output, records).await?;
    line("(a) plain librdkafka loop", raw, ceiling, None);

    let host = Host::new(Runtime::new()?, kafka.clone(), SandboxConfig::default());
    for name in ["identity", "pii-mask"] {
        let wasm = turnpike_builtins::get(name).with_context(|| format!("{name} is built in"))?.wasm.to_vec();
        host.load_plugin(PluginName::parse(name)?, "1".into(), wasm).await?;
    }
    for ((label, tasks, plugin), name) in readers.into_iter().zip(&names) {
        let yaml = format!("name: {name}\ntopics: [{input}]\noutput_topic: {name}-out\ntasks: {tasks}\ntransforms:\n  - plugin: {plugin}\n");
        host.put_connector(HostConfig::parse_connector_yaml(&yaml, "bench")?).await?;
        // From the first record read, as for the plain loop.
        let flow = wait_written(&host, name, records, Duration::from_secs(600)).await?;
        let rate = records as f64 / flow.first_read.elapsed().as_secs_f64();
        line(label, rate, ceiling, Some(raw));
        host.delete_connector(name).await?;
    }

    // Latency: produce → output available, at a steady rate, for the plain loop and the
    // identity connector side by side in time (one after the other, the same broker).
    for rate in [1_000u64, 10_000] {
        for reader in [Reader::PlainLoop, Reader::Identity(5), Reader::Identity(20), Reader::Identity(100)] {
            let name = format!("e2e-{run_id}-lat-{rate}-{}", reader.short());
            let (input, output) = (format!("{name}-in"), format!("{name}-out"));
            create_topics(&bootstrap, &[input.clone(), output.clone()], PARTITIONS).await?;
            let total = rate * LATENCY_SECONDS;
            // The feed and the reader of the outputs on tasks of their own, so that neither
            // waits on the reader being measured.
            let feeding = tokio::spawn(steady_feed(producer.clone(), input.clone(), rate, total));
            let reading = tokio::spawn(output_latencies(bootstrap.clone(), output.clone(), total));
            match reader {
                Reader::PlainLoop => {
                    plain_loop(&bootstrap, &input, &output, total).await?;
                }
                Reader::Identity(max_wait_ms) => {
                    let yaml = format!("name: {name}\ntopics: [{input}]\noutput_topic: {output}\nbatch: {{ max_wait_ms: {max_wait_ms} }}\ntransforms:\n  - plugin: identity\n");
                    host.put_connector(HostConfig::parse_connector_yaml(&yaml, "bench")?).await?;
                }
            }
            feeding.await??;
            let ms = reading.await??;
            if matches!(reader, Reader::Identity(_)) {
                host.delete_connector(&name).await?;
            }
            // Records written before the reader's first output plus a second are left out:
            // the reader was joining its group.
            let settled = ms.iter().map(|(produced, latency)| produced + latency).min().unwrap_or(0) + 1_000;
            let mut steady: Vec<i64> = ms.into_iter().filter(|(produced, _)| *produced >= settled).map(|(_, latency)| latency).collect();
            anyhow::ensure!(steady.len() as u64 >= total / 2, "only {} of {total} records came after the reader settled: feed longer", steady.len());
            steady.sort_unstable();
            let at = |q: f64| steady.get(((steady.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(-1);
            println!("e2e: latency at {rate:>6} records/s, {:<30} p50 {:>4} ms  p99 {:>4} ms  max {:>4} ms", reader.label(), at(0.5), at(0.99), at(1.0));
        }
    }
    turnpike_bench::shut_down(&host).await?;
    drop(broker);
    Ok(())
}

/// How long each latency measurement feeds its input.
const LATENCY_SECONDS: u64 = 15;

/// What reads the input in a latency measurement.
#[derive(Clone, Copy)]
enum Reader {
    PlainLoop,
    /// The identity connector with this `batch.max_wait_ms` (the default is 20).
    Identity(u64),
}

impl Reader {
    fn short(self) -> String {
        match self {
            Self::PlainLoop => "raw".to_owned(),
            Self::Identity(wait) => format!("identity-{wait}"),
        }
    }

    fn label(self) -> String {
        match self {
            Self::PlainLoop => "plain librdkafka loop".to_owned(),
            Self::Identity(wait) => format!("identity, max_wait {wait} ms"),
        }
    }
}

/// Writes `total` orders to `topic` at `rate` records/s, a millisecond's worth every
/// millisecond (steady, not in bursts that would fill batches at once), each stamped with
/// the time it was handed to the producer.
async fn steady_feed(producer: Producer, topic: String, rate: u64, total: u64) -> anyhow::Result<()> {
    let topic = topic.as_str();
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    let mut pending = Vec::new();
    let mut i = 0;
    while i < total {
        tick.tick().await;
        // At 1,000/s one record every millisecond (rates are multiples of 1,000).
        for _ in 0..(rate / 1000).max(1).min(total - i) {
            let (key, value) = (i.to_string(), order(i));
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_millis() as i64;
            pending.push(producer.send(turnpike_kafka::OutgoingRecord { topic, key: Some(key.as_bytes()), value: Some(value.as_bytes()), timestamp: Some(now) }, []).await?);
            i += 1;
        }
    }
    for delivery in pending {
        delivery.wait().await?;
    }
    Ok(())
}

/// Reads `topic` until `total` records came out: for each, when its input was produced (its
/// timestamp is the input's, in ms since the epoch) and how long after that it was read.
async fn output_latencies(bootstrap: String, topic: String, total: u64) -> anyhow::Result<Vec<(i64, i64)>> {
    let (bootstrap, topic) = (bootstrap.as_str(), topic.as_str());
    let consumer: StreamConsumer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("{topic}-latency"))
        .set("auto.offset.reset", "earliest")
        .set("fetch.wait.max.ms", "5")
        .create()?;
    consumer.subscribe(&[topic])?;
    let mut by_key = vec![(0i64, -1i64); total as usize];
    let mut seen = 0;
    let deadline = Instant::now() + Duration::from_secs(LATENCY_SECONDS * 6 + 60);
    while seen < total {
        anyhow::ensure!(Instant::now() < deadline, "{topic}: {seen} of {total} outputs");
        let Ok(m) = tokio::time::timeout(Duration::from_secs(1), consumer.recv()).await else { continue };
        let m = m?;
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_millis() as i64;
        let key: Option<usize> = m.key().and_then(|k| std::str::from_utf8(k).ok()).and_then(|k| k.parse().ok());
        let (Some(key), Some(produced)) = (key, m.timestamp().to_millis()) else { continue };
        if let Some(slot) = by_key.get_mut(key).filter(|slot| slot.1 < 0) {
            *slot = (produced, now - produced);
            seen += 1;
        }
    }
    Ok(by_key)
}

/// Reads `input` from its start and writes every record to `output` as the host does (see
/// the module comment), until `records` are acknowledged. Records/s from the first record
/// read to the last acknowledgement.
async fn plain_loop(bootstrap: &str, input: &str, output: &str, records: u64) -> anyhow::Result<f64> {
    let consumer: StreamConsumer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("{output}-group"))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .create()?;
    consumer.subscribe(&[input])?;
    let producer: FutureProducer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .create()?;
    let mut in_flight: VecDeque<(Vec<DeliveryFuture>, BTreeMap<i32, i64>)> = VecDeque::new();
    let (mut read, mut acknowledged) = (0u64, 0u64);
    let mut began = None;
    let (mut safe, mut last_commit) = (BTreeMap::new(), Instant::now());
    while acknowledged < records {
        if read < records {
            let mut deliveries = Vec::with_capacity(BATCH_RECORDS);
            let mut next_offsets = BTreeMap::new();
            let first = tokio::time::timeout(Duration::from_secs(30), consumer.recv())
                .await
                .with_context(|| format!("{input}: no record for 30 s after {read} of {records}"))??;
            began.get_or_insert_with(Instant::now);
            let deadline = tokio::time::Instant::now() + BATCH_WAIT;
            let mut message = Some(first);
            while let Some(m) = message.take() {
                let mut record = FutureRecord::<[u8], [u8]>::to(output);
                if let Some(key) = m.key() {
                    record = record.key(key);
                }
                if let Some(value) = m.payload() {
                    record = record.payload(value);
                }
                if let Some(ts) = m.timestamp().to_millis() {
                    record = record.timestamp(ts);
                }
                deliveries.push(send(&producer, record).await?);
                next_offsets.insert(m.partition(), m.offset() + 1);
                read += 1;
                if deliveries.len() < BATCH_RECORDS && read < records {
                    message = tokio::time::timeout_at(deadline, consumer.recv()).await.ok().transpose()?;
                }
            }
            in_flight.push_back((deliveries, next_offsets));
        }
        if in_flight.len() >= IN_FLIGHT_BATCHES || read >= records {
            let Some((deliveries, next_offsets)) = in_flight.pop_front() else { break };
            acknowledged += deliveries.len() as u64;
            for delivery in deliveries {
                delivery.await?.map_err(|(e, _)| e)?;
            }
            safe.extend(next_offsets);
            // As the host does: progress saved once a second (and at the end), not per batch.
            if last_commit.elapsed() >= COMMIT_EVERY || acknowledged >= records {
                let mut offsets = TopicPartitionList::new();
                for (partition, next) in &safe {
                    offsets.add_partition_offset(input, *partition, Offset::Offset(*next))?;
                }
                consumer.commit(&offsets, CommitMode::Async)?;
                last_commit = Instant::now();
            }
        }
    }
    Ok(records as f64 / began.map_or(0.0, |b| b.elapsed().as_secs_f64()))
}

/// Hands a record to the producer, waiting while its queue is full (as the host does).
async fn send<'a>(producer: &FutureProducer, mut record: FutureRecord<'a, [u8], [u8]>) -> anyhow::Result<DeliveryFuture> {
    loop {
        match producer.send_result(record) {
            Ok(delivery) => return Ok(delivery),
            Err((rdkafka::error::KafkaError::MessageProduction(rdkafka::types::RDKafkaErrorCode::QueueFull), back)) => {
                record = back;
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            Err((e, _)) => return Err(e.into()),
        }
    }
}
