//! The same transform (replace the `email` field of a JSON record with `***`) written in Rust,
//! Python and JavaScript (`examples/plugins/*-redact`), built with each language's real
//! toolchain, then measured through the host's runtime in this run on this machine:
//! component size, compile time, instantiate + `create` time, and nanoseconds per record.
//! Then the same source and the same sink in each language (`kinds.rs`): records per second.
//!
//! Run with `cargo bench -p turnpike-bench --bench languages` (the first run installs
//! componentize-py and componentize-js; see `turnpike_authoring::toolchain`). Prints a table
//! with ratios against Rust. Not a test: it asserts nothing.

use std::time::{Duration, Instant};

use turnpike_bench::{customer, host_batch};

#[path = "languages/kinds.rs"]
mod kinds;
use turnpike_runtime::{InstanceLabels, InstanceLimits, Plugin, Runtime, TransformInstance};

/// Records per batch, as a connector batches by default-ish.
const BATCH: usize = 256;
/// Batches per round.
const CALLS: usize = 40;
/// Rounds; the fastest is reported.
const ROUNDS: usize = 5;
/// Instantiations measured per language; the median is reported.
const INSTANTIATIONS: usize = 20;

struct Row {
    lang: &'static str,
    size: u64,
    compile: Duration,
    instantiate: Duration,
    per_record: f64,
}

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let examples = turnpike_wasm_build::source_root().join("examples").join("plugins");
    let values: Vec<String> = (0..BATCH).map(customer).collect();
    let batch = host_batch(&values);
    let mut rows = Vec::new();
    for lang in ["rust", "python", "js"] {
        let built = turnpike_authoring::build(&examples.join(format!("{lang}-redact")))?;
        let bytes = std::fs::read(&built.component)?;
        // A fresh engine per language, so that nothing compiled is shared or cached.
        let runtime = Runtime::new()?;
        let started = Instant::now();
        let plugin = runtime.load(&bytes)?;
        let compile = started.elapsed();
        eprintln!("{lang}: {} bytes, compiled in {compile:?}", bytes.len());
        let instantiate = rt.block_on(median_instantiate(&plugin))?;
        eprintln!("{lang}: instantiated in {instantiate:?}");
        let per_record = rt.block_on(per_record_ns(&plugin, &batch))?;
        rows.push(Row { lang, size: bytes.len() as u64, compile, instantiate, per_record });
    }
    let endpoint = rt.block_on(kinds::endpoint())?;
    let mut kinds_rows = Vec::new();
    for lang in ["rust", "python", "js"] {
        let runtime = Runtime::new()?;
        let source = runtime.load(&std::fs::read(turnpike_authoring::build(&examples.join(format!("{lang}-sequence-source")))?.component)?)?;
        let sink = runtime.load(&std::fs::read(turnpike_authoring::build(&examples.join(format!("{lang}-webhook-sink")))?.component)?)?;
        let (polled, source_replaced) = rt.block_on(kinds::source_ns(&source))?;
        let (written, sink_replaced) = rt.block_on(kinds::sink_ns(&sink, &batch, endpoint))?;
        eprintln!("{lang}: source {polled:.0} ns/record, sink {written:.0} ns/record");
        kinds_rows.push((lang, polled, written, source_replaced, sink_replaced));
    }

    let rust = &rows[0];
    println!("\nThe same transform in three languages (redact one JSON field; ~420-byte records, batches of {BATCH}, best of {ROUNDS} rounds)");
    println!("{:<8} {:>12} {:>12} {:>16} {:>14} {:>12} {:>10}", "language", "size", "compile", "instantiate", "ns/record", "records/s", "vs Rust");
    for r in &rows {
        println!(
            "{:<8} {:>9.2} MB {:>10.0} ms {:>13.2} ms {:>14.0} {:>12.0} {:>9.1}x",
            r.lang,
            r.size as f64 / 1e6,
            r.compile.as_secs_f64() * 1e3,
            r.instantiate.as_secs_f64() * 1e3,
            r.per_record,
            1e9 / r.per_record,
            r.per_record / rust.per_record
        );
    }
    let (_, rust_source, rust_sink, _, _) = kinds_rows[0];
    println!("\nThe same source and the same sink in three languages (sequence source: polls of {} records; webhook sink: batches of {BATCH} ~420-byte records, one POST to a local endpoint per 4 batches; best of 5 rounds)", kinds::BATCH);
    println!("{:<8} {:>14} {:>8} {:>9} {:>14} {:>8} {:>9}", "language", "source rec/s", "vs Rust", "replaced", "sink rec/s", "vs Rust", "replaced");
    for (lang, polled, written, source_replaced, sink_replaced) in &kinds_rows {
        println!(
            "{:<8} {:>14.0} {:>7.1}x {:>9} {:>14.0} {:>7.1}x {:>9}",
            lang,
            1e9 / polled,
            polled / rust_source,
            source_replaced,
            1e9 / written,
            written / rust_sink,
            sink_replaced
        );
    }
    println!("(replaced: instances that hit their 64 MiB memory cap and were replaced by a fresh one, in {} calls)", 5 * 40);
    Ok(())
}

fn labels() -> InstanceLabels {
    InstanceLabels { connector: "bench".into(), plugin: "bench".into() }
}

/// Median time of instantiation + `create` (what a connector start or a restart after a
/// fault costs), the component already compiled.
async fn median_instantiate(plugin: &Plugin) -> anyhow::Result<Duration> {
    let mut times = Vec::with_capacity(INSTANTIATIONS);
    for _ in 0..INSTANTIATIONS {
        let start = Instant::now();
        let instance = TransformInstance::create(plugin, r#"{"field":"email"}"#, labels(), InstanceLimits::default()).await?;
        times.push(start.elapsed());
        drop(instance);
    }
    times.sort();
    Ok(times[times.len() / 2])
}

/// Nanoseconds per record through the component, best round. As a connector does, an
/// instance whose memory nears its cap is replaced by a fresh one (and that is timed too).
async fn per_record_ns(plugin: &Plugin, batch: &turnpike_runtime::InputBatch) -> anyhow::Result<f64> {
    let fresh = || TransformInstance::create(plugin, r#"{"field":"email"}"#, labels(), InstanceLimits::default());
    let mut instance = fresh().await?;
    let out = instance.transform(batch).await?; // warm up, and check it did the work
    anyhow::ensure!(out.errors.is_empty(), "the plugin failed records: {:?}", out.errors.first());
    let mut best = Duration::MAX;
    let mut replaced = 0;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..CALLS {
            std::hint::black_box(instance.transform(batch).await?);
            if instance.needs_replacing() {
                instance = fresh().await?;
                replaced += 1;
            }
        }
        best = best.min(start.elapsed());
    }
    eprintln!("  {replaced} instance replacements in {} batches", ROUNDS * CALLS);
    Ok(best.as_nanos() as f64 / (CALLS * BATCH) as f64)
}
