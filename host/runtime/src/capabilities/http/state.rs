//! What one instance's `wasi:http` keeps: wasmtime's HTTP context, and the hooks through which
//! every request it makes goes (the connector's grant, and the last refusal).

use std::sync::{Arc, Mutex};

use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpHooks};

use super::grant::HttpGrant;
use super::send;
use crate::labels::InstanceLabels;

/// One instance's `wasi:http` state. The resource table it works in is the store's own,
/// shared with the rest of WASI (the store's data lends it through `WasiHttpView`).
pub(crate) struct HttpState {
    pub(crate) ctx: WasiHttpCtx,
    pub(crate) hooks: GuardedHooks,
}

impl HttpState {
    pub(super) fn new(grant: Arc<HttpGrant>, labels: InstanceLabels) -> Self {
        Self { ctx: WasiHttpCtx::new(), hooks: GuardedHooks { grant, refusal: Arc::default(), labels } }
    }

    /// Takes the last refusal, if any, since the previous call.
    pub(crate) fn take_refusal(&self) -> Option<String> {
        self.hooks.refusal.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// The store-side hooks: the grant, and the last refusal for error reports.
pub(crate) struct GuardedHooks {
    grant: Arc<HttpGrant>,
    refusal: Arc<Mutex<Option<String>>>,
    labels: InstanceLabels,
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
