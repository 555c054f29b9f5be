//! `turnpike dev`: everything in one process, to see Turnpike work in a minute.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use tokio_util::sync::CancellationToken;
use turnpike_config::{ConnectorConfig, HostConfig, KafkaSettings};
use turnpike_kafka::{BatchLimits, Consumer, ConsumerOptions, EmbeddedBroker, OutgoingRecord, Producer};
use turnpike_pipeline::{Host, Runtime, SandboxConfig};

use crate::demo_data::Customers;
use crate::output::escape;
use crate::serve;

#[derive(Args)]
pub struct DevArgs {
    /// Admin API address.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Customer records generated per second (1 to 1000000).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_RATE)))]
    rate: u32,
    /// Before/after pairs to print.
    #[arg(long, default_value_t = 3)]
    samples: usize,
}

/// The most records per second `--rate` accepts: a tick of 1 µs. The clamp in [`tick_period`]
/// keeps the period above zero even past the parser, since `tokio::time::interval` panics on
/// a zero period.
const MAX_RATE: u32 = 1_000_000;

/// The demo connector, written as a user would write it in a config file.
const DEMO_CONNECTOR: &str = r#"
name: mask-customers
topics: [customers]
output_topic: customers.masked
transforms:
  - plugin: pii-mask@latest
    config:
      fields:
        - { path: email, mode: hash }
        - { path: phone, mode: partial }
        - ssn
        - { path: card.number, mode: partial }
        - address.street
      salt: turnpike-demo
      detectors: [email, phone, credit_card, ssn]
"#;

/// A second demo connector: a source (`datagen`) whose records go through a transform chain
/// into a topic, so `turnpike dev` shows a source next to the transform connector.
const DEMO_SOURCE: &str = r#"
name: orders-gen
output_topic: orders
source:
  plugin: datagen
  poll_interval_ms: 100
  config:
    seed: 7
    key: order_id
    rate_per_sec: 5
    fields:
      - { name: order_id, type: sequence }
      - { name: email, type: email }
      - { name: amount, type: float, min: 1, max: 500 }
      - { name: status, type: one_of, values: [new, paid, shipped] }
transforms:
  - plugin: pii-mask@latest
    config: { fields: [{ path: email, mode: hash }], salt: turnpike-demo }
"#;

/// Where `turnpike dev` keeps compiled built-ins between runs (the user's cache directory, as
/// `XDG_CACHE_HOME` or `~/.cache` names it): the first start compiles them (seconds of CPU),
/// later ones only read them.
fn compiled_cache() -> Option<std::path::PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(std::path::PathBuf::from(v)).filter(|p| p.is_absolute());
    let base = std::env::var_os("XDG_CACHE_HOME").and_then(absolute).or_else(|| std::env::var_os("HOME").and_then(absolute).map(|home| home.join(".cache")))?;
    Some(base.join("turnpike").join("compiled"))
}

pub async fn dev(args: DevArgs) -> Result<()> {
    let broker = EmbeddedBroker::start()?;
    let bootstrap = broker.bootstrap_servers();
    for topic in ["customers", "customers.masked", "orders"] {
        broker.create_topic(topic, 3)?;
    }
    broker.create_topic(turnpike_pipeline::DEFAULT_POSITIONS_TOPIC, 1)?;
    tracing::info!(%bootstrap, "embedded Kafka-compatible broker started (librdkafka mock cluster, in memory)");

    let kafka = KafkaSettings::bootstrap(bootstrap.clone()).pairs();
    let mut host = Host::new(Runtime::new()?, kafka.clone(), SandboxConfig::default());
    if let Some(dir) = compiled_cache() {
        tracing::debug!(dir = %dir.display(), "compiled plugins are kept between runs");
        host = host.compiled_cache(dir);
    }
    let host = Arc::new(host);
    serve::load_builtins(&host).await?;
    for (yaml, what) in [(DEMO_CONNECTOR, "built-in demo connector"), (DEMO_SOURCE, "built-in demo source")] {
        let connector: ConnectorConfig = HostConfig::parse_connector_yaml(yaml, what)?;
        host.put_connector(connector).await?;
    }

    let stop = CancellationToken::new();
    // No authentication in the demo, so loopback only: `turnpike run` with `admin.auth` is
    // how a host is shared.
    let admin = turnpike_config::AdminConfig { listen: args.listen.to_string(), ..Default::default() };
    // No config file: any relative path would be taken from the current directory.
    let api = serve::admin_api(host.clone(), &admin, std::path::Path::new("."), None, stop.clone()).await?;
    let originals = Arc::new(Mutex::new(HashMap::new()));
    let generator = tokio::spawn(generate(Producer::new(&kafka)?, args.rate, originals.clone(), stop.clone()));
    let sampler = tokio::spawn(show_samples(kafka, args.samples, originals, stop.clone()));
    let progress = tokio::spawn(show_progress(host.clone(), stop.clone()));
    println!(
        "\nTurnpike dev is running.\n  Open the console: http://{}/  (mask a topic: http://{}/#/mask)\n  Or the API: curl -s http://{}/v1/connectors\nPress Ctrl-C to stop.\n",
        args.listen, args.listen, args.listen
    );

    serve::shutdown_signal().await;
    println!("\nshutting down: finishing in-flight batches and committing offsets…");
    stop.cancel();
    let _ = generator.await;
    // As `turnpike run` with the default `shutdown_timeout_ms`.
    let stuck = host.shutdown(std::time::Duration::from_millis(turnpike_config::DEFAULT_SHUTDOWN_TIMEOUT_MS)).await;
    if !stuck.is_empty() {
        println!("still stopping after {} ms, left to the exit: {}", turnpike_config::DEFAULT_SHUTDOWN_TIMEOUT_MS, stuck.join(", "));
    }
    let _ = tokio::join!(sampler, progress);
    serve::finish(api).await;
    for s in host.statuses() {
        println!("{}: {:?}, {} records in, {} out", s.name, s.state, s.records_in, s.records_out);
    }
    drop(broker);
    Ok(())
}

/// Writes customers to `customers` at `rate` per second, remembering the first few so the
/// sampler can show them next to their masked versions.
async fn generate(producer: Producer, rate: u32, originals: Arc<Mutex<HashMap<String, String>>>, stop: CancellationToken) {
    let mut customers = Customers::new(42);
    let mut tick = tokio::time::interval(tick_period(rate));
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tick.tick() => {}
        }
        let (key, value) = customers.next_record();
        let text = value.to_string();
        {
            let mut o = originals.lock().unwrap_or_else(|p| p.into_inner());
            if o.len() < 100 {
                o.insert(key.clone(), text.clone());
            }
        }
        let record = OutgoingRecord { topic: "customers", key: Some(key.as_bytes()), value: Some(text.as_bytes()), timestamp: None };
        if let Err(e) = producer.send(record, []).await {
            tracing::warn!(error = %e, "demo generator could not produce");
        }
    }
    let _ = producer.flush(Duration::from_secs(5));
}

/// The time between two generated records at `rate` per second, never zero.
fn tick_period(rate: u32) -> Duration {
    Duration::from_secs(1) / rate.clamp(1, MAX_RATE)
}

/// Reads `customers.masked` and prints the first `samples` records next to their originals.
async fn show_samples(kafka: Vec<(String, String)>, samples: usize, originals: Arc<Mutex<HashMap<String, String>>>, stop: CancellationToken) {
    let options = ConsumerOptions { group_id: "turnpike-dev-sampler".into(), start_from: "earliest".into(), topics: vec!["customers.masked".into()], ..Default::default() };
    let consumer = match Consumer::new(&kafka, &options) {
        Ok(c) => c,
        Err(e) => return tracing::warn!(error = %e, "demo sampler could not start"),
    };
    let mut shown = 0;
    while shown < samples {
        let mut pairs = Vec::new();
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = consumer.fill(BatchLimits { records: samples - shown, bytes: usize::MAX, wait: Duration::from_millis(100) }, |r| {
                let key = String::from_utf8_lossy(r.key().unwrap_or_default()).into_owned();
                pairs.push((key, String::from_utf8_lossy(r.value().unwrap_or_default()).into_owned()));
            }, std::future::pending()) => {}
        }
        if let Some(fatal) = consumer.fatal_error() {
            return tracing::warn!(error = %fatal, "demo sampler stopped");
        }
        for (key, masked) in pairs {
            let before = originals.lock().unwrap_or_else(|p| p.into_inner()).get(&key).cloned().unwrap_or_default();
            // The masked record is plugin output: escaped before it reaches the terminal.
            println!("── {}\n   before: {}\n   after:  {}", escape(&key), escape(&before), escape(&masked));
            shown += 1;
        }
    }
}

/// Prints a running count every five seconds.
async fn show_progress(host: Arc<Host>, stop: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_secs(5));
    tick.tick().await;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        for s in host.statuses() {
            println!("[{}] {:?}: {} in, {} out, {} failed", s.name, s.state, s.records_in, s.records_out, s.records_failed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_connector_is_valid() {
        let sandbox = turnpike_config::SandboxConfig::default();
        let valid = |yaml| turnpike_config::Connector::validate(HostConfig::parse_connector_yaml(yaml, "demo").unwrap(), &sandbox, "demo").unwrap();
        let c = valid(DEMO_CONNECTOR);
        assert_eq!(c.output().map(|o| o.topic.as_str()), Some("customers.masked"));
        let s = valid(DEMO_SOURCE);
        assert_eq!((s.kind(), s.output().map(|o| o.topic.as_str())), (turnpike_config::ConnectorKind::Source, Some("orders")));
    }

    #[test]
    fn rate_is_refused_outside_one_to_a_million() {
        use clap::Parser;
        let parse = |rate: &str| crate::Cli::try_parse_from(["turnpike", "dev", "--rate", rate]);
        for bad in ["0", "1000001", "3000000000", "10000000000", "-1"] {
            assert!(parse(bad).is_err(), "--rate {bad} was accepted");
        }
        for good in ["1", "20", "1000000"] {
            assert!(parse(good).is_ok(), "--rate {good} was refused");
        }
    }

    #[test]
    fn the_tick_period_is_never_zero() {
        for rate in [0, 1, 20, MAX_RATE, MAX_RATE + 1, 3_000_000_000, u32::MAX] {
            assert!(tick_period(rate) >= Duration::from_micros(1), "rate {rate}");
        }
        assert_eq!(tick_period(20), Duration::from_millis(50));
    }
}
