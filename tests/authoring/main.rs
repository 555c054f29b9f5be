//! Plugin authoring, end to end with the real toolchains (cargo, componentize-py,
//! componentize-js) and a real broker: templates build and test as generated, every example
//! builds and runs through the host, and the README's path — new, build, test, push, apply —
//! works for Python and JavaScript. A test binary of its own, so its builds never overlap
//! the throughput measurements of `tests/throughput` (cargo runs test binaries one after
//! another).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{ensure, Context, Result};
use turnpike_tests::*;

/// Installs the Python and JavaScript toolchains once, before any test builds (two tests
/// installing into the same folder at once would collide).
fn toolchains() -> Result<()> {
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    READY
        .get_or_init(|| {
            turnpike_authoring::toolchain::componentize_py().map_err(|e| e.to_string())?;
            turnpike_authoring::toolchain::componentize_js().map_err(|e| e.to_string())?;
            Ok(())
        })
        .clone()
        .map_err(anyhow::Error::msg)
}

/// Runs a command to success; its output on failure.
fn run(cmd: &mut Command, what: &str) -> Result<String> {
    let out = cmd.output().with_context(|| format!("running {what}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    ensure!(out.status.success(), "{what} failed ({}):\n{text}", out.status);
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn turnpike(args: &[&str]) -> Command {
    let mut cmd = Command::new(turnpike_bin());
    cmd.args(args);
    cmd
}

fn examples() -> PathBuf {
    turnpike_wasm_build::source_root().join("examples").join("plugins")
}

/// `turnpike plugin build DIR`; the component it wrote.
fn build(dir: &Path) -> Result<PathBuf> {
    toolchains()?;
    run(turnpike(&["plugin", "build"]).arg(dir), &format!("turnpike plugin build {}", dir.display()))?;
    let name = dir.file_name().and_then(|n| n.to_str()).context("folder name")?;
    let wasm = dir.join(format!("{name}.wasm"));
    ensure!(wasm.is_file(), "{} missing after the build", wasm.display());
    Ok(wasm)
}

/// `turnpike plugin test WASM --input records.jsonl --output json`.
fn local_test(wasm: &Path, records: &Path) -> Result<serde_json::Value> {
    let out = run(turnpike(&["plugin", "test", "--output", "json"]).arg(wasm).arg("--input").arg(records), "turnpike plugin test")?;
    Ok(serde_json::from_str(&out)?)
}

/// What every redact template and example gives for its records.jsonl.
fn assert_redacted(result: &serde_json::Value) {
    let values: Vec<&str> = result["outputs"].as_array().into_iter().flatten().filter_map(|o| o["value"].as_str()).collect();
    assert_eq!(values, [r#"{"name":"Ada","email":"***"}"#, r#"{"name":"Grace","email":"***","plan":"pro"}"#], "{result}");
    assert_eq!(result["errors"][0]["input"], 2, "the line that is not JSON fails: {result}");
}

#[test]
fn the_rust_template_builds_and_tests_as_generated() -> Result<()> {
    let dir = std::env::temp_dir().join(unique("turnpike-new-rust"));
    std::fs::create_dir_all(&dir)?;
    run(turnpike(&["plugin", "new", "--lang", "rust", "my-redact", "--dir"]).arg(&dir), "turnpike plugin new")?;
    let project = dir.join("my-redact");
    run(turnpike_wasm_build::cargo().current_dir(&project).args(["test", "--quiet"]), "cargo test (the template's own test)")?;
    let wasm = build(&project)?;
    assert_redacted(&local_test(&wasm, &project.join("records.jsonl"))?);
    // The project's own target/ holds ~400 MB: do not leave it behind.
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn python_and_javascript_transforms_go_from_a_template_to_a_running_connector() -> Result<()> {
    let dir = std::env::temp_dir().join(unique("turnpike-new"));
    std::fs::create_dir_all(&dir)?;
    let mut host = HostProcess::start(&dir.join("host"), &bare_host_config())?;
    wait_healthy(&host)?;
    let api = format!("http://{}", host.admin);
    let topic = unique("people");
    create_topic(&topic, 1).await?;
    for (lang, native_test) in [("python", ["python3", "-m", "unittest"]), ("js", ["node", "--test", "plugin.test.js"])] {
        let name = format!("redact-{lang}");
        // The README's path, step by step.
        run(turnpike(&["plugin", "new", "--lang", lang, &name, "--dir"]).arg(&dir), "turnpike plugin new")?;
        let project = dir.join(&name);
        run(Command::new(native_test[0]).args(&native_test[1..]).current_dir(&project), &format!("{lang}: the template's own test"))?;
        let wasm = build(&project)?;
        assert_redacted(&local_test(&wasm, &project.join("records.jsonl"))?);
        run(turnpike(&["plugin", "push", "--name", &name, "--version", "0.1.0", "--api", &api]).arg(&wasm), "turnpike plugin push")?;
        let connector = format!("name: {name}\ntopics: [{topic}]\noutput_topic: {topic}-{lang}\nerrors: {{ tolerance: all }}\ntransforms:\n  - plugin: {name}@0.1.0\n");
        let file = project.join("connector.yaml");
        std::fs::write(&file, connector)?;
        run(turnpike(&["connector", "apply", "--api", &api, "-f"]).arg(&file), "turnpike connector apply")?;
        host.wait_state(&name, "RUNNING", Duration::from_secs(120))?;
    }
    let people: Vec<_> = (0..50).map(|i| (format!("p{i}"), format!(r#"{{"name":"n{i}","email":"p{i}@example.com"}}"#))).collect();
    produce(&producer()?, &topic, &people).await?;
    for lang in ["python", "js"] {
        let out = consume_until(&format!("{topic}-{lang}"), Duration::from_secs(60), |got| got.len() >= 50).await?;
        assert_eq!(distinct_and_duplicates(&out).0, 50, "{lang}: every record; log:\n{}", host.log_text());
        assert!(out.iter().all(|(k, v)| *v == format!(r#"{{"name":"n{}","email":"***"}}"#, &k[1..])), "{lang}: redacted, same JSON: {:?}", &out[..2]);
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn every_example_builds_and_runs_through_the_host_on_real_kafka() -> Result<()> {
    let ex = examples();
    let mut wasm = std::collections::BTreeMap::new();
    for name in ["rust-redact", "python-redact", "js-redact", "rust-heartbeat-source", "rust-webhook-sink"] {
        wasm.insert(name, build(&ex.join(name))?);
    }
    for name in ["rust-redact", "python-redact", "js-redact"] {
        assert_redacted(&local_test(&wasm[name], &ex.join(name).join("records.jsonl"))?);
    }
    let hooks = TestServer::start(|_| json(200, "ok"))?;
    let (topic, beats, positions_topic) = (unique("examples-in"), unique("beats"), unique("positions"));
    create_topic(&topic, 1).await?;
    let plugins: String = wasm.iter().map(|(n, p)| format!("  {n}: {{ path: {} }}\n", p.display())).collect();
    let mut connectors = String::new();
    for lang in ["rust", "python", "js"] {
        connectors.push_str(&format!("- name: redact-{lang}\n  topics: [{topic}]\n  output_topic: {topic}-{lang}\n  transforms:\n    - plugin: {lang}-redact\n"));
    }
    connectors.push_str(&format!(
        "- name: beats\n  output_topic: {beats}\n  source:\n    plugin: rust-heartbeat-source\n    poll_interval_ms: 100\n    config: {{ service: billing }}\n- name: hooks\n  topics: [{topic}]\n  http: {{ allow: [\"127.0.0.1:{}\"] }}\n  sink:\n    plugin: rust-webhook-sink\n    config: {{ url: \"{}\" }}\n",
        hooks.port,
        hooks.url("/hook")
    ));
    let sections = format!("source_positions_topic: {positions_topic}\nplugins:\n{plugins}");
    let dir = std::env::temp_dir().join(unique("turnpike-examples"));
    let mut host = HostProcess::start(&dir, &host_config_with(free_port(), &sections, &connectors))?;
    for name in ["redact-rust", "redact-python", "redact-js", "beats", "hooks"] {
        host.wait_state(name, "RUNNING", Duration::from_secs(180))?;
    }
    let people: Vec<_> = (0..20).map(|i| (format!("p{i}"), format!(r#"{{"name":"n{i}","email":"p{i}@example.com"}}"#))).collect();
    produce(&producer()?, &topic, &people).await?;
    let mut per_language = Vec::new();
    for lang in ["rust", "python", "js"] {
        let mut out = consume_until(&format!("{topic}-{lang}"), Duration::from_secs(60), |got| got.len() >= 20).await?;
        out.sort();
        per_language.push(out);
    }
    assert_eq!(per_language[0].len(), 20);
    assert!(per_language.iter().all(|o| *o == per_language[0]), "the three languages give byte-identical outputs");
    let beats_out = consume_until(&beats, Duration::from_secs(60), |got| got.len() >= 3).await?;
    assert_eq!(beats_out[0].1, r#"{"beat":0,"service":"billing"}"#);
    let posted = wait_until("20 webhook calls", Duration::from_secs(60), || Ok((hooks.received().len() >= 20).then(|| hooks.received())))?;
    let first: serde_json::Value = serde_json::from_slice(&posted[0].body)?;
    assert_eq!((first["topic"].as_str(), first["offset"].as_i64()), (Some(topic.as_str()), Some(0)), "{first}");
    Ok(())
}
