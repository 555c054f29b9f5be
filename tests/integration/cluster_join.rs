//! A fourth host joining a cluster under load: the partitions that stay where they are keep
//! flowing (cooperative rebalancing, and KIP-848's). The group takes from each host only what
//! moves (its `partitions_revoked`), and no record on a partition that stayed waits longer
//! than in the same run before the join.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use turnpike_tests::{create_topic_with, http_json, produce_records, producer, read_timestamps, unique, HostProcess, Outgoing};

use crate::cluster::{identity, reports, start_host, start_hosts, wait_spread, Protocol};

/// Which host reads each input partition of `connector`, as `host` sees the reports.
fn owners(host: &HostProcess, connector: &str) -> BTreeMap<i64, String> {
    reports(host, connector).into_iter().filter(|r| r.4).flat_map(|r| r.3.into_iter().map(move |p| (p, r.0.clone()))).collect()
}

/// How many input partitions of `connector` the group took from `host`'s tasks so far.
fn revoked(host: &HostProcess, connector: &str) -> anyhow::Result<u64> {
    let (status, body) = host.get(&format!("/v1/connectors/{connector}"))?;
    anyhow::ensure!(status == 200, "{status} {body}");
    body["partitions_revoked"].as_u64().ok_or_else(|| anyhow::anyhow!("no partitions_revoked in {body}"))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or_default()
}

/// A time as the hosts' logs print it (UTC time of day, `HH:MM:SS.mmm`), to find their lines.
fn time_of_day(ms: i64) -> String {
    let ms = ms.rem_euclid(86_400_000);
    format!("{:02}:{:02}:{:02}.{:03}", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
}

/// What every host logged from a second before `start` to half a second after `end`, for a
/// failure to show what the hosts were doing while a partition stalled.
fn logs_around(hosts: &[HostProcess], (start, end): (i64, i64)) -> String {
    let (from, to) = (time_of_day(start - 1000), time_of_day(end + 500));
    // Log lines start with an RFC 3339 time: `2026-12-06T19:56:21.099319Z  INFO ...`; the
    // window may span midnight.
    let inside = |t: &str| if from <= to { (from.as_str()..to.as_str()).contains(&t) } else { t >= from.as_str() || t < to.as_str() };
    let mut out = String::new();
    for (i, host) in hosts.iter().enumerate() {
        let mut keep = false;
        let mut lines = Vec::new();
        for line in host.log_text().lines() {
            // A line without a time continues the one before (a multi-line message).
            if line.get(4..5) == Some("-") && line.get(10..11) == Some("T") {
                keep = line.get(11..23).is_some_and(inside);
            }
            if keep {
                lines.push(line.to_owned());
            }
        }
        out.push_str(&format!("--- host {} ({} lines from {from} to {to} UTC)\n{}\n", i + 1, lines.len(), lines.join("\n")));
    }
    out
}

/// Every host's log lines about its partitions being assigned, revoked or lost.
fn rebalance_lines(hosts: &[HostProcess]) -> String {
    let mut out = String::new();
    for (i, host) in hosts.iter().enumerate() {
        let log = host.log_text();
        let lines: Vec<&str> = log.lines().filter(|l| ["partitions assigned", "partitions revoked", "partitions lost"].iter().any(|what| l.contains(what))).collect();
        out.push_str(&format!("--- host {}\n{}\n", i + 1, lines.join("\n")));
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_joining_host_does_not_stall_the_partitions_that_stay_where_they_are_classic() -> anyhow::Result<()> {
    joining_host(Protocol::Classic).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_joining_host_does_not_stall_the_partitions_that_stay_where_they_are_kip_848() -> anyhow::Result<()> {
    joining_host(Protocol::Kip848).await
}

async fn joining_host(protocol: Protocol) -> anyhow::Result<()> {
    const PARTITIONS: i32 = 6;
    // Both measuring windows are this long: the same chance of a slow moment in each.
    const WINDOW_MS: i64 = 12_000;
    let topics = unique("cluster-join");
    let dir = std::env::temp_dir().join(&topics);
    let ids = ["join-1", "join-2", "join-3"];
    // One consumer group per variant: both run at once on the same broker.
    let name = format!("steady-{}", protocol.name());
    let hosts = start_hosts(&dir, &topics, &ids, protocol)?;
    let (input, output) = (unique("join-in"), unique("join-out"));
    // The broker stamps each record when it is appended: an output record when it became
    // readable, an input record when the connector could first have read it.
    create_topic_with(&input, PARTITIONS, &[("message.timestamp.type", "LogAppendTime")]).await?;
    create_topic_with(&output, PARTITIONS, &[("message.timestamp.type", "LogAppendTime")]).await?;
    let (status, body) = http_json(&hosts[0].admin, "PUT", &format!("/v1/connectors/{name}"), &identity(&name, &input, &output))?;
    assert_eq!(status, 201, "{body}");
    wait_spread(&hosts[0], &name, &ids, 1, i64::from(PARTITIONS))?;

    // One record to each input partition every 20 ms (300/s) until told to stop; keys
    // p<partition>-<n>, so every output record names the input partition it came from.
    let stop = Arc::new(AtomicBool::new(false));
    let producing = tokio::spawn({
        let (input, stop) = (input.clone(), stop.clone());
        async move {
            let producer = producer()?;
            let started = Instant::now();
            let mut n = 0u32;
            while !stop.load(Ordering::SeqCst) {
                let records: Vec<Outgoing> = (0..PARTITIONS).map(|p| Outgoing { key: format!("p{p}-{n}"), value: format!("{n}"), partition: Some(p), timestamp: None }).collect();
                produce_records(&producer, &input, &records).await?;
                n += 1;
                tokio::time::sleep((started + Duration::from_millis(20) * n).saturating_duration_since(Instant::now())).await;
            }
            anyhow::Ok(n as usize * PARTITIONS as usize)
        }
    });
    tokio::time::sleep(Duration::from_secs(3)).await;
    let baseline = (now_ms(), now_ms() + WINDOW_MS);
    tokio::time::sleep(Duration::from_millis(WINDOW_MS as u64)).await;

    // A fourth host joins: the broker gives it some partitions; the others stay put.
    let revoked_before = hosts.iter().map(|h| revoked(h, &name)).collect::<anyhow::Result<Vec<_>>>()?;
    let before = owners(&hosts[0], &name);
    let joining = (now_ms(), now_ms() + WINDOW_MS);
    let late = start_host(&dir, "join-4", &topics, protocol)?;
    wait_spread(&hosts[0], &name, &["join-1", "join-2", "join-3", "join-4"], 1, i64::from(PARTITIONS))?;
    let joined_in = now_ms() - joining.0;
    let after = owners(&hosts[0], &name);
    // What the group took from each host that was there: only what moved to the new host.
    // An eager rebalance takes every partition from every member, and on one local broker
    // gives them back within tens of milliseconds, too soon for the delays below to show it.
    let revoked_by_join: Vec<(&str, u64, usize)> = ids
        .iter()
        .zip(&hosts)
        .zip(&revoked_before)
        .map(|((id, host), was)| {
            let moved_away = before.iter().filter(|(p, owner)| owner.as_str() == *id && after.get(p).map(String::as_str) != Some(*id)).count();
            let now = revoked(host, &name)?;
            let taken = now.checked_sub(*was).ok_or_else(|| anyhow::anyhow!("{id}'s partitions_revoked went down, from {was} to {now}"))?;
            Ok((*id, taken, moved_away))
        })
        .collect::<anyhow::Result<_>>()?;
    tokio::time::sleep(Duration::from_millis((joining.1 - now_ms()).max(0) as u64 + 500)).await;
    stop.store(true, Ordering::SeqCst);
    let total = producing.await??;

    let out = read_timestamps(&output, Duration::from_secs(120), |got| got.iter().map(|r| &r.0).collect::<HashSet<_>>().len() >= total).await?;
    // Each record's delay through the connector: its first output's append time less its
    // input's. A pause of this test's producer, or of the broker, delays no record; a
    // partition that stalls delays every record that arrives on it meanwhile.
    let mut first_out: HashMap<&str, i64> = HashMap::new();
    for (key, _, at) in &out {
        first_out.entry(key.as_str()).and_modify(|t| *t = (*t).min(*at)).or_insert(*at);
    }
    anyhow::ensure!(first_out.len() >= total, "{} of the {total} records came out", first_out.len());
    let inputs = read_timestamps(&input, Duration::from_secs(120), |got| got.len() >= total).await?;
    anyhow::ensure!(inputs.len() >= total, "read {} of the {total} input records back", inputs.len());
    // (input partition, arrival, delay) per record.
    let delays: Vec<(i64, i64, i64)> = inputs
        .iter()
        .filter_map(|(key, partition, arrived)| first_out.get(key.as_str()).map(|out| (i64::from(*partition), *arrived, out - arrived)))
        .collect();
    // The longest delay of a record that arrived in `window` on one of `partitions`:
    // `(delay, arrival, partition)`.
    let longest = |partitions: &[i64], (from, to): (i64, i64)| {
        delays.iter().filter(|(p, at, _)| partitions.contains(p) && (from..to).contains(at)).map(|&(p, at, delay)| (delay, at, p)).max().unwrap_or_default()
    };
    let stayed: Vec<i64> = before.iter().filter(|(p, host)| after.get(p) == Some(host)).map(|(p, _)| *p).collect();
    let all: Vec<i64> = (0..i64::from(PARTITIONS)).collect();
    let ((without, _, _), (with, stall_at, stalled)) = (longest(&all, baseline), longest(&stayed, joining));
    println!(
        "cluster ({protocol:?}): a 4th host joined in {:.1} s under 300 records/s; partitions that stayed {stayed:?} (moved: {:?}); longest delay through the connector over {} s: {with} ms with the join, {without} ms without it (same run); partitions taken from each host (host, taken, moved away): {revoked_by_join:?}",
        joined_in as f64 / 1000.0,
        all.iter().filter(|p| !stayed.contains(p)).collect::<Vec<_>>(),
        WINDOW_MS / 1000
    );
    assert!(!stayed.is_empty(), "some partitions stay where they are: before {before:?}, after {after:?}");
    assert!(
        revoked_by_join.iter().all(|(_, revoked, moved)| *revoked == *moved as u64),
        "the join took partitions that did not move from their hosts: (host, partitions taken, partitions that moved away) {revoked_by_join:?}; owners before {before:?}, after {after:?}; the hosts' rebalances:\n{}",
        rebalance_lines(&hosts)
    );
    assert!(joined_in < WINDOW_MS, "the join took {joined_in} ms");
    // No longer than without the join, give or take the noise of a shared machine (twice the
    // quiet delay and half a second): a rebalance that waits for a slow member (a commit, a
    // read of committed offsets) stalls the partitions that stay.
    let mut hosts = hosts;
    hosts.push(late);
    assert!(
        with <= 2 * without + 500,
        "the join stalled partitions that did not move: a record waited {with} ms against {without} ms without the join, on partition {stalled} (read by {:?}), arriving at {} UTC; the hosts' logs then:\n{}",
        after.get(&stalled),
        time_of_day(stall_at),
        logs_around(&hosts, (stall_at, stall_at + with))
    );
    for mut host in hosts {
        assert!(host.stop()?.success());
    }
    Ok(())
}
