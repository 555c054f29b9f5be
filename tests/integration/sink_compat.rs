//! A sink built against the `0.1.0` contract still loads on a host that speaks `0.1.1`, and
//! delivers what the current build of the same source delivers.
//! `tests/fixtures/plugins-0.1.0/partition-sink.wasm` is `tests/components/partition-sink` as
//! built against `0.1.0`; both builds run side by side on one topic, each posting to a server
//! of its own.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use turnpike_tests::*;

use crate::s3_sink::{committed, progress};

/// A `partition-sink` connector named `name`, running `plugin`, posting to `server`.
fn connector(name: &str, plugin: &str, topic: &str, server: &TestServer) -> String {
    format!(
        "- name: {name}\n  topics: [{topic}]\n  http: {{ allow: [\"127.0.0.1:{}\"] }}\n  restart: {{ enabled: false }}\n  sink:\n    plugin: {plugin}\n    flush_interval_ms: 300\n    config: {{ url: \"{}\" }}\n",
        server.port,
        server.url("")
    )
}

/// The record lines a sink posted (`topic/partition@offset value`).
fn delivered(server: &TestServer) -> BTreeSet<String> {
    let posts = server.received().into_iter().filter(|r| r.target == "/records");
    posts.flat_map(|r| String::from_utf8_lossy(&r.body).lines().map(str::to_owned).collect::<Vec<_>>()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sink_built_for_0_1_0_loads_and_delivers_like_the_current_build() -> Result<()> {
    const TOTAL: usize = 200;
    let (old_server, new_server) = (TestServer::start(|_| json(200, "ok"))?, TestServer::start(|_| json(200, "ok"))?);
    let topic = unique("compat-sink-in");
    create_topic(&topic, 1).await?;
    let records: Vec<(String, String)> = (0..TOTAL).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
    produce(&producer()?, &topic, &records).await?;
    let old_build = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/plugins-0.1.0/partition-sink.wasm");
    let sections = format!(
        "plugins:\n  partition-sink-v010: {{ path: {} }}\n  partition-sink: {{ path: {} }}\n",
        old_build.display(),
        fixture_file("partition_sink")?.display()
    );
    let connectors = connector("old-build", "partition-sink-v010", &topic, &old_server) + &connector("new-build", "partition-sink", &topic, &new_server);
    let dir = std::env::temp_dir().join(unique("turnpike-sink-compat"));
    let mut host = HostProcess::start(&dir, &host_config_with(free_port(), &sections, &connectors))?;
    host.wait_state("old-build", "RUNNING", Duration::from_secs(120))?;
    host.wait_state("new-build", "RUNNING", Duration::from_secs(120))?;

    let expected: BTreeSet<String> = (0..TOTAL).map(|i| format!("{topic}/0@{i} v{i}")).collect();
    for (name, server) in [("old-build", &old_server), ("new-build", &new_server)] {
        wait_until(&format!("{name} to deliver and commit all {TOTAL} records"), Duration::from_secs(60), || {
            Ok((delivered(server).len() >= TOTAL && committed(&progress(&host, name)?, 0) == TOTAL as i64).then_some(()))
        })
        .with_context(|| host.log_text())?;
        assert_eq!(delivered(server), expected, "{name} delivered every record as `topic/partition@offset value`");
    }
    assert!(host.stop()?.success());
    Ok(())
}
