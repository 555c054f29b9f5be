//! One wasmtime `Store` under limits, shared by every plugin kind: how it is set up, how a
//! call's outcome is classified, and the poisoning rule (after a fault, no further calls).

use std::time::{Duration, Instant};

use wasmtime::{Store, Trap, UpdateDeadline};

use crate::bindings::types::{ConfigError, RecordError};
use crate::error::{CreateError, Fault, Unanswered};
use crate::interrupt::Cut;
use crate::labels::InstanceLabels;
use crate::limits::InstanceLimits;
use crate::plugin::{Plugin, PluginKind};
use crate::state::HostState;
use crate::usage::{CpuMeter, Usage};

/// How full an instance's memory may get before the host replaces it between two batches.
/// Some language runtimes grow their heap long before collecting it (StarlingMonkey), or leak a
/// little per call at the component boundary (componentize-py 0.25, ~50 KB per call measured
/// here); a fresh instance costs well under a millisecond.
const MEMORY_REPLACE_AT: f64 = 0.75;

/// Slack on top of a deadline before the async timeout drops the call outright. The epoch
/// deadline normally fires first (within a tick); this only catches a call stuck elsewhere
/// (such as a host call waiting on the network).
const TIMEOUT_SLACK: Duration = Duration::from_secs(1);

pub(crate) struct Sandbox {
    pub(crate) store: Store<HostState>,
    pub(crate) limits: InstanceLimits,
    poisoned: bool,
    /// CPU time the calls used since the last [`Sandbox::take_usage`].
    pub(crate) cpu: CpuMeter,
}

/// What a guarded call (`interrupt::guarded`) produced before classification.
pub(crate) type Outcome<R> = Result<wasmtime::Result<R>, Cut>;

impl Sandbox {
    pub(crate) fn new(plugin: &Plugin, labels: InstanceLabels, limits: InstanceLimits) -> Self {
        let state = HostState::new(&labels, &limits);
        let mut store = Store::new(plugin.runtime().engine(), state);
        store.limiter(|s| &mut s.limiter);
        // Caps what one call may copy out of the guest: a plugin returning a huge batch fails
        // while it is being copied, before the host has allocated it all.
        store.set_hostcall_fuel(limits.max_output_bytes);
        store.set_max_component_handles(10_000);
        // Each epoch tick: yield to tokio so a long call never hogs a worker thread, and
        // interrupt the call once its deadline has passed.
        store.epoch_deadline_callback(|ctx| {
            // Time the call spent waiting for its database is not the plugin's CPU time.
            if Instant::now() >= ctx.data().deadline + ctx.data().sql.waited() {
                Ok(UpdateDeadline::Interrupt)
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        store.set_epoch_deadline(1);
        Self { store, limits, poisoned: false, cpu: CpuMeter::default() }
    }

    /// Starts instantiation + `create`; returns the async timeout to wrap it in.
    pub(crate) fn begin_create(&mut self) -> Duration {
        self.begin(self.limits.create_timeout, true)
    }

    /// Starts one call; returns the async timeout to wrap it in, or why it may not run: the
    /// connector is stopping (checked first: a call after an interrupted one is a stop, not
    /// the plugin's fault), or the instance is poisoned.
    pub(crate) fn begin_call(&mut self) -> Result<Duration, Unanswered> {
        if self.limits.interrupt.is_fired() {
            return Err(Unanswered::Stopped);
        }
        if self.poisoned {
            return Err(Unanswered::Fault(Fault::Trap { message: "instance already faulted; create a new one".into() }));
        }
        Ok(self.begin(self.limits.batch_timeout, false))
    }

    fn begin(&mut self, limit: Duration, creating: bool) -> Duration {
        let data = self.store.data_mut();
        data.deadline = Instant::now() + limit;
        data.creating = creating;
        data.http.take_refusal();
        data.sql.begin_call();
        // The async timeout also leaves room for the database time a source may spend.
        limit + TIMEOUT_SLACK + data.sql.grant.as_ref().map_or(Duration::ZERO, |g| g.per_call)
    }

    /// Classifies a call's outcome; a fault or an interrupt poisons the instance.
    pub(crate) fn settle<R>(&mut self, outcome: Outcome<R>) -> Result<R, Unanswered> {
        let result = match outcome {
            Err(Cut::Elapsed) => Err(Unanswered::Fault(Fault::Timeout { limit_ms: millis(self.current_limit()) })),
            Err(Cut::Interrupted) => Err(Unanswered::Stopped),
            Ok(Err(e)) => Err(Unanswered::Fault(self.classify(e))),
            Ok(Ok(r)) => Ok(r),
        };
        self.store.data_mut().creating = false;
        if result.is_err() {
            self.poisoned = true;
        }
        result
    }

    /// Marks the instance unusable (its output broke the contract).
    pub(crate) fn poison(&mut self, fault: Fault) -> Fault {
        self.poisoned = true;
        match fault {
            Fault::InvalidOutput(why) => Fault::InvalidOutput(self.clean(why)),
            other => other,
        }
    }

    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned
    }

    /// CPU time used since the last take, and the memory held now.
    pub(crate) fn take_usage(&mut self) -> Usage {
        let memory_bytes = self.store.data().limiter.total_bytes as u64;
        Usage { cpu: self.cpu.take(), memory_bytes }
    }

    /// Whether the instance's memory has grown close to its cap (see
    /// `TransformInstance::needs_replacing` for why that matters).
    pub(crate) fn near_memory_limit(&self) -> bool {
        self.store.data().limiter.pressure() >= MEMORY_REPLACE_AT
    }

    /// A plugin's error message, with the host's reason when it refused an HTTP request
    /// during the call (the plugin only sees an error code), and the connector's secrets
    /// hidden: every message a plugin hands the host comes through here.
    pub(crate) fn explain(&self, message: String) -> String {
        let message = match self.store.data().http.take_refusal() {
            Some(reason) => format!("{message} (the host refused outgoing HTTP: {reason})"),
            None => message,
        };
        self.clean(message)
    }

    /// A configuration the plugin refused, key and message explained.
    pub(crate) fn config_error(&self, e: ConfigError) -> CreateError {
        // Plugins in Rust report serde's phrasing ("unknown variant `x`, expected …"); every
        // caller (validation, dry runs, starts) shows it as the user would say it.
        CreateError::Config { key: e.key.map(|k| self.clean(k)), message: self.explain(turnpike_config::in_users_words(&e.message)) }
    }

    /// The errors of single records, explained.
    pub(crate) fn explain_records(&self, errors: &mut [RecordError]) {
        for r in errors {
            r.error.message = self.explain(std::mem::take(&mut r.error.message));
        }
    }

    /// `text` with the connector's secret values replaced by `***`.
    fn clean(&self, text: String) -> String {
        self.limits.scrub.clean_string(text)
    }

    fn current_limit(&self) -> Duration {
        if self.store.data().creating {
            self.limits.create_timeout
        } else {
            self.limits.batch_timeout
        }
    }

    /// Turns a wasmtime error from a guest call into the fault a user can act on.
    fn classify(&self, error: wasmtime::Error) -> Fault {
        let limits = &self.limits;
        if self.store.data().limiter.refused {
            return Fault::MemoryLimit { limit_mib: u32::try_from(limits.memory_bytes >> 20).unwrap_or(u32::MAX) };
        }
        let trap = error.downcast_ref::<Trap>().copied();
        if trap == Some(Trap::Interrupt) {
            return Fault::Timeout { limit_ms: millis(self.current_limit()) };
        }
        let text = format!("{error:#}");
        if text.contains(HOSTCALL_FUEL_EXHAUSTED) {
            return Fault::OutputLimit { limit: format!("{} MiB per batch", limits.max_output_bytes >> 20) };
        }
        if text.contains("maximum concurrent") || text.contains("pooling allocator") {
            return Fault::HostCapacity(self.clean(text));
        }
        let mut message = match trap {
            Some(t) => t.to_string(),
            None => format!("{error}"),
        };
        let stderr = self.store.data().stderr.text();
        if !stderr.is_empty() {
            message = format!("{message}; plugin error output: {stderr}");
        }
        // The plugin's error output (a panic message) may repeat its config.
        Fault::Trap { message: self.clean(message) }
    }
}

/// wasmtime's message when a call copies more than its hostcall fuel out of the guest. The
/// error type is private to wasmtime, so its (stable) message is what identifies it.
const HOSTCALL_FUEL_EXHAUSTED: &str = "fuel allocated for hostcalls has been exhausted";

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The error for a plugin used as a kind it is not.
pub(crate) fn wrong_kind(plugin: &Plugin, wanted: PluginKind) -> CreateError {
    CreateError::WrongKind { wanted: wanted.as_str(), actual: plugin.kind().as_str() }
}
