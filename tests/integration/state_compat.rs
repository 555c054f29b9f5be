//! A state directory written by Turnpike 0.1.0 (`tests/fixtures/state-0.1.0`: an uploaded
//! plugin, and connectors running, paused and stopped, of every kind) is read by this
//! version: every connector comes back in its state, the upload is there and still loads,
//! and records flow through it.

use std::path::Path;
use std::time::Duration;

use turnpike_tests::*;

/// Copies the fixture, giving its topics names of this run's own (`fixture-*` → `<run>-*`),
/// so reruns on one broker do not share topics.
fn copy_fixture(to: &Path, run: &str) -> anyhow::Result<()> {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/state-0.1.0");
    for sub in ["connectors", "plugins/copy"] {
        std::fs::create_dir_all(to.join(sub))?;
        for entry in std::fs::read_dir(from.join(sub))? {
            let path = entry?.path();
            let target = to.join(sub).join(path.file_name().unwrap_or_default());
            if path.extension().is_some_and(|x| x == "json") {
                std::fs::write(target, std::fs::read_to_string(&path)?.replace("\"fixture-", &format!("\"{run}-")))?;
            } else {
                std::fs::copy(&path, target)?;
            }
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_dir_from_0_1_0_comes_back_as_it_was() -> anyhow::Result<()> {
    let run = unique("compat");
    for topic in ["in", "out", "side", "dlq", "masked", "gen"] {
        create_topic(&format!("{run}-{topic}"), 1).await?;
    }
    let dir = std::env::temp_dir().join(unique("turnpike-compat"));
    copy_fixture(&dir.join("turnpike-state"), &run)?;
    let mut host = HostProcess::start(&dir, &bare_host_config())?;
    wait_healthy(&host)?;
    for (connector, state) in [("copier", "RUNNING"), ("gen", "RUNNING"), ("masker", "PAUSED"), ("webhook", "STOPPED")] {
        host.wait_state(connector, state, Duration::from_secs(60))?;
    }
    let (_, copier) = host.get("/v1/connectors/copier")?;
    assert_eq!(copier["plugins"], serde_json::json!(["copy@1.0.0"]), "{copier}");
    assert_eq!(copier["config"]["errors"]["dead_letter_topic"], format!("{run}-dlq"), "{copier}");
    let (_, plugins) = host.get("/v1/plugins")?;
    let copy = plugins["plugins"].as_array().into_iter().flatten().find(|p| p["name"] == "copy").cloned().unwrap_or_default();
    assert_eq!((copy["version"].as_str(), copy["used_by"].clone()), (Some("1.0.0"), serde_json::json!(["copier"])), "{plugins}");

    let records: Vec<(String, String)> = (0..20).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
    produce(&producer()?, &format!("{run}-in"), &records).await?;
    let out = consume_until(&format!("{run}-out"), Duration::from_secs(60), |got| got.len() >= records.len()).await?;
    assert_eq!(out.len(), records.len(), "log:\n{}", host.log_text());
    let generated = consume_until(&format!("{run}-gen"), Duration::from_secs(60), |got| !got.is_empty()).await?;
    assert!(!generated.is_empty(), "the restored source produces; log:\n{}", host.log_text());
    Ok(())
}
