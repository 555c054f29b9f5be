//! Secrets by reference, end to end: a secret stored through the API, a variable of the host's
//! environment and a file on the host reach a real HTTP server as headers (so references are
//! resolved), while plugins that repeat the secret (http-sink quotes a `400` answer's body,
//! and its refused `method`) never get it into the status, the events, the host log, the
//! dead-letter headers, the `validate` answer, the dry run, the CLI, `GET /v1/secrets` or the
//! state directory. A missing secret or variable is `422` at `PUT`; a deleted secret fails the
//! connector at its next start, naming the reference.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context;
use serde_json::{json, Value};
use turnpike_tests::*;

/// Runs `turnpike ARGS --api API` with `stdin`; `(exit code, stdout + stderr)`.
fn cli(api: &str, args: &[&str], stdin: &str) -> anyhow::Result<(i32, String)> {
    let mut child = Command::new(turnpike_bin())
        .args(args)
        .args(["--api", api])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("run turnpike")?;
    child.stdin.take().context("stdin")?.write_all(stdin.as_bytes())?;
    let out = child.wait_with_output()?;
    Ok((out.status.code().unwrap_or(-1), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))))
}

/// Every file under `dir` but the secrets store's own files, with its bytes.
fn state_files(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "secrets") {
                state_files(&path, out)?;
            }
        } else {
            out.push((path.clone(), std::fs::read(&path)?));
        }
    }
    Ok(())
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// The sink connector: every kind of reference in its headers, errors dead-lettered.
fn vault(topic: &str, dlq: &str, server: &TestServer, file: &Path) -> Value {
    json!({
        "topics": [topic],
        "http": { "allow": [format!("127.0.0.1:{}", server.port)] },
        "sink": {
            "plugin": "http-sink",
            "flush_interval_ms": 500,
            "config": {
                "url": server.url("/ingest"),
                "headers": {
                    "Authorization": "Bearer ${secret:token}",
                    "X-From-File": format!("${{file:{}}}", file.display()),
                    "X-From-Env": "${env:TURNPIKE_TEST_BOOTSTRAP}",
                },
            },
        },
        "errors": { "tolerance": "all", "dead_letter_topic": dlq },
        "restart": { "enabled": false },
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_reach_plugins_by_reference_and_are_never_echoed() -> anyhow::Result<()> {
    let token = format!("tk{:016x}", rand::random::<u64>());
    let file_value = format!("fv{:016x}", rand::random::<u64>());
    let (topic, dlq) = (unique("secret-in"), unique("secret-dlq"));
    create_topic(&topic, 1).await?;
    let records: Vec<_> = (0..5).map(|i| (format!("k{i}"), if i == 2 { "REJECT this".to_owned() } else { format!(r#"{{"n":{i}}}"#) })).collect();
    produce(&producer()?, &topic, &records).await?;
    // Answers 400 to a record it refuses, quoting the credentials it was sent.
    let server = TestServer::start(|req| {
        if String::from_utf8_lossy(&req.body).contains("REJECT") {
            json(400, &format!(r#"{{"error":"refused for {}"}}"#, req.header("authorization").unwrap_or("none")))
        } else {
            json(200, "ok")
        }
    })?;
    let dir = std::env::temp_dir().join(unique("turnpike-secrets"));
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("from-a-file");
    std::fs::write(&file, format!("{file_value}\n"))?;
    let config = bare_host_config();
    let mut host = HostProcess::start(&dir, &config)?;
    wait_healthy(&host)?;
    let admin = host.admin.clone();
    let api = format!("http://{admin}");
    let mut events = event_stream(&admin)?;
    events.get_ref().set_read_timeout(None)?;
    let events = std::thread::spawn(move || {
        let (mut all, mut line) = (String::new(), String::new());
        while events.read_line(&mut line).is_ok_and(|n| n > 0) {
            all.push_str(&line);
            line.clear();
        }
        all
    });

    // Stored; listed by name only.
    let (status, _) = http_json(&admin, "PUT", "/v1/secrets/token", &json!({ "value": token }))?;
    assert_eq!(status, 204);
    let (_, listed) = http_get(&admin, "/v1/secrets")?;
    assert_eq!(listed["secrets"][0]["name"], "token", "{listed}");

    // A reference that does not resolve is refused at PUT, naming it; so is a malformed one.
    let mut missing = vault(&topic, &dlq, &server, &file);
    missing["sink"]["config"]["headers"] = json!({ "Authorization": "Bearer ${secret:nope}", "X-Env": "${env:TURNPIKE_TEST_NO_SUCH_VARIABLE}", "X-Bad": "${vault:x}" });
    let (status, refused) = http_json(&admin, "PUT", "/v1/connectors/missing", &missing)?;
    assert_eq!(status, 422, "{refused}");
    let problems = refused["problems"].to_string();
    for said in [
        r#"no secret named \"nope\" (create it with PUT /v1/secrets/nope)"#,
        "${env:TURNPIKE_TEST_NO_SUCH_VARIABLE}: the host has no environment variable TURNPIKE_TEST_NO_SUCH_VARIABLE",
        r#"${vault:x}: unknown kind of reference \"vault\""#,
        "connector.sink.config.headers.Authorization",
    ] {
        assert!(problems.contains(said), "{said} in {problems}");
    }
    assert_eq!(host.get("/v1/connectors/missing")?.0, 404, "nothing was created");

    // The resolved values reach the endpoint; the rejected record is dead-lettered.
    let (status, created) = http_json(&admin, "PUT", "/v1/connectors/vault", &vault(&topic, &dlq, &server, &file))?;
    assert_eq!(status, 201, "{created}");
    host.wait_state("vault", "RUNNING", Duration::from_secs(120))?;
    let dead = read_with_headers(&dlq, 1, Duration::from_secs(60)).await?;
    assert_eq!(dead.len(), 1, "one dead letter; log:\n{}", host.log_text());
    let message = &dead[0].headers["turnpike.error.message"];
    assert!(message.contains("400") && message.contains("refused for Bearer ***"), "the cleaned text: {message}");
    let sent = server.received().into_iter().find(|r| r.method == "POST").context("a request reached the endpoint")?;
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {token}").as_str()), "${{secret:…}} resolved");
    assert_eq!(sent.header("x-from-file"), Some(file_value.as_str()), "${{file:…}} resolved, its newline dropped");
    assert_eq!(sent.header("x-from-env"), Some(bootstrap().as_str()), "${{env:…}} resolved");

    // A plugin repeating the secret in its refusal of its config: at validate, and at start.
    let mut echo = vault(&topic, &dlq, &server, &file);
    echo["sink"]["config"]["method"] = json!("${secret:token}");
    let (status, invalid) = http_json(&admin, "POST", "/v1/connectors/echo/validate", &echo)?;
    assert_eq!(status, 422, "{invalid}");
    assert!(invalid["problems"].to_string().contains(r#"connector.sink.config.method"#) && invalid.to_string().contains("***"), "{invalid}");
    assert_eq!(http_json(&admin, "PUT", "/v1/connectors/echo", &echo)?.0, 201);
    let failed = host.wait_state("echo", "FAILED", Duration::from_secs(60))?;
    assert_eq!(failed["error"]["class"], "plugin_config", "{failed}");
    assert!(failed["error"]["message"].as_str().is_some_and(|m| m.contains("\"***\": use POST or PUT")), "{failed}");

    // The dry run resolves, and cleans what it shows.
    let sample = json!({ "config": { "fields": ["email"], "replacement": "[${secret:token}]" }, "records": [{ "value": "{\"email\":\"a@b.c\"}" }] });
    let (status, tried) = http_json(&admin, "POST", "/v1/plugins/pii-mask/latest/test", &sample)?;
    assert_eq!((status, tried["outputs"][0]["value"].as_str()), (200, Some(r#"{"email":"[***]"}"#)), "{tried}");
    let unresolved = json!({ "config": { "fields": ["email"], "replacement": "${secret:nope}" }, "records": [] });
    let (status, answer) = http_json(&admin, "POST", "/v1/plugins/pii-mask/latest/test", &unresolved)?;
    assert!(status == 422 && answer["problems"][0]["key"] == "config.replacement", "{status} {answer}");

    // Every answer and every CLI output, none holding a value.
    let mut shown = Vec::new();
    for path in ["/v1/connectors", "/v1/connectors/vault", "/v1/connectors/echo", "/v1/secrets"] {
        shown.push((path.to_owned(), http_get(&admin, path)?.1.to_string()));
    }
    shown.push(("validate".into(), invalid.to_string()));
    shown.push(("dry run".into(), tried.to_string()));
    let commands: [&[&str]; 5] = [&["connector", "get", "vault"], &["connector", "get", "vault", "-o", "json"], &["connector", "get", "echo"], &["connector", "ls"], &["secret", "list"]];
    for args in commands {
        let (code, out) = cli(&api, args, "")?;
        assert_eq!(code, 0, "{args:?}: {out}");
        shown.push((args.join(" "), out));
    }
    let (code, out) = cli(&api, &["secret", "put", "other", "--value-stdin"], &format!("{file_value}-other\n"))?;
    assert_eq!(code, 0, "{out}");
    let (_, listed) = cli(&api, &["secret", "list", "-o", "json"], "")?;
    assert!(listed.contains("\"other\"") && listed.contains("\"used_by\""), "{listed}");
    shown.push(("secret list".into(), listed));
    assert_eq!(cli(&api, &["secret", "delete", "other"], "")?.0, 0);
    let (code, out) = cli(&api, &["secret", "delete", "other"], "")?;
    assert!(code == 2 && out.contains("no secret named"), "{code}: {out}");
    for (what, text) in &shown {
        assert!(!text.contains(&token) && !text.contains(&file_value), "{what} shows a secret: {text}");
    }
    let (_, got) = http_get(&admin, "/v1/connectors/vault")?;
    assert_eq!(got["config"]["sink"]["config"]["headers"]["X-From-Env"], "${env:TURNPIKE_TEST_BOOTSTRAP}", "references are shown as written");

    assert!(host.stop()?.success());
    let events = events.join().map_err(|_| anyhow::anyhow!("event reader panicked"))?;
    assert!(events.contains("\"state\":\"FAILED\"") && events.contains("***"), "the failure's event, cleaned: {events}");
    let log = host.log_text();
    assert!(log.contains("Bearer ***"), "the record failure is logged, cleaned: {log}");
    for (what, text) in [("events", &events), ("host log", &log)] {
        assert!(!text.contains(&token) && !text.contains(&file_value), "{what} shows a secret: {text}");
    }

    // The state directory keeps references; only the store holds the value, owner-only.
    let state = dir.join("turnpike-state");
    let mut files = Vec::new();
    state_files(&state, &mut files)?;
    let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
    assert!(files.iter().any(|(p, bytes)| p.ends_with("connectors/vault.json") && contains(bytes, "${secret:token}")), "the saved connector keeps its reference: {names:?}");
    for (path, bytes) in &files {
        assert!(!contains(bytes, &token) && !contains(bytes, &file_value), "{} holds a secret", path.display());
    }
    let stored = state.join("secrets/token");
    assert_eq!(std::fs::read_to_string(&stored)?, token);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&stored)?.permissions().mode() & 0o777, 0o600);
    }

    // A restarted host resolves again from its store; a deleted secret fails the next start.
    let mut host = HostProcess::start(&dir, &config)?;
    host.wait_state("vault", "RUNNING", Duration::from_secs(120))?;
    let before = server.received().len();
    produce(&producer()?, &topic, &[("k5".to_owned(), r#"{"n":5}"#.to_owned())]).await?;
    wait_until("the restarted connector to send with the secret", Duration::from_secs(60), || {
        Ok(server.received().iter().skip(before).any(|r| r.header("authorization") == Some(format!("Bearer {token}").as_str())).then_some(()))
    })?;
    assert_eq!(http(&admin, "DELETE", "/v1/secrets/token")?.0, 204);
    assert_eq!(http(&admin, "DELETE", "/v1/secrets/token")?.0, 404);
    assert_eq!(http(&admin, "POST", "/v1/connectors/vault/restart")?.0, 202);
    let failed = host.wait_state("vault", "FAILED", Duration::from_secs(60))?;
    let why = failed["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(failed["error"]["class"], "config", "{failed}");
    assert!(why.contains(r#"sink.config.headers.Authorization: ${secret:token}: no secret named "token""#), "{why}");
    assert!(host.stop()?.success());
    let log = host.log_text();
    assert!(!log.contains(&token) && !log.contains(&file_value), "the restarted host's log shows a secret: {log}");
    Ok(())
}
