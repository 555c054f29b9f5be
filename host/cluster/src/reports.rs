//! The status log: each host reports each of its connectors (state, config version,
//! partitions, counts) and a heartbeat; every host reads every report, so any host's API
//! answers for the whole cluster.
//!
//! ```text
//! host/<host>                {"at_ms", "group_protocol"}                  every interval
//! report/<host>/<connector>  {"state", "version", "partitions", …, "at_ms"} when it changes, or every 30 s
//! ```

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use turnpike_kafka::Tailed;
use turnpike_pipeline::{ConnectorState, Host, HostReport, Member, TaskPartition};

use crate::Cluster;

/// A report unchanged but for its counts is written again this often at most.
const REFRESH: Duration = Duration::from_secs(30);

/// A host is alive while its last heartbeat is younger than this many intervals.
const ALIVE_INTERVALS: u32 = 3;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Beat {
    at_ms: u64,
    /// The consumer group protocol the host's connectors use; absent from older hosts'
    /// beats. Hosts choose at start, each on its own, so the cluster shows when they differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    group_protocol: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Report {
    state: String,
    version: u64,
    partitions: Vec<TaskPartition>,
    records_in: u64,
    records_out: u64,
    lag: Option<i64>,
    at_ms: u64,
}

/// Every host's last heartbeat and reports, as read from the status log.
#[derive(Debug, Default)]
pub(crate) struct Reports {
    beats: HashMap<String, Beat>,
    /// By connector, then host.
    reports: HashMap<String, HashMap<String, Report>>,
}

impl Reports {
    /// Whether `host`'s last heartbeat is recent.
    fn alive(&self, host: &str, interval: Duration) -> bool {
        self.beats.get(host).is_some_and(|beat| now_ms().saturating_sub(beat.at_ms) < (interval * ALIVE_INTERVALS).as_millis() as u64)
    }

    /// Every host with a heartbeat, by id.
    pub(crate) fn members(&self, interval: Duration) -> Vec<Member> {
        let mut out: Vec<Member> = self
            .beats
            .iter()
            .map(|(host, beat)| Member {
                host: host.clone(),
                alive: self.alive(host, interval),
                reported_at: rfc3339(beat.at_ms),
                group_protocol: beat.group_protocol.clone(),
                connectors: self.reports.values().filter(|hosts| hosts.contains_key(host)).count(),
            })
            .collect();
        out.sort_by(|a, b| a.host.cmp(&b.host));
        out
    }

    /// Every host's report on `connector`, by host id.
    pub(crate) fn of(&self, connector: &str, interval: Duration) -> Vec<HostReport> {
        let alive = |host: &str| self.alive(host, interval);
        let mut out: Vec<HostReport> = self
            .reports
            .get(connector)
            .into_iter()
            .flatten()
            .map(|(host, r)| HostReport {
                host: host.clone(),
                alive: alive(host),
                state: r.state.clone(),
                version: r.version,
                partitions: r.partitions.clone(),
                records_in: r.records_in,
                records_out: r.records_out,
                lag: r.lag,
                reported_at: rfc3339(r.at_ms),
            })
            .collect();
        out.sort_by(|a, b| a.host.cmp(&b.host));
        out
    }

    fn take(&mut self, key: &str, value: Option<&[u8]>) {
        if let Some(host) = key.strip_prefix("host/") {
            match value.and_then(|v| serde_json::from_slice::<Beat>(v).ok()) {
                Some(beat) => drop(self.beats.insert(host.to_owned(), beat)),
                None => drop(self.beats.remove(host)),
            }
        } else if let Some((host, connector)) = key.strip_prefix("report/").and_then(|rest| rest.split_once('/')) {
            match value.and_then(|v| serde_json::from_slice::<Report>(v).ok()) {
                Some(report) => drop(self.reports.entry(connector.to_owned()).or_default().insert(host.to_owned(), report)),
                None => {
                    if let Some(hosts) = self.reports.get_mut(connector) {
                        hosts.remove(host);
                        if hosts.is_empty() {
                            self.reports.remove(connector);
                        }
                    }
                }
            }
        }
    }
}

fn rfc3339(at_ms: u64) -> String {
    humantime::format_rfc3339_millis(SystemTime::UNIX_EPOCH + Duration::from_millis(at_ms)).to_string()
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Takes every record of the status log into `cluster.reports`.
pub(crate) async fn read(cluster: Arc<Cluster>, mut log: mpsc::Receiver<Tailed>) {
    while let Some(item) = log.recv().await {
        if let Tailed::Record(record) = item {
            cluster.reports.lock().unwrap_or_else(|p| p.into_inner()).take(&record.key, record.value.as_deref());
        }
    }
}

/// Writes this host's heartbeat every interval, and each connector's report when it changed
/// (or every [`REFRESH`]); a tombstone for a connector it no longer has.
pub(crate) async fn publish(cluster: Arc<Cluster>, host: Arc<Host>) {
    let mut written: HashMap<String, (Report, Instant)> = HashMap::new();
    let mut tick = tokio::time::interval(cluster.interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let group_protocol = host.group_protocol().map(|chosen| chosen.protocol.clone());
    while !cluster.stop.load(std::sync::atomic::Ordering::Relaxed) {
        tick.tick().await;
        let at_ms = now_ms();
        let beat = serde_json::to_vec(&Beat { at_ms, group_protocol: group_protocol.clone() }).unwrap_or_default();
        if let Err(e) = cluster.status_log.write(&format!("host/{}", cluster.host_id), Some(&beat)).await {
            tracing::warn!(error = %e, "could not write this host's heartbeat to the status log");
            continue;
        }
        let statuses = host.local_statuses();
        let mut seen = Vec::with_capacity(statuses.len());
        for status in statuses {
            let report = Report {
                state: serde_json::to_value(status.state).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default(),
                version: cluster.running_versions.lock().unwrap_or_else(|p| p.into_inner()).get(&status.name).copied().unwrap_or(0),
                // What it reads: none while paused (its tasks are listed then, with the
                // partitions as last assigned, which a long pause may have lost).
                partitions: if status.state == ConnectorState::Running { status.tasks.iter().flat_map(|t| t.partitions.iter().cloned()).collect() } else { Vec::new() },
                records_in: status.records_in,
                records_out: status.records_out,
                lag: status.lag,
                at_ms,
            };
            seen.push(status.name.clone());
            let same = |old: &Report| Report { records_in: report.records_in, records_out: report.records_out, lag: report.lag, at_ms, ..old.clone() } == report;
            if written.get(&status.name).is_some_and(|(old, when)| same(old) && when.elapsed() < REFRESH) {
                continue;
            }
            let key = format!("report/{}/{}", cluster.host_id, status.name);
            match serde_json::to_vec(&report) {
                Ok(value) => match cluster.status_log.write(&key, Some(&value)).await {
                    Ok(_) => drop(written.insert(status.name, (report, Instant::now()))),
                    Err(e) => tracing::warn!(error = %e, "could not write a connector report to the status log"),
                },
                Err(e) => tracing::warn!(error = %e, "could not encode a connector report"),
            }
        }
        let gone: Vec<String> = written.keys().filter(|name| !seen.contains(name)).cloned().collect();
        for name in gone {
            if cluster.status_log.write(&format!("report/{}/{name}", cluster.host_id), None).await.is_ok() {
                written.remove(&name);
            }
        }
    }
}

/// Removes this host's heartbeat and reports from the status log (a clean shutdown).
pub(crate) async fn withdraw(cluster: &Cluster) {
    // What it reported and read back, and every connector it may have reported on since.
    let mut mine: std::collections::BTreeSet<String> = {
        let reports = cluster.reports.lock().unwrap_or_else(|p| p.into_inner());
        reports.reports.iter().filter(|(_, hosts)| hosts.contains_key(&cluster.host_id)).map(|(c, _)| c.clone()).collect()
    };
    mine.extend(cluster.view().connector_names());
    let keys: Vec<String> = mine.iter().map(|connector| format!("report/{}/{connector}", cluster.host_id)).chain([format!("host/{}", cluster.host_id)]).collect();
    // All in flight at once: one acknowledged write after another took seconds for a few
    // hundred connectors, and the leaving host gives this step a bounded time.
    futures::future::join_all(keys.iter().map(|key| cluster.status_log.write(key, None))).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each host says which group protocol it chose; a host from before that says nothing,
    /// and its beat still counts.
    #[test]
    fn members_show_each_hosts_group_protocol() {
        let mut reports = Reports::default();
        let now = now_ms();
        reports.take("host/new", Some(format!(r#"{{"at_ms":{now},"group_protocol":"consumer"}}"#).as_bytes()));
        reports.take("host/old", Some(format!(r#"{{"at_ms":{now}}}"#).as_bytes()));
        let members = reports.members(Duration::from_secs(1));
        let seen: Vec<(&str, bool, Option<&str>)> = members.iter().map(|m| (m.host.as_str(), m.alive, m.group_protocol.as_deref())).collect();
        assert_eq!(seen, [("new", true, Some("consumer")), ("old", true, None)]);
        reports.take("host/new", None);
        assert_eq!(reports.members(Duration::from_secs(1)).len(), 1, "a tombstone removes the host");
    }
}
