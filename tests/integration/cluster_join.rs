//! A fourth host joining a cluster under load: the partitions that stay where they are keep
//! flowing (cooperative rebalancing, and KIP-848's), measured against the same run before the
//! join.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use turnpike_tests::{create_topic, create_topic_with, http_json, produce_records, producer, read_timestamps, unique, HostProcess, Outgoing};

use crate::cluster::{identity, reports, start_host, start_hosts, wait_spread, Protocol};

/// Which host reads each input partition of `connector`, as `host` sees the reports.
fn owners(host: &HostProcess, connector: &str) -> BTreeMap<i64, String> {
    reports(host, connector).into_iter().filter(|r| r.4).flat_map(|r| r.3.into_iter().map(move |p| (p, r.0.clone()))).collect()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or_default()
}

/// The longest time in `[from, to)` with no record (append times, ms), counting from the
/// window's start to the first record and from the last to its end.
fn longest_gap(times: &[i64], (from, to): (i64, i64)) -> i64 {
    let mut inside: Vec<i64> = times.iter().copied().filter(|t| (from..to).contains(t)).collect();
    inside.sort_unstable();
    let edges = std::iter::once(from).chain(inside).chain(std::iter::once(to)).collect::<Vec<_>>();
    edges.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(to - from)
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
    create_topic(&input, PARTITIONS).await?;
    // The broker stamps each output record when it is appended: when it became readable.
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
    let stayed: Vec<i64> = before.iter().filter(|(p, host)| after.get(p) == Some(host)).map(|(p, _)| *p).collect();
    let gap = |partitions: &[i64], window| partitions.iter().map(|p| longest_gap(times.get(p).map(Vec::as_slice).unwrap_or_default(), window)).max().unwrap_or_default();
    let all: Vec<i64> = (0..i64::from(PARTITIONS)).collect();
    let (without, with) = (gap(&all, baseline), gap(&stayed, joining));
    println!(
        "cluster ({protocol:?}): a 4th host joined in {:.1} s under 300 records/s; partitions that stayed {stayed:?} (moved: {:?}); longest output gap over {} s: {with} ms with the join, {without} ms without it (same run)",
        joined_in as f64 / 1000.0,
        all.iter().filter(|p| !stayed.contains(p)).collect::<Vec<_>>(),
        WINDOW_MS / 1000
    );
    assert!(!stayed.is_empty(), "some partitions stay where they are: before {before:?}, after {after:?}");
    assert!(joined_in < WINDOW_MS, "the join took {joined_in} ms");
    // No larger than without the join, give or take the noise of a shared machine (twice the
    // quiet gap and half a second): a stop-the-world rebalance stalls every partition for
    // seconds while all members rejoin.
    assert!(with <= 2 * without + 500, "the join stalled partitions that did not move: {with} ms against {without} ms without it");
    let mut hosts = hosts;
    hosts.push(late);
    for mut host in hosts {
        assert!(host.stop()?.success());
    }
    Ok(())
}
