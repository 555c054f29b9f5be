//! The README's main command, `turnpike dev`: embedded broker, demo connector, admin API,
//! clean shutdown.

use std::process::{Command, Stdio};
use std::time::Duration;

use turnpike_tests::*;

#[test]
fn turnpike_dev_masks_records_serves_the_api_and_stops_cleanly() -> anyhow::Result<()> {
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let dir = std::env::temp_dir().join(unique("turnpike-dev"));
    std::fs::create_dir_all(&dir)?;
    let stdout_path = dir.join("stdout");
    let mut child = Command::new(turnpike_bin())
        .args(["dev", "--listen", &address, "--rate", "200", "--samples", "2"])
        .stdout(std::fs::File::create(&stdout_path)?)
        .stderr(Stdio::null())
        .spawn()?;

    let status = wait_until("turnpike dev to process 100 records and show 2 samples", Duration::from_secs(120), || {
        anyhow::ensure!(child.try_wait()?.is_none(), "turnpike dev exited early");
        // Running, records flowing, and the before/after samples on the console.
        let samples_shown = std::fs::read_to_string(&stdout_path)?.lines().filter(|l| l.trim().starts_with("after:")).count() >= 2;
        Ok(match http_get(&address, "/v1/connectors/mask-customers") {
            Ok((200, body)) if samples_shown && body["state"] == "RUNNING" && body["records_out"].as_u64().unwrap_or(0) >= 100 => Some(body),
            _ => None,
        })
    })?;
    // Built-ins are registered under the host's own version.
    let version = host_version()?;
    assert_eq!(status["plugins"][0], format!("pii-mask@{version}"), "{status}");
    assert_eq!(http_get(&address, "/healthz")?.1["status"], "ok");
    let plugins = http_get(&address, "/v1/plugins")?.1;
    let names: Vec<&str> = plugins["plugins"].as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect();
    for builtin in ["identity", "pii-mask", "datagen", "http-source", "http-sink"] {
        assert!(names.contains(&builtin), "{builtin} is built in: {names:?}");
    }
    // The demo source: datagen through pii-mask into `orders`.
    let source = wait_until("the demo source to produce", Duration::from_secs(60), || {
        let (_, s) = http_get(&address, "/v1/connectors/orders-gen")?;
        Ok((s["kind"] == "source" && s["state"] == "RUNNING" && s["records_out"].as_u64().unwrap_or(0) >= 3).then_some(s))
    })?;
    assert_eq!(source["plugins"], serde_json::json!([format!("datagen@{version}"), format!("pii-mask@{version}")]), "{source}");

    Command::new("kill").arg("-TERM").arg(child.id().to_string()).status()?;
    let exit = wait_until("turnpike dev to stop after SIGTERM", Duration::from_secs(30), || Ok(child.try_wait()?))?;
    assert!(exit.success(), "clean exit, got {exit}");

    let printed = std::fs::read_to_string(&stdout_path)?;
    let after = printed.lines().find_map(|l| l.trim().strip_prefix("after:")).expect("a before/after sample was printed");
    let masked: serde_json::Value = serde_json::from_str(after.trim())?;
    assert_eq!(masked["ssn"], "***");
    assert_eq!(masked["email"].as_str().map(str::len), Some(64), "email hashed: {after}");
    assert!(masked["card"]["number"].as_str().unwrap_or_default().starts_with("************"));
    let last = printed.lines().rev().find(|l| l.starts_with("mask-customers:")).expect("final count printed");
    assert!(last.contains("Stopped"), "{last}");
    Ok(())
}

/// Starts `turnpike dev` with `cache` as its cache directory, waits for the demo connector to
/// run, and stops it.
fn run_dev_once(cache: &std::path::Path) -> anyhow::Result<()> {
    let address = format!("127.0.0.1:{}", free_port());
    let mut child = Command::new(turnpike_bin())
        .args(["dev", "--listen", &address, "--rate", "20", "--samples", "0"])
        .env("XDG_CACHE_HOME", cache)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let running = wait_until("the demo connector to run", Duration::from_secs(120), || {
        anyhow::ensure!(child.try_wait()?.is_none(), "turnpike dev exited early");
        Ok(matches!(http_get(&address, "/v1/connectors/mask-customers"), Ok((200, body)) if body["state"] == "RUNNING").then_some(()))
    });
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let exit = wait_until("turnpike dev to stop after SIGTERM", Duration::from_secs(30), || Ok(child.try_wait()?));
    running?;
    anyhow::ensure!(exit?.success(), "clean exit");
    Ok(())
}

#[test]
fn a_second_turnpike_dev_reads_the_builtins_the_first_compiled() -> anyhow::Result<()> {
    let cache = std::env::temp_dir().join(unique("turnpike-dev-cache"));
    let compiled = cache.join("turnpike").join("compiled");
    // Each artefact with its modification time: a recompiled one is written anew.
    let artefacts = || -> anyhow::Result<std::collections::BTreeMap<std::path::PathBuf, std::time::SystemTime>> {
        let mut found = std::collections::BTreeMap::new();
        for entry in std::fs::read_dir(&compiled)? {
            let entry = entry?;
            if !entry.file_name().to_string_lossy().starts_with('.') {
                found.insert(entry.path(), entry.metadata()?.modified()?);
            }
        }
        Ok(found)
    };
    run_dev_once(&cache)?;
    let first = artefacts()?;
    assert!(first.len() >= 5, "one artefact per built-in component in {}: {first:?}", compiled.display());
    run_dev_once(&cache)?;
    assert_eq!(artefacts()?, first, "the second run compiled nothing again");
    Ok(())
}
