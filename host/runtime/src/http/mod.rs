//! Outgoing HTTP for plugins (`wasi:http`), denied unless the connector grants it.
//!
//! wasmtime's default sender connects to whatever the guest names. Here every request goes
//! through [`GuardedHooks::send_request`]: the host must be on the connector's allowlist, its
//! name is resolved once by the host, internal addresses are dropped (an internal address is
//! reached only by a request to that address itself, allowed by an entry naming it), and the
//! connection is made to the checked address itself (so DNS cannot change between check and
//! connect). Timeouts are clamped, and bound every wait: connect and handshakes, the
//! response head, and each gap in the response body. A refusal reaches the plugin as an
//! `error-code`, never a trap, and is remembered so the connector's error can say why.

mod grant;
mod send;

use std::sync::{Arc, Mutex};

use wasmtime_wasi_http::WasiHttpHooks;

pub use grant::HttpGrant;

/// The store-side hooks: the grant, and the last refusal for error reports.
pub(crate) struct GuardedHooks {
    pub(crate) grant: Arc<HttpGrant>,
    pub(crate) refusal: Arc<Mutex<Option<String>>>,
    pub(crate) labels: crate::InstanceLabels,
}

impl GuardedHooks {
    /// Takes the last refusal, if any, since the previous call.
    pub(crate) fn take_refusal(&self) -> Option<String> {
        self.refusal.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

type SendResult = wasmtime_wasi_http::Result<(
    http::Response<wasmtime_wasi_http::WasiBody>,
    Box<dyn std::future::Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
)>;

impl WasiHttpHooks for GuardedHooks {
    fn send_request(
        &mut self,
        request: http::Request<wasmtime_wasi_http::WasiBody>,
        options: Option<wasmtime_wasi_http::RequestOptions>,
        _fut: Box<dyn std::future::Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> Box<dyn std::future::Future<Output = SendResult> + Send> {
        let (grant, refusal, labels) = (self.grant.clone(), self.refusal.clone(), self.labels.clone());
        Box::new(async move {
            match send::guarded_send(&grant, request, options).await {
                Ok(sent) => Ok(sent),
                Err(send::Failed { refused: Some(reason), code }) => {
                    tracing::warn!(connector = %labels.connector, plugin = %labels.plugin, %reason, "outgoing HTTP request refused");
                    *refusal.lock().unwrap_or_else(|p| p.into_inner()) = Some(reason);
                    Err(code)
                }
                Err(send::Failed { refused: None, code }) => Err(code),
            }
        })
    }
}
