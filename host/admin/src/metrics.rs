//! `GET /metrics`: Prometheus text exposition, built from connector statuses and event counts
//! at scrape time (the statuses are the one source of the numbers), plus the process's own
//! figures (resident memory, threads, CPU) under the same `turnpike_` prefix.
//!
//! Labels are bounded: connector names, their plugin stages, their input partitions, and
//! fixed outcome/direction words; never record contents or ids.

use std::sync::Arc;

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use prometheus::proto::{Bucket, Histogram, LabelPair, Metric, MetricFamily, MetricType};
use prometheus::{CounterVec, Encoder, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};
use turnpike_pipeline::{ConnectorStatus, Host};

fn register<C: prometheus::core::Collector + Clone + 'static>(registry: &Registry, collector: C) -> prometheus::Result<C> {
    registry.register(Box::new(collector.clone()))?;
    Ok(collector)
}

fn int_counter(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> prometheus::Result<IntCounterVec> {
    register(registry, IntCounterVec::new(Opts::new(name, help), labels)?)
}

fn int_gauge(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> prometheus::Result<IntGaugeVec> {
    register(registry, IntGaugeVec::new(Opts::new(name, help), labels)?)
}

/// Every connector's batch durations as one histogram family (the statuses hold the bucket
/// counts; the crate's own histogram can only observe values, not take counts).
fn batch_duration_family(statuses: &[ConnectorStatus]) -> MetricFamily {
    let metrics = statuses
        .iter()
        .map(|s| {
            let d = &s.batch_durations;
            let mut histogram = Histogram::default();
            histogram.set_sample_count(d.count);
            histogram.set_sample_sum(d.sum_seconds);
            histogram.set_bucket(
                d.buckets
                    .iter()
                    .map(|(upper, n)| {
                        let mut bucket = Bucket::default();
                        bucket.set_upper_bound(*upper);
                        bucket.set_cumulative_count(*n);
                        bucket
                    })
                    .collect(),
            );
            let mut label = LabelPair::default();
            label.set_name("connector".into());
            label.set_value(s.name.clone());
            let mut metric = Metric::from_label(vec![label]);
            metric.set_histogram(histogram);
            metric
        })
        .collect();
    let mut family = MetricFamily::default();
    family.set_name("turnpike_connector_batch_duration_seconds".into());
    family.set_help("How long a connector took per batch: its plugins, and handing the outputs to the producer (a sink: the write)".into());
    family.set_field_type(MetricType::HISTOGRAM);
    family.set_metric(metrics);
    family
}

fn render(host: &Host) -> prometheus::Result<String> {
    let registry = Registry::new();
    let records = int_counter(&registry, "turnpike_connector_records_total", "Records per connector by outcome (in, out, failed, dead_lettered)", &["connector", "outcome"])?;
    let bytes = int_counter(&registry, "turnpike_connector_bytes_total", "Bytes of keys, values and headers per connector, read (in) and written (out)", &["connector", "direction"])?;
    let lag = int_gauge(&registry, "turnpike_connector_lag_records", "Records in the connector's input partitions not yet read (running transforms and sinks)", &["connector"])?;
    let partition_lag = int_gauge(&registry, "turnpike_partition_lag_records", "Records in one input partition not yet read by the connector", &["connector", "topic", "partition"])?;
    let memory = int_gauge(&registry, "turnpike_plugin_memory_bytes", "Linear memory one plugin instance holds", &["connector", "task", "stage", "plugin"])?;
    let task_records = int_counter(&registry, "turnpike_task_records_total", "Records one task of the connector read (in) and wrote (out) in its current run", &["connector", "task", "outcome"])?;
    let task_bytes = int_counter(&registry, "turnpike_task_bytes_total", "Bytes of keys, values and headers one task of the connector read (in) and wrote (out) in its current run", &["connector", "task", "direction"])?;
    let task_lag = int_gauge(&registry, "turnpike_task_lag_records", "Records in one task's input partitions not yet read", &["connector", "task"])?;
    let connector_memory = int_gauge(&registry, "turnpike_connector_plugin_memory_bytes", "Linear memory all the connector's plugin instances hold, summed", &["connector"])?;
    let cpu = register(&registry, CounterVec::new(Opts::new("turnpike_connector_plugin_cpu_seconds_total", "CPU time the connector's plugin instances spent in calls"), &["connector"])?)?;
    let unreachable = int_gauge(&registry, "turnpike_connector_broker_unreachable", "1 while no Kafka broker answers the connector's clients", &["connector"])?;
    let outages = int_counter(&registry, "turnpike_connector_broker_outages_total", "Times no Kafka broker answered the connector's clients", &["connector"])?;
    let revoked = int_counter(&registry, "turnpike_connector_partitions_revoked_total", "Input partitions the consumer group revoked from the connector's tasks on this host, to move them to another host or task", &["connector"])?;
    let lost = int_counter(&registry, "turnpike_connector_partitions_lost_total", "Input partitions the connector's tasks on this host lost because the group went on without them (session or poll interval ran out)", &["connector"])?;
    let faults = int_counter(&registry, "turnpike_connector_faults_total", "Plugin faults per connector by class", &["connector", "class"])?;
    let failures = int_counter(&registry, "turnpike_connector_failures_total", "Times a connector failed, by class", &["connector", "class"])?;
    let restarts = int_counter(&registry, "turnpike_connector_restarts_total", "Automatic connector restarts after failures", &["connector"])?;
    let retries = int_counter(&registry, "turnpike_connector_retries_total", "Retries of operations a plugin reported as retriable", &["connector"])?;
    let instance_restarts = int_counter(&registry, "turnpike_plugin_instance_restarts_total", "Plugin instances re-created after a fault", &["connector"])?;
    let instance_replacements = int_counter(&registry, "turnpike_plugin_instance_replacements_total", "Transform instances replaced between batches as their memory neared its cap", &["connector"])?;
    let events = int_counter(&registry, "turnpike_events_total", "Operator events by kind", &["kind"])?;
    let state = int_gauge(&registry, "turnpike_connector_state", "1 for the connector's current state", &["connector", "state"])?;
    #[cfg(target_os = "linux")]
    registry.register(Box::new(prometheus::process_collector::ProcessCollector::new(std::process::id() as prometheus::process_collector::pid_t, "turnpike")))?;

    let statuses = host.statuses();
    for s in &statuses {
        let c = s.name.as_str();
        for (outcome, n) in [("in", s.records_in), ("out", s.records_out), ("failed", s.records_failed), ("dead_lettered", s.records_dead_lettered)] {
            records.with_label_values(&[c, outcome]).inc_by(n);
        }
        bytes.with_label_values(&[c, "in"]).inc_by(s.bytes_in);
        bytes.with_label_values(&[c, "out"]).inc_by(s.bytes_out);
        if let Some(l) = s.lag {
            lag.with_label_values(&[c]).set(l);
        }
        for p in &s.lag_by_partition {
            partition_lag.with_label_values(&[c, p.topic.as_str(), &p.partition.to_string()]).set(p.lag);
        }
        for i in &s.instances {
            memory.with_label_values(&[c, &i.task.to_string(), i.stage.as_str(), i.plugin.as_str()]).set(i64::try_from(i.memory_bytes).unwrap_or(i64::MAX));
        }
        for t in &s.tasks {
            let task = t.task.to_string();
            for (way, records, bytes) in [("in", t.records_in, t.bytes_in), ("out", t.records_out, t.bytes_out)] {
                task_records.with_label_values(&[c, task.as_str(), way]).inc_by(records);
                task_bytes.with_label_values(&[c, task.as_str(), way]).inc_by(bytes);
            }
            if let Some(lag) = t.lag {
                task_lag.with_label_values(&[c, task.as_str()]).set(lag);
            }
        }
        connector_memory.with_label_values(&[c]).set(i64::try_from(s.plugin_memory_bytes).unwrap_or(i64::MAX));
        cpu.with_label_values(&[c]).inc_by(s.plugin_cpu_seconds);
        unreachable.with_label_values(&[c]).set(i64::from(s.broker_unreachable.is_some()));
        outages.with_label_values(&[c]).inc_by(s.broker_outages);
        revoked.with_label_values(&[c]).inc_by(s.partitions_revoked);
        lost.with_label_values(&[c]).inc_by(s.partitions_lost);
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
    let mut families = registry.gather();
    if !statuses.is_empty() {
        families.push(batch_duration_family(&statuses));
    }
    let mut text = Vec::new();
    TextEncoder::new().encode(&families, &mut text)?;
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
