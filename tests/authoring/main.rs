//! Plugin authoring, end to end with the real toolchains (cargo, componentize-py,
//! componentize-js) and a real broker: templates build and test as generated, every example
//! builds and runs through the host, and the README's path — new, build, test, push, apply —
//! works for Python and JavaScript. A test binary of its own, so its builds never overlap
//! the throughput measurements of `tests/throughput` (cargo runs test binaries one after
//! another).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use anyhow::{ensure, Context, Result};
use turnpike_tests::*;

mod languages;

/// Installs the Python and JavaScript toolchains once, before any test builds (two tests
/// installing into the same folder at once would collide).
fn toolchains() -> Result<()> {
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    READY
        .get_or_init(|| {
            turnpike_authoring::toolchain::componentize_py().map_err(|e| e.to_string())?;
            turnpike_authoring::toolchain::componentize_js().map_err(|e| e.to_string())?;
            turnpike_authoring::toolchain::esbuild().map_err(|e| e.to_string())?;
            Ok(())
        })
        .clone()
        .map_err(anyhow::Error::msg)
}

/// Runs a command to success; its output on failure. Says how long it took, which is where
/// this suite's time goes.
fn run(cmd: &mut Command, what: &str) -> Result<String> {
    let began = std::time::Instant::now();
    let out = cmd.output().with_context(|| format!("running {what}"))?;
    println!("{what}: {:.1} s", began.elapsed().as_secs_f64());
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

/// `turnpike plugin build DIR`; the component it wrote. One build at a time: two at once gain
/// nothing on two cores, and two builds of one project would share its `.turnpike/` folder.
fn build(dir: &Path) -> Result<PathBuf> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    toolchains()?;
    let _building = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    run(turnpike(&["plugin", "build"]).arg(dir), &format!("turnpike plugin build {}", dir.display()))?;
    let name = dir.file_name().and_then(|n| n.to_str()).context("folder name")?;
    let wasm = dir.join(format!("{name}.wasm"));
    ensure!(wasm.is_file(), "{} missing after the build", wasm.display());
    Ok(wasm)
}

/// The example `name` (under examples/plugins), built once for the whole test binary.
fn example(name: &str) -> Result<PathBuf> {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(wasm) = built.get(name) {
        return Ok(wasm.clone());
    }
    let wasm = build(&examples().join(name))?;
    built.insert(name.to_owned(), wasm.clone());
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

/// How a generated project of `lang` runs its own tests, as its README says.
fn native_tests(lang: &str, project: &Path) -> Result<()> {
    let commands: &[&[&str]] = match lang {
        "rust" => &[&["cargo", "test", "--quiet"]],
        "python" => &[&["python3", "-m", "unittest"]],
        _ => &[&["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], &["npm", "test"]],
    };
    for command in commands {
        let mut cmd = if command[0] == "cargo" { turnpike_wasm_build::cargo() } else { Command::new(command[0]) };
        if command[0] == "cargo" {
            // The generated Rust projects of one test share their dependencies' builds.
            cmd.env("CARGO_TARGET_DIR", project.parent().unwrap_or(project).join("rust-target"));
        }
        run(cmd.args(&command[1..]).current_dir(project), &format!("{lang}: {}", command.join(" ")))?;
    }
    Ok(())
}

#[test]
fn generated_projects_of_every_language_build_and_test_away_from_the_checkout() -> Result<()> {
    // Outside the checkout, so nothing can resolve through it.
    let dir = std::env::temp_dir().join(unique("turnpike-new-kinds"));
    std::fs::create_dir_all(&dir)?;
    let hooks = TestServer::start(|_| json(200, "ok"))?;
    // Every language and kind is generated and passes its own tests; one of each language and
    // of each kind is also built and run through the runtime.
    for lang in ["rust", "python", "js"] {
        for kind in ["transform", "source", "sink"] {
            let name = format!("my-{lang}-{kind}");
            run(turnpike(&["plugin", "new", "--lang", lang, "--kind", kind, &name, "--dir"]).arg(&dir), "turnpike plugin new")?;
            let project = dir.join(&name);
            for file in ["README.md", "connector.yaml", ".gitignore"] {
                ensure!(project.join(file).is_file(), "{name} has no {file}");
            }
            native_tests(lang, &project)?;
        }
    }
    for (lang, kind) in [("rust", "transform"), ("python", "source"), ("js", "sink")] {
        let name = format!("my-{lang}-{kind}");
        let project = dir.join(&name);
        let wasm = build(&project)?;
        match kind {
            "transform" => assert_redacted(&local_test(&wasm, &project.join("records.jsonl"))?),
            "source" => {
                let out = run(turnpike(&["plugin", "test", "--output", "json", "--config", r#"{"name": "gen"}"#]).arg(&wasm), "turnpike plugin test (source)")?;
                let polled: serde_json::Value = serde_json::from_str(&out)?;
                assert_eq!(polled["outputs"][0]["value"], r#"{"n":0,"source":"gen"}"#, "{polled}");
                assert_eq!(polled["position"].as_str(), polled["outputs"].as_array().map(|o| (o.len() - 1).to_string()).as_deref(), "{polled}");
            }
            _ => {
                let config = format!(r#"{{"url": "{}"}}"#, hooks.url("/hook"));
                let allow = format!("127.0.0.1:{}", hooks.port);
                let args = ["plugin", "test", "--output", "json", "--config", &config, "--allow-http", &allow];
                let out = run(turnpike(&args).arg(&wasm).arg("--input").arg(project.join("records.jsonl")), "turnpike plugin test (sink)")?;
                let records = std::fs::read_to_string(project.join("records.jsonl"))?.lines().filter(|l| !l.trim().is_empty()).count();
                let written: serde_json::Value = serde_json::from_str(&out)?;
                assert_eq!(written["written"].as_u64(), Some(records as u64), "{written}");
                let posted: serde_json::Value = serde_json::from_slice(&hooks.received().last().context("no POST")?.body)?;
                assert_eq!(posted.as_array().map(Vec::len), Some(records), "one POST with every record, at the flush: {posted}");
            }
        }
    }
    // The Rust projects' target/ holds ~400 MB: do not leave it behind.
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
    for lang in ["python", "js"] {
        let name = format!("redact-{lang}");
        // The README's path, step by step.
        run(turnpike(&["plugin", "new", "--lang", lang, &name, "--dir"]).arg(&dir), "turnpike plugin new")?;
        let project = dir.join(&name);
        native_tests(lang, &project)?;
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
    let mut wasm = BTreeMap::new();
    for name in ["rust-redact", "python-redact", "js-redact", "rust-sequence-source", "rust-webhook-sink"] {
        wasm.insert(name, example(name)?);
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
        "- name: beats\n  output_topic: {beats}\n  source:\n    plugin: rust-sequence-source\n    poll_interval_ms: 100\n    config: {{ name: billing, per_poll: 1 }}\n- name: hooks\n  topics: [{topic}]\n  http: {{ allow: [\"127.0.0.1:{}\"] }}\n  sink:\n    plugin: rust-webhook-sink\n    config: {{ url: \"{}\" }}\n",
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
    assert_eq!(beats_out[0].1, r#"{"n":0,"source":"billing"}"#);
    let posted = wait_until("20 records posted", Duration::from_secs(60), || {
        let records: Vec<serde_json::Value> = hooks.received().iter().flat_map(|r| serde_json::from_slice::<Vec<serde_json::Value>>(&r.body).unwrap_or_default()).collect();
        Ok((records.len() >= 20).then_some(records))
    })?;
    assert_eq!((posted[0]["topic"].as_str(), posted[0]["offset"].as_i64()), (Some(topic.as_str()), Some(0)), "{}", posted[0]);
    Ok(())
}

/// Non-blank lines of a file.
fn lines_of_code(path: &Path) -> Result<usize> {
    Ok(std::fs::read_to_string(path).with_context(|| path.display().to_string())?.lines().filter(|l| !l.trim().is_empty()).count())
}

#[test]
fn the_hello_world_transform_is_at_most_15_lines_in_every_language_as_the_readme_says() -> Result<()> {
    let readme = std::fs::read_to_string(turnpike_wasm_build::source_root().join("README.md"))?;
    let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    for (lang, file, name) in [("python", "python-redact/plugin.py", "Python"), ("js", "js-redact/plugin.js", "JavaScript"), ("rust", "rust-redact/src/lib.rs", "Rust")] {
        let count = lines_of_code(&examples().join(file))?;
        println!("{lang}: {count} lines");
        assert!(count <= 15, "{file}: {count} lines");
        assert!(readme.contains(&format!("{name} {count}")), "the README gives {name}'s count as {count}");
    }
    Ok(())
}
