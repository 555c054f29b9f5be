//! The web console: static pages served from the binary itself (no CDN, no JavaScript
//! toolchain at run time), over the same admin API the CLI uses. The assets hold no data, so
//! they need no token; every call they make goes through the API's guard and roles.

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Every asset, by the name it is served under (`/ui/<name>`), with its media type.
const ASSETS: &[(&str, &str, &str)] = &[
    ("index.html", "text/html; charset=utf-8", include_str!("assets/index.html")),
    ("style.css", "text/css; charset=utf-8", include_str!("assets/style.css")),
    ("app.js", "text/javascript; charset=utf-8", include_str!("assets/app.js")),
    ("api.js", "text/javascript; charset=utf-8", include_str!("assets/api.js")),
    ("dom.js", "text/javascript; charset=utf-8", include_str!("assets/dom.js")),
    ("chart.js", "text/javascript; charset=utf-8", include_str!("assets/chart.js")),
    ("overview.js", "text/javascript; charset=utf-8", include_str!("assets/overview.js")),
    ("connector.js", "text/javascript; charset=utf-8", include_str!("assets/connector.js")),
    ("mask.js", "text/javascript; charset=utf-8", include_str!("assets/mask.js")),
    ("plugins.js", "text/javascript; charset=utf-8", include_str!("assets/plugins.js")),
    ("events.js", "text/javascript; charset=utf-8", include_str!("assets/events.js")),
];

/// The pages may load only their own scripts and styles and talk only to their own origin,
/// and may not be framed: an injected string cannot run, and no other site can overlay them.
const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// The total size of the console's assets, in bytes (reported by the browser test).
pub fn assets_size() -> usize {
    ASSETS.iter().map(|(_, _, body)| body.len()).sum()
}

fn asset(name: &str) -> Response {
    let Some((_, media_type, body)) = ASSETS.iter().find(|(n, _, _)| *n == name) else {
        return ApiError::new(StatusCode::NOT_FOUND, "not_found", format!("the console has no file {name:?}")).into_response();
    };
    let mut response = (*body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    // A new binary may bring new assets: always revalidate.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// `GET /`: the console's page.
#[utoipa::path(get, path = "/", tag = "console", responses((status = 200, description = "The web console (HTML)", content_type = "text/html")))]
pub async fn index() -> Response {
    asset("index.html")
}

/// `GET /ui/{file}`: one of the console's scripts or styles.
#[utoipa::path(get, path = "/ui/{file}", tag = "console", params(("file" = String, Path, description = "Asset name, e.g. app.js")), responses((status = 200, description = "A script, style sheet or page of the console"), (status = 404, body = ApiError)))]
pub async fn file(Path(file): Path<String>) -> Response {
    asset(&file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_an_asset_imports_is_served() {
        for (name, _, body) in ASSETS {
            for import in body.split("from '").skip(1).chain(body.split("from \"").skip(1)) {
                let path = import.split(['\'', '"']).next().unwrap_or_default();
                if let Some(served) = path.strip_prefix("/ui/") {
                    assert!(ASSETS.iter().any(|(n, _, _)| *n == served), "{name} imports {path}, which is not served");
                }
            }
        }
    }

    #[test]
    fn pages_carry_a_policy_that_forbids_inline_scripts() {
        let response = asset("index.html");
        assert_eq!(response.status(), StatusCode::OK);
        let csp = response.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"), "{csp}");
        assert_eq!(asset("nope.js").status(), StatusCode::NOT_FOUND);
    }
}
