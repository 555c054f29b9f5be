//! `turnpike connector import` (#19): Kafka Connect configs written as Turnpike connectors,
//! checked by a real host, applied, and run against real Kafka and PostgreSQL.

use std::time::Duration;

use anyhow::Result;
use turnpike_tests::sql::{Dialect, TestDatabase};
use turnpike_tests::sql_pipeline::*;
use turnpike_tests::*;

/// A JDBC source with a RegexRouter and an InsertField, as a Kafka Connect `.properties`
/// file: imported with `--check`, applied with `connector apply`, and its rows arrive on the
/// routed topic with the inserted field. Options Turnpike has no use for are reported.
#[tokio::test(flavor = "multi_thread")]
async fn a_jdbc_source_with_a_regex_router_is_imported_checked_applied_and_streams() -> Result<()> {
    let db = TestDatabase::new(Dialect::Postgres).await?;
    create_items(&db, "orders").await?;
    insert_items(&db, "orders", 1..=5, past).await?;
    let (name, prefix, routed) = (unique("imported-shop"), unique("shop"), unique("shop-cdc"));
    let jdbc_url = format!("jdbc:{}", db.url());
    let user = db.user();
    let properties = format!(
        r"# exported from a Kafka Connect worker
name={name}
connector.class=io.confluent.connect.jdbc.JdbcSourceConnector
tasks.max=2
connection.url={jdbc_url}
connection.user={user}
connection.password=${{env:{PASSWORD_VAR}}}
mode=incrementing
incrementing.column.name=id
table.whitelist=orders
topic.prefix={prefix}.
poll.interval.ms=100
key.converter=org.apache.kafka.connect.json.JsonConverter
transforms=route,stamp
transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter
transforms.route.regex={prefix}\\.(.*)
transforms.route.replacement={routed}.$1
transforms.stamp.type=org.apache.kafka.connect.transforms.InsertField$Value
transforms.stamp.static.field=origin
transforms.stamp.static.value=shop
"
    );
    let dir = scratch("turnpike-import");
    std::fs::create_dir_all(&dir)?;
    let (input, output) = (dir.join("shop.properties"), dir.join("shop.yaml"));
    std::fs::write(&input, properties)?;
    let (out_topic, routed_topic) = (format!("{prefix}.orders"), format!("{routed}.orders"));
    create_topic(&out_topic, 1).await?;
    create_topic(&routed_topic, 1).await?;

    let mut host = start_sql_host(&dir, &bare_config())?;
    wait_healthy(&host)?;
    let api = format!("http://{}", host.admin);
    let (args_in, args_out) = (input.display().to_string(), output.display().to_string());
    let (code, _, stderr) = turnpike_cli(&["connector", "import", &args_in, "--out", &args_out, "--check", "--api", &api], None)?;
    assert_eq!(code, 0, "import --check: {stderr}");
    assert!(stderr.contains("not carried over: tasks.max"), "the unused option is reported with why: {stderr}");
    assert!(stderr.contains("not carried over: key.converter"), "{stderr}");
    assert!(stderr.contains("the host accepts it"), "{stderr}");
    let yaml = std::fs::read_to_string(&output)?;
    assert!(yaml.contains(&routed_topic), "the router's destination is granted in routes: {yaml}");
    assert!(!yaml.contains(db.password()), "no password in the file");

    let (code, _, stderr) = turnpike_cli(&["connector", "apply", "--file", &args_out, "--api", &api], None)?;
    assert_eq!(code, 0, "apply: {stderr}");
    host.wait_state(&name, "RUNNING", Duration::from_secs(120))?;
    let rows = rows_until(&routed_topic, "id", 5, Duration::from_secs(60)).await.map_err(|e| anyhow::anyhow!("{e}: {}", status_report(&host, &name)))?;
    for (_, row) in &rows {
        assert_eq!(row["origin"], "shop", "InsertField ran: {row}");
    }
    assert!(host.stop()?.success());
    Ok(())
}

/// A sink connector Turnpike has no plugin for, with an SMT Turnpike lacks: the file is still
/// written, every option that could not be carried over is named with why, and `--check`
/// fails saying what the host needs.
#[tokio::test(flavor = "multi_thread")]
async fn options_that_cannot_be_carried_over_are_named_and_check_refuses_what_cannot_run() -> Result<()> {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/import/tests/fixtures/debezium-unwrap-with-predicates.json");
    let host = HostProcess::start(&scratch("turnpike-import-check"), &bare_host_config())?;
    wait_healthy(&host)?;
    let api = format!("http://{}", host.admin);
    let (code, stdout, stderr) = turnpike_cli(&["connector", "import", &fixture.display().to_string()], None)?;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("plugin: mask-field") && stdout.contains("has_header: x-internal"), "the YAML goes to standard output: {stdout}");
    assert!(stderr.contains("not carried over: transforms.unwrap.type: io.debezium.transforms.ExtractNewRecordState"), "{stderr}");
    assert!(stderr.contains("not carried over: connector.class: io.confluent.connect.jdbc.JdbcSinkConnector"), "{stderr}");
    assert!(!stdout.contains("l0ader-pa55word") && !stderr.contains("l0ader-pa55word"), "no credential is ever written");
    let (code, _, stderr) = turnpike_cli(&["connector", "import", &fixture.display().to_string(), "--check", "--api", &api], None)?;
    assert_ne!(code, 0, "a connector without a sink cannot run: {stderr}");
    assert!(stderr.contains("output_topic"), "the host says what is missing: {stderr}");
    Ok(())
}

/// Confluent's S3 sink with a three-SMT chain, as the REST JSON a Kafka Connect user has:
/// imported with `--check` (its credentials are Kafka `${env:…}` references, kept as such),
/// applied, and the records land in the bucket transformed by the chain.
#[tokio::test(flavor = "multi_thread")]
async fn an_s3_sink_with_three_smts_is_imported_checked_applied_and_writes_objects() -> Result<()> {
    use turnpike_tests::s3::{fresh_bucket, get_object, list_objects, s3_endpoint};
    let (name, topic, bucket) = (unique("imported-lake"), unique("lake-orders"), fresh_bucket("import"));
    create_topic(&topic, 1).await?;
    let config = serde_json::json!({
        "name": name,
        "config": {
            "connector.class": "io.confluent.connect.s3.S3SinkConnector",
            "tasks.max": "4",
            "topics": topic,
            "s3.bucket.name": bucket,
            "s3.region": "us-east-1",
            "store.url": s3_endpoint(),
            "aws.access.key.id": "${env:IMPORT_TEST_AK}",
            "aws.secret.access.key": "${env:IMPORT_TEST_SK}",
            "topics.dir": "raw",
            "flush.size": "3",
            "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
            "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "transforms": "dropPii,addSource,maskCard",
            "transforms.dropPii.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
            "transforms.dropPii.exclude": "email",
            "transforms.addSource.type": "org.apache.kafka.connect.transforms.InsertField$Value",
            "transforms.addSource.static.field": "source_system",
            "transforms.addSource.static.value": "shop-eu",
            "transforms.maskCard.type": "org.apache.kafka.connect.transforms.MaskField$Value",
            "transforms.maskCard.fields": "card",
            "transforms.maskCard.replacement": "****",
            "errors.tolerance": "all"
        }
    });
    let dir = scratch("turnpike-import-s3");
    std::fs::create_dir_all(&dir)?;
    let (input, output) = (dir.join("lake.json"), dir.join("lake.yaml"));
    std::fs::write(&input, serde_json::to_string_pretty(&config)?)?;
    let env = [("IMPORT_TEST_AK", "test"), ("IMPORT_TEST_SK", "import-test-secret"), ("AWS_EC2_METADATA_DISABLED", "true")];
    let mut host = HostProcess::start_with_env(&dir, &bare_host_config(), &env)?;
    wait_healthy(&host)?;
    let api = format!("http://{}", host.admin);
    let (args_in, args_out) = (input.display().to_string(), output.display().to_string());
    let (code, _, stderr) = turnpike_cli(&["connector", "import", &args_in, "--out", &args_out, "--check", "--api", &api], None)?;
    assert_eq!(code, 0, "import --check: {stderr}");
    assert!(!stderr.contains("not carried over: tasks.max") && stderr.contains("not carried over: value.converter"), "tasks.max becomes tasks: {stderr}");
    let (code, _, stderr) = turnpike_cli(&["connector", "apply", "--file", &args_out, "--api", &api], None)?;
    assert_eq!(code, 0, "apply: {stderr}");
    host.wait_state(&name, "RUNNING", Duration::from_secs(120))?;

    let records: Vec<(String, String)> =
        (0..6).map(|i| (format!("k{i}"), format!(r#"{{"id":{i},"email":"u{i}@example.com","card":"4111111111111111","amount":{i}}}"#))).collect();
    produce(&producer()?, &topic, &records).await?;
    let folder = format!("raw/{topic}/partition=0/");
    let keys = wait_until("two objects of three records", Duration::from_secs(90), || {
        let listed = list_objects(&bucket, &folder);
        Ok((listed.len() >= 2).then_some(listed))
    })
    .map_err(|e| anyhow::anyhow!("{e}: log:\n{}", host.log_text()))?;
    let mut rows = Vec::new();
    for (key, _) in &keys {
        let text = String::from_utf8(get_object(&bucket, key))?;
        rows.extend(text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l)).collect::<Result<Vec<_>, _>>()?);
    }
    assert_eq!(rows.len(), 6, "{rows:?}");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row, &serde_json::json!({"id": i, "card": "****", "amount": i, "source_system": "shop-eu"}), "the chain ran on every record");
    }
    assert!(host.stop()?.success());
    Ok(())
}
