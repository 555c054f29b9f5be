//! Fault containment: plugins that trap, loop, eat memory, flood output, hang in `create`, or
//! are not Turnpike plugins at all. The host survives, each affected connector says what
//! happened, and a neighbour keeps its throughput.

use std::io::BufRead;
use std::time::{Duration, Instant};

use turnpike_tests::*;

/// Records per second fed to the well-behaved neighbour.
const RATE: usize = 1_000;
/// How long its throughput is measured, alone and next to the faulty connectors.
const WINDOW: Duration = Duration::from_secs(8);

/// Feeds `topic` at `RATE` records per second until `until`.
async fn feed(topic: String, until: Instant) -> anyhow::Result<()> {
    let producer = producer()?;
    let mut i = 0usize;
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    while Instant::now() < until {
        tick.tick().await;
        let batch: Vec<_> = (i..i + RATE / 10).map(|n| (format!("s{n}"), format!(r#"{{"n":{n}}}"#))).collect();
        i += batch.len();
        produce(&producer, &topic, &batch).await?;
    }
    Ok(())
}

/// The neighbour's output rate over `WINDOW`, measured from its status counters.
fn measure(host: &HostProcess) -> anyhow::Result<f64> {
    let before = host.get("/v1/connectors/steady")?.1["records_out"].as_u64().unwrap_or(0);
    let start = Instant::now();
    std::thread::sleep(WINDOW);
    let after = host.get("/v1/connectors/steady")?.1["records_out"].as_u64().unwrap_or(0);
    Ok((after - before) as f64 / start.elapsed().as_secs_f64())
}

const STEADY: &str = "- name: steady\n  topics: [STEADY_IN]\n  output_topic: STEADY_IN-out\n  batch: { max_wait_ms: 5 }\n  transforms:\n    - plugin: identity\n";

fn faulty(name: &str, plugin: &str, config: &str, extra: &str) -> String {
    format!(
        "- name: {name}\n  topics: [FAULT_IN]\n  output_topic: FAULT_IN-{name}\n  restart: {{ base_ms: 500, max_ms: 1000, max_failures: 1000 }}\n{extra}  transforms:\n    - plugin: {plugin}\n      config: {config}\n"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn faulty_plugins_are_contained_and_a_neighbour_keeps_its_throughput() -> anyhow::Result<()> {
    let (faulty_wasm, wrong_world_wasm) = fixtures()?;
    let dir = std::env::temp_dir().join(unique("turnpike-faults"));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("core.wasm"), b"\0asm\x01\0\0\0")?;
    std::fs::write(dir.join("random.wasm"), (0..4096).map(|_| rand::random::<u8>()).collect::<Vec<_>>())?;
    let (steady_in, fault_in) = (unique("steady"), unique("faults"));
    create_topic(&steady_in, 1).await?;
    create_topic(&fault_in, 1).await?;
    produce(&producer()?, &fault_in, &[("k".to_owned(), "boom".to_owned()), ("k2".to_owned(), "boom".to_owned())]).await?;
    let steady = STEADY.replace("STEADY_IN", &steady_in);
    let feeding = tokio::spawn(feed(steady_in.clone(), Instant::now() + Duration::from_secs(240)));

    // Baseline: the neighbour alone.
    let mut alone = HostProcess::start(&dir.join("alone"), &host_config(free_port(), &steady))?;
    alone.wait_state("steady", "RUNNING", Duration::from_secs(120))?;
    std::thread::sleep(Duration::from_secs(2));
    let baseline = measure(&alone)?;
    assert!(alone.stop()?.success());

    // The same neighbour beside every kind of broken plugin.
    let cases = [
        ("trap", "faulty", r#"{ fault: trap }"#, "", "trap"),
        ("loop", "faulty", r#"{ fault: loop }"#, "  limits: { batch_timeout_ms: 300 }\n", "timeout"),
        ("memory", "faulty", r#"{ fault: memory }"#, "  limits: { memory_mib: 16 }\n", "memory_limit"),
        ("huge", "faulty", r#"{ fault: huge_output }"#, "", "memory_limit"),
        ("flood", "faulty", r#"{ fault: huge_output, output_mib: 64 }"#, "  limits: { memory_mib: 1024, max_output_mib: 16 }\n", "output_limit"),
        ("slowcreate", "faulty", r#"{ fault: slow_create }"#, "  limits: { create_timeout_ms: 300 }\n", "timeout"),
        ("wrongworld", "wrongworld", "{}", "", "wrong_world"),
        ("coremodule", "coremodule", "{}", "", "core_module"),
        ("random", "random", "{}", "", "invalid_component"),
    ];
    let mut connectors = steady.clone();
    for (name, plugin, config, extra, _) in cases {
        connectors.push_str(&faulty(name, plugin, config, extra).replace("FAULT_IN", &fault_in));
    }
    let sections = format!(
        "plugins:\n  faulty: {{ path: {} }}\n  wrongworld: {{ path: {} }}\n  coremodule: {{ path: {} }}\n  random: {{ path: {} }}\n",
        faulty_wasm.display(),
        wrong_world_wasm.display(),
        dir.join("core.wasm").display(),
        dir.join("random.wasm").display()
    );
    let port = free_port();
    let mut host = HostProcess::start(&dir.join("faults"), &host_config_with(port, &sections, &connectors))?;
    host.wait_state("steady", "RUNNING", Duration::from_secs(120))?;
    std::thread::sleep(Duration::from_secs(2));
    let beside_faults = measure(&host)?;

    println!("neighbour throughput: alone {baseline:.0} records/s, beside 9 faulty connectors {beside_faults:.0} records/s ({:.0} %)", 100.0 * beside_faults / baseline);
    assert!(beside_faults >= 0.9 * baseline, "the neighbour kept {beside_faults:.0} of {baseline:.0} records/s; log:\n{}", host.log_text());

    for (name, _, _, _, class) in cases {
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            let status = host.get(&format!("/v1/connectors/{name}"))?.1;
            if status["error"]["class"] == class || Instant::now() > deadline {
                break status;
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        assert_eq!(status["error"]["class"], class, "{name}: {status}");
        assert!(matches!(status["state"].as_str(), Some("FAILED" | "RESTARTING")), "{name}: {status}");
        if name != "wrongworld" && name != "coremodule" && name != "random" {
            assert!(status["faults"][class].as_u64().unwrap_or(0) >= 1, "{name}: fault counted: {status}");
        }
    }
    let (_, metrics) = http(&host.admin, "GET", "/metrics")?;
    assert!(metrics.contains(r#"turnpike_connector_faults_total{class="trap",connector="trap"}"#), "{metrics}");
    assert!(metrics.contains(r#"turnpike_connector_failures_total{class="wrong_world",connector="wrongworld"}"#), "{metrics}");
    assert_eq!(host.get("/healthz")?.1["status"], "ok", "the host survived");
    assert!(host.stop()?.success(), "the host stops cleanly after all that; log:\n{}", host.log_text());
    feeding.abort();
    Ok(())
}

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
    assert_eq!(headers["turnpike.error.plugin.version"], "file");
    assert_eq!(headers["turnpike.error.stage"], "transforms[0]");
    assert_eq!(headers["turnpike.error.topic"], topic_in);
    assert_eq!(headers["turnpike.error.partition"], "0");
    assert_eq!(headers["turnpike.error.offset"], "42");
    assert!(headers["turnpike.error.message"].contains("poison record at offset 42"), "{headers:?}");

    let status = host.get("/v1/connectors/poison")?.1;
    assert_eq!(status["state"], "RUNNING");
    assert_eq!(status["records_dead_lettered"], 1);
    assert!(status["faults"]["trap"].as_u64().unwrap_or(0) >= 2, "{status}");
    assert!(host.stop()?.success());
    Ok(())
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
    let gave_up = |metrics: &str| metrics.lines().any(|l| l == r#"turnpike_events_total{kind="gave_up"} 1"#);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !gave_up(&http(&host.admin, "GET", "/metrics")?.1) {
        assert!(Instant::now() < deadline, "no gave_up event counted");
        std::thread::sleep(Duration::from_millis(100));
    }
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
