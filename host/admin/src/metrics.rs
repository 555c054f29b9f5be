//! `GET /metrics`: Prometheus text exposition, built from connector statuses and event counts
//! at scrape time (the statuses are the one source of the numbers).

use std::sync::Arc;

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use prometheus::{Encoder, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};
use turnpike_pipeline::Host;

fn counter(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> prometheus::Result<IntCounterVec> {
    let c = IntCounterVec::new(Opts::new(name, help), labels)?;
    registry.register(Box::new(c.clone()))?;
    Ok(c)
}

fn render(host: &Host) -> prometheus::Result<String> {
    let registry = Registry::new();
    let records = counter(&registry, "turnpike_connector_records_total", "Records per connector by outcome (in, out, failed, dead_lettered)", &["connector", "outcome"])?;
    let faults = counter(&registry, "turnpike_connector_faults_total", "Plugin faults per connector by class", &["connector", "class"])?;
    let failures = counter(&registry, "turnpike_connector_failures_total", "Times a connector failed, by class", &["connector", "class"])?;
    let restarts = counter(&registry, "turnpike_connector_restarts_total", "Automatic connector restarts after failures", &["connector"])?;
    let retries = counter(&registry, "turnpike_connector_retries_total", "Retries of operations a plugin reported as retriable", &["connector"])?;
    let instance_restarts = counter(&registry, "turnpike_plugin_instance_restarts_total", "Plugin instances re-created after a fault", &["connector"])?;
    let instance_replacements = counter(&registry, "turnpike_plugin_instance_replacements_total", "Transform instances replaced between batches as their memory neared its cap", &["connector"])?;
    let events = counter(&registry, "turnpike_events_total", "Operator events by kind", &["kind"])?;
    let state = IntGaugeVec::new(Opts::new("turnpike_connector_state", "1 for the connector's current state"), &["connector", "state"])?;
    registry.register(Box::new(state.clone()))?;

    for s in host.statuses() {
        let c = s.name.as_str();
        for (outcome, n) in [("in", s.records_in), ("out", s.records_out), ("failed", s.records_failed), ("dead_lettered", s.records_dead_lettered)] {
            records.with_label_values(&[c, outcome]).inc_by(n);
        }
        for (class, n) in &s.faults {
            faults.with_label_values(&[c, class.as_str()]).inc_by(*n);
        }
        for (class, n) in &s.failures {
            failures.with_label_values(&[c, class.as_str()]).inc_by(*n);
        }
        restarts.with_label_values(&[c]).inc_by(s.restarts);
        retries.with_label_values(&[c]).inc_by(s.retries);
        instance_restarts.with_label_values(&[c]).inc_by(s.instance_restarts);
        instance_replacements.with_label_values(&[c]).inc_by(s.instance_replacements);
        let state_name = serde_json::to_value(s.state).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        state.with_label_values(&[c, state_name.as_str()]).set(1);
    }
    for (kind, n) in host.events().counts() {
        events.with_label_values(&[kind]).inc_by(n);
    }
    let mut text = Vec::new();
    TextEncoder::new().encode(&registry.gather(), &mut text)?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}

/// Handler for `GET /metrics`.
#[utoipa::path(get, path = "/metrics", tag = "operations", responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain")))]
pub async fn metrics(State(host): State<Arc<Host>>) -> impl IntoResponse {
    match render(&host) {
        Ok(text) => ([(CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "metrics could not be rendered");
            (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "metrics unavailable").into_response()
        }
    }
}
