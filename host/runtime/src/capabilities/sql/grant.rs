//! What a connector's `database` grant gives one instance: the host's client for the granted
//! database (shared by the connector's instances, so a replaced instance reuses the
//! connection) and how much database time one plugin call may spend.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use turnpike_sql::Database;

/// A granted database. Cheap to clone.
#[derive(Clone)]
pub struct SqlGrant {
    pub(crate) database: Arc<Database>,
    /// Database time one call (a `poll`, a `create`) may spend in all, on top of its CPU
    /// deadline; a query past it answers `unavailable`.
    pub(crate) per_call: Duration,
}

impl SqlGrant {
    /// A grant of `database`, allowing each plugin call `per_call` of database time.
    pub fn new(database: Arc<Database>, per_call: Duration) -> Self {
        Self { database, per_call }
    }

    /// The client, for the checks the pipeline makes when a connector starts and its status.
    pub fn database(&self) -> &Arc<Database> {
        &self.database
    }

    /// The database time one call may spend.
    pub fn per_call(&self) -> Duration {
        self.per_call
    }
}

impl fmt::Debug for SqlGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlGrant").field("dialect", &self.database.dialect()).field("per_call", &self.per_call).finish()
    }
}
