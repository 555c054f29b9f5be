//! Runs that a lifecycle call (stop, restart, update, delete) is stopping.
//!
//! Why a registry: such a run is out of the connector table while it stops, so without it a
//! shutdown arriving meanwhile would not know it, and the process could exit in the middle
//! of its last commit, with the call that asked for the stop unanswered and its change
//! unsaved. And each stop runs as a task of its own: the request that asked for it may be
//! dropped (its client gone), and the stop must still end the run and its plugin calls.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::{BoxFuture, FutureExt as _, Shared};
use futures::stream::{FuturesUnordered, StreamExt as _};
use turnpike_runtime::Interrupt;

use super::table::Run;
use crate::stopping::{end_within, Stopping};

/// How a stop ended: the supervisor's join result (a panic in it is an error).
type Ended = Shared<Ending>;

/// A stop's end, awaited once: `Err` says how its supervisor ended abnormally.
pub(super) type Ending = BoxFuture<'static, Result<(), String>>;

/// One run being stopped: its interrupt, its stop's end (awaitable by several), and whether
/// that end came (set by the stop's task itself, so known even when nobody awaits it).
#[derive(Clone)]
struct Stop {
    connector: String,
    interrupt: Interrupt,
    ended: Ended,
    done: Arc<AtomicBool>,
}

/// Every run a lifecycle call is stopping, by a number of its own (a connector's name may
/// come back with a new run while an abandoned stop of the old one goes on). An entry whose
/// stop ended is dropped by the next look.
#[derive(Default)]
pub(super) struct Halting {
    next: AtomicU64,
    stops: Mutex<BTreeMap<u64, Stop>>,
}

impl Halting {
    /// Starts stopping `run` as [`Run::stop`] does, on a task of its own, and registers it;
    /// synchronous, so a caller holding the connector table's lock takes the run out and
    /// registers it at once (a shutdown reads both under that lock: nothing falls between).
    pub(super) fn begin(&self, connector: &str, run: Run, grace: Duration) -> Halt {
        let interrupt = run.interrupt.clone();
        let name = connector.to_owned();
        let done = Arc::new(AtomicBool::new(false));
        let finished = done.clone();
        let task = tokio::spawn(async move {
            let stopped = run.stop(&name, grace).await;
            finished.store(true, Ordering::SeqCst);
            stopped
        });
        let ended: Ended = async move {
            match task.await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) | Err(e) => Err(crate::supervisor::panic_message(e)),
            }
        }
        .boxed()
        .shared();
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut stops = self.lock();
        stops.retain(|_, stop| !stop.done.load(Ordering::SeqCst));
        stops.insert(id, Stop { connector: connector.to_owned(), interrupt, ended: ended.clone(), done });
        Halt { ended }
    }

    /// For a shutdown: each run still being stopped, as its name and a future that ends its
    /// plugin calls after `grace` (if its own stop has not yet) and resolves once it ended.
    pub(super) fn snapshot(&self, grace: Duration) -> Vec<(String, Ending)> {
        let mut stops = self.lock();
        stops.retain(|_, stop| !stop.done.load(Ordering::SeqCst));
        stops
            .values()
            .cloned()
            .map(|stop| {
                let name = stop.connector.clone();
                let ended = async move { end_within(Stopping { connector: &stop.connector, task: None }, grace, &stop.interrupt, stop.ended).await }.boxed();
                (name, ended)
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Stop>> {
        self.stops.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A stop begun by [`Halting::begin`].
pub(super) struct Halt {
    ended: Ended,
}

impl Halt {
    /// Waits for the run to end. Dropped before (its caller gone), the stop goes on, and a
    /// shutdown still waits for it.
    pub(super) async fn ended(self, connector: &str) {
        if let Err(e) = self.ended.await {
            tracing::error!(connector, error = %e, "connector supervisor ended abnormally");
        }
    }
}

/// Waits for every stop, each named by its connector, until `within` has passed; returns the
/// connectors still stopping then (none when all ended). A connector may be named twice: a run
/// stopping for the shutdown and an abandoned stop of its previous run.
pub(super) async fn wait_for(stops: Vec<(String, Ending)>, within: Duration) -> Vec<String> {
    let mut stopping: BTreeMap<String, usize> = BTreeMap::new();
    let mut ends: FuturesUnordered<BoxFuture<'static, (String, Result<(), String>)>> = FuturesUnordered::new();
    for (name, ending) in stops {
        *stopping.entry(name.clone()).or_default() += 1;
        ends.push(Box::pin(async move { (name, ending.await) }));
    }
    let deadline = tokio::time::sleep(within);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            ended = ends.next() => match ended {
                Some((name, result)) => {
                    if let Err(e) = result {
                        tracing::error!(connector = %name, error = %e, "connector supervisor ended abnormally");
                    }
                    if let Some(left) = stopping.get_mut(&name) {
                        *left -= 1;
                        if *left == 0 {
                            stopping.remove(&name);
                        }
                    }
                }
                None => break,
            },
            () = &mut deadline => {
                // Said now, not only by the caller: a supervisor's SIGKILL may follow soon.
                tracing::error!(connectors = ?stopping.keys().collect::<Vec<_>>(), "still stopping when the shutdown timeout ran out; left to the exit, their uncommitted records are read again at the next start");
                break;
            }
        }
    }
    stopping.into_keys().collect()
}
