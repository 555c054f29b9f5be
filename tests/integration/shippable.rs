//! The binary is one file: copied into an empty folder and run with no Rust toolchain on
//! PATH and no source checkout in reach, `turnpike dev` and `turnpike run -c` still load the
//! built-in plugins (embedded when the binary was built) and process records.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use turnpike_tests::*;

/// A folder holding only a copy of the binary, and an empty folder to use as PATH.
/// Deleted on drop: each copy is some 160 MiB, and runs of the suite on one machine add up.
struct LoneBinary {
    dir: PathBuf,
    bin: PathBuf,
    empty_path: PathBuf,
}

impl Drop for LoneBinary {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn lone_binary(prefix: &str) -> anyhow::Result<LoneBinary> {
    let dir = std::env::temp_dir().join(unique(prefix));
    let lone = LoneBinary { bin: dir.join("turnpike"), empty_path: dir.join("empty-bin"), dir };
    std::fs::create_dir_all(&lone.empty_path)?;
    std::fs::copy(turnpike_bin(), &lone.bin)?;
    Ok(lone)
}

/// Runs the copied binary with a clean environment: PATH holds nothing (so no cargo, no
/// rustup), HOME and the working directory are the copy's own folder.
fn spawn_alone(lone: &LoneBinary, args: &[&str], log: &Path) -> anyhow::Result<Child> {
    Ok(Command::new(&lone.bin)
        .args(args)
        .env_clear()
        .env("PATH", &lone.empty_path)
        .env("HOME", &lone.dir)
        .env("TURNPIKE_LOG", "info,librdkafka=warn")
        .current_dir(&lone.dir)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log)?)
        .spawn()?)
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn log_of(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn the_binary_alone_runs_turnpike_dev() -> anyhow::Result<()> {
    let lone = lone_binary("turnpike-alone-dev")?;
    let address = format!("127.0.0.1:{}", free_port());
    let log = lone.dir.join("dev.log");
    let mut child = Killed(spawn_alone(&lone, &["dev", "--listen", &address, "--rate", "200"], &log)?);
    let status = wait_until("the demo connector to mask 100 records", Duration::from_secs(120), || {
        if let Some(exit) = child.0.try_wait()? {
            anyhow::bail!("turnpike dev exited ({exit}); log:\n{}", log_of(&log));
        }
        Ok(match http_get(&address, "/v1/connectors/mask-customers") {
            Ok((200, body)) if body["state"] == "RUNNING" && body["records_out"].as_u64().unwrap_or(0) >= 100 => Some(body),
            _ => None,
        })
    })?;
    assert_eq!(status["plugins"][0], format!("pii-mask@{}", host_version()?), "{status}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_binary_alone_runs_a_config_with_builtins() -> anyhow::Result<()> {
    let (topic_in, topic_out) = (unique("alone-in"), unique("alone-out"));
    create_topic(&topic_in, 1).await?;
    create_topic(&topic_out, 1).await?;
    let records: Vec<(String, String)> = (0..50).map(|i| (format!("k{i}"), format!(r#"{{"email":"u{i}@example.com","n":{i}}}"#))).collect();
    produce(&producer()?, &topic_in, &records).await?;
    let lone = lone_binary("turnpike-alone-run")?;
    let dir = &lone.dir;
    let connector = format!(
        "- name: alone\n  topics: [{topic_in}]\n  output_topic: {topic_out}\n  transforms:\n    - plugin: pii-mask\n      config: {{ fields: [email] }}\n"
    );
    std::fs::write(dir.join("turnpike.yaml"), host_config(free_port(), &connector))?;
    let log = dir.join("run.log");
    let _child = Killed(spawn_alone(&lone, &["run", "-c", "turnpike.yaml"], &log)?);
    let out = consume_until(&topic_out, Duration::from_secs(120), |got| got.len() >= records.len()).await?;
    assert!(out.len() >= records.len(), "{} of {} records came out; log:\n{}", out.len(), records.len(), log_of(&log));
    for (key, value) in &out {
        assert!(!value.contains("@example.com"), "{key}: email not masked: {value}");
    }
    Ok(())
}
