//! A shared host with `admin.auth`, end to end on a real broker: the first admin token made
//! on the host by the CLI from the config file, tokens for a team made over the API, a team's
//! editor running a connector on its topics (records flow) and refused another team's, the CLI
//! reading `TURNPIKE_TOKEN`, a revoked token refused at once, and no token in clear text in
//! the state directory or the host log.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use serde_json::{json, Value};
use turnpike_tests::*;

/// One HTTP request to the API with an optional bearer token; `(status, JSON or null)`.
fn call(address: &str, method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> anyhow::Result<(u16, Value)> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let body = body.map(Value::to_string).unwrap_or_default();
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    write!(stream, "{method} {path} HTTP/1.1\r\nHost: {address}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response.split(' ').nth(1).context("status line")?.parse()?;
    let text = response.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    Ok((status, serde_json::from_str(text).unwrap_or(Value::Null)))
}

fn all_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            all_files(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shared_host_admits_only_tokens_and_keeps_teams_to_their_topics() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(unique("turnpike-auth"));
    std::fs::create_dir_all(&dir)?;
    let (input, output) = (unique("analytics.in"), unique("analytics.out"));
    create_topic(&input, 1).await?;
    let port = free_port();
    let config = format!(
        "kafka:\n  bootstrap.servers: {}\n  session.timeout.ms: 6000\nadmin:\n  listen: 127.0.0.1:{port}\n  auth: true\nteams:\n  analytics: {{ topics: [\"analytics.*\"] }}\n  payments: {{ topics: [\"payments.*\"] }}\n",
        bootstrap()
    );
    let config_file = dir.join("turnpike.yaml");
    std::fs::write(&config_file, &config)?;
    let config_arg = config_file.to_str().context("path")?;

    // The first admin token, made on the host from the config, before the host runs.
    let (code, stdout, stderr) = turnpike_cli(&["token", "create", "-c", config_arg, "--role", "admin", "--description", "operator"], None)?;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let admin = stdout.trim().to_owned();
    assert!(admin.starts_with("tpk_") && !admin.contains(char::is_whitespace), "the token alone on stdout: {stdout:?}");
    assert!(stderr.contains("TURNPIKE_TOKEN"), "{stderr}");
    let (code, _, stderr) = turnpike_cli(&["token", "create", "-c", config_arg, "--role", "editor", "--team", "hr"], None)?;
    assert!(code != 0 && stderr.contains("analytics") && stderr.contains("payments"), "an unknown team names the teams there are: {stderr}");

    let mut host = HostProcess::start(&dir, &config)?;
    wait_healthy(&host)?;
    let api = host.admin.clone();
    let url = format!("http://{api}");
    let (status, body) = call(&api, "GET", "/v1/connectors", None, None)?;
    assert_eq!((status, body["error"].as_str()), (401, Some("unauthorized")), "{body}");
    assert_eq!(call(&api, "GET", "/v1/connectors", Some("tpk_0123456789ab_00"), None)?.0, 401);

    // The admin makes team tokens over the API and the CLI.
    let (status, made) = call(&api, "POST", "/v1/tokens", Some(&admin), Some(&json!({ "role": "editor", "team": "analytics" })))?;
    assert_eq!(status, 201, "{made}");
    let editor = made["token"].as_str().context("token")?.to_owned();
    let editor_id = made["info"]["id"].as_str().context("id")?.to_owned();
    let (code, stdout, stderr) = turnpike_cli(&["token", "create", "--api", &url, "--role", "viewer", "--team", "analytics"], Some(&admin))?;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let viewer = stdout.trim().to_owned();

    // The team's editor runs a connector on its topics; records flow.
    let connector = json!({ "topics": [input], "output_topic": output, "transforms": [{ "plugin": "identity" }] });
    let (status, created) = call(&api, "PUT", "/v1/connectors/clicks", Some(&editor), Some(&connector))?;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["config"]["team"], "analytics", "{created}");
    produce(&producer()?, &input, &[("k1".into(), "{\"n\":1}".into()), ("k2".into(), "{\"n\":2}".into())]).await?;
    let out = consume_until(&output, Duration::from_secs(120), distinct_keys_reach(2)).await?;
    assert_eq!(out.len(), 2, "records flow through the team's connector; log:\n{}", host.log_text());
    // ...and is refused another team's topic, at validate and at PUT.
    let foreign = json!({ "topics": [input], "output_topic": "payments.ledger", "transforms": [{ "plugin": "identity" }] });
    for (method, path) in [("POST", "/v1/connectors/leak/validate"), ("PUT", "/v1/connectors/leak")] {
        let (status, refused) = call(&api, method, path, Some(&editor), Some(&foreign))?;
        assert_eq!(status, 422, "{refused}");
        assert_eq!(refused["problems"][0]["key"], "connector.output_topic", "{refused}");
    }

    // Topics: the team lists and samples only its own; another team's answers like a missing one.
    let payments = unique("payments.cards");
    create_topic(&payments, 1).await?;
    produce(&producer()?, &payments, &[("c".into(), "{\"card\":\"4111111111111111\"}".into())]).await?;
    let (status, listed) = call(&api, "GET", "/v1/topics", Some(&viewer), None)?;
    assert_eq!(status, 200, "{listed}");
    let names: Vec<&str> = listed["topics"].as_array().context("topics")?.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&input.as_str()) && names.iter().all(|n| n.starts_with("analytics.")), "only the team's topics: {names:?}");
    let (status, refused) = call(&api, "GET", &format!("/v1/topics/{input}/sample?limit=5"), Some(&viewer), None)?;
    assert_eq!(status, 403, "a sample shows records, so a viewer may not take one: {refused}");
    let (status, sample) = call(&api, "GET", &format!("/v1/topics/{input}/sample?limit=5"), Some(&editor), None)?;
    assert_eq!(status, 200, "{sample}");
    assert_eq!(sample["records"].as_array().map(Vec::len), Some(2), "the team samples its topic: {sample}");
    let (status, refused) = call(&api, "GET", &format!("/v1/topics/{payments}/sample"), Some(&editor), None)?;
    assert_eq!((status, refused["error"].as_str()), (404, Some("topic_not_found")), "another team's topic cannot be sampled: {refused}");
    assert!(!refused.to_string().contains("4111"), "{refused}");
    let (_, internal) = call(&api, "GET", "/v1/topics?internal=true", Some(&viewer), None)?;
    assert!(!internal.to_string().contains("__consumer_offsets"), "a team never lists internal topics: {internal}");
    let (status, all) = call(&api, "GET", "/v1/topics", Some(&admin), None)?;
    assert!(status == 200 && all.to_string().contains(&payments), "an admin sees every topic: {all}");

    // The CLI reads TURNPIKE_TOKEN; without one it says how to get one.
    let (code, stdout, stderr) = turnpike_cli(&["connector", "ls", "--api", &url], Some(&viewer))?;
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("clicks"), "{stdout}");
    let (code, _, stderr) = turnpike_cli(&["connector", "ls", "--api", &url], None)?;
    assert!(code != 0 && stderr.contains("TURNPIKE_TOKEN"), "{stderr}");
    let (code, _, stderr) = turnpike_cli(&["connector", "rm", "clicks", "--api", &url], Some(&viewer))?;
    assert!(code != 0 && stderr.contains("editor"), "a viewer cannot delete: {stderr}");

    // Revoked: refused at once, and listed as revoked.
    let (code, stdout, stderr) = turnpike_cli(&["token", "revoke", &editor_id, "--api", &url], Some(&admin))?;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (status, body) = call(&api, "GET", "/v1/connectors", Some(&editor), None)?;
    assert_eq!((status, body["error"].as_str()), (401, Some("token_revoked")), "{body}");
    let (code, stdout, _) = turnpike_cli(&["token", "list", "-c", config_arg], None)?;
    assert_eq!(code, 0);
    assert!(stdout.contains(&editor_id) && stdout.contains("revoked"), "{stdout}");

    host.stop()?;
    // No token in clear text anywhere on disk or in the log; tokens.json only holds hashes.
    let mut files = Vec::new();
    all_files(&dir, &mut files)?;
    assert!(files.iter().any(|f| f.ends_with("tokens.json")), "{files:?}");
    for file in &files {
        let bytes = std::fs::read(file)?;
        for token in [&admin, &editor, &viewer] {
            assert!(!bytes.windows(token.len()).any(|w| w == token.as_bytes()), "a token in clear text in {}", file.display());
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let tokens = files.iter().find(|f| f.ends_with("tokens.json")).context("tokens.json")?;
        assert_eq!(std::fs::metadata(tokens)?.permissions().mode() & 0o777, 0o600);
    }
    let log = host.log_text();
    assert!(log.contains("turnpike::audit") || log.contains("admin request"), "audit lines in the log:\n{log}");
    Ok(())
}

#[test]
fn a_reachable_listen_address_without_auth_is_refused_at_start() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(unique("turnpike-open"));
    std::fs::create_dir_all(&dir)?;
    let config = dir.join("turnpike.yaml");
    std::fs::write(&config, format!("kafka:\n  bootstrap.servers: {}\nadmin:\n  listen: 0.0.0.0:{}\n", bootstrap(), free_port()))?;
    let (code, _, stderr) = turnpike_cli(&["run", "-c", config.to_str().context("path")?], None)?;
    assert!(code != 0, "refused");
    assert!(stderr.contains("admin.auth: true") && stderr.contains("turnpike token create"), "says how to enable auth: {stderr}");
    Ok(())
}
