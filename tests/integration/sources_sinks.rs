//! Source and sink connectors on real Kafka, with real HTTP servers on 127.0.0.1: positions
//! survive a kill, a failing endpoint loses nothing, rejected records are dead-lettered with
//! their context at every stage, and outgoing HTTP needs a grant.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use turnpike_tests::*;

/// Top-level config sections giving each test its own positions topic.
fn positions(topic: &str) -> String {
    format!("source_positions_topic: {topic}\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_source_resumes_from_its_last_stored_position_without_a_gap() -> anyhow::Result<()> {
    const TOTAL: usize = 20_000;
    let (out, positions_topic) = (unique("datagen-out"), unique("positions"));
    let connector = format!(
        "- name: gen\n  output_topic: {out}\n  source:\n    plugin: datagen\n    poll_interval_ms: 20\n    config:\n      seed: 3\n      key: id\n      count: {TOTAL}\n      rate_per_sec: 2000\n      fields:\n        - {{ name: id, type: sequence }}\n        - {{ name: email, type: email }}\n"
    );
    let dir = std::env::temp_dir().join(unique("turnpike-source-kill"));
    let config = host_config_with(free_port(), &positions(&positions_topic), &connector);
    create_topic(&out, 1).await?;
    let mut first = HostProcess::start(&dir.join("first"), &config)?;
    first.wait_state("gen", "RUNNING", Duration::from_secs(120))?;
    // Let it run past a few position saves (every second), then kill it mid-stream, but not
    // before a position is saved, however the timing falls.
    consume_until(&out, Duration::from_secs(60), |got| got.len() >= 6_000).await?;
    saved_positions(&positions_topic, &["gen"], Duration::from_secs(60)).await?;
    first.kill_hard()?;
    let produced = end_offset(&out)?;
    assert!(produced < TOTAL as i64, "killed mid-stream, not after all {TOTAL} records ({produced})");

    // A new host (new state directory: the position lives in Kafka) picks up from there.
    let mut second = HostProcess::start(&dir.join("second"), &config)?;
    second.wait_state("gen", "RUNNING", Duration::from_secs(120))?;
    let all = consume_until(&out, Duration::from_secs(120), distinct_keys_reach(TOTAL)).await?;
    let (distinct, duplicates) = distinct_and_duplicates(&all);
    println!("source kill/restart: {TOTAL} records, {produced} produced before the kill, {duplicates} duplicates after resuming");
    assert_eq!(distinct, TOTAL, "no gap; log:\n{}", second.log_text());
    let keys: HashSet<usize> = all.iter().filter_map(|(k, _)| k.parse().ok()).collect();
    assert!((0..TOTAL).all(|n| keys.contains(&n)), "every record number 0..{TOTAL} arrived");
    assert!((duplicates as i64) < produced, "resumed from a stored position, not from the start ({duplicates} duplicates)");
    assert!(second.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn http_source_resumes_after_its_cursor_and_does_not_read_again() -> anyhow::Result<()> {
    let available = Arc::new(AtomicUsize::new(30));
    let items = available.clone();
    let server = TestServer::start(move |req| {
        let after: usize = req.target.split("after=").nth(1).and_then(|v| v.parse().ok()).unwrap_or(0);
        let upto = items.load(Ordering::SeqCst).min(after + 10);
        let page: Vec<String> = (after + 1..=upto).map(|id| format!(r#"{{"id":{id},"name":"item {id}"}}"#)).collect();
        json(200, &format!(r#"{{"items":[{}]}}"#, page.join(",")))
    })?;
    let (out, positions_topic) = (unique("api-out"), unique("positions"));
    let connector = format!(
        "- name: api\n  output_topic: {out}\n  http: {{ allow: [\"127.0.0.1:{}\"] }}\n  source:\n    plugin: http-source\n    poll_interval_ms: 200\n    config: {{ url: \"{}\", items: items, key_field: id }}\n",
        server.port,
        server.url("/items")
    );
    let dir = std::env::temp_dir().join(unique("turnpike-http-source"));
    let config = host_config_with(free_port(), &positions(&positions_topic), &connector);
    let mut host = HostProcess::start(&dir, &config)?;
    host.wait_state("api", "RUNNING", Duration::from_secs(120))?;
    let first = consume_until(&out, Duration::from_secs(60), |got| got.len() >= 30).await?;
    assert_eq!(distinct_and_duplicates(&first), (30, 0));
    assert!(host.stop()?.success(), "a graceful stop saves the last position");

    available.store(40, Ordering::SeqCst);
    let requests_before = server.received().len();
    let mut host = HostProcess::start(&dir, &config)?;
    host.wait_state("api", "RUNNING", Duration::from_secs(120))?;
    let all = consume_until(&out, Duration::from_secs(60), |got| got.len() >= 40).await?;
    // Once it asked for what comes after item 40, whatever it read before is in the topic.
    wait_until("the restarted source to poll past item 40", Duration::from_secs(30), || {
        Ok(server.received().iter().skip(requests_before).any(|r| r.target == "/items?after=40").then_some(()))
    })?;
    let all_after_wait = consume_until(&out, Duration::from_secs(5), |got| got.len() > 40).await?;
    assert_eq!(distinct_and_duplicates(&all), (40, 0), "items 31..40 arrived, nothing twice");
    assert_eq!(all_after_wait.len(), 40, "nothing read again");
    let resumed = &server.received()[requests_before];
    assert_eq!(resumed.target, "/items?after=30", "the restarted source asked after its stored cursor");
    assert!(host.stop()?.success());
    Ok(())
}

/// A sink connector on `topic` posting to `server`, with extra YAML lines.
fn sink_connector(name: &str, topic: &str, server: &TestServer, extra: &str) -> String {
    format!(
        "- name: {name}\n  topics: [{topic}]\n  http: {{ allow: [\"127.0.0.1:{}\"] }}\n  sink:\n    plugin: http-sink\n    flush_interval_ms: 500\n    config: {{ url: \"{}\" }}\n{extra}",
        server.port,
        server.url("/ingest")
    )
}

/// Lines the server accepted (answered 2xx), across every request.
fn accepted_lines(server: &TestServer, accepted: impl Fn(&Received) -> bool) -> Vec<String> {
    let requests = server.received();
    let ok = requests.iter().filter(|r| accepted(r));
    ok.flat_map(|r| String::from_utf8_lossy(&r.body).lines().map(str::to_owned).collect::<Vec<_>>()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sink_endpoint_failing_for_a_while_loses_nothing() -> anyhow::Result<()> {
    // The endpoint answers 500 to its first requests, however long the host takes to start;
    // the server records what it answered, so only records accepted with a 2xx count.
    let failing_requests = 6;
    let seen = std::sync::atomic::AtomicUsize::new(0);
    let server = TestServer::start(move |r| {
        let n = if r.method == "POST" { seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) } else { usize::MAX };
        if n < failing_requests { json(500, "down") } else { json(200, "ok") }
    })?;
    let topic = unique("sink-in");
    create_topic(&topic, 3).await?;
    let records: Vec<_> = (0..2_000).map(|i| (format!("k{i}"), format!(r#"{{"n":{i}}}"#))).collect();
    produce(&producer()?, &topic, &records).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-sink-500"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &sink_connector("post", &topic, &server, "")))?;
    host.wait_state("post", "RUNNING", Duration::from_secs(120))?;

    let accepted = |r: &Received| r.method == "POST" && (200..300).contains(&r.status);
    let delivered = wait_until("every record accepted by the endpoint", Duration::from_secs(120), || {
        let lines: HashSet<String> = accepted_lines(&server, accepted).into_iter().collect();
        Ok((lines.len() >= 2_000).then_some(lines))
    })?;
    assert!((0..2_000).all(|i| delivered.contains(&format!(r#"{{"n":{i}}}"#))), "every record arrived");
    let rejected = accepted_lines(&server, |r| r.method == "POST" && r.status == 500);
    assert!(!rejected.is_empty(), "the endpoint refused some records first");
    assert!(rejected.iter().all(|line| delivered.contains(line)), "every refused record was sent again and accepted");
    let status = host.get("/v1/connectors/post")?.1;
    assert_eq!(status["state"], "RUNNING", "{status}");
    assert!(status["retries"].as_u64().unwrap_or(0) >= 1, "the 500s were retried: {status}");
    let posts = server.received().iter().filter(|r| r.method == "POST").count();
    println!("sink answered 500 to its first {failing_requests} requests: {posts} requests in all, {} retries, 2000 of 2000 records delivered", status["retries"]);
    // Offsets are committed once flushed: nothing left to read.
    wait_until("the sink's lag to reach 0", Duration::from_secs(30), || {
        let (_, offsets) = host.get("/v1/connectors/post/offsets")?;
        let lags: Option<Vec<i64>> = offsets["partitions"].as_array().map(|ps| ps.iter().map(|p| p["lag"].as_i64().unwrap_or(-1)).collect());
        Ok((lags.is_some_and(|l| l.len() == 3 && l.iter().all(|&x| x == 0))).then_some(()))
    })?;
    assert!(host.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_the_endpoint_rejects_is_dead_lettered_with_its_context() -> anyhow::Result<()> {
    let server = TestServer::start(|req| if String::from_utf8_lossy(&req.body).contains("REJECT") { json(400, "bad record") } else { json(200, "ok") })?;
    let (topic, dlq) = (unique("sink-4xx"), unique("sink-dlq"));
    create_topic(&topic, 1).await?;
    let records: Vec<_> = (0..50).map(|i| (format!("k{i}"), if i == 17 { "REJECT me".to_owned() } else { format!(r#"{{"n":{i}}}"#) })).collect();
    produce(&producer()?, &topic, &records).await?;
    let errors = format!("  errors: {{ tolerance: all, dead_letter_topic: {dlq} }}\n");
    let dir = std::env::temp_dir().join(unique("turnpike-sink-4xx"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &sink_connector("picky", &topic, &server, &errors)))?;
    host.wait_state("picky", "RUNNING", Duration::from_secs(120))?;

    let dead = read_with_headers(&dlq, 1, Duration::from_secs(60)).await?;
    assert_eq!(dead.len(), 1, "one dead letter; log:\n{}", host.log_text());
    let d = &dead[0];
    assert_eq!((d.key.as_str(), d.value.as_str()), ("k17", "REJECT me"), "the record, unchanged");
    let h = &d.headers;
    assert_eq!(h["turnpike.error.connector"], "picky");
    assert_eq!(h["turnpike.error.stage"], "sink");
    assert_eq!(h["turnpike.error.plugin"], "http-sink");
    assert_eq!(h["turnpike.error.plugin.version"], host_version()?, "a built-in carries the host's version: {h:?}");
    assert_eq!(h["turnpike.error.class"], "record_error");
    assert_eq!(h["turnpike.error.topic"], topic);
    assert_eq!(h["turnpike.error.partition"], "0");
    assert_eq!(h["turnpike.error.offset"], "17");
    assert!(h["turnpike.error.message"].contains("400"), "{h:?}");

    let delivered = wait_until("the 49 good records at the endpoint", Duration::from_secs(30), || {
        let lines: HashSet<String> = accepted_lines(&server, |r| !String::from_utf8_lossy(&r.body).contains("REJECT")).into_iter().collect();
        Ok((lines.len() >= 49).then_some(lines))
    })?;
    assert_eq!(delivered.len(), 49);
    let status = host.get("/v1/connectors/picky")?.1;
    assert_eq!((status["state"].as_str(), status["records_dead_lettered"].as_u64()), (Some("RUNNING"), Some(1)), "{status}");
    assert!(host.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn one_transform_error_in_a_batch_of_100_gives_99_outputs_and_one_dead_letter() -> anyhow::Result<()> {
    let (topic, dlq) = (unique("mask-in"), unique("mask-dlq"));
    create_topic(&topic, 1).await?;
    let records: Vec<_> = (0..100).map(|i| (format!("k{i}"), if i == 63 { "not json".to_owned() } else { format!(r#"{{"email":"u{i}@example.com"}}"#) })).collect();
    produce(&producer()?, &topic, &records).await?;
    let connector = format!(
        "- name: mask\n  topics: [{topic}]\n  output_topic: {topic}-out\n  batch: {{ max_records: 100, max_wait_ms: 2000 }}\n  errors: {{ tolerance: all, dead_letter_topic: {dlq} }}\n  transforms:\n    - plugin: pii-mask\n      config: {{ fields: [email] }}\n"
    );
    let dir = std::env::temp_dir().join(unique("turnpike-mask-dlq"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connector))?;
    host.wait_state("mask", "RUNNING", Duration::from_secs(120))?;
    let out = consume_until(&format!("{topic}-out"), Duration::from_secs(60), |got| got.len() >= 99).await?;
    assert_eq!(distinct_and_duplicates(&out), (99, 0));
    assert!(out.iter().all(|(_, v)| v == r#"{"email":"***"}"#), "masked");
    let dead = read_with_headers(&dlq, 1, Duration::from_secs(30)).await?;
    assert_eq!(dead.len(), 1);
    assert_eq!((dead[0].key.as_str(), dead[0].value.as_str()), ("k63", "not json"));
    assert_eq!(dead[0].headers["turnpike.error.stage"], "transforms[0]");
    assert_eq!(dead[0].headers["turnpike.error.plugin"], "pii-mask");
    assert_eq!(dead[0].headers["turnpike.error.offset"], "63");
    assert!(host.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_source_record_that_cannot_be_read_is_dead_lettered_at_the_source_stage() -> anyhow::Result<()> {
    let server = TestServer::start(|req| {
        if req.target.contains("after=") {
            json(200, "[]")
        } else {
            json(200, r#"[{"id":"a"},{"nope":true},{"id":"c"}]"#)
        }
    })?;
    let (out, dlq, positions_topic) = (unique("src-out"), unique("src-dlq"), unique("positions"));
    let connector = format!(
        "- name: reader\n  output_topic: {out}\n  errors: {{ tolerance: all, dead_letter_topic: {dlq} }}\n  http: {{ allow: [\"127.0.0.1:{}\"] }}\n  source:\n    plugin: http-source\n    config: {{ url: \"{}\" }}\n",
        server.port,
        server.url("/things")
    );
    let dir = std::env::temp_dir().join(unique("turnpike-source-dlq"));
    let mut host = HostProcess::start(&dir, &host_config_with(free_port(), &positions(&positions_topic), &connector))?;
    host.wait_state("reader", "RUNNING", Duration::from_secs(120))?;
    let good = consume_until(&out, Duration::from_secs(60), |got| got.len() >= 2).await?;
    assert_eq!(good.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>(), [r#"{"id":"a"}"#, r#"{"id":"c"}"#]);
    let dead = read_with_headers(&dlq, 1, Duration::from_secs(30)).await?;
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].value, r#"{"nope":true}"#);
    let h = &dead[0].headers;
    assert_eq!((h["turnpike.error.stage"].as_str(), h["turnpike.error.plugin"].as_str()), ("source", "http-source"));
    assert_eq!(h["turnpike.error.destination"], out);
    assert!(h["turnpike.error.message"].contains("cursor"), "{h:?}");
    assert!(host.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn with_tolerance_none_a_rejected_record_fails_the_connector_with_the_error() -> anyhow::Result<()> {
    let server = TestServer::start(|_| json(422, "schema mismatch"))?;
    let topic = unique("sink-strict");
    create_topic(&topic, 1).await?;
    produce(&producer()?, &topic, &[("k".to_owned(), "{}".to_owned())]).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-sink-strict"));
    let no_restart = "  restart: { enabled: false }\n";
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &sink_connector("strict", &topic, &server, no_restart)))?;
    let status = host.wait_state("strict", "FAILED", Duration::from_secs(120))?;
    assert_eq!(status["error"]["class"], "record_error", "{status}");
    let message = status["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("422") && message.contains("schema mismatch") && message.contains("errors.tolerance is none"), "{message}");
    assert!(message.contains(&format!("{topic}/0@0")), "names the record: {message}");
    // Nothing was committed: the record is read again after a fix.
    let (_, offsets) = host.get("/v1/connectors/strict/offsets")?;
    assert!(offsets["partitions"][0]["committed"].is_null() || offsets["partitions"][0]["committed"] == 0, "{offsets}");
    assert!(host.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_without_the_http_grant_is_refused_and_the_connector_says_why() -> anyhow::Result<()> {
    let server = TestServer::start(|_| json(200, "ok"))?;
    let topic = unique("sink-nogrant");
    create_topic(&topic, 1).await?;
    produce(&producer()?, &topic, &[("k".to_owned(), "{}".to_owned())]).await?;
    let connector = format!(
        "- name: nogrant\n  topics: [{topic}]\n  restart: {{ enabled: false }}\n  sink:\n    plugin: http-sink\n    config: {{ url: \"{}\" }}\n",
        server.url("/ingest")
    );
    let dir = std::env::temp_dir().join(unique("turnpike-nogrant"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connector))?;
    let status = host.wait_state("nogrant", "FAILED", Duration::from_secs(120))?;
    let message = status["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("grants no outgoing HTTP") && message.contains(&format!("127.0.0.1:{}", server.port)), "{status}");
    assert!(message.contains("http.allow"), "says how to fix it: {message}");
    assert!(server.received().is_empty(), "nothing reached the server");
    assert_eq!(host.get("/healthz")?.1["status"], "ok");
    assert!(host.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sink_is_told_of_partitions_moving_between_hosts_and_loses_nothing() -> anyhow::Result<()> {
    let server = TestServer::start(|_| json(200, "ok"))?;
    let sink_wasm = fixture_file("partition_sink")?;
    let topic = unique("rebalance-in");
    create_topic(&topic, 4).await?;
    let producer = producer()?;
    let batch = |from: usize| (from..from + 1_000).map(|i| (format!("k{i}"), format!("v{i}"))).collect::<Vec<_>>();
    produce(&producer, &topic, &batch(0)).await?;
    let connector = format!(
        "- name: shared\n  topics: [{topic}]\n  http: {{ allow: [\"127.0.0.1:{}\"] }}\n  sink:\n    plugin: partition-sink\n    flush_interval_ms: 300\n    config: {{ url: \"{}\" }}\n",
        server.port,
        server.url("")
    );
    let sections = format!("plugins:\n  partition-sink: {{ path: {} }}\n", sink_wasm.display());
    let dir = std::env::temp_dir().join(unique("turnpike-rebalance"));
    let config = |port| host_config_with(port, &sections, &connector);
    let values = |server: &TestServer| -> HashSet<String> {
        let records = server.received().into_iter().filter(|r| r.target == "/records");
        records.flat_map(|r| String::from_utf8_lossy(&r.body).lines().filter_map(|l| l.split_once(' ').map(|(_, v)| v.to_owned())).collect::<Vec<_>>()).collect()
    };
    let events = |server: &TestServer| -> Vec<String> {
        server.received().into_iter().filter(|r| r.target == "/events").map(|r| String::from_utf8_lossy(&r.body).into_owned()).collect()
    };

    let mut first = HostProcess::start(&dir.join("a"), &config(free_port()))?;
    first.wait_state("shared", "RUNNING", Duration::from_secs(120))?;
    wait_until("the first host to write the first 1,000", Duration::from_secs(60), || Ok((values(&server).len() >= 1_000).then_some(())))?;
    let assigned_first = events(&server);
    assert!(assigned_first.iter().any(|e| e.starts_with("assigned") && (0..4).all(|p| e.contains(&format!("{topic}/{p}")))), "{assigned_first:?}");

    // A second host runs the same connector (same consumer group): partitions move.
    let mut second = HostProcess::start(&dir.join("b"), &config(free_port()))?;
    second.wait_state("shared", "RUNNING", Duration::from_secs(120))?;
    // Cooperative rebalancing: the first host gives up only the partitions that move (the
    // eager protocol revoked all four and assigned back the two it kept).
    let moved = wait_until("a revocation and a new assignment", Duration::from_secs(60), || {
        let e = events(&server);
        Ok((e.iter().any(|x| x.starts_with("revoked")) && e.iter().filter(|x| x.starts_with("assigned")).count() >= 2).then_some(e))
    })?;
    let revoked: Vec<&String> = moved.iter().filter(|x| x.starts_with("revoked")).collect();
    assert!(revoked.iter().all(|e| (0..4).filter(|p| e.contains(&format!("{topic}/{p}"))).count() < 4), "only the partitions that move are revoked: {moved:?}");
    produce(&producer, &topic, &batch(1_000)).await?;
    let all = wait_until("all 2,000 records at the endpoint", Duration::from_secs(90), || {
        let v = values(&server);
        Ok((v.len() >= 2_000).then_some(v))
    })?;
    assert!((0..2_000).all(|i| all.contains(&format!("v{i}"))), "nothing lost across the rebalance");
    println!("rebalance: events {:?}", events(&server));
    assert!(first.stop()?.success());
    assert!(second.stop()?.success());
    Ok(())
}
