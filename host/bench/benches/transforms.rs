//! Per-record cost of transforms through the WebAssembly runtime, against the same plugin
//! logic compiled natively, at several batch sizes.
//!
//! Rows: `identity` (gets its batches without their bytes, which it never reads, contract
//! 0.1.5, and passes every record on whole: its result lists the inputs, 0.1.6),
//! `identity-0.1.5` (the same plugin built against 0.1.5: an output row per record, naming its
//! forwarded parts), `identity-0.1.4` (built against 0.1.4: every batch's bytes are copied in
//! too) and `identity-0.1.3` (built against 0.1.3, also copying every byte back): the befores,
//! measured in the same run, `half-filter` (passes every record at an even offset) and
//! `pii-mask` (forwards key and headers, writes a new value).
//!
//! A second table times one call apart from its records, in the same run: a call that passes no
//! list either way (a sink's `flush` with nothing to flush: the floor of any call through the
//! sandbox), and identity given a batch of no records (the floor, plus lowering the batch's
//! columns and lifting its output's, the SDK's and identity's per-call work, and the host's
//! per-call checks of the output). From those, each row says what its ratio would be with that
//! empty call at the floor, and with no call cost at all: what is left then grows with the
//! records (copying each record's columns in and its output out, the guest's per-record code,
//! the host's checks of each output). Identity's empty call stands in for every plugin's: an
//! approximation for the others (0.1.3's copying export, pii-mask's extra fetch of the bytes).
//!
//! A third table runs identity and pii-mask at the largest batch once more, compiled without
//! epoch checks (`Runtime::without_loop_protection`, a bench-only engine): the checks at every
//! function entry and loop are how a deadline stops a plugin that loops, and the table says
//! what they cost.
//!
//! Run with `cargo bench -p turnpike-bench` (all plugins) or `cargo bench -p turnpike-bench --
//! identity` (plugins whose name contains a filter). Prints a table; the ratio is WASM /
//! native, both measured in this run on this machine. Not a test: it asserts nothing.

use std::time::{Duration, Instant};

use turnpike_bench::{customer, host_batch, native_batch};
use turnpike_runtime::{InstanceLabels, InstanceLimits, Plugin, Runtime, SinkInstance, TransformInstance};
use turnpike_sdk::Transform;

const BATCH_SIZES: [usize; 4] = [1, 16, 256, 1024];
/// Records pushed through each (plugin, batch size, path) measurement, per round.
const RECORDS_PER_ROUND: usize = 20_480;
/// Rounds per measurement; the fastest is reported (least disturbed by the machine).
const ROUNDS: usize = 5;
/// Calls per round of the per-call measurements.
const CALLS_PER_ROUND: usize = 20_000;

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
    let lazy_identity = runtime.load(include_bytes!("../../../tests/fixtures/plugins-0.1.5/identity.wasm"))?;
    let half_filter = runtime.load(turnpike_test_components::HALF_FILTER)?;
    let values: Vec<String> = (0..1024).map(customer).collect();
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let wanted = |name: &str| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()));

    let sink = runtime.load(turnpike_test_components::PARTITION_SINK)?;
    let before = rt.block_on(measure_calls(&identity, &sink))?;
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
        if wanted("identity-0.1.5") {
            let wasm = rt.block_on(measure_wasm(&lazy_identity, "{}", &host))?;
            let mut t = turnpike_sdk::testing::create::<identity::Identity>("{}").map_err(|e| anyhow::anyhow!("{e}"))?;
            let nat = measure_native(&mut t, &native, batch);
            rows.push(Row { plugin: "identity-0.1.5", batch, wasm, native: nat });
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

    // The same plugins in an engine without epoch checks, at the largest batch: what loop
    // protection costs (a bench-only engine; Turnpike always runs with the checks). Both are
    // timed here, one after the other, so drift over the run does not land in the difference.
    let largest = BATCH_SIZES[BATCH_SIZES.len() - 1];
    let host = host_batch(&values[..largest]);
    let protected = [("identity", "{}", &identity), ("pii-mask", PII_CONFIG, &pii)];
    let protected: Vec<_> = protected.into_iter().filter(|(name, _, _)| wanted(name)).collect();
    let mut protection = Vec::new();
    if !protected.is_empty() {
        let unprotected = Runtime::without_loop_protection()?;
        for (name, config, plugin) in protected {
            let without = unprotected.load(turnpike_builtins::get(name).expect("built-in").wasm)?;
            let with = rt.block_on(measure_wasm(plugin, config, &host))?;
            let without = rt.block_on(measure_wasm(&without, config, &host))?;
            let native = rows.iter().find(|r| r.plugin == name && r.batch == largest).expect("measured above").native;
            protection.push((name, with, without, native));
        }
    }

    // Timed again after the rows, the least of each kept: a machine that was busy during one
    // of the two would otherwise skew every row's last two columns.
    let after = rt.block_on(measure_calls(&identity, &sink))?;
    let calls = CallCosts { floor: before.floor.min(after.floor), empty: before.empty.min(after.empty) };
    let per_call = |d: Duration| d.as_nanos() as f64 / CALLS_PER_ROUND as f64;
    let (floor, empty) = (per_call(calls.floor), per_call(calls.empty));
    println!("\nOne call, apart from its records (best of {ROUNDS} rounds of {CALLS_PER_ROUND} calls, before and after the rows)");
    println!("{:<58} {:>8.0} ns", "a call passing no list (a sink's empty flush)", floor);
    println!("{:<58} {:>8.0} ns", "identity, a batch of no records (columns in and out)", empty);

    println!("\nTransform cost per record ({RECORDS_PER_ROUND} records per round, best of {ROUNDS} rounds, ~420-byte JSON records)");
    println!(
        "{:<14} {:>6} {:>14} {:>14} {:>16} {:>16} {:>8} {:>14} {:>14}",
        "plugin", "batch", "wasm ns/rec", "native ns/rec", "wasm rec/s", "native rec/s", "ratio", "call=floor", "no call"
    );
    for r in &rows {
        let per = |d: Duration| d.as_nanos() as f64 / RECORDS_PER_ROUND as f64;
        let (w, n) = (per(r.wasm), per(r.native));
        // The same row with each call costing only the floor, then nothing.
        let at_floor = (w - (empty - floor) / r.batch as f64) / n;
        let no_call = (w - empty / r.batch as f64) / n;
        println!(
            "{:<14} {:>6} {:>14.0} {:>14.0} {:>16.0} {:>16.0} {:>7.2}x {:>13.2}x {:>13.2}x",
            r.plugin, r.batch, w, n, 1e9 / w, 1e9 / n, w / n, at_floor, no_call
        );
    }
    if !protection.is_empty() {
        println!("\nLoop protection: wasmtime's epoch check on entry to every function and loop, which lets a deadline stop");
        println!("a plugin that never returns; the same plugins compiled without it (batch {largest}, best of {ROUNDS} rounds)");
        println!("{:<14} {:>14} {:>16} {:>14} {:>10} {:>12} {:>8}", "plugin", "wasm ns/rec", "without ns/rec", "native ns/rec", "ratio", "without", "cost");
        for (name, with, without, native) in protection {
            let per = |d: Duration| d.as_nanos() as f64 / RECORDS_PER_ROUND as f64;
            let (w, u, n) = (per(with), per(without), per(native));
            println!("{:<14} {:>14.0} {:>16.0} {:>14.0} {:>9.2}x {:>11.2}x {:>7.0}%", name, w, u, n, w / n, u / n, (w / u - 1.0) * 100.0);
        }
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

/// What one call costs apart from its records, per round of [`CALLS_PER_ROUND`] calls.
struct CallCosts {
    /// A call that lowers and lifts no list: the floor of any call through the sandbox (the
    /// async call, its fiber, the deadline and interrupt checks, the CPU meter).
    floor: Duration,
    /// A transform call with a batch of no records: the floor, plus lowering the batch's
    /// columns and lifting the output's (with the guest's allocations for them), the SDK's and
    /// identity's per-call work, and the host's per-call checks of the output.
    empty: Duration,
}

async fn measure_calls(identity: &Plugin, sink: &Plugin) -> anyhow::Result<CallCosts> {
    let labels = || InstanceLabels { connector: "bench".into(), plugin: "bench".into() };
    // The address is never used: nothing is written, so the flush sends nothing.
    let mut writer = SinkInstance::create(sink, r#"{"url":"http://127.0.0.1:9"}"#, labels(), InstanceLimits::default()).await?;
    let mut transform = TransformInstance::create(identity, "{}", labels(), InstanceLimits::default()).await?;
    let empty = host_batch(&[]);
    let (mut floor, mut lists) = (Duration::MAX, Duration::MAX);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            writer.flush().await?;
        }
        floor = floor.min(start.elapsed());
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            std::hint::black_box(transform.transform(&empty).await?);
        }
        lists = lists.min(start.elapsed());
    }
    Ok(CallCosts { floor, empty: lists })
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
