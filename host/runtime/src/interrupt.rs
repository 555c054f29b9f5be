//! Ending a plugin call early because its connector is stopping.
//!
//! Why: a call may run for its whole batch timeout (up to minutes, as the operator allows),
//! and a stop, a delete or a shutdown should not wait that long for a batch nobody will
//! commit. The host gives a stopping connector's calls a grace period to finish on their
//! own, then fires the connector's [`Interrupt`]: every call still running is ended at its
//! next yield (an epoch tick, or a host call's await), and none starts after it.

use std::future::Future;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// Shared by every instance of one task of a connector's run (it travels in their
/// `InstanceLimits`), a child of the run's; the default one is never fired.
#[derive(Debug, Clone, Default)]
pub struct Interrupt(CancellationToken);

impl Interrupt {
    /// Ends every call of the instances that share this interrupt, now and from now on.
    pub fn fire(&self) {
        self.0.cancel();
    }

    /// Whether [`Interrupt::fire`] was called, on this one or on any it descends from.
    pub fn is_fired(&self) -> bool {
        self.0.is_cancelled()
    }

    /// An interrupt that fires with this one, and can also be fired alone: for a part of a
    /// run that stops while the rest goes on (one task retired, a source whose cluster slot
    /// moved away).
    pub fn child(&self) -> Interrupt {
        Interrupt(self.0.child_token())
    }

    /// Resolves once the interrupt has fired.
    pub async fn fired(&self) {
        self.0.cancelled().await
    }
}

/// What ended a call before it returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// It ran past its timeout.
    Elapsed,
    /// Its connector's [`Interrupt`] fired (before the call, or during it).
    Interrupted,
}

/// Runs `call` until it returns, `limit` passes or `interrupt` fires. An interrupted call's
/// future is dropped, which wasmtime turns into a trap inside the guest, so its store is not
/// to be called again (the caller poisons it, as after a timeout).
pub(crate) async fn guarded<F: Future>(limit: Duration, interrupt: &Interrupt, call: F) -> Result<F::Output, Cut> {
    if interrupt.is_fired() {
        return Err(Cut::Interrupted);
    }
    tokio::select! {
        // The call first: one that returns at its first poll (most do) never registers a
        // waiter on the interrupt.
        biased;
        out = tokio::time::timeout(limit, call) => out.map_err(|_| Cut::Elapsed),
        () = interrupt.fired() => Err(Cut::Interrupted),
    }
}
