//! `tasks: N` on real Kafka: one connector runs N pipelines (a consumer and plugin instances
//! each) in one host; its group spreads the partitions over them and every record comes out.

use std::time::Duration;

use anyhow::Context as _;
use turnpike_tests::*;

#[tokio::test(flavor = "multi_thread")]
async fn four_tasks_share_twelve_partitions_and_every_record_comes_out() -> anyhow::Result<()> {
    let topic = unique("tasks-in");
    create_topic(&topic, 12).await?;
    let connector = format!(
        "- name: wide\n  topics: [{topic}]\n  output_topic: {topic}-out\n  tasks: 4\n  transforms:\n    - plugin: pii-mask\n      config: {{ fields: [email] }}\n"
    );
    let dir = std::env::temp_dir().join(unique("turnpike-tasks"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connector))?;
    host.wait_state("wide", "RUNNING", Duration::from_secs(120))?;

    // Once the group settles, each of the four consumers holds three partitions.
    let settled = wait_until("four tasks with three partitions each", Duration::from_secs(60), || {
        let status = host.get("/v1/connectors/wide")?.1;
        let counts: Vec<usize> = status["tasks"].as_array().map(|t| t.iter().map(|t| t["partitions"].as_array().map_or(0, Vec::len)).collect()).unwrap_or_default();
        Ok((counts == [3, 3, 3, 3]).then_some(status))
    })
    .with_context(|| format!("{}\nlog:\n{}", host.get("/v1/connectors/wide").map(|s| s.1.to_string()).unwrap_or_default(), host.log_text()))?;
    let tasks = settled["tasks"].as_array().context("tasks")?;
    assert_eq!(tasks.iter().map(|t| t["task"].as_u64()).collect::<Vec<_>>(), [Some(1), Some(2), Some(3), Some(4)]);
    let mut partitions: Vec<i64> = tasks.iter().flat_map(|t| t["partitions"].as_array().cloned().unwrap_or_default()).filter_map(|p| p["partition"].as_i64()).collect();
    partitions.sort_unstable();
    assert_eq!(partitions, (0..12).collect::<Vec<_>>(), "no partition twice, none left out: {settled}");

    let records: Vec<_> = (0..6_000).map(|i| (format!("k{i}"), format!("{{\"n\":{i},\"email\":\"u{i}@example.com\"}}"))).collect();
    produce(&producer()?, &topic, &records).await?;
    let out = consume_until(&format!("{topic}-out"), Duration::from_secs(120), distinct_keys_reach(6_000)).await?;
    let (distinct, duplicates) = distinct_and_duplicates(&out);
    assert_eq!(distinct, 6_000, "every input came out ({duplicates} duplicates); log:\n{}", host.log_text());
    assert!(out.iter().all(|(_, v)| !v.contains("@example.com")), "the plugin ran on every record");

    // Keys spread over the twelve partitions: every task read its share with its own instance.
    // (Counted out once acknowledged, which can come just after the output is readable.)
    let status = wait_until("every output counted", Duration::from_secs(30), || {
        let status = host.get("/v1/connectors/wide")?.1;
        Ok((status["records_out"].as_u64() >= Some(6_000)).then_some(status))
    })?;
    let tasks = status["tasks"].as_array().context("tasks")?;
    let per_task = |field: &str| tasks.iter().filter_map(|t| t[field].as_u64()).collect::<Vec<u64>>();
    let read = per_task("records_in");
    assert_eq!(read.iter().sum::<u64>(), 6_000, "{status}");
    assert!(read.len() == 4 && read.iter().all(|n| *n > 0), "every task did part of the work: {read:?}");
    // Each task counts what it wrote, and its bytes: together, the connector's figures.
    let written = per_task("records_out");
    assert!(written.len() == 4 && written.iter().zip(&read).all(|(w, r)| w >= r), "each task wrote what it read: {written:?} vs {read:?}");
    for (task_field, connector_field) in [("records_out", "records_out"), ("bytes_in", "bytes_in"), ("bytes_out", "bytes_out")] {
        let sum: u64 = per_task(task_field).iter().sum();
        assert!(sum > 0 && Some(sum) == status[connector_field].as_u64(), "the tasks' {task_field} add up to the connector's {connector_field}: {status}");
    }
    let instances = status["instances"].as_array().context("instances")?;
    let mut tasks_with_instance: Vec<u64> = instances.iter().filter_map(|i| i["task"].as_u64()).collect();
    tasks_with_instance.sort_unstable();
    tasks_with_instance.dedup();
    assert_eq!(tasks_with_instance, [1, 2, 3, 4], "{status}");

    let (code, metrics) = http(&host.admin, "GET", "/metrics")?;
    assert_eq!(code, 200);
    for task in 1..=4 {
        for series in [format!(r#"turnpike_task_records_total{{connector="wide",outcome="out",task="{task}"}}"#), format!(r#"turnpike_task_bytes_total{{connector="wide",direction="in",task="{task}"}}"#)] {
            assert!(metrics.lines().any(|l| l.starts_with(&series) && !l.ends_with(" 0")), "{series}, not 0, in:\n{metrics}");
        }
    }
    assert!(host.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_source_connector_refuses_more_than_one_task() -> anyhow::Result<()> {
    let host_config = bare_host_config();
    let dir = std::env::temp_dir().join(unique("turnpike-source-tasks"));
    let host = HostProcess::start(&dir, &host_config)?;
    wait_healthy(&host)?;
    let connector = serde_json::json!({ "output_topic": "ticks", "tasks": 3, "source": { "plugin": "datagen", "config": {} } });
    let (code, body) = http_json(&host.admin, "PUT", "/v1/connectors/ticks", &connector)?;
    assert_eq!(code, 422, "{body}");
    assert!(body.to_string().contains("a source connector runs one task"), "{body}");
    assert!(body.to_string().contains("tasks"), "{body}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn tasks_scale_up_to_max_under_a_backlog_and_back_down_once_it_drains() -> anyhow::Result<()> {
    use std::io::BufRead;
    const RECORDS: usize = 200_000;
    let topic = unique("scale-in");
    create_topic(&topic, 8).await?;
    let records: Vec<_> = (0..RECORDS).map(|i| (format!("k{i}"), format!("{{\"n\":{i},\"email\":\"u{i}@example.com\"}}"))).collect();
    produce(&producer()?, &topic, &records).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-scale"));
    let mut host = HostProcess::start(&dir, &bare_host_config())?;
    wait_healthy(&host)?;
    // Every event from before the connector exists, read on a thread of its own.
    let mut events = event_stream(&host.admin)?;
    let scaled = std::sync::Arc::new(std::sync::Mutex::new(Vec::<serde_json::Value>::new()));
    std::thread::spawn({
        let scaled = scaled.clone();
        move || {
            let mut line = String::new();
            while events.read_line(&mut line).is_ok_and(|n| n > 0) {
                if let Some(Ok(event)) = line.trim().strip_prefix("data:").map(|d| serde_json::from_str::<serde_json::Value>(d.trim())) {
                    if event["kind"] == "tasks_scaled" {
                        scaled.lock().expect("events").push(event);
                    }
                }
                line.clear();
            }
        }
    });
    // Small batches keep one task busy for many seconds with this backlog.
    let connector = serde_json::json!({
        "name": "elastic", "topics": [topic], "output_topic": format!("{topic}-out"),
        "tasks": { "min": 1, "max": 4, "target_lag_per_task": 2000, "scale_down_after_s": 3 },
        "batch": { "max_records": 20 },
        "transforms": [{ "plugin": "pii-mask", "config": { "fields": ["email"] } }]
    });
    let (status, body) = http_json(&host.admin, "PUT", "/v1/connectors/elastic", &connector)?;
    assert_eq!(status, 201, "{body}");
    let task_count = |host: &HostProcess| host.get("/v1/connectors/elastic").map(|(_, s)| s["tasks"].as_array().map_or(0, Vec::len));
    wait_until("four tasks under the backlog", Duration::from_secs(60), || Ok((task_count(&host)? == 4).then_some(())))
        .with_context(|| format!("{}\nlog:\n{}", host.get("/v1/connectors/elastic").map(|s| s.1.to_string()).unwrap_or_default(), host.log_text()))?;
    let out = consume_until(&format!("{topic}-out"), Duration::from_secs(180), distinct_keys_reach(RECORDS)).await?;
    let (distinct, duplicates) = distinct_and_duplicates(&out);
    assert_eq!(distinct, RECORDS, "every input came out while tasks came and went ({duplicates} duplicates)");
    // Drained: after the 3 s window, down to the one task the lag needs.
    wait_until("one task once the backlog drained", Duration::from_secs(60), || Ok((task_count(&host)? == 1).then_some(())))?;
    let status = host.get("/v1/connectors/elastic")?.1;
    assert_eq!((status["state"].as_str(), status["lag"].as_i64()), (Some("RUNNING"), Some(0)), "{status}");
    let seen: Vec<(u64, u64)> = wait_until("the scaling events", Duration::from_secs(10), || {
        let seen: Vec<(u64, u64)> = scaled.lock().expect("events").iter().map(|e| (e["from"].as_u64().unwrap_or(0), e["to"].as_u64().unwrap_or(0))).collect();
        Ok(seen.last().is_some_and(|(_, to)| *to == 1).then_some(seen))
    })?;
    println!("tasks by lag: {RECORDS} records behind at 2,000 per task, events (from, to): {seen:?}, {duplicates} duplicates");
    assert_eq!(seen.first().map(|e| e.0), Some(1), "it began with min, one task: {seen:?}");
    assert!(seen.iter().any(|(_, to)| *to == 4), "up to max under the backlog: {seen:?}");
    // A partition that moves is committed up to every acknowledged record first, so its next
    // owner re-reads at most what was in flight: 8 batches of 20 per task, for 4 tasks, in
    // the two moves (up, then down). Committing only what the last periodic commit saved
    // re-read about a second of work: 1,800 of 60,000 records here.
    assert!(duplicates <= 2 * 4 * 8 * 20, "{duplicates} records read twice");
    let exit = host.stop()?;
    assert!(exit.success(), "a clean exit: {exit}; log:\n{}", host.log_text());
    Ok(())
}

/// When one task fails, its run stops as a whole; a sibling stuck in a plugin call (here one
/// that spins under a 60 s batch timeout) is ended after the stop's grace period, so the run
/// ends, and the restart policy acts, in about 10 s rather than at the stuck call's timeout.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_stuck_in_a_plugin_call_does_not_hold_its_run_after_a_sibling_failed() -> anyhow::Result<()> {
    let (faulty_wasm, _) = fixtures()?;
    let topic = unique("sibling-in");
    create_topic(&topic, 2).await?;
    // Two steps: the first spins on STALL, the second traps on BOOM. Giving up at the first
    // failure makes the run's end visible (a `gave_up` event, once every task ended). Never
    // idle: an idle task would leave the group and its partition move to the spinning one.
    let connector = format!(
        "- name: siblings\n  topics: [{topic}]\n  output_topic: {topic}-out\n  tasks: 2\n  batch: {{ idle_after_ms: 0 }}\n  limits: {{ batch_timeout_ms: 60000 }}\n  restart: {{ max_failures: 1 }}\n  transforms:\n    - plugin: faulty\n      config: {{ fault: loop, marker: STALL }}\n    - plugin: faulty\n      config: {{ fault: trap, marker: BOOM }}\n"
    );
    let sections = format!("plugins:\n  faulty: {{ path: {} }}\n", faulty_wasm.display());
    let dir = std::env::temp_dir().join(unique("turnpike-siblings"));
    let mut host = HostProcess::start(&dir, &host_config_with(free_port(), &sections, &connector))?;
    host.wait_state("siblings", "RUNNING", Duration::from_secs(120))?;
    // One partition each, so the trap is not behind the spin in one task's batch.
    let spread = |host: &HostProcess| -> anyhow::Result<bool> {
        let tasks = host.get("/v1/connectors/siblings")?.1["tasks"].clone();
        Ok(tasks.as_array().is_some_and(|t| t.len() == 2 && t.iter().all(|t| t["partitions"].as_array().map(Vec::len) == Some(1))))
    };
    wait_until("a partition for each task", Duration::from_secs(60), || Ok(spread(&host)?.then_some(()))).with_context(|| host.log_text())?;
    let record = |value: &str, partition| Outgoing { key: value.to_lowercase(), value: value.to_owned(), partition: Some(partition), timestamp: None };
    produce_records(&producer()?, &topic, &[record("STALL", 0)]).await?;
    wait_until("the stalling record to be read", Duration::from_secs(60), || Ok((host.get("/v1/connectors/siblings")?.1["records_in"] == 1).then_some(())))
        .with_context(|| host.log_text())?;
    produce_records(&producer()?, &topic, &[record("BOOM", 1)]).await?;
    let failed = host.wait_state("siblings", "FAILED", Duration::from_secs(60))?;
    let since = std::time::Instant::now();
    wait_until("the run to end (a gave_up event)", Duration::from_secs(45), || Ok((host.events_counted("gave_up")? == 1).then_some(())))
        .with_context(|| host.log_text())?;
    let took = since.elapsed();
    let log = host.log_text();
    assert!(took < Duration::from_secs(25), "the run ended {took:?} after the failure, not after the grace period; log:\n{log}");
    assert_eq!(failed["error"]["class"], "trap", "{failed}");
    let status = host.get("/v1/connectors/siblings")?.1;
    let classes: Vec<&String> = status["faults"].as_object().map(|f| f.keys().collect()).unwrap_or_default();
    assert_eq!(classes, ["trap"], "the stuck call was ended, not timed out (the trap is tried again once): {status}");
    assert_eq!(log.matches("still stopping after its grace period").count(), 1, "the stuck task, once; log:\n{log}");
    assert!(host.stop()?.success());
    Ok(())
}
