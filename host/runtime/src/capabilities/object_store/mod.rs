//! The `object-store` capability: sinks write objects into the bucket and under the prefix
//! their connector grants (`storage:`), through the host's S3 client. Credentials and the
//! client never enter the guest; every key is checked against the grant (`grant.rs`); bytes
//! are buffered into parts under the connector's budget and uploaded by host tasks while the
//! plugin goes on (`upload.rs`), outside its deadline; the sink task waits for all of it
//! after `flush` and before committing (`state.rs`). `host.rs` is the import itself.
//!
//! Without a grant every call answers `not-granted`.

mod grant;
mod host;
mod state;
mod upload;

use wasmtime::component::{HasSelf, Linker};

pub use grant::StorageGrant;
pub(crate) use state::StoreState;
pub use state::UploadSlot;

use super::{Capability, CapabilityStates};
use crate::labels::InstanceLabels;

/// The `object-store` capability.
pub(crate) struct ObjectStoreCapability;

impl Capability for ObjectStoreCapability {
    type Grant = Option<StorageGrant>;
    type State = StoreState;

    fn prepare(grant: &Option<StorageGrant>, _labels: &InstanceLabels) -> StoreState {
        StoreState::new(grant.clone())
    }

    fn add_to_linker<T: CapabilityStates>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        crate::bindings::sink::turnpike::plugin::object_store::add_to_linker::<T, HasSelf<StoreState>>(linker, T::object_store)
    }
}
