//! The `sql` capability: sources query the one database their connector grants
//! (`database:`), read-only, through the host's client (`turnpike-sql`). Credentials, the
//! connection and TLS never enter the guest; every statement is checked against the grant's
//! tables and run in a read-only transaction by the client. Time spent waiting for the
//! database is credited back to the plugin's CPU deadline (`state.rs`), up to the grant's
//! per-call allowance. `host.rs` is the import itself.
//!
//! Without a grant every call answers `not-granted`.

mod grant;
mod host;
mod state;

use wasmtime::component::{HasSelf, Linker};

pub use grant::SqlGrant;
pub(crate) use state::SqlState;

use super::{Capability, CapabilityStates};
use crate::labels::InstanceLabels;

/// The `sql` capability.
pub(crate) struct SqlCapability;

impl Capability for SqlCapability {
    type Grant = Option<SqlGrant>;
    type State = SqlState;

    fn prepare(grant: &Option<SqlGrant>, _labels: &InstanceLabels) -> SqlState {
        SqlState::new(grant.clone())
    }

    fn add_to_linker<T: CapabilityStates>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        crate::bindings::source::turnpike::plugin::sql::add_to_linker::<T, HasSelf<SqlState>>(linker, T::sql)
    }
}
