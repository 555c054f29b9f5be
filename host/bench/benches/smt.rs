//! Per-record cost of each Kafka Connect transform (the built-in `connect-transforms`
//! component, by its sixteen names) through the WebAssembly runtime and natively, and of a
//! five-step chain, on ~420-byte JSON customer records in batches of 256.
//!
//! Run with `cargo bench -p turnpike-bench --bench smt`. Prints a table; the ratio is WASM /
//! native, both measured in this run on this machine. Not a test: it asserts nothing.

use std::time::{Duration, Instant};

use turnpike_batch_layout::{InputView, OutputColumns, OutputView, Source};
use turnpike_bench::{customer, host_batch, native_batch};
use turnpike_runtime::{InputBatch, InstanceLabels, InstanceLimits, OutputBatch, Plugin, Runtime, TransformInstance};
use turnpike_sdk::bindings::turnpike::plugin::types as sdk;

const BATCH: usize = 256;
/// Records pushed through each measurement, per round; the best of `ROUNDS` is reported.
const RECORDS_PER_ROUND: usize = 20_480;
const ROUNDS: usize = 5;

/// Each transform with a config that does typical work on a customer record.
const STEPS: [(&str, &str); 16] = [
    ("cast", r#"{"spec":{"lifetime_value":"string"}}"#),
    ("drop-headers", r#"{"headers":["sou*"]}"#),
    ("extract-field", r#"{"field":"address.city"}"#),
    ("filter", "{}"),
    ("flatten", "{}"),
    ("header-from", r#"{"fields":["id"],"headers":["id"],"operation":"copy"}"#),
    ("hoist-field", r#"{"field":"customer"}"#),
    ("insert-field", r#"{"topic_field":"meta.topic","offset_field":"meta.offset"}"#),
    ("insert-header", r#"{"header":"origin","value":"bench"}"#),
    ("mask-field", r#"{"fields":["ssn","card.number"]}"#),
    ("regex-router", r#"{"regex":"bench","replacement":"bench-out"}"#),
    ("replace-field", r#"{"exclude":["notes"],"renames":{"name":"full_name"}}"#),
    ("set-schema-metadata", r#"{"schema_name":"customer","schema_version":1}"#),
    ("timestamp-converter", r#"{"field":"lifetime_value","target_type":"string","unix_precision":"seconds"}"#),
    ("timestamp-router", "{}"),
    ("value-to-key", r#"{"fields":["id"]}"#),
];

/// The chain measured whole: what a migrated Kafka Connect pipeline typically runs.
const CHAIN: [&str; 5] = ["replace-field", "mask-field", "insert-field", "value-to-key", "insert-header"];

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let base = Runtime::new()?.load(turnpike_builtins::get("cast").expect("built-in").wasm)?;
    let values: Vec<String> = (0..BATCH).map(customer).collect();
    let host = host_batch(&values);
    let native = native_batch(&host);
    let config = |name: &str| STEPS.iter().find(|(n, _)| *n == name).map(|(_, c)| *c).expect("a step");

    println!("\nKafka Connect transforms: cost per record ({RECORDS_PER_ROUND} records per round, batch {BATCH}, best of {ROUNDS}, ~420-byte JSON)");
    println!("{:<20} {:>12} {:>14} {:>8}", "transform", "wasm ns/rec", "native ns/rec", "ratio");
    for (name, cfg) in STEPS {
        let mut instance = rt.block_on(TransformInstance::create(&preset(&base, name), cfg, labels(), InstanceLimits::default()))?;
        let wasm = best(|| {
            for _ in 0..RECORDS_PER_ROUND / BATCH {
                std::hint::black_box(rt.block_on(instance.transform(&host)).expect("transform"));
            }
        });
        let mut t = native_step(name, cfg)?;
        let nat = best(|| {
            for _ in 0..RECORDS_PER_ROUND / BATCH {
                std::hint::black_box(turnpike_sdk::__private::run_batch(&mut t, &native).ok());
            }
        });
        row(name, wasm, nat);
    }

    let mut instances = Vec::new();
    for name in CHAIN {
        instances.push(rt.block_on(TransformInstance::create(&preset(&base, name), config(name), labels(), InstanceLimits::default()))?);
    }
    let wasm = best(|| {
        for _ in 0..RECORDS_PER_ROUND / BATCH {
            let mut input = host.clone();
            for instance in &mut instances {
                let out = rt.block_on(instance.transform(&input)).expect("transform");
                input = host_next(&input, out);
            }
            std::hint::black_box(input);
        }
    });
    let mut natives = CHAIN.iter().map(|name| native_step(name, config(name))).collect::<anyhow::Result<Vec<_>>>()?;
    let nat = best(|| {
        for _ in 0..RECORDS_PER_ROUND / BATCH {
            let mut input = native.clone();
            for t in &mut natives {
                let out = turnpike_sdk::__private::run_batch(t, &input).expect("transform");
                input = native_next(&input, out);
            }
            std::hint::black_box(input);
        }
    });
    row(&format!("chain of {}", CHAIN.len()), wasm, nat);
    println!("(chain: {}; each stage's outputs become the next stage's inputs, as the host does)", CHAIN.join(" → "));
    Ok(())
}

fn preset(base: &Plugin, name: &str) -> Plugin {
    base.preset(turnpike_builtins::get(name).and_then(|b| b.preset).expect("a Kafka Connect transform"))
}

fn labels() -> InstanceLabels {
    InstanceLabels { connector: "bench".into(), plugin: "bench".into() }
}

fn native_step(name: &str, config: &str) -> anyhow::Result<connect_transforms::ConnectTransforms> {
    let envelope = format!(r#"{{"transform":"{name}","config":{config}}}"#);
    turnpike_sdk::testing::create::<connect_transforms::ConnectTransforms>(&envelope).map_err(|e| anyhow::anyhow!("{name}: {e}"))
}

/// The fastest of `ROUNDS` runs of `round`.
fn best(mut round: impl FnMut()) -> Duration {
    round(); // warm up
    (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            round();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn row(name: &str, wasm: Duration, native: Duration) {
    let per = |d: Duration| d.as_nanos() as f64 / RECORDS_PER_ROUND as f64;
    println!("{name:<20} {:>12.0} {:>14.0} {:>7.2}x", per(wasm), per(native), per(wasm) / per(native));
}

/// Which input each output derives from, with that input's source, as the host keeps them.
fn keep(input: InputView<'_>, out: OutputView<'_>) -> Vec<(usize, Source)> {
    out.iter().enumerate().map(|(j, p)| (j, input.source(p.input as usize))).collect()
}

fn host_next(input: &InputBatch, out: OutputBatch) -> InputBatch {
    let keep = keep(InputView::new(input), OutputView::new(&out));
    let OutputBatch { data, records, timestamps, headers, .. } = out;
    OutputColumns { data, topics: Vec::new(), records, timestamps, headers }.into_next_input(&keep, input.topics.clone()).into()
}

fn native_next(input: &sdk::InputBatch, out: sdk::OutputBatch) -> sdk::InputBatch {
    let keep = keep(InputView::new(input), OutputView::new(&out));
    let sdk::OutputBatch { data, records, timestamps, headers, .. } = out;
    let c = OutputColumns { data, topics: Vec::new(), records, timestamps, headers }.into_next_input(&keep, input.topics.clone());
    sdk::InputBatch { data: c.data, topics: c.topics, records: c.records, positions: c.positions, headers: c.headers }
}
