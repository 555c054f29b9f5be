//! Reading and resetting a connector's offsets over the API, on real Kafka.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use turnpike_tests::*;

fn poll(host: &HostProcess, what: &str, mut ok: impl FnMut() -> anyhow::Result<bool>) -> anyhow::Result<()> {
    let found = wait_until(what, Duration::from_secs(60), || Ok(ok()?.then_some(())));
    anyhow::Context::with_context(found, || format!("log:\n{}", host.log_text()))
}

fn sum(partitions: &Value, field: &str) -> i64 {
    partitions.as_array().map(|ps| ps.iter().map(|p| p[field].as_i64().unwrap_or(0)).sum()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn offsets_are_read_and_reset_only_while_stopped() -> anyhow::Result<()> {
    let topic = unique("offsets-in");
    create_topic(&topic, 2).await?;
    let records: Vec<_> = (0..60).map(|i| (format!("k{i}"), format!(r#"{{"n":{i}}}"#))).collect();
    produce(&producer()?, &topic, &records).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-offsets"));
    let config = bare_host_config();
    let host = HostProcess::start(&dir, &config)?;
    wait_healthy(&host)?;
    let connector = json!({ "topics": [topic], "output_topic": format!("{topic}-out"), "transforms": [{ "plugin": "identity" }] });
    assert_eq!(http_json(&host.admin, "PUT", "/v1/connectors/off", &connector)?.0, 201);

    // Everything consumed and committed: lag 0 on both partitions.
    poll(&host, "caught up", || {
        let (_, body) = http_get(&host.admin, "/v1/connectors/off/offsets")?;
        Ok(sum(&body["partitions"], "committed") == 60 && sum(&body["partitions"], "lag") == 0)
    })?;
    let (_, body) = http_get(&host.admin, "/v1/connectors/off/offsets")?;
    assert_eq!(body["group_id"], "turnpike-off");
    assert_eq!((sum(&body["partitions"], "latest"), body["partitions"].as_array().map(Vec::len)), (60, Some(2)));

    let (code, body) = http_json(&host.admin, "POST", "/v1/connectors/off/offsets/reset", &json!({ "to": "earliest" }))?;
    assert_eq!((code, body["error"].as_str()), (409, Some("wrong_state")), "never while running");

    // Back to the start: all 60 again once resumed.
    http_json(&host.admin, "POST", "/v1/connectors/off/stop", &json!({}))?;
    poll(&host, "stopped", || Ok(host.get("/v1/connectors/off")?.1["state"] == "STOPPED"))?;
    let (code, body) = http_json(&host.admin, "POST", "/v1/connectors/off/offsets/reset", &json!({ "to": "earliest" }))?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(sum(&body["partitions"], "offset"), 0);
    let (_, body) = http_get(&host.admin, "/v1/connectors/off/offsets")?;
    assert_eq!(sum(&body["partitions"], "lag"), 60);
    http_json(&host.admin, "POST", "/v1/connectors/off/resume", &json!({}))?;
    poll(&host, "re-read all 60", || Ok(host_records_out(&host)? == 120))?;

    // A future timestamp means "from the end"; explicit offsets move one partition back by 5.
    http_json(&host.admin, "POST", "/v1/connectors/off/stop", &json!({}))?;
    poll(&host, "stopped", || Ok(host.get("/v1/connectors/off")?.1["state"] == "STOPPED"))?;
    let tomorrow = SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis() as i64 + 86_400_000;
    let (_, body) = http_json(&host.admin, "POST", "/v1/connectors/off/offsets/reset", &json!({ "timestamp": tomorrow }))?;
    assert_eq!(sum(&body["partitions"], "offset"), 60);
    let (_, now) = http_get(&host.admin, "/v1/connectors/off/offsets")?;
    let p0 = now["partitions"].as_array().unwrap().iter().find(|p| p["partition"] == 0).unwrap().clone();
    let back = p0["latest"].as_i64().unwrap() - 5;
    let (code, _) = http_json(&host.admin, "POST", "/v1/connectors/off/offsets/reset", &json!({ "offsets": [{ "topic": topic, "partition": 0, "offset": back }] }))?;
    assert_eq!(code, 200);
    http_json(&host.admin, "POST", "/v1/connectors/off/resume", &json!({}))?;
    poll(&host, "re-read 5", || Ok(host_records_out(&host)? == 125))?;

    // Bad requests.
    http_json(&host.admin, "POST", "/v1/connectors/off/stop", &json!({}))?;
    poll(&host, "stopped", || Ok(host.get("/v1/connectors/off")?.1["state"] == "STOPPED"))?;
    let (code, body) = http_json(&host.admin, "POST", "/v1/connectors/off/offsets/reset", &json!({ "offsets": [{ "topic": topic, "partition": 9, "offset": 0 }] }))?;
    assert_eq!((code, body["error"].as_str()), (422, Some("no_such_partition")));
    let (code, _) = http_json(&host.admin, "POST", "/v1/connectors/off/offsets/reset", &json!({ "to": "earliest", "timestamp": 1 }))?;
    assert_eq!(code, 400);
    let (code, _) = http_json(&host.admin, "POST", "/v1/connectors/off/offsets/reset", &json!({ "to": "yesterday" }))?;
    assert_eq!(code, 400);
    assert_eq!(http_json(&host.admin, "POST", "/v1/connectors/ghost/offsets/reset", &json!({ "to": "latest" }))?.0, 404);
    Ok(())
}

fn host_records_out(host: &HostProcess) -> anyhow::Result<u64> {
    Ok(host.get("/v1/connectors/off")?.1["records_out"].as_u64().unwrap_or(0))
}
