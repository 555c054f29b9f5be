//! What both measurements share: one measurement at a time, a feed that counts what the broker
//! acknowledged, and a window over which a neighbour's input and output are counted together.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use turnpike_tests::{produce, producer, wait_until, HostProcess};

/// Records per second fed to a neighbour.
pub const RATE: usize = 1_000;

/// The share of its input a neighbour must write out over a window.
const KEPT: f64 = 0.9;

/// How far behind its feed a neighbour may be and still count as keeping up: a quarter of a
/// second of input, above the one batch (100 records) the feed counts only once acknowledged.
const KEEPING_UP_SLACK: u64 = RATE as u64 / 4;

/// Held by each test for its whole run: two hosts under load at once on a two-core machine
/// would measure each other.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    // A test that failed while holding it poisons it; the next one still runs.
    ONE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The runtime that drives the feeds. Its workers serve nothing else: the tests are plain
/// `#[test]`s whose blocking waits run on the test thread.
pub fn traffic_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Runtime::new().context("the feeds' runtime")
}

/// How many records of a feed the broker has acknowledged so far.
#[derive(Clone, Default)]
pub struct Fed(Arc<AtomicU64>);

impl Fed {
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Feeds `topic` the records `keys` (key `k{i}`, value `{"n":i}`) at `RATE` per second, a batch
/// every 100 ms, adding each batch to `fed` once the broker has acknowledged it.
pub async fn feed(topic: String, keys: Range<usize>, fed: Fed) -> Result<()> {
    let producer = producer()?;
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let keys: Vec<usize> = keys.collect();
    for chunk in keys.chunks(RATE / 10) {
        tick.tick().await;
        let batch: Vec<_> = chunk.iter().map(|i| (format!("k{i}"), format!(r#"{{"n":{i}}}"#))).collect();
        produce(&producer, &topic, &batch).await?;
        fed.0.fetch_add(batch.len() as u64, Ordering::SeqCst);
    }
    Ok(())
}

/// A connector's `records_out` counter, from its status.
pub fn records_out(host: &HostProcess, connector: &str) -> Result<u64> {
    let status = host.get(&format!("/v1/connectors/{connector}"))?.1;
    status["records_out"].as_u64().with_context(|| format!("no records_out in the status of {connector}: {status}"))
}

/// Waits until `connector` has written all but the last moments of what was fed to it, so
/// that a window opened next measures it keeping pace, not catching up on a backlog.
pub fn wait_keeping_up(host: &HostProcess, connector: &str, fed: &Fed) -> Result<()> {
    let caught_up = wait_until(&format!("{connector} to keep up with its feed"), Duration::from_secs(120), || {
        let acknowledged = fed.count();
        // Something written, not only nothing fed yet: a connector still joining its group
        // has written nothing and is within the slack of a feed that has just begun.
        let written = records_out(host, connector)?;
        Ok((written > 0 && written + KEEPING_UP_SLACK >= acknowledged).then_some(()))
    });
    caught_up.with_context(|| format!("log:\n{}", host.log_text()))
}

/// Records per second fed to a neighbour and written by it, over one window.
#[derive(Debug, Clone, Copy)]
pub struct Rates {
    pub fed_per_s: f64,
    pub out_per_s: f64,
}

impl Rates {
    /// Counts what was fed to `connector` and what it wrote while `during` runs, both read at
    /// the same two moments.
    pub fn measure(host: &HostProcess, connector: &str, fed: &Fed, during: impl FnOnce() -> Result<()>) -> Result<Self> {
        let (fed_before, out_before, start) = (fed.count(), records_out(host, connector)?, Instant::now());
        during()?;
        let (fed_after, out_after) = (fed.count(), records_out(host, connector)?);
        let seconds = start.elapsed().as_secs_f64();
        Ok(Self {
            fed_per_s: fed_after.saturating_sub(fed_before) as f64 / seconds,
            out_per_s: out_after.saturating_sub(out_before) as f64 / seconds,
        })
    }

    /// Fails unless the window carried traffic and the neighbour wrote at least `KEPT` of what
    /// was fed to it; `beside` says what it ran next to.
    pub fn ensure_kept_pace(self, beside: &str) -> Result<()> {
        let Self { fed_per_s, out_per_s } = self;
        ensure!(fed_per_s >= RATE as f64 / 2.0, "only {fed_per_s:.0} of {RATE} records/s were fed during the window: it measured nothing");
        ensure!(out_per_s >= KEPT * fed_per_s, "beside {beside}, the neighbour wrote {out_per_s:.0} of the {fed_per_s:.0} records/s fed to it");
        Ok(())
    }
}
