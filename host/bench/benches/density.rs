//! Many idle connectors on one host: what each costs at rest (OS threads, resident memory,
//! CPU), how long they take to reach RUNNING and to shut down, and whether a busy connector
//! beside them is slower than the same connector alone (measured in the same run, best of
//! [`BUSY_ROUNDS`] each, with the CPU the host and the broker spent per record).
//!
//! Run with `cargo bench -p turnpike-bench --bench density`: it starts the project's test
//! broker (tests/kafka/kafka.sh), or uses `TURNPIKE_BENCH_BOOTSTRAP=host:port` (and
//! `TURNPIKE_BENCH_BROKER_PID`, for the broker's CPU, as host/bench/report.sh sets them).
//! `TURNPIKE_BENCH_CONNECTORS` sets how many idle connectors (default 1,000). Each is an
//! identity transform on a topic of its own that nobody writes to. They are measured twice:
//! holding their consumers, then after each gave its consumer up (`batch.idle_after_ms`,
//! `TURNPIKE_BENCH_IDLE_AFTER_MS`, default 60,000). Threads and memory are this process's,
//! which is the host (Linux `/proc/self`); CPU is the host's and, when known, the broker's.
//! `TURNPIKE_BENCH_WINDOWS` set (to anything) prints when each busy run began and ended, as
//! Rust's `Instant` debug text: `tv_sec` and `tv_nsec` of `CLOCK_MONOTONIC`, which
//! `perf record -k CLOCK_MONOTONIC` also stamps samples with (`perf report --time
//! <tv_sec>.<tv_nsec as µs>,…` then keeps one run's samples).

use std::time::{Duration, Instant};

use turnpike_config::{HostConfig, KafkaSettings, PluginName};
use turnpike_bench::broker::{create_topics, preload, wait_written, BenchBroker};
use turnpike_kafka::Producer;
use turnpike_pipeline::{ConnectorState, EngineLimits, Host, Runtime, SandboxConfig};

/// Records through the busy connector in each of its runs.
const BUSY_RECORDS: u64 = 200_000;
/// Runs of the busy connector alone, and again beside the idle ones; the fastest of each
/// counts (the least disturbed by the machine), and every run is printed.
const BUSY_ROUNDS: usize = 3;
/// How long the idle host is watched for its CPU use.
const AT_REST: Duration = Duration::from_secs(20);

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(run())
}

/// Threads and resident memory of this process, from `/proc/self`.
#[derive(Debug, Clone, Copy)]
struct Process {
    threads: u64,
    rss_bytes: u64,
}

fn process() -> anyhow::Result<Process> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let field = |name: &str| -> u64 { status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.split_whitespace().next()).and_then(|v| v.parse().ok()).unwrap_or(0) };
    Ok(Process { threads: field("Threads:"), rss_bytes: field("VmRSS:") * 1024 })
}

/// CPU seconds (user and system) a process used so far: `self` or a pid.
fn cpu_seconds(pid: &str) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces): utime and stime are 14th and
    // 15th of the whole line, in clock ticks of 1/100 s (USER_HZ on Linux).
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    Ok((ticks(11) + ticks(12)) as f64 / 100.0)
}

/// CPU the host (this process) and the broker (when its pid is known) used: seconds so far
/// from [`Cpu::now`], then a rate or a share from [`Cpu::since`].
#[derive(Debug, Clone, Copy)]
struct Cpu {
    host: f64,
    broker: Option<f64>,
}

impl Cpu {
    fn now(broker: Option<u32>) -> anyhow::Result<Self> {
        Ok(Self { host: cpu_seconds("self")?, broker: broker.map(|pid| cpu_seconds(&pid.to_string())).transpose()? })
    }

    /// What each used since `before`, divided by `per`: elapsed seconds give a share of one
    /// core, millions of records give µs per record.
    fn since(self, before: Cpu, per: f64) -> Cpu {
        Cpu { host: (self.host - before.host) / per, broker: self.broker.zip(before.broker).map(|(now, then)| (now - then) / per) }
    }
}

/// CPU the host and the broker used over `span`, in percent of one core.
async fn cpu_percent_over(span: Duration, broker: Option<u32>) -> anyhow::Result<Cpu> {
    let before = Cpu::now(broker)?;
    let began = Instant::now();
    tokio::time::sleep(span).await;
    let used = Cpu::now(broker)?.since(before, began.elapsed().as_secs_f64());
    Ok(Cpu { host: used.host * 100.0, broker: used.broker.map(|b| b * 100.0) })
}

/// The broker's share, for a report line.
fn broker_text(percent: Option<f64>) -> String {
    percent.map_or_else(|| "broker not measured".to_owned(), |b| format!("the broker {b:.1} %"))
}

/// Waits until `names` are all RUNNING.
async fn all_running(host: &Host, names: &[String], within: Duration) -> anyhow::Result<()> {
    let began = Instant::now();
    loop {
        let running = host.statuses().iter().filter(|s| s.state == ConnectorState::Running && names.contains(&s.name)).count();
        if running == names.len() {
            return Ok(());
        }
        anyhow::ensure!(began.elapsed() < within, "{running} of {} connectors RUNNING after {within:?}", names.len());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until every task of `names` gave its consumer up.
async fn all_idle(host: &Host, names: &[String], within: Duration) -> anyhow::Result<()> {
    let began = Instant::now();
    loop {
        let idle = host.statuses().iter().filter(|s| names.contains(&s.name) && !s.tasks.is_empty() && s.tasks.iter().all(|t| t.idle)).count();
        if idle == names.len() {
            return Ok(());
        }
        anyhow::ensure!(began.elapsed() < within, "{idle} of {} connectors idle after {within:?}", names.len());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// One run of the busy connector: its rate, and the CPU the host and the broker spent per
/// record (from creating the connector to its last record written, so with the group join
/// and whatever else each was doing meanwhile: beside the idle connectors, their share too).
#[derive(Debug, Clone, Copy)]
struct Busy {
    records_per_second: f64,
    /// Microseconds of CPU per record.
    cpu_per_record: Cpu,
}

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let broker = self.cpu_per_record.broker.map_or_else(|| "not measured".to_owned(), |b| format!("{b:.1} µs"));
        write!(f, "{:.0} records/s, CPU per record: host {:.1} µs, broker {broker}", self.records_per_second, self.cpu_per_record.host)
    }
}

/// Where the busy connector runs: the host, the broker and a producer to preload its topic.
struct BusyBench<'a> {
    host: &'a Host,
    bootstrap: &'a str,
    broker: Option<u32>,
    producer: &'a Producer,
}

impl BusyBench<'_> {
    /// Preloads a topic and times one pii-mask connector through it: records/s from its
    /// first output to its last, so the group join before it does not count in the rate. The
    /// CPU is from creating the connector to its last output: with the join, and with whatever
    /// else the host and the broker did meanwhile (beside the idle connectors, their share).
    async fn run(&self, label: &str) -> anyhow::Result<Busy> {
        let topic = format!("{label}-in");
        create_topics(self.bootstrap, std::slice::from_ref(&topic), 1).await?;
        preload(self.producer, &topic, BUSY_RECORDS, |i| turnpike_bench::customer(i as usize)).await?;
        let yaml = format!("name: {label}\ntopics: [{topic}]\noutput_topic: {label}-out\ntransforms:\n  - plugin: pii-mask\n    config: {{ fields: [email] }}\n");
        let before = Cpu::now(self.broker)?;
        let window = Instant::now();
        self.host.put_connector(HostConfig::parse_connector_yaml(&yaml, "bench")?).await?;
        let flow = wait_written(self.host, label, BUSY_RECORDS, Duration::from_secs(180)).await?;
        let records_per_second = BUSY_RECORDS.saturating_sub(flow.written_then) as f64 / flow.first_written.elapsed().as_secs_f64();
        let cpu = Cpu::now(self.broker)?.since(before, BUSY_RECORDS as f64 / 1e6);
        if std::env::var_os("TURNPIKE_BENCH_WINDOWS").is_some() {
            eprintln!("window {label} {window:?} {:?}", Instant::now());
        }
        self.host.delete_connector(label).await?;
        Ok(Busy { records_per_second, cpu_per_record: cpu })
    }

    /// [`BUSY_ROUNDS`] runs, each printed; the fastest.
    async fn best_of(&self, label: &str, what: &str) -> anyhow::Result<Busy> {
        let mut best: Option<Busy> = None;
        for round in 1..=BUSY_ROUNDS {
            let busy = self.run(&format!("{label}-{round}")).await?;
            println!("density: busy pii-mask connector {what}, run {round}: {busy}");
            if best.is_none_or(|b| busy.records_per_second > b.records_per_second) {
                best = Some(busy);
            }
        }
        best.ok_or_else(|| anyhow::anyhow!("no busy run"))
    }
}

async fn run() -> anyhow::Result<()> {
    let broker = BenchBroker::get()?;
    let bootstrap = broker.bootstrap.clone();
    let count: usize = std::env::var("TURNPIKE_BENCH_CONNECTORS").ok().and_then(|n| n.parse().ok()).unwrap_or(1_000);
    // How long the idle connectors hold their consumer: long enough to measure them holding
    // it first (the default, 60 s).
    let idle_after_ms: u64 = std::env::var("TURNPIKE_BENCH_IDLE_AFTER_MS").ok().and_then(|n| n.parse().ok()).unwrap_or(60_000);
    let mut kafka = KafkaSettings::bootstrap(bootstrap.clone()).pairs();
    // Extra librdkafka settings to compare (`name=value,name=value`), as a host's `kafka:`.
    let extra = std::env::var("TURNPIKE_BENCH_KAFKA").unwrap_or_default();
    kafka.extend(extra.split(',').filter_map(|pair| pair.split_once('=')).map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())));
    let mut sandbox = SandboxConfig::default();
    sandbox.max_instances = (count as u64 + 10).try_into()?;
    sandbox.max_total_memory_mib = (count as u64 * 16 + 1024).try_into()?;
    // As `turnpike run` does: the engine's instance pool sized by `sandbox.max_instances`.
    let engine = EngineLimits { max_instances: u32::try_from(sandbox.max_instances.get())?, ..EngineLimits::default() };
    let host = Host::new(Runtime::with_limits(&engine)?, kafka.clone(), sandbox);
    for name in ["identity", "pii-mask"] {
        let wasm = turnpike_builtins::get(name).ok_or_else(|| anyhow::anyhow!("{name} is built in"))?.wasm.to_vec();
        host.load_plugin(PluginName::parse(name)?, "1".into(), wasm).await?;
    }
    let producer = Producer::new(&kafka)?;
    let run_id = std::process::id();
    println!("density: {count} idle identity connectors, real broker {bootstrap}, {} cores, extra settings {extra:?}", std::thread::available_parallelism().map_or(0, |n| n.get()));

    // Once first, not counted: the first busy run also warms the host and the broker up (the
    // plugin's first calls, the producer's first connections), and ran faster beside the idle
    // connectors than alone (1.15-1.44x in three runs) when it was the one counted as alone.
    let busy = BusyBench { host: &host, bootstrap: &bootstrap, broker: broker.pid, producer: &producer };
    busy.run(&format!("bench-density-{run_id}-warm-up")).await?;
    let alone = busy.best_of(&format!("bench-density-{run_id}-alone"), "alone").await?;
    let empty = process()?;
    let empty_cpu = cpu_percent_over(Duration::from_secs(5), broker.pid).await?;

    let topics: Vec<String> = (0..count).map(|i| format!("bench-density-{run_id}-{i}")).collect();
    create_topics(&bootstrap, &topics, 1).await?;
    let names: Vec<String> = (0..count).map(|i| format!("idle-{i}")).collect();
    let began = Instant::now();
    for (name, topic) in names.iter().zip(&topics) {
        let yaml = format!("name: {name}\ntopics: [{topic}]\noutput_topic: bench-density-{run_id}-out\nlimits: {{ memory_mib: 16 }}\nbatch: {{ idle_after_ms: {idle_after_ms} }}\ntransforms:\n  - plugin: identity\n");
        host.put_connector(HostConfig::parse_connector_yaml(&yaml, "bench")?).await?;
    }
    all_running(&host, &names, Duration::from_secs(300)).await?;
    let started = began.elapsed();
    // Let the groups settle (joins, first fetches) before watching the host at rest.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let idle_cpu = cpu_percent_over(AT_REST, broker.pid).await?;
    let idle = process()?;
    let per = |total: f64, base: f64| (total - base) / count as f64;
    println!(
        "density: host before the idle connectors: {} threads, {:.0} MiB RSS, {:.1} % of a core at rest ({})",
        empty.threads,
        empty.rss_bytes as f64 / 1048576.0,
        empty_cpu.host,
        broker_text(empty_cpu.broker)
    );
    let report = |phase: &str, at: &Process, cpu: Cpu| {
        println!(
            "density: {count} idle, {phase}: {} threads ({:.2} per connector), {:.0} MiB RSS ({:.2} MiB per connector), {:.1} % of a core at rest ({:.3} % per connector; {})",
            at.threads,
            per(at.threads as f64, empty.threads as f64),
            at.rss_bytes as f64 / 1048576.0,
            per(at.rss_bytes as f64, empty.rss_bytes as f64) / 1048576.0,
            cpu.host,
            per(cpu.host, empty_cpu.host),
            broker_text(cpu.broker),
        );
    };
    println!("density: all {count} RUNNING after {:.1} s", started.as_secs_f64());
    report("each holding its consumer", &idle, idle_cpu);

    // Then each gives its consumer up (`batch.idle_after_ms`) and the host's one idle watch
    // reads their partitions.
    let began = Instant::now();
    all_idle(&host, &names, Duration::from_millis(idle_after_ms) + Duration::from_secs(300)).await?;
    println!("density: all {count} gave their consumer up {:.1} s after the first measurement", began.elapsed().as_secs_f64());
    tokio::time::sleep(Duration::from_secs(5)).await;
    let idle_cpu = cpu_percent_over(AT_REST, broker.pid).await?;
    let idle = process()?;
    report("each consumer given up (the idle watch reads their partitions)", &idle, idle_cpu);

    // The busy connector again, beside them, before anything else changes the broker's state.
    let beside = busy.best_of(&format!("bench-density-{run_id}-beside"), &format!("beside {count} idle")).await?;
    println!(
        "density: busy pii-mask connector, best of {BUSY_ROUNDS}: alone {:.0} records/s, beside {count} idle {:.0} records/s: {:.2}× alone",
        alone.records_per_second,
        beside.records_per_second,
        beside.records_per_second / alone.records_per_second
    );

    // The design before: a producer per connector. The same number of producers, with the
    // same settings, added to the same host, show what they cost: against the host as it is
    // now, after the busy runs.
    let base = process()?;
    let base_cpu = cpu_percent_over(Duration::from_secs(5), broker.pid).await?.host;
    let producers = (0..count).map(|_| Producer::new(&kafka)).collect::<Result<Vec<_>, _>>()?;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let with_producers_cpu = cpu_percent_over(AT_REST, broker.pid).await?.host;
    let with_producers = process()?;
    println!(
        "density: a producer per connector (as before the host shared one) would add {:.2} threads, {:.2} MiB RSS and {:.3} % of a core at rest per connector ({} threads, {:.0} MiB, {with_producers_cpu:.1} % of a core in all)",
        per(with_producers.threads as f64, base.threads as f64),
        per(with_producers.rss_bytes as f64, base.rss_bytes as f64) / 1048576.0,
        per(with_producers_cpu, base_cpu),
        with_producers.threads,
        with_producers.rss_bytes as f64 / 1048576.0
    );
    // Dropping a producer blocks (it flushes and joins its threads): off the runtime.
    tokio::task::spawn_blocking(move || drop(producers)).await?;

    let began = Instant::now();
    turnpike_bench::shut_down(&host).await?;
    println!("density: shutdown of {count} connectors took {:.1} s", began.elapsed().as_secs_f64());
    Ok(())
}
