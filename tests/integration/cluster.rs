//! Several host processes as one cluster on the real broker: connectors, plugins and
//! lifecycle changes made through any host reach every host, any host answers for all, and a
//! killed host's partitions move to the others with nothing lost.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use turnpike_tests::{
    bootstrap, builtin, consume_until, create_topic, distinct_and_duplicates, distinct_keys_reach, free_port, http_json, producer, unique, upload_plugin,
    wait_healthy, wait_until, HostProcess,
};

/// How often hosts report in these tests: a dead host shows as not alive after three.
const STATUS_INTERVAL_MS: u64 = 500;

/// The consumer group protocol of a test's hosts.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Protocol {
    /// Classic with the cooperative assignor: `kafka:` sets `session.timeout.ms` (6 s), which
    /// only the classic protocol has, so the host keeps to it.
    Classic,
    /// KIP-848, which the host chooses when `kafka:` sets nothing classic and the broker serves
    /// it; the 6 s session is then the broker's (`tests/kafka/kafka.sh`).
    Kip848,
}

impl Protocol {
    /// What `GET /v1/cluster` says the host chose.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Protocol::Classic => "classic",
            Protocol::Kip848 => "consumer",
        }
    }

    /// The `kafka:` lines that make the choice.
    fn kafka_lines(self) -> &'static str {
        match self {
            Protocol::Classic => "  session.timeout.ms: 6000\n",
            Protocol::Kip848 => "",
        }
    }
}

/// A cluster host's config: the shared topics of one test, its own id and port.
pub(crate) fn cluster_host(id: &str, topics: &str, protocol: Protocol) -> String {
    format!(
        "kafka:\n  bootstrap.servers: {}\n{}admin:\n  listen: 127.0.0.1:{}\ncluster:\n  host_id: {id}\n  config_topic: {topics}-config\n  status_topic: {topics}-status\n  status_interval_ms: {STATUS_INTERVAL_MS}\n",
        bootstrap(),
        protocol.kafka_lines(),
        free_port(),
    )
}

/// Starts a cluster host and checks it chose `protocol` for its connectors' consumers.
pub(crate) fn start_host(dir: &Path, id: &str, topics: &str, protocol: Protocol) -> anyhow::Result<HostProcess> {
    let host = HostProcess::start(&dir.join(id), &cluster_host(id, topics, protocol))?;
    wait_healthy(&host)?;
    let (_, cluster) = host.get("/v1/cluster")?;
    let chosen = &cluster["group_protocol"];
    anyhow::ensure!(chosen["protocol"] == protocol.name(), "{id}: expected the {} group protocol, the host chose {chosen}", protocol.name());
    Ok(host)
}

/// Starts the hosts one after the other's API answers: the first compiles the built-in
/// plugins into the shared cache, the others read it.
pub(crate) fn start_hosts(dir: &Path, topics: &str, ids: &[&str], protocol: Protocol) -> anyhow::Result<Vec<HostProcess>> {
    ids.iter().map(|id| start_host(dir, id, topics, protocol)).collect()
}

pub(crate) fn identity(name: &str, input: &str, output: &str) -> Value {
    json!({ "name": name, "topics": [input], "output_topic": output, "transforms": [{ "plugin": "identity" }] })
}

/// `host`'s view of every host's report on `connector`: (host, state, version, partitions).
pub(crate) fn reports(host: &HostProcess, connector: &str) -> Vec<(String, String, u64, Vec<i64>, bool)> {
    let Ok((200, body)) = host.get(&format!("/v1/connectors/{connector}")) else { return Vec::new() };
    let hosts = body["hosts"].as_array().cloned().unwrap_or_default();
    hosts
        .iter()
        .map(|h| {
            let partitions = h["partitions"].as_array().into_iter().flatten().filter_map(|p| p["partition"].as_i64()).collect();
            (h["host"].as_str().unwrap_or_default().to_owned(), h["state"].as_str().unwrap_or_default().to_owned(), h["version"].as_u64().unwrap_or(0), partitions, h["alive"] == true)
        })
        .collect()
}

/// Waits until `host` shows `connector` RUNNING at `version` on exactly the hosts `ids`,
/// with the `partitions` input partitions spread over them, each reading some.
pub(crate) fn wait_spread(host: &HostProcess, connector: &str, ids: &[&str], version: u64, partitions: i64) -> anyhow::Result<Vec<(String, String, u64, Vec<i64>, bool)>> {
    let want: BTreeSet<String> = ids.iter().map(|s| (*s).to_owned()).collect();
    wait_until(&format!("{connector} v{version} running on {ids:?} with {partitions} partitions spread"), Duration::from_secs(90), || {
        let seen: Vec<_> = reports(host, connector).into_iter().filter(|r| r.4).collect();
        let hosts: BTreeSet<String> = seen.iter().map(|r| r.0.clone()).collect();
        let covered: BTreeSet<i64> = seen.iter().flat_map(|r| r.3.clone()).collect();
        let good = hosts == want
            && seen.iter().all(|r| r.1 == "RUNNING" && r.2 == version && !r.3.is_empty())
            && covered.len() as i64 == partitions
            && seen.iter().map(|r| r.3.len()).sum::<usize>() as i64 == partitions;
        Ok(good.then_some(seen))
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn three_hosts_run_what_any_of_them_is_told() -> anyhow::Result<()> {
    let topics = unique("cluster");
    let dir = std::env::temp_dir().join(&topics);
    let ids = ["host-1", "host-2", "host-3"];
    // KIP-848: what hosts on Kafka 4.x choose unless told otherwise.
    let hosts = start_hosts(&dir, &topics, &ids, Protocol::Kip848)?;
    let (input, first_out, second_out) = (unique("cluster-in"), unique("cluster-out"), unique("cluster-out2"));
    create_topic(&input, 6).await?;
    let records: Vec<(String, String)> = (0..300).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
    turnpike_tests::produce(&producer()?, &input, &records).await?;

    // Created through host 1: every host runs it, and host 3 answers for all three.
    let (status, body) = http_json(&hosts[0].admin, "PUT", "/v1/connectors/shared", &identity("shared", &input, &first_out))?;
    assert_eq!(status, 201, "{body}");
    let spread = wait_spread(&hosts[2], "shared", &ids, 1, 6)?;
    println!("cluster: partitions per host after create: {:?}", spread.iter().map(|r| (r.0.clone(), r.3.clone())).collect::<Vec<_>>());
    for (host, id) in hosts.iter().zip(ids) {
        let (_, list) = host.get("/v1/connectors")?;
        assert_eq!(list["connectors"].as_array().map(Vec::len), Some(1), "{list}");
        let (_, cluster) = host.get("/v1/cluster")?;
        assert_eq!(cluster["host"], id, "{cluster}");
        let alive: Vec<&str> = cluster["hosts"].as_array().into_iter().flatten().filter(|h| h["alive"] == true).filter_map(|h| h["host"].as_str()).collect();
        assert_eq!(alive, ids, "{cluster}");
        let protocols: Vec<&str> = cluster["hosts"].as_array().into_iter().flatten().filter(|h| h["alive"] == true).filter_map(|h| h["group_protocol"].as_str()).collect();
        assert_eq!(protocols, ["consumer"; 3], "every host says which group protocol it chose: {cluster}");
    }
    let out = consume_until(&first_out, Duration::from_secs(60), distinct_keys_reach(300)).await?;
    assert_eq!(distinct_and_duplicates(&out).0, 300, "every record through one of the three hosts");

    // Changed through host 3: every host restarts it with the new output topic.
    let (status, body) = http_json(&hosts[2].admin, "PUT", "/v1/connectors/shared", &identity("shared", &input, &second_out))?;
    assert_eq!(status, 200, "{body}");
    wait_spread(&hosts[0], "shared", &ids, 2, 6)?;
    for host in &hosts {
        let (_, got) = host.get("/v1/connectors/shared")?;
        assert_eq!(got["output_topic"], second_out.as_str(), "{got}");
    }

    // Paused through host 2, right after the change through host 3: no conflict, it reads
    // the log to its end first. Every host pauses.
    let (status, body) = http_json(&hosts[1].admin, "POST", "/v1/connectors/shared/pause", &Value::Null)?;
    assert_eq!(status, 202, "{body}");
    wait_until("every host to pause", Duration::from_secs(30), || {
        let r = reports(&hosts[0], "shared");
        Ok((r.len() == 3 && r.iter().all(|h| h.1 == "PAUSED")).then_some(()))
    })?;

    // Two hosts change it at once, from the same version: each answer is applied or a
    // conflict, and afterwards every host runs the same config.
    let a = hosts[0].admin.clone();
    let b = hosts[1].admin.clone();
    let (ca, cb) = (identity("shared", &input, "race-a"), identity("shared", &input, "race-b"));
    let ta = std::thread::spawn(move || http_json(&a, "PUT", "/v1/connectors/shared", &ca));
    let tb = std::thread::spawn(move || http_json(&b, "PUT", "/v1/connectors/shared", &cb));
    let answers = [ta.join().expect("thread")?.0, tb.join().expect("thread")?.0];
    assert!(answers.iter().all(|s| *s == 200 || *s == 409), "{answers:?}");
    let agreed = wait_until("every host to agree after the race", Duration::from_secs(30), || {
        let outs: BTreeSet<String> = hosts.iter().filter_map(|h| h.get("/v1/connectors/shared").ok()).map(|(_, b)| b["output_topic"].as_str().unwrap_or_default().to_owned()).collect();
        Ok((outs.len() == 1).then_some(outs))
    })?;
    println!("cluster: concurrent PUTs answered {answers:?}; every host runs output {agreed:?}");

    // A plugin uploaded through host 2 (two chunks in the log) loads on every host.
    let (status, text) = upload_plugin(&hosts[1].admin, "mask-copy", "1.0", &builtin("pii-mask")?)?;
    assert_eq!(status, 201, "{text}");
    for host in &hosts {
        wait_until("the upload on every host", Duration::from_secs(60), || {
            let (_, plugins) = host.get("/v1/plugins")?;
            Ok(plugins.to_string().contains("mask-copy").then_some(()))
        })?;
    }
    // A fourth host joins: it reads the whole log (five versions, a plugin in two chunks) and
    // starts the connector once, in its last state: paused, so it never read a record.
    let late = start_host(&dir, "host-4", &topics, Protocol::Kip848)?;
    let joined = wait_until("the paused connector on the late host", Duration::from_secs(30), || {
        let (_, joined) = late.get("/v1/connectors/shared")?;
        anyhow::ensure!(joined["state"] != "RUNNING" && joined["records_in"] == 0, "the late host ran the paused connector: {joined}");
        Ok((joined["state"] == "PAUSED").then_some(joined))
    })?;
    assert_eq!(joined["output_topic"].as_str().map(|t| BTreeSet::from([t.to_owned()])), Some(agreed.clone()), "{joined}");
    let (_, plugins) = late.get("/v1/plugins")?;
    assert!(plugins.to_string().contains("mask-copy"), "{plugins}");
    let mut hosts = hosts;
    hosts.push(late);

    // Deleted through host 1: gone everywhere.
    let (status, body) = http_json(&hosts[0].admin, "DELETE", "/v1/connectors/shared", &Value::Null)?;
    assert!(status == 204 || status == 200, "{status} {body}");
    for host in &hosts {
        wait_until("the connector gone on every host", Duration::from_secs(30), || {
            let (_, list) = host.get("/v1/connectors")?;
            Ok((list["connectors"].as_array().map(Vec::len) == Some(0)).then_some(()))
        })?;
    }
    for mut host in hosts {
        assert!(host.stop()?.success());
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_hosts_partitions_move_to_the_others_and_nothing_is_lost_classic() -> anyhow::Result<()> {
    killed_host(Protocol::Classic).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_hosts_partitions_move_to_the_others_and_nothing_is_lost_kip_848() -> anyhow::Result<()> {
    killed_host(Protocol::Kip848).await
}

async fn killed_host(protocol: Protocol) -> anyhow::Result<()> {
    let topics = unique("cluster-kill");
    let dir = std::env::temp_dir().join(&topics);
    let ids = ["kill-1", "kill-2", "kill-3"];
    // One consumer group per variant: both run at once on the same broker.
    let name = format!("moving-{}", protocol.name());
    let mut hosts = start_hosts(&dir, &topics, &ids, protocol)?;
    let (input, output) = (unique("kill-in"), unique("kill-out"));
    create_topic(&input, 6).await?;
    let (status, body) = http_json(&hosts[0].admin, "PUT", &format!("/v1/connectors/{name}"), &identity(&name, &input, &output))?;
    assert_eq!(status, 201, "{body}");
    wait_spread(&hosts[0], &name, &ids, 1, 6)?;
    let group = format!("turnpike-{name}");
    let kind = tokio::task::spawn_blocking(move || turnpike_tests::group_type(&group)).await??;
    assert_eq!(kind, protocol.name(), "the broker runs the connector's group on the protocol the hosts chose");

    // 1,000 records/s for 12 s, keys k0..k11999; host 2 is killed 4 s in.
    const TOTAL: usize = 12_000;
    let producing = tokio::spawn({
        let input = input.clone();
        async move {
            let producer = producer()?;
            let started = Instant::now();
            for second in 0..TOTAL / 1_000 {
                let batch: Vec<(String, String)> = (second * 1_000..(second + 1) * 1_000).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
                turnpike_tests::produce(&producer, &input, &batch).await?;
                let due = started + Duration::from_secs(second as u64 + 1);
                tokio::time::sleep(due.saturating_duration_since(Instant::now())).await;
            }
            anyhow::Ok(())
        }
    });
    tokio::time::sleep(Duration::from_secs(4)).await;
    hosts[1].kill_hard()?;
    let killed = Instant::now();
    let survivors = ["kill-1", "kill-3"];
    // The survivors take over its partitions once the broker drops it from the group (after
    // its session timeout, 6 s here with either protocol).
    let spread = wait_spread(&hosts[0], &name, &survivors, 1, 6)?;
    let moved_after = killed.elapsed();
    println!("cluster ({protocol:?}): the killed host's partitions moved within {:.1} s (a 6 s session): {:?}", moved_after.as_secs_f64(), spread.iter().map(|r| (r.0.clone(), r.3.clone())).collect::<Vec<_>>());
    assert!(moved_after < Duration::from_secs(6 + 20), "moved after {moved_after:?}");
    let (_, cluster) = hosts[2].get("/v1/cluster")?;
    let dead: Vec<&str> = cluster["hosts"].as_array().into_iter().flatten().filter(|h| h["alive"] == false).filter_map(|h| h["host"].as_str()).collect();
    assert_eq!(dead, ["kill-2"], "the killed host shows as not alive: {cluster}");
    producing.await??;
    let out = consume_until(&output, Duration::from_secs(120), distinct_keys_reach(TOTAL)).await?;
    let (distinct, duplicates) = distinct_and_duplicates(&out);
    let keys: HashSet<&str> = out.iter().map(|(k, _)| k.as_str()).collect();
    let missing: Vec<usize> = (0..TOTAL).filter(|i| !keys.contains(format!("k{i}").as_str())).take(10).collect();
    println!("cluster ({protocol:?}): after the kill, {distinct} of {TOTAL} records out, {duplicates} duplicates");
    assert!(missing.is_empty(), "records missing after the kill, e.g. {missing:?}");
    drop(hosts.remove(1));
    for mut host in hosts {
        assert!(host.stop()?.success());
    }
    Ok(())
}

/// Each partition's committed offset of `connector`, as `host` reads the group's offsets.
fn committed(host: &HostProcess, connector: &str) -> Vec<Option<i64>> {
    let Ok((200, body)) = host.get(&format!("/v1/connectors/{connector}/offsets")) else { return Vec::new() };
    let mut partitions: Vec<(i64, Option<i64>)> = body["partitions"].as_array().into_iter().flatten().map(|p| (p["partition"].as_i64().unwrap_or(-1), p["committed"].as_i64())).collect();
    partitions.sort();
    partitions.into_iter().map(|(_, c)| c).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_paused_past_its_session_cannot_commit_over_the_partitions_it_lost_classic() -> anyhow::Result<()> {
    frozen_host(Protocol::Classic).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_paused_past_its_session_cannot_commit_over_the_partitions_it_lost_kip_848() -> anyhow::Result<()> {
    frozen_host(Protocol::Kip848).await
}

async fn frozen_host(protocol: Protocol) -> anyhow::Result<()> {
    let topics = unique("cluster-zombie");
    let dir = std::env::temp_dir().join(&topics);
    let ids = ["zombie-1", "zombie-2", "zombie-3"];
    // One consumer group per variant: both run at once on the same broker.
    let name = format!("zombie-{}", protocol.name());
    let hosts = start_hosts(&dir, &topics, &ids, protocol)?;
    let (input, output) = (unique("zombie-in"), unique("zombie-out"));
    create_topic(&input, 6).await?;
    let (status, body) = http_json(&hosts[0].admin, "PUT", &format!("/v1/connectors/{name}"), &identity(&name, &input, &output))?;
    assert_eq!(status, 201, "{body}");
    wait_spread(&hosts[0], &name, &ids, 1, 6)?;

    // 500 records/s for 24 s; host 2 is frozen (SIGSTOP) 3 s in, past its 6 s session.
    const TOTAL: usize = 12_000;
    let producing = tokio::spawn({
        let input = input.clone();
        async move {
            let producer = producer()?;
            let started = Instant::now();
            for step in 0..TOTAL / 500 {
                let batch: Vec<(String, String)> = (step * 500..(step + 1) * 500).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
                turnpike_tests::produce(&producer, &input, &batch).await?;
                tokio::time::sleep((started + Duration::from_secs(step as u64 + 1)).saturating_duration_since(Instant::now())).await;
            }
            anyhow::Ok(())
        }
    });
    tokio::time::sleep(Duration::from_secs(3)).await;
    hosts[1].signal("STOP")?;
    wait_spread(&hosts[0], &name, &["zombie-1", "zombie-3"], 1, 6)?;
    // The frozen host wakes up believing it still owns its partitions, with batches in
    // flight and offsets to commit. Its commits must not move any partition's committed
    // offset back (the broker refuses a commit from a generation that moved on).
    let mut highest = committed(&hosts[0], &name);
    hosts[1].signal("CONT")?;
    let woke = Instant::now();
    let mut backwards = Vec::new();
    while woke.elapsed() < Duration::from_secs(10) {
        let now = committed(&hosts[0], &name);
        for (p, (was, is)) in highest.iter_mut().zip(&now).enumerate() {
            if let (Some(w), Some(i)) = (*was, *is) {
                if i < w {
                    backwards.push((p, w, i));
                }
            }
            *was = (*was).max(*is);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(backwards.is_empty(), "committed offsets moved back after the frozen host woke: {backwards:?}");
    producing.await??;
    let out = consume_until(&output, Duration::from_secs(120), distinct_keys_reach(TOTAL)).await?;
    let (distinct, duplicates) = distinct_and_duplicates(&out);
    println!("cluster ({protocol:?}): frozen past its session, woken: {distinct} of {TOTAL} records out, {duplicates} duplicates, no committed offset moved back");
    assert_eq!(distinct, TOTAL, "records missing after the frozen host woke");
    // It rejoins and takes a share again.
    wait_spread(&hosts[0], &name, &ids, 1, 6)?;
    for mut host in hosts {
        assert!(host.stop()?.success());
    }
    Ok(())
}
