//! The `http` capability: outgoing HTTP for plugins (`wasi:http`), denied unless the connector
//! grants it.
//!
//! wasmtime's default sender connects to whatever the guest names. Here every request goes
//! through the instance's hooks (`state.rs`): the host must be on the connector's allowlist
//! (`grant.rs`), its name is resolved once by the host, internal addresses are dropped (an
//! internal address is reached only by a request to that address itself, allowed by an entry
//! naming it), and the connection is made to the checked address itself, so DNS cannot change
//! between check and connect (`send.rs`). Timeouts are clamped, and bound every wait: connect
//! and handshakes, the response head, and each gap in the response body. A refusal reaches the
//! plugin as an `error-code`, never a trap, and is remembered so the connector's error can say
//! why.

mod grant;
mod send;
mod state;

use std::sync::Arc;

use wasmtime::component::Linker;

pub use grant::HttpGrant;
pub(crate) use state::HttpState;

use super::{Capability, CapabilityStates};
use crate::labels::InstanceLabels;

/// The `http` capability.
pub(crate) struct HttpCapability;

impl Capability for HttpCapability {
    type Grant = HttpGrant;
    type State = HttpState;

    fn prepare(grant: &HttpGrant, labels: &InstanceLabels) -> HttpState {
        HttpState::new(Arc::new(grant.clone()), labels.clone())
    }

    /// Links `wasi:http/outgoing-handler` and `wasi:http/types` only (not the incoming
    /// handler: plugins serve nothing).
    fn add_to_linker<T: CapabilityStates>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)
    }
}
