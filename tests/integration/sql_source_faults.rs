//! The `sql-source` built-in when things go wrong, on PostgreSQL and MariaDB: the host killed
//! mid-table loses no row; the database stopped for ten seconds is waited for, not failed on;
//! statements that write and tables outside the grant are refused before they reach the
//! database; a wrong password fails the connector in words, never showing it.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use turnpike_tests::on_both;
use turnpike_tests::sql::{DatabaseServer, Dialect, TestDatabase, PASSWORD};
use turnpike_tests::sql_pipeline::*;
use turnpike_tests::*;

/// Longest wait for rows to reach a topic.
const WAIT: Duration = Duration::from_secs(60);
/// Longest wait for a connector to start or fail.
const START: Duration = Duration::from_secs(120);

/// `records_out` of the connector now.
fn records_out(host: &HostProcess, name: &str) -> Result<u64> {
    Ok(connector_status(host, name)?["records_out"].as_u64().unwrap_or(0))
}

on_both!(a_host_killed_mid_table_loses_no_row_on_postgres, a_host_killed_mid_table_loses_no_row_on_mariadb, killed_mid_table);

/// SIGKILL while the connector is part way through a table, then a new host on the same state
/// directory: every row is in the topic (at least once: rows after the last stored position
/// are read again).
async fn killed_mid_table(dialect: Dialect) -> Result<()> {
    const TOTAL: u64 = 300;
    let db = TestDatabase::new(dialect).await?;
    create_items(&db, "items").await?;
    let (name, prefix) = (unique("sql-killed"), format!("{}.", unique("sql-kill")));
    let options = json!({ "mode": "timestamp+incrementing", "timestamp.column.name": "updated_at", "incrementing.column.name": "id", "batch.max.rows": 5 });
    let connector = table_source(&name, &db, &["items"], &prefix, options);
    let topic = format!("{prefix}items");
    create_topic(&topic, 1).await?;
    let (dir, config) = (scratch("turnpike-sql-kill"), host_config_for(&[&connector]));
    let mut first = start_sql_host(&dir, &config)?;
    first.wait_state(&name, "RUNNING", START)?;

    // Each row comes due 25 ms after the one before on the database's clock (no mode reads a
    // row stamped after the database's time), so the table is read over 7.5 s, in small
    // batches, and the kill lands with most of it unread.
    insert_items(&db, "items", 1..=TOTAL, |i| soon(dialect, 500 + i * 25)).await?;
    let at_kill = wait_until("the first rows produced", WAIT, || Ok(Some(records_out(&first, &name)?).filter(|n| *n >= 30)))
        .with_context(|| status_report(&first, &name))?;
    first.kill_hard()?;
    assert!(at_kill < TOTAL, "the kill came after the whole table was read ({at_kill} records): nothing was tested");

    let mut second = start_sql_host(&dir, &config)?;
    second.wait_state(&name, "RUNNING", START)?;
    let rows = rows_until(&topic, "id", TOTAL as usize, Duration::from_secs(120)).await.with_context(|| status_report(&second, &name))?;
    check_ids(&ids(&rows)?, 1..=TOTAL, false).context("after the restart")?;
    println!("killed after {at_kill} records; {} records for {TOTAL} rows after the restart", rows.len());
    assert!(second.stop()?.success());
    Ok(())
}

on_both!(
    the_database_stopped_for_ten_seconds_is_waited_for_and_nothing_is_lost_on_postgres,
    the_database_stopped_for_ten_seconds_is_waited_for_and_nothing_is_lost_on_mariadb,
    database_away
);

/// The connector's retries of the poll plus its reconnects to the database; an error if it
/// failed.
fn retried(host: &HostProcess, name: &str) -> Result<u64> {
    let status = connector_status(host, name)?;
    if status["state"] == "FAILED" {
        bail!("the connector failed while the database was away: {status}");
    }
    Ok(status["retries"].as_u64().unwrap_or(0) + status["database"]["reconnects"].as_u64().unwrap_or(0))
}

/// A server of the test's own, stopped for 10 s with rows read before and inserted after: the
/// connector retries (and says so), never fails, and reads the new rows once it is back.
async fn database_away(dialect: Dialect) -> Result<()> {
    const OUTAGE: Duration = Duration::from_secs(10);
    let server = DatabaseServer::start_own(dialect)?;
    let db = server.create_database().await?;
    create_items(&db, "items").await?;
    insert_items(&db, "items", 1..=30, past).await?;
    let (name, prefix) = (unique("sql-away"), format!("{}.", unique("sql-away")));
    // No incrementing.column.name: the integer primary key is the default.
    let mut connector = table_source(&name, &db, &["items"], &prefix, json!({ "mode": "incrementing", "batch.max.rows": 10 }));
    connector["errors"] = json!({ "retry_timeout_ms": 120_000, "retry_max_delay_ms": 1_000 });
    let topic = format!("{prefix}items");
    create_topic(&topic, 1).await?;
    let mut host = start_sql_host(&scratch("turnpike-sql-away"), &host_config_for(&[&connector]))?;
    host.wait_state(&name, "RUNNING", START)?;
    rows_until(&topic, "id", 30, WAIT).await.with_context(|| status_report(&host, &name))?;
    let before = retried(&host, &name)?;

    server.pause()?;
    let down = Instant::now();
    wait_until("the connector to retry the database while it is away", START, || Ok(Some(retried(&host, &name)?).filter(|n| *n > before)))
        .with_context(|| status_report(&host, &name))?;
    // The outage's length is the scenario itself, not a wait for something to happen.
    std::thread::sleep(OUTAGE.saturating_sub(down.elapsed()));
    let away = down.elapsed();
    assert!(away >= OUTAGE, "the database was away {away:?}");
    assert_eq!(connector_status(&host, &name)?["state"], "RUNNING", "a database away for less than errors.retry_timeout_ms fails nothing");
    server.resume()?;

    insert_items(&db, "items", 31..=50, past).await?;
    let rows = rows_until(&topic, "id", 50, Duration::from_secs(120)).await.with_context(|| status_report(&host, &name))?;
    check_ids(&ids(&rows)?, 1..=50, false).context("rows from before the outage and after it")?;
    let status = connector_status(&host, &name)?;
    assert_eq!(status["state"], "RUNNING", "{status}");
    assert_eq!(status["restarts"], 0, "never failed, so never restarted: {status}");
    assert!(status["failures"].as_object().is_none_or(|f| f.is_empty()), "never failed: {status}");
    let counted = retried(&host, &name)?;
    assert!(counted > before, "the retries and reconnects are counted ({before} before the outage): {status}");
    println!("database away for {away:?}: {} poll retries, {} reconnects", status["retries"], status["database"]["reconnects"]);
    assert!(host.stop()?.success());
    Ok(())
}

on_both!(
    writes_foreign_tables_and_a_wrong_password_are_refused_on_postgres,
    writes_foreign_tables_and_a_wrong_password_are_refused_on_mariadb,
    refusals
);

/// PUTs `connector` and waits until it has failed (restarts are off).
fn put_failing(host: &mut HostProcess, name: &str, connector: &Value) -> Result<Value> {
    let (code, answer) = http_json(&host.admin, "PUT", &format!("/v1/connectors/{name}"), connector)?;
    assert_eq!(code, 201, "PUT {name}: {answer}");
    host.wait_state(name, "FAILED", START)
}

/// The failure's message.
fn message(failed: &Value) -> &str {
    failed["error"]["message"].as_str().unwrap_or_default()
}

/// Queries that write, a whitelist and a query naming a table outside the grant, and a wrong
/// password, each in a connector of its own on one host. The password comes from the host's
/// secrets store here.
async fn refusals(dialect: Dialect) -> Result<()> {
    let db = TestDatabase::new(dialect).await?;
    create_items(&db, "items").await?;
    insert_items(&db, "items", 1..=20, past).await?;
    exec(&db, "CREATE TABLE vault_rows (id INTEGER PRIMARY KEY, secret VARCHAR(50) NOT NULL); INSERT INTO vault_rows VALUES (1, 'hidden')").await?;
    let dir = scratch("turnpike-sql-refusals");
    let mut host = start_sql_host(&dir, &bare_config())?;
    wait_healthy(&host)?;
    let wrong = format!("wrong-pw-{:016x}", rand::random::<u64>());
    for (secret, value) in [("sql-db", PASSWORD), ("sql-wrong", wrong.as_str())] {
        let (code, answer) = http_json(&host.admin, "PUT", &format!("/v1/secrets/{secret}"), &json!({ "value": value }))?;
        assert_eq!(code, 204, "PUT secret {secret}: {answer}");
    }
    let granted = |mut c: Value, secret: &str| {
        c["database"]["password"] = json!(format!("${{secret:{secret}}}"));
        c
    };
    let query = |sql: &str| {
        let name = unique("sql-refused");
        let c = query_source(&name, &db, &["items"], &unique("sql-refused-out"), json!({ "mode": "bulk", "query": sql }));
        (name, granted(c, "sql-db"))
    };

    // Writes are refused by the host, before the database sees them.
    let mut writes = vec![("DELETE", "DELETE FROM items".to_owned()), ("UPDATE", "UPDATE items SET name = 'gone'".to_owned())];
    if dialect == Dialect::Postgres {
        let insert = format!("INSERT INTO items (id, name, updated_at) VALUES (999, 'planted', {}) RETURNING *", past(1));
        writes.push(("INSERT", format!("WITH x AS ({insert}) SELECT * FROM x")));
    }
    for (verb, sql) in &writes {
        let (name, connector) = query(sql.as_str());
        let failed = put_failing(&mut host, &name, &connector)?;
        let said = message(&failed);
        assert!(said.contains("the host refused the statement") && said.contains(*verb), "{verb}: refused, naming it: {failed}");
        assert_eq!(failed["records_out"], 0, "{failed}");
    }
    // A write the guard cannot see (inside a function it does not know) is stopped by the
    // read-only transaction every query runs in.
    let wipe = match dialect {
        Dialect::Postgres => "CREATE FUNCTION wipe_items() RETURNS integer LANGUAGE sql AS $$ DELETE FROM items; SELECT 1 $$",
        Dialect::Mysql => "CREATE FUNCTION wipe_items() RETURNS INT MODIFIES SQL DATA BEGIN DELETE FROM items; RETURN 1; END",
    };
    exec(&db, wipe).await?;
    let (name, connector) = query("SELECT wipe_items() AS wiped");
    let failed = put_failing(&mut host, &name, &connector)?;
    assert!(message(&failed).to_ascii_lowercase().contains("read only") || message(&failed).to_ascii_lowercase().contains("read-only"), "the database refused the write: {failed}");
    assert_eq!(db.count("items").await?, 20, "no row deleted or added");
    assert_eq!(db.query_i64("SELECT COUNT(*) FROM items WHERE name = 'gone' OR id = 999").await?, 0, "no row changed");

    // A table outside `database.tables`, named by the whitelist or by a query.
    let (name, prefix) = (unique("sql-whitelist"), format!("{}.", unique("sql")));
    let listed = granted(table_source(&name, &db, &["items"], &prefix, json!({ "mode": "bulk", "table.whitelist": ["vault_rows"] })), "sql-db");
    let failed = put_failing(&mut host, &name, &listed)?;
    assert!(message(&failed).contains("table.whitelist") && message(&failed).contains("vault_rows"), "names the table: {failed}");
    let (name, connector) = query("SELECT id, secret FROM vault_rows");
    let failed = put_failing(&mut host, &name, &connector)?;
    let said = message(&failed);
    assert!(said.contains("the host refused the statement") && said.contains("vault_rows") && said.contains("not granted"), "names the table: {failed}");
    assert!(!said.contains("hidden"), "nothing of the table was read: {failed}");

    // A wrong password: validate says so under connector.database; the connector fails with
    // class database, in words; the password shows nowhere.
    let (name, prefix) = (unique("sql-wrong"), format!("{}.", unique("sql")));
    let connector = table_source(&name, &db, &["items"], &prefix, json!({ "mode": "incrementing" }));
    let validate = format!("/v1/connectors/{name}/validate");
    let (code, answer) = http_json(&host.admin, "POST", &validate, &granted(connector.clone(), "sql-db"))?;
    assert_eq!((code, &answer["valid"]), (200, &json!(true)), "the right password validates: {answer}");
    let wrong_one = granted(connector, "sql-wrong");
    let (code, answer) = http_json(&host.admin, "POST", &validate, &wrong_one)?;
    assert_eq!(code, 422, "{answer}");
    let problems = answer["problems"].as_array().cloned().unwrap_or_default();
    assert!(problems.iter().any(|p| p["key"] == "connector.database" && p["message"].as_str().is_some_and(|m| m.contains("signing in"))), "{answer}");
    let failed = put_failing(&mut host, &name, &wrong_one)?;
    assert_eq!(failed["error"]["class"], "database", "{failed}");
    let said = message(&failed);
    assert!(said.contains("signing in") && said.contains("failed"), "says sign-in failed: {failed}");
    for (place, text) in [("the validate answer", answer.to_string()), ("the status", failed.to_string()), ("the host log", host.log_text())] {
        assert!(!text.contains(&wrong), "the password shows in {place}");
    }
    assert!(host.stop()?.success());
    Ok(())
}
