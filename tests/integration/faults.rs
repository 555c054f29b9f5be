//! Fault containment, one fault at a time: a record that traps again is dead-lettered while
//! the rest flow, a supervisor that gave up starts over on a manual restart, and a plugin call
//! stuck when its connector stops is ended after the stop's grace period. (Faulty
//! plugins beside a neighbour whose throughput is measured: `tests/throughput`.)

use std::io::BufRead;
use std::time::Duration;

use turnpike_tests::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_record_that_traps_again_is_dead_lettered_and_the_rest_flow() -> anyhow::Result<()> {
    let (faulty_wasm, _) = fixtures()?;
    let (topic_in, dlq) = (unique("poison-in"), unique("poison-dlq"));
    create_topic(&topic_in, 1).await?;
    let records: Vec<_> = (0..100).map(|i| (format!("k{i}"), if i == 42 { "POISON".to_owned() } else { format!("ok {i}") })).collect();
    produce(&producer()?, &topic_in, &records).await?;
    let connector = format!(
        "- name: poison\n  topics: [{topic_in}]\n  output_topic: {topic_in}-out\n  errors: {{ tolerance: all, dead_letter_topic: {dlq} }}\n  transforms:\n    - plugin: faulty\n      config: {{ fault: trap, marker: POISON }}\n"
    );
    let sections = format!("plugins:\n  faulty: {{ path: {} }}\n", faulty_wasm.display());
    let dir = std::env::temp_dir().join(unique("turnpike-poison"));
    let mut host = HostProcess::start(&dir, &host_config_with(free_port(), &sections, &connector))?;
    host.wait_state("poison", "RUNNING", Duration::from_secs(120))?;

    let out = consume_until(&format!("{topic_in}-out"), Duration::from_secs(60), |got| got.len() >= 99).await?;
    assert_eq!(distinct_and_duplicates(&out).0, 99, "every other record passes; log:\n{}", host.log_text());
    assert!(out.iter().all(|(_, v)| v != "POISON"));

    let consumer = dlq_consumer(&dlq)?;
    let message = tokio::time::timeout(Duration::from_secs(60), consumer.recv()).await??;
    use rdkafka::message::{Headers, Message};
    assert_eq!(message.payload(), Some(&b"POISON"[..]));
    assert_eq!(message.key(), Some(&b"k42"[..]));
    let headers: std::collections::HashMap<String, String> = message
        .headers()
        .map(|h| h.iter().map(|h| (h.key.to_owned(), String::from_utf8_lossy(h.value.unwrap_or_default()).into_owned())).collect())
        .unwrap_or_default();
    assert_eq!(headers["turnpike.error.class"], "trap");
    assert_eq!(headers["turnpike.error.connector"], "poison");
    assert_eq!(headers["turnpike.error.plugin"], "faulty");
    assert_eq!(headers["turnpike.error.stage"], "transforms[0]");
    assert_eq!(headers["turnpike.error.topic"], topic_in);
    assert_eq!(headers["turnpike.error.partition"], "0");
    assert_eq!(headers["turnpike.error.offset"], "42");
    assert!(headers["turnpike.error.message"].contains("poison record at offset 42"), "{headers:?}");

    let status = host.get("/v1/connectors/poison")?.1;
    assert_eq!(status["state"], "RUNNING");
    let version = &headers["turnpike.error.plugin.version"];
    assert_eq!(status["plugins"], serde_json::json!([format!("faulty@{version}")]), "the dead letter names the version that ran: {status}");
    assert_eq!(status["records_dead_lettered"], 1);
    assert!(status["faults"]["trap"].as_u64().unwrap_or(0) >= 2, "{status}");
    assert!(host.stop()?.success());
    Ok(())
}

/// A stop is not held by a plugin call that may run for its whole (long) batch timeout: the
/// call is ended after the stop's grace period (10 s for a stop through the API, half of
/// `shutdown_timeout_ms` at shutdown), the connector stops cleanly (`STOPPED`, not a fault),
/// and the record it never committed is read again at the next start.
#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_call_stuck_past_the_stops_grace_period_is_ended_and_loses_nothing() -> anyhow::Result<()> {
    use anyhow::Context as _;
    let Stalled { mut host, dir, topic, .. } = stalled_host("stuck", 6000).await?;

    // Through the API (whose client gives up after 30 s): ended after 10 s.
    let status = stop_past_the_grace_period(&host, "stuck")?;
    assert_eq!(status["state"], "STOPPED", "ended by the host, not failed: {status}");

    // Resumed, it reads the record again (never committed) and spins again; SIGTERM ends the
    // call after half of shutdown_timeout_ms (3 s) and exits cleanly.
    let (code, body) = http(&host.admin, "POST", "/v1/connectors/stuck/resume")?;
    assert!(code / 100 == 2, "{code} {body}");
    wait_until("the stalling record to be read again", Duration::from_secs(60), || Ok((host.get("/v1/connectors/stuck")?.1["records_in"] == 2).then_some(())))
        .with_context(|| host.log_text())?;
    let asked = std::time::Instant::now();
    let exit = host.stop()?;
    let took = asked.elapsed();
    let log = host.log_text();
    assert!(took < Duration::from_secs(15), "SIGTERM took {took:?} to stop the host; log:\n{log}");
    assert!(exit.success(), "every connector stopped: a clean exit: {exit}; log:\n{log}");
    let ended = log.matches("still stopping after its grace period; ending its plugin calls").count();
    assert_eq!(ended, 2, "the API stop and the shutdown each ended the call; log:\n{log}");

    // Started again with a plugin that forwards everything: the record comes out.
    let mut host = HostProcess::start(&dir, &stalled_config("stuck", &topic, 6000, "NEVER")?)?;
    host.wait_state("stuck", "RUNNING", Duration::from_secs(120))?;
    let out = consume_until(&format!("{topic}-out"), Duration::from_secs(60), |got| !got.is_empty()).await?;
    assert_eq!(out, [("k0".to_owned(), "STALL".to_owned())], "log:\n{}", host.log_text());
    assert!(host.stop()?.success());
    Ok(())
}

/// A shutdown arriving while a stop through the API waits on a stuck plugin call waits for
/// that stop too, under its own shorter grace: the call is ended, the stop is answered, and
/// what it asked for is saved, so the connector is still stopped after the restart. (Before,
/// the run being stopped was out of the shutdown's sight: the process exited with the request
/// unanswered and the connector ran again at the next start.)
#[tokio::test(flavor = "multi_thread")]
async fn a_stop_in_progress_when_the_host_shuts_down_is_finished_answered_and_kept() -> anyhow::Result<()> {
    let Stalled { mut host, dir, config, .. } = stalled_host("late", 8000).await?;

    let admin = host.admin.clone();
    let stop = std::thread::spawn(move || http(&admin, "POST", "/v1/connectors/late/stop"));
    wait_until("the stop to begin", Duration::from_secs(30), || Ok(host.log_text().contains("stopping the connector's run").then_some(())))?;
    let asked = std::time::Instant::now();
    let exit = host.stop()?;
    let took = asked.elapsed();
    let log = host.log_text();
    let answer = stop.join().expect("the stop request's thread");
    assert!(matches!(answer, Ok((200..=299, _))), "the stop was answered: {answer:?}; log:\n{log}");
    assert!(exit.success(), "{exit}; log:\n{log}");
    let ended: Vec<&str> = log.lines().filter(|l| l.contains("still stopping after its grace period")).collect();
    assert!(ended.len() == 1 && ended[0].contains("grace_ms=4000"), "ended once, at the shutdown's grace (half of 8 s), not the stop's (10 s): {ended:?}; log:\n{log}");
    assert!(took < Duration::from_secs(9), "{took:?}; log:\n{log}");

    let mut host = HostProcess::start(&dir, &config)?;
    wait_healthy(&host)?;
    let settled = wait_until("the connector restored", Duration::from_secs(60), || {
        let (_, status) = host.get("/v1/connectors/late")?;
        Ok(matches!(status["state"].as_str(), Some("STOPPED" | "RUNNING")).then_some(status))
    })?;
    assert_eq!(settled["state"], "STOPPED", "the stop was kept: {settled}");
    assert!(host.stop()?.success());
    Ok(())
}

/// A host whose connector is stuck in a plugin call: see [`stalled_host`].
struct Stalled {
    host: HostProcess,
    /// The host's state directory, to start it again from.
    dir: std::path::PathBuf,
    /// The connector's input topic (its output is `{topic}-out`).
    topic: String,
    /// The host's config, to start it again with.
    config: String,
}

/// Starts a host whose connector `name` reads one `STALL` record from a topic of its own and
/// spins on it (the `faulty` fixture looping, under a 60 s batch timeout); returns once the
/// record was read, so the call is stuck from then on.
async fn stalled_host(name: &str, shutdown_timeout_ms: u64) -> anyhow::Result<Stalled> {
    use anyhow::Context as _;
    let topic = unique(&format!("{name}-in"));
    create_topic(&topic, 1).await?;
    produce(&producer()?, &topic, &[("k0".to_owned(), "STALL".to_owned())]).await?;
    let dir = std::env::temp_dir().join(unique(&format!("turnpike-{name}")));
    let config = stalled_config(name, &topic, shutdown_timeout_ms, "STALL")?;
    let mut host = HostProcess::start(&dir, &config)?;
    host.wait_state(name, "RUNNING", Duration::from_secs(120))?;
    // Counted in when read: the plugin is spinning on it from then on.
    let path = format!("/v1/connectors/{name}");
    wait_until("the stalling record to be read", Duration::from_secs(60), || Ok((host.get(&path)?.1["records_in"] == 1).then_some(()))).with_context(|| host.log_text())?;
    Ok(Stalled { host, dir, topic, config })
}

/// The config of [`stalled_host`]'s host, its connector looping on records holding `marker`.
fn stalled_config(name: &str, topic: &str, shutdown_timeout_ms: u64, marker: &str) -> anyhow::Result<String> {
    let (faulty_wasm, _) = fixtures()?;
    let connector = format!(
        "- name: {name}\n  topics: [{topic}]\n  output_topic: {topic}-out\n  limits: {{ batch_timeout_ms: 60000 }}\n  transforms:\n    - plugin: faulty\n      config: {{ fault: loop, marker: {marker} }}\n"
    );
    let sections = format!("shutdown_timeout_ms: {shutdown_timeout_ms}\nplugins:\n  faulty: {{ path: {} }}\n", faulty_wasm.display());
    Ok(host_config_with(free_port(), &sections, &connector))
}

/// The same for a sink waiting on an endpoint that does not answer: a stop ends the write after
/// its grace period, and the last flush a stopping sink makes (of what it wrote before) is a
/// stop too, not a call on the interrupted instance counted as the plugin's fault.
#[tokio::test(flavor = "multi_thread")]
async fn a_sink_write_stuck_on_its_endpoint_is_ended_by_a_stop_without_a_fault() -> anyhow::Result<()> {
    use anyhow::Context as _;
    use std::sync::atomic::{AtomicBool, Ordering};
    let topic = unique("stuck-sink");
    create_topic(&topic, 1).await?;
    // Answers every write at once, except one holding HANG: that one waits two minutes.
    let hanging = std::sync::Arc::new(AtomicBool::new(false));
    let seen = hanging.clone();
    let server = TestServer::start(move |r| {
        if String::from_utf8_lossy(&r.body).contains("HANG") {
            seen.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_secs(120));
        }
        json(200, "{}")
    })?;
    // Flushed only at the stop: the first write is still unflushed when the second hangs. The
    // write waits up to 30 s (the grant's response timeout), past the stop's grace period.
    let connector = format!(
        "- name: stuck-sink\n  topics: [{topic}]\n  limits: {{ batch_timeout_ms: 60000 }}\n  http: {{ allow: [\"127.0.0.1:{}\"] }}\n  sink:\n    plugin: http-sink\n    flush_interval_ms: 60000\n    config: {{ url: \"{}\", timeout_ms: 60000 }}\n",
        server.port,
        server.url("/in")
    );
    let dir = std::env::temp_dir().join(unique("turnpike-stuck-sink"));
    let mut host = HostProcess::start(&dir, &host_config_with(free_port(), "", &connector))?;
    host.wait_state("stuck-sink", "RUNNING", Duration::from_secs(120))?;
    let producer = producer()?;
    produce(&producer, &topic, &[("k0".to_owned(), r#"{"n":1}"#.to_owned())]).await?;
    wait_until("the first record written", Duration::from_secs(60), || Ok((server.received().len() == 1).then_some(()))).with_context(|| host.log_text())?;
    produce(&producer, &topic, &[("k1".to_owned(), r#"{"n":2,"x":"HANG"}"#.to_owned())]).await?;
    wait_until("the second write waiting", Duration::from_secs(60), || Ok(hanging.load(Ordering::SeqCst).then_some(()))).with_context(|| host.log_text())?;

    stop_past_the_grace_period(&host, "stuck-sink")?;
    let log = host.log_text();
    assert!(!log.contains("connector failed"), "the stop is not a failure; log:\n{log}");
    assert!(host.stop()?.success());
    Ok(())
}

/// Stops `connector` through the API while its plugin call is stuck: the answer comes once
/// the stop's 10 s grace period ended the call, and no fault is counted. Its status after.
fn stop_past_the_grace_period(host: &HostProcess, connector: &str) -> anyhow::Result<serde_json::Value> {
    let asked = std::time::Instant::now();
    let (code, body) = http(&host.admin, "POST", &format!("/v1/connectors/{connector}/stop"))?;
    let took = asked.elapsed();
    assert!(code / 100 == 2, "{code} {body}");
    assert!(took >= Duration::from_secs(9) && took < Duration::from_secs(25), "the stop took {took:?}; log:\n{}", host.log_text());
    let (_, status) = host.get(&format!("/v1/connectors/{connector}"))?;
    assert!(status["faults"].as_object().is_none_or(|f| f.is_empty()), "no fault is counted against the plugin: {status}");
    Ok(status)
}

fn dlq_consumer(topic: &str) -> anyhow::Result<rdkafka::consumer::StreamConsumer> {
    use rdkafka::consumer::Consumer;
    let consumer: rdkafka::consumer::StreamConsumer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .set("group.id", unique("dlq-reader"))
        .set("auto.offset.reset", "earliest")
        .create()?;
    consumer.subscribe(&[topic])?;
    Ok(consumer)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_supervisor_gives_up_and_a_manual_restart_starts_over() -> anyhow::Result<()> {
    let (_, wrong_world_wasm) = fixtures()?;
    let topic = unique("giveup-in");
    create_topic(&topic, 1).await?;
    let connector = format!(
        "- name: doomed\n  topics: [{topic}]\n  output_topic: {topic}-out\n  restart: {{ base_ms: 50, max_ms: 100, max_failures: 3, window_s: 600 }}\n  transforms:\n    - plugin: wrongworld\n"
    );
    let sections = format!("plugins:\n  wrongworld: {{ path: {} }}\n", wrong_world_wasm.display());
    let dir = std::env::temp_dir().join(unique("turnpike-giveup"));
    let port = free_port();
    let mut host = HostProcess::start(&dir, &host_config_with(port, &sections, &connector))?;
    host.wait_state("doomed", "FAILED", Duration::from_secs(120))?;
    wait_until("a gave_up event counted", Duration::from_secs(30), || Ok((host.events_counted("gave_up")? == 1).then_some(())))?;
    let status = host.get("/v1/connectors/doomed")?.1;
    assert_eq!(status["state"], "FAILED");
    assert_eq!(status["restarts"], 2, "failures 1 and 2 were retried, failure 3 gave up: {status}");

    // Subscribed first, so the stream sees what the restart causes.
    let mut events = event_stream(&host.admin)?;
    let (code, _) = http(&host.admin, "POST", "/v1/connectors/doomed/restart")?;
    assert_eq!(code, 202);
    let mut seen = Vec::new();
    let mut line = String::new();
    while !seen.contains(&"gave_up".to_owned()) {
        line.clear();
        if events.read_line(&mut line)? == 0 {
            break;
        }
        if let Some(kind) = line.trim().strip_prefix("event: ") {
            seen.push(kind.to_owned());
        }
    }
    assert_eq!(seen.first().map(String::as_str), Some("manual_restart"), "{seen:?}");
    assert!(seen.contains(&"restart_scheduled".to_owned()), "{seen:?}");
    assert!(seen.contains(&"gave_up".to_owned()), "a fresh budget, used up again: {seen:?}");
    assert!(host.stop()?.success());
    Ok(())
}
