//! The limits and grants one instance runs under. A module of its own because every plugin
//! kind, the sandbox and the store read them; it depends only on the capabilities' grants
//! and on what the sandbox hides (`scrub.rs`).

use std::time::Duration;

use crate::capabilities::http::HttpGrant;
use crate::interrupt::Interrupt;
use crate::scrub::Scrub;
use crate::capabilities::object_store::StorageGrant;
use crate::capabilities::sql::SqlGrant;

/// Limits one instance runs under.
#[derive(Debug, Clone)]
pub struct InstanceLimits {
    /// Cap on each linear memory. Default 64 MiB.
    pub memory_bytes: usize,
    /// CPU deadline for one batch. Default 5 s.
    pub batch_timeout: Duration,
    /// Deadline for instantiation plus `create`. Default 10 s.
    pub create_timeout: Duration,
    /// Bytes one batch's output may carry from the plugin to the host (data and columns).
    /// Default 64 MiB. Enforced while copying, so a plugin cannot make the host allocate more.
    pub max_output_bytes: usize,
    /// Output records one batch may produce. Default 100,000.
    pub max_output_records: usize,
    /// Outgoing HTTP the plugin may make (the `http` capability's grant). Default: none.
    pub http: HttpGrant,
    /// What the connector's secret references resolved to: replaced by `***` in every error,
    /// log line and trap explanation the plugin produces. Default: nothing.
    pub scrub: Scrub,
    /// The bucket and prefix a sink may write objects to (the `object-store` capability's
    /// grant). Default: none.
    pub storage: Option<StorageGrant>,
    /// The database a source may query, read-only (the `sql` capability's grant). Default:
    /// none.
    pub sql: Option<SqlGrant>,
    /// Ends the instance's calls early when its connector is stopping. Default: never fired.
    pub interrupt: Interrupt,
}

impl Default for InstanceLimits {
    fn default() -> Self {
        Self {
            memory_bytes: 64 << 20,
            batch_timeout: Duration::from_secs(5),
            create_timeout: Duration::from_secs(10),
            max_output_bytes: 64 << 20,
            max_output_records: 100_000,
            http: HttpGrant::default(),
            scrub: Scrub::default(),
            storage: None,
            sql: None,
            interrupt: Interrupt::default(),
        }
    }
}
