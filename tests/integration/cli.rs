//! The `turnpike plugin …` and `turnpike connector …` commands against a running host.

use std::process::Command;
use std::time::Duration;

use anyhow::Context;
use turnpike_tests::*;

/// Runs `turnpike ARGS --api API`; `(exit code, stdout, stderr)`.
fn cli(api: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(turnpike_bin()).args(args).args(["--api", api]).output().expect("run turnpike");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Runs the CLI and asserts it exited 0; on failure, shows what it printed and the host log.
fn succeeds(host: &HostProcess, api: &str, args: &[&str]) {
    let (code, out, err) = cli(api, args);
    assert_eq!(code, 0, "{args:?} exited {code}: {err}{out}\nhost log:\n{}", host.log_text());
}

fn json_of(api: &str, args: &[&str]) -> serde_json::Value {
    let mut with_json = args.to_vec();
    with_json.extend(["--output", "json"]);
    let (code, out, err) = cli(api, &with_json);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {out}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_manages_plugins_and_connectors() -> anyhow::Result<()> {
    let topic = unique("cli-in");
    create_topic(&topic, 1).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-cli"));
    let config = bare_host_config();
    let host = HostProcess::start(&dir, &config)?;
    wait_healthy(&host)?;
    let api = format!("http://{}", host.admin);

    let wasm = dir.join("copy.wasm");
    std::fs::write(&wasm, builtin("identity")?)?;
    let (code, out, err) = cli(&api, &["plugin", "push", wasm.to_str().unwrap(), "--name", "copy", "--version", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("copy") && out.contains("transform") && out.contains("sha256:"), "{out}");

    let file = dir.join("connectors.yaml");
    std::fs::write(
        &file,
        format!(
            "- name: c1\n  topics: [{topic}]\n  output_topic: {topic}-1\n  transforms:\n    - plugin: copy@1\n\
             - name: c2\n  topics: [{topic}]\n  output_topic: {topic}-2\n  transforms:\n    - plugin: identity\n"
        ),
    )?;
    let (code, out, err) = cli(&api, &["connector", "apply", "-f", file.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (0, "c1: applied\nc2: applied\n"), "{err}");
    let (_, out, _) = cli(&api, &["connector", "apply", "-f", file.to_str().unwrap()]);
    assert_eq!(out, "c1: unchanged\nc2: unchanged\n");

    let running = wait_until("both connectors listed RUNNING", Duration::from_secs(60), || {
        Ok((json_of(&api, &["connector", "ls", "--state", "RUNNING"])["connectors"].as_array().map(Vec::len) == Some(2)).then_some(()))
    });
    running.with_context(|| format!("log:\n{}", host.log_text()))?;
    let (_, table, _) = cli(&api, &["connector", "ls"]);
    assert!(table.contains("NAME") && table.contains("c1") && table.contains("RUNNING") && table.contains("copy@1"), "{table}");

    succeeds(&host, &api, &["connector", "pause", "c1"]);
    succeeds(&host, &api, &["connector", "stop", "c1"]);
    assert_eq!(json_of(&api, &["connector", "get", "c1"])["state"], "STOPPED");
    let offsets = json_of(&api, &["connector", "offsets", "c1"]);
    assert_eq!(offsets["group_id"], "turnpike-c1");
    let (_, restart, _) = cli(&api, &["connector", "restart", "c2", "--only-failed"]);
    assert_eq!(restart, "c2: not failed; left alone\n");
    succeeds(&host, &api, &["connector", "rm", "c2"]);
    assert_eq!(json_of(&api, &["connector", "ls"])["connectors"].as_array().map(Vec::len), Some(1));
    assert_eq!(json_of(&api, &["plugin", "ls"])["plugins"].as_array().unwrap().iter().filter(|p| p["name"] == "copy").count(), 1);

    // Errors say what to fix, and exit 2.
    let (code, _, err) = cli(&api, &["plugin", "rm", "copy", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("used by connectors") && err.contains("c1") && err.contains("(409)"), "names the connector using it: {err}");
    std::fs::write(&file, "name: c3\ntopics: [x]\noutput_topic: y\nbatch: { max_records: 0 }\ntransforms:\n  - plugin: identity\n")?;
    let (code, _, err) = cli(&api, &["connector", "apply", "-f", file.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("batch.max_records: 0 is out of range"), "{err}");
    let (code, _, err) = cli("http://127.0.0.1:1", &["connector", "ls"]);
    assert_eq!(code, 2);
    assert!(err.contains("is the host running"), "{err}");
    Ok(())
}
