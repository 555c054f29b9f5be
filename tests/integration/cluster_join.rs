//! A fourth host joining a cluster under load: the partitions that stay where they are keep
//! flowing (cooperative rebalancing, and KIP-848's), measured against the same run before the
//! join.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use turnpike_tests::{create_topic_with, http_json, produce_records, producer, read_timestamps, unique, HostProcess, Outgoing};

use crate::cluster::{identity, reports, start_host, start_hosts, wait_spread, Protocol};

/// Which host reads each input partition of `connector`, as `host` sees the reports.
fn owners(host: &HostProcess, connector: &str) -> BTreeMap<i64, String> {
    reports(host, connector).into_iter().filter(|r| r.4).flat_map(|r| r.3.into_iter().map(move |p| (p, r.0.clone()))).collect()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or_default()
}

/// The longest time in `[from, to)` with no record (append times, ms), counting from the
/// window's start to the first record and from the last to its end: `(length, start)`.
fn longest_gap(times: &[i64], (from, to): (i64, i64)) -> (i64, i64) {
    let mut inside: Vec<i64> = times.iter().copied().filter(|t| (from..to).contains(t)).collect();
    inside.sort_unstable();
    let edges = std::iter::once(from).chain(inside).chain(std::iter::once(to)).collect::<Vec<_>>();
    edges.windows(2).map(|w| (w[1] - w[0], w[0])).max().unwrap_or((to - from, from))
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
    let mut out = String::new();
    for (i, host) in hosts.iter().enumerate() {
        // Log lines start with an RFC 3339 time: `2026-12-06T19:56:21.099319Z  INFO ...`.
        let lines: Vec<String> = host.log_text().lines().filter(|l| l.get(11..23).is_some_and(|t| (from.as_str()..to.as_str()).contains(&t))).map(str::to_owned).collect();
        out.push_str(&format!("--- host {} ({} lines from {from} to {to} UTC)\n{}\n", i + 1, lines.len(), lines.join("\n")));
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
    let before = owners(&hosts[0], &name);
    let joining = (now_ms(), now_ms() + WINDOW_MS);
    let late = start_host(&dir, "join-4", &topics, protocol)?;
    wait_spread(&hosts[0], &name, &["join-1", "join-2", "join-3", "join-4"], 1, i64::from(PARTITIONS))?;
    let joined_in = now_ms() - joining.0;
    let after = owners(&hosts[0], &name);
    tokio::time::sleep(Duration::from_millis((joining.1 - now_ms()).max(0) as u64 + 500)).await;
    stop.store(true, Ordering::SeqCst);
    let total = producing.await??;

    let out = read_timestamps(&output, Duration::from_secs(120), |got| got.iter().map(|r| &r.0).collect::<HashSet<_>>().len() >= total).await?;
    let mut times: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for (key, _, at) in &out {
        if let Some(p) = key.strip_prefix('p').and_then(|k| k.split('-').next()).and_then(|p| p.parse().ok()) {
            times.entry(p).or_default().push(*at);
        }
    }
    // A pause of this test's producer, or of the broker, leaves a gap in the input too: the
    // connector cannot be blamed for that part.
    let mut input_times: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for (_, partition, at) in read_timestamps(&input, Duration::from_secs(120), |got| got.len() >= total).await? {
        input_times.entry(i64::from(partition)).or_default().push(at);
    }
    let stayed: Vec<i64> = before.iter().filter(|(p, host)| after.get(p) == Some(host)).map(|(p, _)| *p).collect();
    // The longest gap of any of `partitions`: `(length, start, partition)`.
    let gap = |times: &BTreeMap<i64, Vec<i64>>, partitions: &[i64], window| {
        partitions.iter().map(|p| longest_gap(times.get(p).map(Vec::as_slice).unwrap_or_default(), window)).zip(partitions).map(|((len, at), p)| (len, at, *p)).max().unwrap_or_default()
    };
    let all: Vec<i64> = (0..i64::from(PARTITIONS)).collect();
    let ((without, _, _), (with, stall_at, stalled)) = (gap(&times, &all, baseline), gap(&times, &stayed, joining));
    let (input_with, input_at, input_partition) = gap(&input_times, &stayed, joining);
    println!(
        "cluster ({protocol:?}): a 4th host joined in {:.1} s under 300 records/s; partitions that stayed {stayed:?} (moved: {:?}); longest output gap over {} s: {with} ms with the join, {without} ms without it (same run); longest input gap with the join: {input_with} ms",
        joined_in as f64 / 1000.0,
        all.iter().filter(|p| !stayed.contains(p)).collect::<Vec<_>>(),
        WINDOW_MS / 1000
    );
    assert!(!stayed.is_empty(), "some partitions stay where they are: before {before:?}, after {after:?}");
    assert!(joined_in < WINDOW_MS, "the join took {joined_in} ms");
    // No larger than without the join, give or take the noise of a shared machine (twice the
    // quiet gap and half a second) and any gap in the input itself: a stop-the-world
    // rebalance stalls every partition for seconds while all members rejoin.
    let mut hosts = hosts;
    hosts.push(late);
    assert!(
        with <= 2 * without + 500 + input_with,
        "the join stalled partitions that did not move: {with} ms against {without} ms without it, partition {stalled} (read by {:?}) from {} UTC; the input's longest gap then: {input_with} ms (partition {input_partition}, from {} UTC); the hosts' logs then:\n{}",
        after.get(&stalled),
        time_of_day(stall_at),
        time_of_day(input_at),
        logs_around(&hosts, (stall_at, stall_at + with))
    );
    for mut host in hosts {
        assert!(host.stop()?.success());
    }
    Ok(())
}
