//! The `sql-source` built-in against a real Kafka broker and the real PostgreSQL and MariaDB
//! servers `tests/run.sh` starts: every mode reads what it should (each row once in the
//! incremental ones, the table again and again in bulk), rows sharing one timestamp across a
//! batch boundary all arrive, values keep their exact digits and instants, a column added
//! while the connector runs shows in the next records, and `connector generate sql` writes
//! connectors that apply and stream. Each test runs on both databases. Faults:
//! `sql_source_faults`.

use std::collections::{BTreeSet, HashMap};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{json, Value};
use turnpike_tests::on_both;
use turnpike_tests::sql::{Dialect, TestDatabase, PASSWORD};
use turnpike_tests::sql_pipeline::*;
use turnpike_tests::*;

/// Longest wait for rows to reach a topic.
const WAIT: Duration = Duration::from_secs(60);
/// Longest wait for a connector to start (the host compiles the plugin first).
const START: Duration = Duration::from_secs(120);

/// How a mode test reads the `items` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    Incrementing,
    Timestamp,
    TimestampIncrementing,
    /// A custom query, in incrementing mode.
    Query,
}

impl Read {
    fn options(self) -> Value {
        match self {
            Read::Incrementing => json!({ "mode": "incrementing", "incrementing.column.name": "id" }),
            Read::Timestamp => json!({ "mode": "timestamp", "timestamp.column.name": "updated_at" }),
            Read::TimestampIncrementing => {
                json!({ "mode": "timestamp+incrementing", "timestamp.column.name": "updated_at", "incrementing.column.name": "id" })
            }
            Read::Query => json!({
                "mode": "incrementing",
                "query": "SELECT id, name, updated_at FROM items",
                "incrementing.column.name": "id",
                "key.columns": ["id"],
            }),
        }
    }
}

/// A connector named `name` reading `items` of `db` with `options`, and its topic.
fn items_source(name: &str, db: &TestDatabase, read: Read, batch: u32) -> (Value, String) {
    let mut options = read.options();
    options["batch.max.rows"] = json!(batch);
    if read == Read::Query {
        let topic = unique("sql-query");
        return (query_source(name, db, &["items"], &topic, options), topic);
    }
    let prefix = format!("{}.", unique("sql"));
    (table_source(name, db, &["items"], &prefix, options), format!("{prefix}items"))
}

/// Starts a host running `connector` (its topic created first) and waits until it runs.
async fn running(connector: &Value, topic: &str) -> Result<HostProcess> {
    create_topic(topic, 1).await?;
    let name = connector["name"].as_str().unwrap_or_default().to_owned();
    let mut host = start_sql_host(&scratch("turnpike-sql-source"), &host_config_for(&[connector]))?;
    host.wait_state(&name, "RUNNING", START)?;
    Ok(host)
}

/// `records_out` once it reached `at_least`.
fn records_out(host: &HostProcess, name: &str, at_least: u64) -> Result<u64> {
    let out = wait_until(&format!("{name} to report {at_least} records out"), WAIT, || {
        Ok(connector_status(host, name)?["records_out"].as_u64().filter(|n| *n >= at_least))
    });
    out.with_context(|| status_report(host, name))
}

on_both!(incrementing_reads_each_row_once_on_postgres, incrementing_reads_each_row_once_on_mariadb, incremental, Read::Incrementing);
on_both!(timestamp_reads_each_row_once_on_postgres, timestamp_reads_each_row_once_on_mariadb, incremental, Read::Timestamp);
on_both!(
    timestamp_incrementing_reads_new_and_updated_rows_on_postgres,
    timestamp_incrementing_reads_new_and_updated_rows_on_mariadb,
    incremental,
    Read::TimestampIncrementing
);
on_both!(a_custom_query_reads_each_row_once_on_postgres, a_custom_query_reads_each_row_once_on_mariadb, incremental, Read::Query);

/// Rows there at the start and rows inserted later arrive, each once, keyed by the primary
/// key (or `key.columns`) and named in the header; with timestamp+incrementing an updated row
/// arrives again with its new values.
async fn incremental(dialect: Dialect, read: Read) -> Result<()> {
    let db = TestDatabase::new(dialect).await?;
    create_items(&db, "items").await?;
    insert_items(&db, "items", 1..=40, past).await?;
    let name = unique("sql-modes");
    let (connector, topic) = items_source(&name, &db, read, 7);
    let mut host = running(&connector, &topic).await?;
    let first = rows_until(&topic, "id", 40, WAIT).await.with_context(|| status_report(&host, &name))?;
    check_ids(&ids(&first)?, 1..=40, true).with_context(|| format!("{read:?}: the rows there at the start"))?;
    for (key, row) in &first {
        let id = row["id"].as_u64().unwrap_or_default();
        assert_eq!(serde_json::from_str::<Value>(key).ok(), Some(json!({ "id": id })), "{read:?}: the key of {row}");
        assert_eq!(row, &json!({ "id": id, "name": format!("item {id}"), "updated_at": past_text(id) }), "{read:?}: the row as a JSON object");
    }
    let header = read_with_headers(&topic, 1, WAIT).await?;
    let table = if read == Read::Query { "query".to_owned() } else { table_header(dialect, "items") };
    assert_eq!(header.first().and_then(|r| r.headers.get("turnpike.table")), Some(&table), "{read:?}: the turnpike.table header");

    // Inserted while the connector runs, with later timestamps: read too, and nothing twice.
    insert_items(&db, "items", 41..=60, past).await?;
    let all = rows_until(&topic, "id", 60, WAIT).await.with_context(|| status_report(&host, &name))?;
    check_ids(&ids(&all)?, 1..=60, true).with_context(|| format!("{read:?}: after 20 more rows were inserted"))?;
    assert_eq!(records_out(&host, &name, 60)?, 60, "{read:?}: 60 rows, 60 records; {}", status_report(&host, &name));

    if read == Read::TimestampIncrementing {
        exec(&db, &format!("UPDATE items SET name = 'renamed', updated_at = {} WHERE id = 5", past(80_000))).await?;
        let again = parse_rows(consume_until(&topic, WAIT, |got| got.iter().any(|(_, v)| v.contains("\"renamed\""))).await?)?;
        let fives: Vec<&Value> = again.iter().map(|(_, r)| r).filter(|r| r["id"] == 5).collect();
        let updated = json!({ "id": 5, "name": "renamed", "updated_at": past_text(80_000) });
        assert_eq!(fives.len(), 2, "row 5 once as inserted, once as updated: {fives:?}; {}", status_report(&host, &name));
        assert_eq!(fives[1], &updated, "the update arrives with its new values");
        assert_eq!(records_out(&host, &name, 61)?, 61, "only the updated row was read again");
    }
    assert!(host.stop()?.success());
    Ok(())
}

on_both!(bulk_rereads_the_whole_table_every_cycle_on_postgres, bulk_rereads_the_whole_table_every_cycle_on_mariadb, bulk);

/// Bulk reads the whole table, page by page, over and over: every row at least twice, and a
/// row inserted later in the next pass.
async fn bulk(dialect: Dialect) -> Result<()> {
    let db = TestDatabase::new(dialect).await?;
    create_items(&db, "items").await?;
    insert_items(&db, "items", 1..=30, past).await?;
    let name = unique("sql-bulk");
    let prefix = format!("{}.", unique("sql"));
    let connector = table_source(&name, &db, &["items"], &prefix, json!({ "mode": "bulk", "batch.max.rows": 7 }));
    let topic = format!("{prefix}items");
    let mut host = running(&connector, &topic).await?;
    let (mut counts, mut counted) = (HashMap::<u64, usize>::new(), 0);
    let twice = consume_until(&topic, WAIT, |got| {
        for (_, v) in &got[counted..] {
            if let Some(id) = serde_json::from_str::<Value>(v).ok().and_then(|r| r["id"].as_u64()) {
                *counts.entry(id).or_default() += 1;
            }
        }
        counted = got.len();
        counts.values().filter(|n| **n >= 2).count() >= 30
    })
    .await?;
    let read = ids(&parse_rows(twice)?)?;
    check_ids(&read, 1..=30, false)?;
    let once: Vec<u64> = times_each(&read).into_iter().filter(|(_, n)| *n < 2).map(|(id, _)| id).collect();
    assert!(once.is_empty(), "every row read in two passes at least; read once only: {once:?}; {}", status_report(&host, &name));

    insert_items(&db, "items", 31..=35, past).await?;
    let later = rows_until(&topic, "id", 35, WAIT).await.with_context(|| status_report(&host, &name))?;
    check_ids(&ids(&later)?, 1..=35, false)?;
    assert!(host.stop()?.success());
    Ok(())
}

on_both!(
    rows_sharing_a_timestamp_across_a_batch_boundary_all_arrive_in_timestamp_mode_on_postgres,
    rows_sharing_a_timestamp_across_a_batch_boundary_all_arrive_in_timestamp_mode_on_mariadb,
    shared_timestamp,
    Read::Timestamp
);
on_both!(
    rows_sharing_a_timestamp_across_a_batch_boundary_all_arrive_in_timestamp_incrementing_mode_on_postgres,
    rows_sharing_a_timestamp_across_a_batch_boundary_all_arrive_in_timestamp_incrementing_mode_on_mariadb,
    shared_timestamp,
    Read::TimestampIncrementing
);

/// Kafka Connect's JDBC bug: a batch that ends inside one timestamp's rows, followed by a read
/// of `ts > last`, loses the rest of them. 12 rows, then 35 sharing one timestamp, then 13,
/// read in batches of 10: the tie spans four batch boundaries.
async fn shared_timestamp(dialect: Dialect, read: Read) -> Result<()> {
    let db = TestDatabase::new(dialect).await?;
    create_items(&db, "items").await?;
    insert_items(&db, "items", 1..=12, past).await?;
    insert_items(&db, "items", 13..=47, |_| past(100)).await?;
    insert_items(&db, "items", 48..=60, |i| past(200 + i)).await?;
    let name = unique("sql-ties");
    let (connector, topic) = items_source(&name, &db, read, 10);
    let mut host = running(&connector, &topic).await?;
    let rows = rows_until(&topic, "id", 60, WAIT).await.with_context(|| status_report(&host, &name))?;
    check_ids(&ids(&rows)?, 1..=60, true).with_context(|| format!("{read:?}: 35 rows share one timestamp"))?;
    assert_eq!(records_out(&host, &name, 60)?, 60, "{read:?}: each row once");
    assert!(host.stop()?.success());
    Ok(())
}

on_both!(
    values_keep_their_exact_digits_and_instants_and_an_added_column_appears_on_postgres,
    values_keep_their_exact_digits_and_instants_and_an_added_column_appears_on_mariadb,
    types
);

/// The typed table per dialect and its first row's expected JSON. MariaDB's BOOLEAN is a
/// TINYINT(1), so 1, as the plugin's README says.
fn typed_table(dialect: Dialect) -> (String, Value) {
    let (ddl, instant) = match dialect {
        Dialect::Postgres => (
            "id INTEGER PRIMARY KEY, big BIGINT, amount NUMERIC(20,6), flag BOOLEAN, label TEXT, at_tz TIMESTAMPTZ, \
             at_local TIMESTAMP(6), on_day DATE, doc JSONB, missing TEXT",
            "'2024-03-05 10:15:30.123456+02'",
        ),
        Dialect::Mysql => (
            "id INTEGER PRIMARY KEY, big BIGINT, amount DECIMAL(20,6), flag BOOLEAN, label TEXT, \
             at_tz TIMESTAMP(6) NULL DEFAULT NULL, at_local DATETIME(6), on_day DATE, doc JSON, missing TEXT",
            // The session is UTC (`exec`): this is 10:15:30 at +02.
            "'2024-03-05 08:15:30.123456'",
        ),
    };
    let insert = format!(
        "INSERT INTO typed (id, big, amount, flag, label, at_tz, at_local, on_day, doc, missing) VALUES \
         (1, 9007199254740993, 12345678901234.123456, TRUE, 'Grüße, 東京 🚀 \"quoted\"', {instant}, '2024-03-05 10:15:30.123456', \
         '2024-03-05', '{{\"a\": [1, 2], \"b\": \"x\"}}', NULL), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
    );
    let expected = json!({
        // 2^53 + 1: a double would round it.
        "id": 1, "big": 9_007_199_254_740_993_u64, "amount": "12345678901234.123456",
        "flag": if dialect == Dialect::Postgres { json!(true) } else { json!(1) },
        "label": "Grüße, 東京 🚀 \"quoted\"", "at_tz": "2024-03-05T08:15:30.123456Z", "at_local": "2024-03-05T10:15:30.123456Z",
        "on_day": "2024-03-05", "doc": { "a": [1, 2], "b": "x" }, "missing": null,
    });
    (format!("CREATE TABLE typed ({ddl}); {insert}"), expected)
}

async fn types(dialect: Dialect) -> Result<()> {
    let db = TestDatabase::new(dialect).await?;
    let (create, expected) = typed_table(dialect);
    exec(&db, &create).await?;
    let (name, prefix) = (unique("sql-types"), format!("{}.", unique("sql")));
    let connector = table_source(&name, &db, &["typed"], &prefix, json!({ "mode": "incrementing" }));
    let topic = format!("{prefix}typed");
    let mut host = running(&connector, &topic).await?;
    let raw = consume_until(&topic, WAIT, distinct_values_reach("id", 2)).await?;
    let text = raw.iter().map(|(_, v)| v.as_str()).find(|v| v.contains("12345678901234")).context("the first row")?.to_owned();
    assert!(text.contains(r#""12345678901234.123456""#), "the decimal's every digit, as a string by default: {text}");
    let rows = parse_rows(raw)?;
    let row = |id: u64| rows.iter().map(|(_, r)| r.clone()).find(|r| r["id"] == id).with_context(|| format!("row {id}; {}", status_report(&host, &name)));
    let mut first = row(1)?;
    if dialect == Dialect::Mysql {
        // MariaDB's JSON is LONGTEXT with a check, reported as text on the wire: accept the
        // document embedded or as its text, and compare the document.
        let doc = first["doc"].as_str().and_then(|d| serde_json::from_str::<Value>(d).ok());
        if let Some(doc) = doc {
            first["doc"] = doc;
        }
    }
    assert_eq!(first, expected, "every value as documented");
    let nulls: serde_json::Map<String, Value> =
        expected.as_object().into_iter().flatten().map(|(k, _)| (k.clone(), if k == "id" { json!(2) } else { Value::Null })).collect();
    assert_eq!(row(2)?, Value::Object(nulls), "NULL is null in every column");

    // A column added while the connector runs shows in the next records, without a restart.
    exec(&db, "ALTER TABLE typed ADD COLUMN extra VARCHAR(50); INSERT INTO typed (id, extra) VALUES (3, 'added')").await?;
    let later = rows_until(&topic, "id", 3, WAIT).await.with_context(|| status_report(&host, &name))?;
    let third = later.iter().map(|(_, r)| r).find(|r| r["id"] == 3).context("row 3")?;
    assert_eq!((&third["extra"], &third["big"]), (&json!("added"), &Value::Null), "{third}");
    assert_eq!(connector_status(&host, &name)?["state"], "RUNNING");
    assert!(host.stop()?.success());
    Ok(())
}

on_both!(
    generated_connectors_apply_and_stream_every_table_on_postgres,
    generated_connectors_apply_and_stream_every_table_on_mariadb,
    generated
);

/// `connector generate sql` on three tables — an integer key, only an update time, neither —
/// writes a file that `connector apply` takes, each table's rows reach its topic, and standard
/// error names the table it put in bulk mode.
async fn generated(dialect: Dialect) -> Result<()> {
    let db = TestDatabase::new(dialect).await?;
    let ts = timestamp_type(dialect);
    exec(
        &db,
        &format!(
            "CREATE TABLE g_ids (id INTEGER PRIMARY KEY, name VARCHAR(50) NOT NULL); \
             CREATE TABLE g_times (code VARCHAR(50) NOT NULL, updated_at {ts} NOT NULL); \
             CREATE TABLE g_plain (note VARCHAR(50) NOT NULL); \
             INSERT INTO g_ids VALUES (1, 'one'), (2, 'two'), (3, 'three'); \
             INSERT INTO g_times VALUES ('a', {}), ('b', {}), ('c', {}); \
             INSERT INTO g_plain VALUES ('x'), ('y')",
            past(1),
            past(2),
            past(3)
        ),
    )
    .await?;
    let (topic_prefix, name_prefix) = (format!("{}.", unique("gen")), format!("{}-", unique("gen")));
    // (table, a column whose values tell rows apart, those values)
    let tables: [(&str, &str, &[&str]); 3] = [("g_ids", "name", &["one", "three", "two"]), ("g_times", "code", &["a", "b", "c"]), ("g_plain", "note", &["x", "y"])];
    for (table, _, _) in &tables {
        create_topic(&format!("{topic_prefix}{table}"), 1).await?;
    }
    let dir = scratch("turnpike-sql-generate");
    std::fs::create_dir_all(&dir)?;
    let (file, url) = (dir.join("connectors.yaml"), db.url());
    let out = Command::new(turnpike_bin())
        .args(["connector", "generate", "sql", "--url", url.as_str(), "--user", db.user(), "--password-env", PASSWORD_VAR])
        .args(["--tables", "g_ids,g_times,g_plain", "--topic-prefix", topic_prefix.as_str(), "--name-prefix", name_prefix.as_str()])
        .args(["--poll-interval-ms", "100", "-f"])
        .arg(&file)
        .env(PASSWORD_VAR, PASSWORD)
        .output()
        .context("running turnpike connector generate sql")?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "generate failed: {stderr}");
    let says = |table: &str, mode: &str| stderr.lines().any(|l| l.contains(table) && l.contains(mode));
    assert!(says("g_plain", "bulk"), "standard error names the table in bulk mode: {stderr}");
    assert!(says("g_ids", "incrementing") && says("g_times", "timestamp"), "{stderr}");
    assert!(!says("g_ids", "bulk") && !says("g_times", "bulk"), "only g_plain is in bulk mode: {stderr}");
    let text = std::fs::read_to_string(&file)?;
    assert!(text.contains(PASSWORD_REF), "the file refers to the password: {text}");
    assert!(!text.lines().any(|l| l.contains("password") && l.contains(PASSWORD)), "the file never holds the password: {text}");

    // The file validates as `connector apply` sends it, and each connector streams its table.
    let mut host = start_sql_host(&dir, &bare_config())?;
    wait_healthy(&host)?;
    let api = format!("http://{}", host.admin);
    let applied = Command::new(turnpike_bin()).args(["connector", "apply", "-f"]).arg(&file).args(["--api", api.as_str()]).output()?;
    let (stdout, errors) = (String::from_utf8_lossy(&applied.stdout).into_owned(), String::from_utf8_lossy(&applied.stderr).into_owned());
    assert!(applied.status.success(), "apply refused the generated file: {errors}");
    for (table, field, values) in tables {
        let name = format!("{name_prefix}{table}");
        assert!(stdout.contains(&format!("{name}: applied")), "{stdout}");
        host.wait_state(&name, "RUNNING", START)?;
        let rows = rows_until(&format!("{topic_prefix}{table}"), field, values.len(), WAIT).await.with_context(|| status_report(&host, &name))?;
        let expected: BTreeSet<String> = values.iter().map(|v| (*v).to_owned()).collect();
        assert_eq!(texts(&rows, field), expected, "{table}: every row in its topic");
    }
    assert!(host.stop()?.success());
    Ok(())
}
