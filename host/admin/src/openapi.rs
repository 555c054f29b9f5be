//! `GET /v1/openapi.json`: the API reference, generated from the handlers' annotations and
//! the request and response types themselves, so it cannot drift from the code.

use axum::Json;
use utoipa::OpenApi;

use crate::{connectors, console, events, metrics, plugins, secrets, tokens, topics};

#[derive(OpenApi)]
#[openapi(
    info(title = "Turnpike admin API", description = "Manage plugins and connectors of a Turnpike host. Errors are `{\"error\", \"detail\", \"key\"?, \"problems\"?}`."),
    paths(
        crate::healthz,
        crate::cluster,
        metrics::metrics,
        events::stream,
        connectors::list,
        connectors::get,
        connectors::put,
        connectors::delete,
        connectors::validate,
        connectors::pause,
        connectors::resume,
        connectors::stop,
        connectors::restart,
        connectors::offsets,
        connectors::reset_offsets,
        plugins::list,
        plugins::show,
        plugins::upload,
        plugins::delete,
        plugins::dry_run,
        secrets::put,
        secrets::list,
        secrets::delete,
        tokens::create,
        tokens::list,
        tokens::revoke,
        topics::list,
        topics::sample,
        console::index,
        console::file,
        document,
    ),
    // Named only by path parameters, so not collected from the bodies.
    components(schemas(turnpike_config::PluginName)),
    modifiers(&BearerAuth),
    tags((name = "connectors"), (name = "plugins"), (name = "secrets"), (name = "tokens"), (name = "topics"), (name = "console"), (name = "operations"))
)]
pub struct ApiDoc;

/// Says that every operation takes `Authorization: Bearer <token>` (required on a host with
/// `admin.auth`, except `/healthz` and this document).
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme("bearer", SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some("A token from `turnpike token create`")).build()));
        doc.security = Some(vec![SecurityRequirement::new("bearer", Vec::<String>::new())]);
    }
}

/// The OpenAPI 3.1 document.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "operations", responses((status = 200, description = "This document")))]
pub async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}
