//! What one instance keeps for SQL: its grant and how long the current call has waited for
//! the database. The store's epoch callback adds that wait to the call's CPU deadline, so a
//! slow database never looks like a runaway plugin.

use std::time::{Duration, Instant};

use super::grant::SqlGrant;

/// The `sql` capability's state in one store.
pub(crate) struct SqlState {
    pub(crate) grant: Option<SqlGrant>,
    waited: Duration,
}

impl SqlState {
    pub(crate) fn new(grant: Option<SqlGrant>) -> Self {
        Self { grant, waited: Duration::ZERO }
    }

    /// Database time the current call has spent so far.
    pub(crate) fn waited(&self) -> Duration {
        self.waited
    }

    /// Starts a new call's accounting.
    pub(crate) fn begin_call(&mut self) {
        self.waited = Duration::ZERO;
    }

    /// Database time the current call may still spend.
    pub(crate) fn remaining(&self, grant: &SqlGrant) -> Duration {
        grant.per_call.saturating_sub(self.waited)
    }

    /// Credits the time since `started` to the current call.
    pub(crate) fn credit(&mut self, started: Instant) {
        self.waited += started.elapsed();
    }
}
