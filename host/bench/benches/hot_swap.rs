//! How long a connector's output pauses while it switches plugin versions under steady
//! traffic: the hot-swap stall. Compared with equally long windows without a swap, in the
//! same run. Uses the embedded broker, so it needs no Kafka.
//!
//! Run with `cargo bench -p turnpike-bench --bench hot_swap`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use turnpike_config::{HostConfig, KafkaSettings, PluginName};
use turnpike_kafka::{Consumer, ConsumerOptions, EmbeddedBroker, OutgoingRecord, Producer};
use turnpike_pipeline::{Host, Runtime, SandboxConfig};

/// Records per second fed to the connector.
const RATE: u32 = 5_000;
/// Swaps measured.
const SWAPS: usize = 30;
/// Time between swaps; the middle of each gap is a no-swap baseline window.
const SPACING: Duration = Duration::from_millis(400);

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let broker = EmbeddedBroker::start()?;
    for topic in ["in", "out"] {
        broker.create_topic(topic, 1)?;
    }
    // The embedded broker holds fetches up to `fetch.wait.max.ms` (500 ms by default), which
    // would hide millisecond stalls in 100 ms bursts: keep fetches short for every client.
    let mut kafka = KafkaSettings::bootstrap(broker.bootstrap_servers()).pairs();
    kafka.push(("fetch.wait.max.ms".into(), "2".into()));
    let host = Host::new(Runtime::new()?, kafka.clone(), SandboxConfig::default());
    let identity = turnpike_builtins::get("identity").expect("identity").wasm.to_vec();
    for version in ["1", "2"] {
        host.upload_plugin(PluginName::parse("xf")?, version.into(), identity.clone(), None).await?;
    }
    let connector = |version: &str| {
        HostConfig::parse_connector_yaml(
            &format!("name: swap\ntopics: [in]\noutput_topic: out\nbatch: {{ max_wait_ms: 2 }}\ntransforms:\n  - plugin: xf@{version}\n"),
            "bench",
        )
    };
    host.put_connector(connector("1")?).await?;

    // Arrival times of outputs, and a steady feed of inputs.
    let arrivals = Arc::new(Mutex::new(Vec::<Instant>::new()));
    let reader = {
        let arrivals = arrivals.clone();
        let consumer = Consumer::new(&kafka, &ConsumerOptions { group_id: "bench-reader".into(), start_from: "earliest".into(), topics: vec!["out".into()], ..Default::default() })?;
        tokio::spawn(async move {
            loop {
                let mut n = 0;
                consumer.fill(turnpike_kafka::BatchLimits { records: 10_000, bytes: usize::MAX, wait: Duration::from_millis(1) }, |_| n += 1, std::future::pending()).await;
                if let Some(fatal) = consumer.fatal_error() {
                    panic!("the bench's reader stopped: {fatal}");
                }
                let now = Instant::now();
                arrivals.lock().unwrap_or_else(|p| p.into_inner()).extend(std::iter::repeat_n(now, n));
            }
        })
    };
    let producer = Producer::new(&kafka)?;
    let feeding = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(2));
        loop {
            tick.tick().await;
            for _ in 0..RATE / 500 {
                let record = OutgoingRecord { topic: "in", key: None, value: Some(b"{\"n\":1}"), timestamp: None };
                if producer.send(record, []).await.is_err() {
                    return;
                }
            }
        }
    });

    // Warm up until outputs flow, then swap back and forth.
    while arrivals.lock().unwrap_or_else(|p| p.into_inner()).len() < 2 * RATE as usize {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut swaps = Vec::new();
    let mut quiet = Vec::new();
    for i in 0..SWAPS {
        tokio::time::sleep(SPACING / 2).await;
        let start = Instant::now();
        quiet.push(start - SPACING / 2);
        host.put_connector(connector(if i % 2 == 0 { "2" } else { "1" })?).await?;
        swaps.push((start, start.elapsed()));
        tokio::time::sleep(SPACING / 2).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    feeding.abort();
    reader.abort();

    let arrivals = arrivals.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if let (Some(first), Some(last)) = (arrivals.first(), arrivals.last()) {
        let status = host.status("swap").map(|s| (s.records_in, s.records_out, s.plugins));
        println!("outputs read: {} over {:.1} s; connector (in, out, plugins): {status:?}", arrivals.len(), (*last - *first).as_secs_f64());
    }
    // The longest silence in the output within a window: around each swap (from its request
    // to 100 ms after it answered), and in same-length windows with no swap.
    let silence = |from: Instant, to: Instant| -> Duration {
        let mut last = from;
        let mut longest = Duration::ZERO;
        for &t in arrivals.iter().filter(|&&t| t >= from && t <= to) {
            longest = longest.max(t - last);
            last = t;
        }
        longest.max(to.saturating_duration_since(last))
    };
    let mut during: Vec<Duration> = swaps.iter().map(|&(s, took)| silence(s, s + took + Duration::from_millis(100))).collect();
    let mut baseline: Vec<Duration> = quiet.iter().zip(&swaps).map(|(&q, &(_, took))| silence(q, q + took + Duration::from_millis(100))).collect();
    let took: Vec<Duration> = swaps.iter().map(|&(_, t)| t).collect();
    let mut took_sorted = took.clone();
    let (d50, d99) = p50p99(&mut during);
    let (b50, b99) = p50p99(&mut baseline);
    let (t50, t99) = p50p99(&mut took_sorted);
    println!("\nHot-swap stall at {RATE} records/s, {SWAPS} swaps (identity v1 <-> v2), embedded broker");
    println!("{:<44} {:>10} {:>10} {:>10}", "", "p50 ms", "p99 ms", "max ms");
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("{:<44} {:>10.1} {:>10.1} {:>10.1}", "longest output silence around a swap", ms(d50), ms(d99), ms(*during.last().unwrap()));
    println!("{:<44} {:>10.1} {:>10.1} {:>10.1}", "longest output silence, no swap (baseline)", ms(b50), ms(b99), ms(*baseline.last().unwrap()));
    println!("{:<44} {:>10.1} {:>10.1} {:>10.1}", "PUT answered (new versions running)", ms(t50), ms(t99), ms(*took_sorted.last().unwrap()));
    println!("stall attributable to swapping (p99 minus baseline p99): {:.1} ms", ms(d99.saturating_sub(b99)));
    turnpike_bench::shut_down(&host).await?;
    drop(broker);
    Ok(())
}

fn p50p99(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[(v.len() * 99 / 100).min(v.len() - 1)])
}
