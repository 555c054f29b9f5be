//! `GET /v1/events`: operator events as server-sent events, for dashboards and chat bridges.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::{Stream, StreamExt};
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;
use turnpike_pipeline::Host;

#[utoipa::path(get, path = "/v1/events", tag = "operations", responses((status = 200, description = "Server-sent events: `event: <kind>`, `data: {\"time\", \"connector\", \"kind\", …}`", content_type = "text/event-stream")))]
/// Streams every event from now on: `event: <kind>`, `data: <JSON>`. A subscriber too slow to
/// keep up gets a `lagged` event saying how many it missed.
pub async fn stream(State(host): State<Arc<Host>>) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let events = BroadcastStream::new(host.events().subscribe()).map(|item| {
        let event = match item {
            Ok(e) => SseEvent::default().event(e.kind.name()).json_data(&e).unwrap_or_else(|_| SseEvent::default().event("error")),
            Err(BroadcastStreamRecvError::Lagged(n)) => SseEvent::default().event("lagged").data(n.to_string()),
        };
        Ok(event)
    });
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
