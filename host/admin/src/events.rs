//! `GET /v1/events`: operator events as server-sent events, for dashboards and chat bridges.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Extension, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::{Stream, StreamExt};
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;
use turnpike_pipeline::{Event, EventKind, Host};

use crate::auth::Principal;

#[utoipa::path(get, path = "/v1/events", tag = "operations", responses((status = 200, description = "Server-sent events: `event: <kind>`, `data: {\"time\", \"connector\", \"kind\", …}`", content_type = "text/event-stream")))]
/// Streams every event from now on: `event: <kind>`, `data: <JSON>`. A subscriber too slow to
/// keep up gets a `lagged` event saying how many it missed. Admins see every event; others
/// the events of their team's connectors and the audit events of their team's requests.
pub async fn stream(State(host): State<Arc<Host>>, Extension(caller): Extension<Principal>) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let feed = host.clone();
    let events = BroadcastStream::new(host.events().subscribe())
        .filter(move |item| std::future::ready(item.as_ref().map_or(true, |e| visible(&feed, &caller, e))))
        .map(|item| {
            let event = match item {
                Ok(e) => SseEvent::default().event(e.kind.name()).json_data(&e).unwrap_or_else(|_| SseEvent::default().event("error")),
                Err(BroadcastStreamRecvError::Lagged(n)) => SseEvent::default().event("lagged").data(n.to_string()),
            };
            Ok(event)
        });
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// Whether `caller` may see `event`.
fn visible(host: &Host, caller: &Principal, event: &Event) -> bool {
    if caller.is_admin() {
        return true;
    }
    match &event.kind {
        EventKind::Audit { team, .. } => team.is_some() && team.as_deref() == caller.team.as_ref().map(|t| t.as_str()),
        _ => host.connector_team(&event.connector).is_some_and(|owner| caller.sees(owner.as_ref())),
    }
}
