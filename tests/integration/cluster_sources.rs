//! Source connectors in a cluster: each runs on the one host that owns its slot, moves when
//! that host dies, resumes from its stored position, and a host frozen past its session
//! cannot save over the position its successor stored.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use turnpike_tests::{consume_until, create_topic, distinct_and_duplicates, distinct_keys_reach, http_json, saved_positions, unique, wait_until, HostProcess};

use crate::cluster::{reports, start_hosts, Protocol};

/// Where hosts that set no `source_positions_topic` keep positions.
const POSITIONS_TOPIC: &str = "turnpike-source-positions";

/// A datagen source of `total` numbered records at `rate` a second.
fn datagen(name: &str, output: &str, total: usize, rate: u32) -> Value {
    json!({
        "name": name,
        "output_topic": output,
        "source": {
            "plugin": "datagen",
            "poll_interval_ms": 20,
            "config": { "seed": 5, "key": "id", "count": total, "rate_per_sec": rate, "fields": [{ "name": "id", "type": "sequence" }] }
        }
    })
}

/// How long the placement must hold before a test acts on it: while hosts join the slots
/// group its slots move (the first host owns them all until the others arrive), and reports
/// trail by a status interval.
const SETTLED: Duration = Duration::from_secs(3);

/// Waits until `connector` is RUNNING on exactly one live host of `alive` (the others
/// reporting it UNASSIGNED), the same host for [`SETTLED`]; returns that host's id.
fn runs_on_one(host: &HostProcess, connector: &str, alive: &[&str], timeout: Duration) -> anyhow::Result<String> {
    let mut candidate: Option<(String, Instant)> = None;
    wait_until(&format!("{connector} running on exactly one of {alive:?}"), timeout, || {
        let seen: Vec<_> = reports(host, connector).into_iter().filter(|r| r.4 && alive.contains(&r.0.as_str())).collect();
        let running: Vec<&String> = seen.iter().filter(|r| r.1 == "RUNNING").map(|r| &r.0).collect();
        let standing_by = seen.iter().filter(|r| r.1 == "UNASSIGNED").count();
        if !(seen.len() == alive.len() && running.len() == 1 && standing_by == alive.len() - 1) {
            candidate = None;
            return Ok(None);
        }
        match &candidate {
            Some((runner, since)) if runner == running[0] => Ok((since.elapsed() >= SETTLED).then(|| runner.clone())),
            _ => {
                candidate = Some((running[0].clone(), Instant::now()));
                Ok(None)
            }
        }
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_source_runs_on_one_host_and_moves_when_that_host_is_killed() -> anyhow::Result<()> {
    let topics = unique("cluster-src");
    let dir = std::env::temp_dir().join(&topics);
    let ids = ["src-1", "src-2", "src-3"];
    let mut hosts = start_hosts(&dir, &topics, &ids, Protocol::Kip848)?;
    let (name, output) = (unique("gen"), unique("cluster-src-out"));
    create_topic(&output, 1).await?;
    const TOTAL: usize = 15_000;
    let (status, body) = http_json(&hosts[0].admin, "PUT", &format!("/v1/connectors/{name}"), &datagen(&name, &output, TOTAL, 1_000))?;
    assert_eq!(status, 201, "{body}");
    let runner = runs_on_one(&hosts[2], &name, &ids, Duration::from_secs(90))?;
    println!("cluster sources: {name} runs on {runner}");

    // Killed mid-stream, once a position is stored.
    consume_until(&output, Duration::from_secs(60), |got| got.len() >= 3_000).await?;
    saved_positions(POSITIONS_TOPIC, &[&name], Duration::from_secs(60)).await?;
    let at = ids.iter().position(|id| **id == runner).expect("a host of the test");
    hosts[at].kill_hard()?;
    let killed = Instant::now();
    let produced = turnpike_tests::end_offset(&output)?;
    assert!(produced < TOTAL as i64, "killed mid-stream, not after all {TOTAL} records ({produced})");
    let survivors: Vec<&str> = ids.iter().copied().filter(|id| *id != runner).collect();
    let observer = ids.iter().position(|id| *id == survivors[0]).expect("a survivor");
    let successor = runs_on_one(&hosts[observer], &name, &survivors, Duration::from_secs(60))?;
    let moved_after = killed.elapsed();
    println!("cluster sources: {name} moved from {runner} to {successor} {:.1} s after the kill (6 s sessions)", moved_after.as_secs_f64());
    assert!(moved_after < Duration::from_secs(6 + 20), "moved after {moved_after:?}");

    let all = consume_until(&output, Duration::from_secs(120), distinct_keys_reach(TOTAL)).await?;
    let (distinct, duplicates) = distinct_and_duplicates(&all);
    println!("cluster sources: {TOTAL} records, {produced} produced before the kill, {distinct} distinct after, {duplicates} duplicates");
    let keys: HashSet<usize> = all.iter().filter_map(|(k, _)| k.parse().ok()).collect();
    assert!((0..TOTAL).all(|n| keys.contains(&n)), "every record number 0..{TOTAL} arrived");
    assert!((duplicates as i64) < produced, "resumed from a stored position, not from the start ({duplicates} duplicates)");
    drop(hosts.remove(at));
    for mut host in hosts {
        assert!(host.stop()?.success());
    }
    Ok(())
}

/// The zombie: the host running a source is frozen (SIGSTOP) past its session, the source
/// moves and its successor saves positions, then the frozen host wakes (SIGCONT) with a
/// position of its own to save. Its writer was fenced when the successor opened its own, so
/// the stored positions never go back.
#[tokio::test(flavor = "multi_thread")]
async fn a_host_frozen_past_its_session_cannot_save_over_a_moved_sources_position() -> anyhow::Result<()> {
    let topics = unique("cluster-src-zombie");
    let dir = std::env::temp_dir().join(&topics);
    let ids = ["srcz-1", "srcz-2", "srcz-3"];
    let hosts = start_hosts(&dir, &topics, &ids, Protocol::Kip848)?;
    let (name, output) = (unique("genz"), unique("cluster-srcz-out"));
    create_topic(&output, 1).await?;
    const TOTAL: usize = 30_000;
    let (status, body) = http_json(&hosts[0].admin, "PUT", &format!("/v1/connectors/{name}"), &datagen(&name, &output, TOTAL, 1_000))?;
    assert_eq!(status, 201, "{body}");
    let runner = runs_on_one(&hosts[0], &name, &ids, Duration::from_secs(90))?;
    consume_until(&output, Duration::from_secs(60), |got| got.len() >= 2_000).await?;
    saved_positions(POSITIONS_TOPIC, &[&name], Duration::from_secs(60)).await?;

    let at = ids.iter().position(|id| **id == runner).expect("a host of the test");
    hosts[at].signal("STOP")?;
    let survivors: Vec<&str> = ids.iter().copied().filter(|id| *id != runner).collect();
    let observer = ids.iter().position(|id| *id == survivors[0]).expect("a survivor");
    let successor = runs_on_one(&hosts[observer], &name, &survivors, Duration::from_secs(60))?;
    // The successor has saved positions of its own before the frozen host wakes.
    let saves_before_wake = committed_saves(&name, |saves| saves.len() >= 2).await?;
    hosts[at].signal("CONT")?;
    let woke = Instant::now();
    // Long enough for the woken host to try its next save (every second) and to learn its
    // slot is gone.
    let mut saves = saves_before_wake.clone();
    while woke.elapsed() < Duration::from_secs(10) {
        let want = saves.len() + 1;
        saves = committed_saves(&name, |s| s.len() >= want).await.unwrap_or(saves);
    }
    let backwards: Vec<(u64, u64)> = saves.windows(2).filter(|w| w[1] < w[0]).map(|w| (w[0], w[1])).collect();
    println!("cluster sources: {name} moved from frozen {runner} to {successor}; {} committed saves, none back: {}", saves.len(), backwards.is_empty());
    assert!(backwards.is_empty(), "a stored position went back after the frozen host woke: {backwards:?} in {saves:?}");
    // The woken host gave the source up: it still runs on exactly one host.
    let now_on = runs_on_one(&hosts[observer], &name, &ids, Duration::from_secs(60))?;
    println!("cluster sources: after the wake, {name} runs on {now_on}");
    let all = consume_until(&output, Duration::from_secs(120), distinct_keys_reach(TOTAL)).await?;
    assert_eq!(distinct_and_duplicates(&all).0, TOTAL, "every record arrived");
    for mut host in hosts {
        assert!(host.stop()?.success());
    }
    Ok(())
}

/// Every committed save of `connector`'s position, in order, as record numbers, read until
/// `enough` says so (or 10 s).
async fn committed_saves(connector: &str, mut enough: impl FnMut(&[u64]) -> bool) -> anyhow::Result<Vec<u64>> {
    let mine = |got: &[(String, String)]| got.iter().filter(|(k, _)| k == connector).filter_map(|(_, v)| v.parse().ok()).collect::<Vec<u64>>();
    let got = consume_until(POSITIONS_TOPIC, Duration::from_secs(10), |got| enough(&mine(got))).await?;
    Ok(mine(&got))
}
