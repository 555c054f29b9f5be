//! Per-record cost of transforms through the WebAssembly runtime, against the same plugin
//! logic compiled natively, at several batch sizes.
//!
//! Rows: `identity` (gets its batches without their bytes, which it never reads, contract
//! 0.1.5, and forwards every record: its outputs name their parts, 0.1.4), `identity-0.1.4`
//! (the same plugin built against 0.1.4: every batch's bytes are copied in) and
//! `identity-0.1.3` (built against 0.1.3, also copying every byte back): the befores, measured
//! in the same run, `half-filter` (forwards every record at an even offset)
//! and `pii-mask` (forwards key and headers, writes a new value).
//!
//! Run with `cargo bench -p turnpike-bench` (all plugins) or `cargo bench -p turnpike-bench --
//! identity` (plugins whose name contains a filter). Prints a table; the ratio is WASM /
//! native, both measured in this run on this machine. Not a test: it asserts nothing.

use std::time::{Duration, Instant};

use turnpike_bench::{customer, host_batch, native_batch};
use turnpike_runtime::{InstanceLabels, InstanceLimits, Plugin, Runtime, TransformInstance};
use turnpike_sdk::Transform;

const BATCH_SIZES: [usize; 4] = [1, 16, 256, 1024];
/// Records pushed through each (plugin, batch size, path) measurement, per round.
const RECORDS_PER_ROUND: usize = 20_480;
/// Rounds per measurement; the fastest is reported (least disturbed by the machine).
const ROUNDS: usize = 5;

const PII_CONFIG: &str = r#"{"fields":[{"path":"email","mode":"hash"},"ssn",{"path":"card.number","mode":"partial"},"address.street"],"detectors":["phone","email"],"salt":"bench"}"#;

struct Row {
    plugin: &'static str,
    batch: usize,
    wasm: Duration,
    native: Duration,
}

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let runtime = Runtime::new()?;
    let load = |name: &str| -> anyhow::Result<Plugin> { Ok(runtime.load(turnpike_builtins::get(name).expect("built-in").wasm)?) };
    let identity = load("identity")?;
    let pii = load("pii-mask")?;
    let copying_identity = runtime.load(include_bytes!("../../../tests/fixtures/plugins-0.1.3/identity.wasm"))?;
    let eager_identity = runtime.load(include_bytes!("../../../tests/fixtures/plugins-0.1.4/identity.wasm"))?;
    let half_filter = runtime.load(turnpike_test_components::HALF_FILTER)?;
    let values: Vec<String> = (0..1024).map(customer).collect();
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let wanted = |name: &str| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()));

    let mut rows = Vec::new();
    for &batch in &BATCH_SIZES {
        let host = host_batch(&values[..batch]);
        let native = native_batch(&host);
        if wanted("identity") {
            let wasm = rt.block_on(measure_wasm(&identity, "{}", &host))?;
            let mut t = turnpike_sdk::testing::create::<identity::Identity>("{}").map_err(|e| anyhow::anyhow!("{e}"))?;
            let nat = measure_native(&mut t, &native, batch);
            rows.push(Row { plugin: "identity", batch, wasm, native: nat });
        }
        if wanted("identity-0.1.4") {
            let wasm = rt.block_on(measure_wasm(&eager_identity, "{}", &host))?;
            let mut t = turnpike_sdk::testing::create::<identity::Identity>("{}").map_err(|e| anyhow::anyhow!("{e}"))?;
            let nat = measure_native(&mut t, &native, batch);
            rows.push(Row { plugin: "identity-0.1.4", batch, wasm, native: nat });
        }
        if wanted("identity-0.1.3") {
            let wasm = rt.block_on(measure_wasm(&copying_identity, "{}", &host))?;
            let mut t = turnpike_sdk::testing::create::<identity::Identity>("{}").map_err(|e| anyhow::anyhow!("{e}"))?;
            let nat = measure_native(&mut t, &native, batch);
            rows.push(Row { plugin: "identity-0.1.3", batch, wasm, native: nat });
        }
        if wanted("half-filter") {
            let wasm = rt.block_on(measure_wasm(&half_filter, "{}", &host))?;
            let mut t = turnpike_sdk::testing::create::<half_filter::HalfFilter>("{}").map_err(|e| anyhow::anyhow!("{e}"))?;
            let nat = measure_native(&mut t, &native, batch);
            rows.push(Row { plugin: "half-filter", batch, wasm, native: nat });
        }
        if wanted("pii-mask") {
            let wasm = rt.block_on(measure_wasm(&pii, PII_CONFIG, &host))?;
            let mut t = turnpike_sdk::testing::create::<pii_mask::PiiMask>(PII_CONFIG).map_err(|e| anyhow::anyhow!("{e}"))?;
            let nat = measure_native(&mut t, &native, batch);
            rows.push(Row { plugin: "pii-mask", batch, wasm, native: nat });
        }
    }

    println!("\nTransform cost per record ({RECORDS_PER_ROUND} records per round, best of {ROUNDS} rounds, ~420-byte JSON records)");
    println!("{:<14} {:>6} {:>14} {:>14} {:>16} {:>16} {:>8}", "plugin", "batch", "wasm ns/rec", "native ns/rec", "wasm rec/s", "native rec/s", "ratio");
    for r in &rows {
        let per = |d: Duration| d.as_nanos() as f64 / RECORDS_PER_ROUND as f64;
        let (w, n) = (per(r.wasm), per(r.native));
        println!(
            "{:<14} {:>6} {:>14.0} {:>14.0} {:>16.0} {:>16.0} {:>7.2}x",
            r.plugin, r.batch, w, n, 1e9 / w, 1e9 / n, w / n
        );
    }
    Ok(())
}

/// Time to push `RECORDS_PER_ROUND` records through the component, in batches like `batch`:
/// lowering the batch into the guest, the guest's work, lifting and checking the output.
async fn measure_wasm(plugin: &Plugin, config: &str, batch: &turnpike_runtime::InputBatch) -> anyhow::Result<Duration> {
    let labels = InstanceLabels { connector: "bench".into(), plugin: "bench".into() };
    let mut instance = TransformInstance::create(plugin, config, labels, InstanceLimits::default()).await?;
    let calls = RECORDS_PER_ROUND / turnpike_runtime::input_len(batch);
    instance.transform(batch).await?; // warm up
    let mut best = Duration::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..calls {
            let out = instance.transform(batch).await?;
            std::hint::black_box(out);
        }
        best = best.min(start.elapsed());
    }
    Ok(best)
}

/// The same work natively: the plugin's code and the SDK's per-batch path, no WebAssembly.
fn measure_native<T: Transform>(t: &mut T, batch: &turnpike_sdk::bindings::turnpike::plugin::types::InputBatch, records: usize) -> Duration {
    let calls = RECORDS_PER_ROUND / records;
    let _ = turnpike_sdk::__private::run_batch(t, batch);
    let mut best = Duration::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..calls {
            let out = turnpike_sdk::__private::run_batch(t, batch);
            std::hint::black_box(out.ok());
        }
        best = best.min(start.elapsed());
    }
    best
}
