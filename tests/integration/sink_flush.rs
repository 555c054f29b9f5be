//! A sink whose flush fails for good fails its connector with class `sink_flush` (not
//! `record_error`) and commits nothing: what it was given is read again after a restart.

use std::time::Duration;

use turnpike_tests::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_sink_that_cannot_flush_fails_as_sink_flush_and_commits_nothing() -> anyhow::Result<()> {
    let server = TestServer::start(|_| json(200, "ok"))?;
    let topic = unique("flushfail-in");
    create_topic(&topic, 1).await?;
    let records: Vec<(String, String)> = (0..10).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
    produce(&producer()?, &topic, &records).await?;
    let connector = format!(
        "- name: unflushable\n  topics: [{topic}]\n  http: {{ allow: [\"127.0.0.1:{}\"] }}\n  restart: {{ enabled: false }}\n  sink:\n    plugin: partition-sink\n    flush_interval_ms: 200\n    config: {{ url: \"{}\", fail_flush: true }}\n",
        server.port,
        server.url("")
    );
    let sections = format!("plugins:\n  partition-sink: {{ path: {} }}\n", fixture_file("partition_sink")?.display());
    let dir = std::env::temp_dir().join(unique("turnpike-flushfail"));
    let mut host = HostProcess::start(&dir, &host_config_with(free_port(), &sections, &connector))?;
    let status = host.wait_state("unflushable", "FAILED", Duration::from_secs(120))?;
    assert_eq!(status["error"]["class"], "sink_flush", "{status}");
    let message = status["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("could not flush") && message.contains("the disk is full"), "{message}");
    assert!(server.received().iter().any(|r| r.target == "/records"), "the sink was given the records before its flush failed");
    let (_, offsets) = host.get("/v1/connectors/unflushable/offsets")?;
    let committed: Vec<_> = offsets["partitions"].as_array().into_iter().flatten().map(|p| p["committed"].clone()).collect();
    assert_eq!(committed, vec![serde_json::Value::Null], "nothing committed: {offsets}");
    Ok(())
}
