//! A request whose handling panics (a bug in the host, never the caller's doing) is answered
//! `500` with the documented error JSON, and the panic is logged. Without this the connection
//! was dropped unanswered: the CLI said only that it got no answer, and nothing told the
//! caller whether the change it asked for had been made. (Tested through the router's layers,
//! in `lib.rs`.)

use std::any::Any;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use tower_http::catch_panic::CatchPanicLayer;

use crate::error::ApiError;

/// The layer, for the outside of the router.
pub(crate) fn layer() -> CatchPanicLayer<fn(Box<dyn Any + Send + 'static>) -> Response> {
    CatchPanicLayer::custom(answer as fn(Box<dyn Any + Send + 'static>) -> Response)
}

fn answer(panic: Box<dyn Any + Send + 'static>) -> Response {
    let message = panic.downcast_ref::<&str>().map(|s| (*s).to_owned()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_else(|| "panic".into());
    tracing::error!(panic = %message, "an API request panicked; this is a bug in the host, please report it with the host log");
    let detail = "the host failed while answering (a bug in the host; see its log); what the request asked may or may not have been done: read the resource again before retrying";
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", detail).into_response()
}
