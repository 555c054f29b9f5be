//! `sql-source` pipelines for the tests: tables set up per dialect, connectors written as the
//! host takes them (a JSON document, put in a config file as a one-line YAML flow mapping or
//! sent to the API as is), a host that finds the password by reference, and the rows read
//! back from a topic as JSON.
//!
//! Every statement runs in a UTC session ([`exec`]): the host reads in UTC, so a timestamp
//! without a zone written from a session in another zone would look hours off to it.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use crate::sql::{Dialect, TestDatabase, PASSWORD};
use crate::{bare_host_config, consume_until, free_port, host_config_with, unique, HostProcess};

/// The environment variable the host (and `connector generate sql`) reads the password from.
pub const PASSWORD_VAR: &str = "TURNPIKE_TEST_DB_PASSWORD";

/// How a connector refers to [`PASSWORD_VAR`]: the password itself is never in a config.
pub const PASSWORD_REF: &str = "${env:TURNPIKE_TEST_DB_PASSWORD}";

/// Two `#[tokio::test]`s running one body, `body(Dialect, args…)`, one per database, so a
/// failure names the database.
#[macro_export]
macro_rules! on_both {
    ($postgres:ident, $mariadb:ident, $body:ident $(, $arg:expr)*) => {
        #[::tokio::test(flavor = "multi_thread")]
        async fn $postgres() -> ::anyhow::Result<()> {
            $body($crate::sql::Dialect::Postgres $(, $arg)*).await
        }

        #[::tokio::test(flavor = "multi_thread")]
        async fn $mariadb() -> ::anyhow::Result<()> {
            $body($crate::sql::Dialect::Mysql $(, $arg)*).await
        }
    };
}

/// Runs `sql` (one statement or several, `;`-separated) in a UTC session.
pub async fn exec(db: &TestDatabase, sql: &str) -> Result<()> {
    let zone = match db.dialect() {
        Dialect::Postgres => "SET TIME ZONE 'UTC'",
        Dialect::Mysql => "SET time_zone = '+00:00'",
    };
    db.execute(&format!("{zone}; {sql}")).await
}

/// A timestamp column without a zone, to the microsecond: `TIMESTAMP(6)` / `DATETIME(6)`.
pub fn timestamp_type(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => "TIMESTAMP(6)",
        Dialect::Mysql => "DATETIME(6)",
    }
}

/// The `turnpike.table` header of a table's records: the table as the grant spells it.
pub fn table_header(dialect: Dialect, table: &str) -> String {
    match dialect {
        Dialect::Postgres => format!("public.{table}"),
        Dialect::Mysql => table.to_owned(),
    }
}

/// `CREATE TABLE <table> (id BIGINT PRIMARY KEY, name VARCHAR(100) NOT NULL, updated_at
/// <timestamp> NOT NULL)`: what every mode can read.
pub async fn create_items(db: &TestDatabase, table: &str) -> Result<()> {
    let ts = timestamp_type(db.dialect());
    exec(db, &format!("CREATE TABLE {table} (id BIGINT PRIMARY KEY, name VARCHAR(100) NOT NULL, updated_at {ts} NOT NULL)")).await
}

/// Inserts rows `(id, 'item <id>', at(id))` in one statement; `at` gives an SQL expression
/// ([`past`], [`soon`]).
pub async fn insert_items(db: &TestDatabase, table: &str, ids: impl IntoIterator<Item = u64>, at: impl Fn(u64) -> String) -> Result<()> {
    let rows: Vec<String> = ids.into_iter().map(|i| format!("({i}, 'item {i}', {})", at(i))).collect();
    if rows.is_empty() {
        return Ok(());
    }
    exec(db, &format!("INSERT INTO {table} (id, name, updated_at) VALUES {}", rows.join(", "))).await
}

/// The literal `'2024-01-01 HH:MM:SS'`, `second` seconds after midnight: long past, so every
/// mode's upper bound (the database's clock) lets it through at once, and later for a larger
/// `second`.
pub fn past(second: u64) -> String {
    assert!(second < 86_400, "past({second}): stay within 2024-01-01");
    format!("'2024-01-01 {:02}:{:02}:{:02}'", second / 3_600, second / 60 % 60, second % 60)
}

/// The text the host gives for [`past`]`(second)` in a column without a zone, as a record
/// holds it: `2024-01-01THH:MM:SSZ`.
pub fn past_text(second: u64) -> String {
    past(second).trim_matches('\'').replacen(' ', "T", 1) + "Z"
}

/// An SQL expression `ms` milliseconds after the database's clock: a row that comes due in
/// timestamp modes only once the database's time passes it.
pub fn soon(dialect: Dialect, ms: u64) -> String {
    match dialect {
        Dialect::Postgres => format!("CURRENT_TIMESTAMP + INTERVAL '{ms} milliseconds'"),
        Dialect::Mysql => format!("CURRENT_TIMESTAMP(6) + INTERVAL {} MICROSECOND", ms * 1_000),
    }
}

/// An `sql-source` connector reading `tables` of `db` (bare names, all granted) with
/// `options`, `topic.prefix: prefix`: the first table's topic is its `output_topic`, the
/// others its `routes`. Polls every 100 ms; restarts off, so a failure stays visible.
pub fn table_source(name: &str, db: &TestDatabase, tables: &[&str], prefix: &str, mut options: Value) -> Value {
    options["topic.prefix"] = json!(prefix);
    let topics: Vec<String> = tables.iter().map(|t| format!("{prefix}{t}")).collect();
    let output = topics.first().cloned().unwrap_or_else(|| prefix.to_owned());
    source(name, db, tables, &output, topics.get(1..).unwrap_or_default(), options)
}

/// An `sql-source` connector reading a `query` (in `options`) into `topic`, granted `tables`.
pub fn query_source(name: &str, db: &TestDatabase, tables: &[&str], topic: &str, options: Value) -> Value {
    source(name, db, tables, topic, &[], options)
}

fn source(name: &str, db: &TestDatabase, tables: &[&str], output: &str, routes: &[String], mut options: Value) -> Value {
    if options.get("poll.interval.ms").is_none() {
        options["poll.interval.ms"] = json!(100);
    }
    let mut connector = json!({
        "name": name,
        "output_topic": output,
        "source": { "plugin": "sql-source", "poll_interval_ms": 100, "config": options },
        "database": { "url": db.url(), "user": db.user(), "password": PASSWORD_REF, "tables": tables },
        "restart": { "enabled": false },
    });
    if !routes.is_empty() {
        connector["routes"] = json!(routes);
    }
    connector
}

/// `value` as a one-line YAML flow node. Plain JSON would do for YAML 1.2, but `"a":1` without
/// a space is not YAML 1.1 everywhere, so separators get their space.
pub fn flow_yaml(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let pairs: Vec<String> = map.iter().map(|(k, v)| format!("{}: {}", Value::String(k.clone()), flow_yaml(v))).collect();
            format!("{{{}}}", pairs.join(", "))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(flow_yaml).collect::<Vec<_>>().join(", ")),
        scalar => scalar.to_string(),
    }
}

/// A host config running `connectors` (admin API on a free port), with a source positions
/// topic of its own.
pub fn host_config_for(connectors: &[&Value]) -> String {
    let items: String = connectors.iter().map(|c| format!("- {}\n", flow_yaml(c))).collect();
    host_config_with(free_port(), &format!("source_positions_topic: {}\n", unique("sql-positions")), &items)
}

/// A host config with no connectors (they come through the API), with a source positions
/// topic of its own.
pub fn bare_config() -> String {
    format!("source_positions_topic: {}\n{}", unique("sql-positions"), bare_host_config())
}

/// A fresh directory path under the system's temporary directory.
pub fn scratch(label: &str) -> PathBuf {
    std::env::temp_dir().join(unique(label))
}

/// Starts a host on `config` in `dir` with [`PASSWORD_VAR`] set, for [`PASSWORD_REF`].
pub fn start_sql_host(dir: &Path, config: &str) -> Result<HostProcess> {
    HostProcess::start_with_env(dir, config, &[(PASSWORD_VAR, PASSWORD)])
}

/// `GET /v1/connectors/{name}`, or an error with the answer.
pub fn connector_status(host: &HostProcess, name: &str) -> Result<Value> {
    let (code, body) = host.get(&format!("/v1/connectors/{name}"))?;
    if code != 200 {
        bail!("GET /v1/connectors/{name} answered {code}: {body}");
    }
    Ok(body)
}

/// The connector's status and the host's log, for failure messages.
pub fn status_report(host: &HostProcess, name: &str) -> String {
    let status = connector_status(host, name).map(|s| s.to_string());
    format!("status: {}\nlog:\n{}", status.unwrap_or_else(|e| format!("{e:#}")), host.log_text())
}

/// A stop condition for [`consume_until`]: `n` distinct values of the rows' `field` read
/// (counting only what is new at each call).
pub fn distinct_values_reach(field: &str, n: usize) -> impl FnMut(&[(String, String)]) -> bool {
    let field = field.to_owned();
    let (mut seen, mut counted) = (HashSet::new(), 0);
    move |got| {
        for (_, value) in &got[counted..] {
            if let Some(v) = serde_json::from_str::<Value>(value).ok().and_then(|row| row.get(field.as_str()).cloned()) {
                seen.insert(v.to_string());
            }
        }
        counted = got.len();
        seen.len() >= n
    }
}

/// Records read back, each `(key as text, value as JSON)`; an error names a value that is
/// not JSON.
pub fn parse_rows(records: Vec<(String, String)>) -> Result<Vec<(String, Value)>> {
    records
        .into_iter()
        .map(|(key, value)| {
            let row = serde_json::from_str(&value).with_context(|| format!("a record whose value is not JSON: {value:.200}"))?;
            Ok((key, row))
        })
        .collect()
}

/// Every record of `topic` from its start until `n` distinct values of `field` arrived,
/// duplicates included; an error when they did not within `timeout`.
pub async fn rows_until(topic: &str, field: &str, n: usize, timeout: Duration) -> Result<Vec<(String, Value)>> {
    let rows = parse_rows(consume_until(topic, timeout, distinct_values_reach(field, n)).await?)?;
    let distinct: HashSet<String> = rows.iter().filter_map(|(_, r)| r.get(field)).map(Value::to_string).collect();
    if distinct.len() < n {
        bail!("{topic}: {} distinct values of {field:?} in {} records after {timeout:?}, expected {n}", distinct.len(), rows.len());
    }
    Ok(rows)
}

/// The rows' `id`s, in the order read.
pub fn ids(rows: &[(String, Value)]) -> Result<Vec<u64>> {
    rows.iter().map(|(_, r)| r["id"].as_u64().with_context(|| format!("a row without an integer id: {:.200}", r.to_string()))).collect()
}

/// The rows' `field` values as text (strings as they are, anything else as JSON).
pub fn texts(rows: &[(String, Value)], field: &str) -> BTreeSet<String> {
    rows.iter().map(|(_, r)| r[field].as_str().map_or_else(|| r[field].to_string(), str::to_owned)).collect()
}

/// How many times each id was read.
pub fn times_each(ids: &[u64]) -> BTreeMap<u64, usize> {
    let mut seen = BTreeMap::new();
    for id in ids {
        *seen.entry(*id).or_default() += 1;
    }
    seen
}

/// Fails unless `ids` holds every id of `expected` and nothing else, and with `each_once`,
/// none twice.
pub fn check_ids(ids: &[u64], expected: RangeInclusive<u64>, each_once: bool) -> Result<()> {
    let seen = times_each(ids);
    let missing: Vec<u64> = expected.clone().filter(|id| !seen.contains_key(id)).take(10).collect();
    let foreign: Vec<u64> = seen.keys().filter(|id| !expected.contains(*id)).copied().take(10).collect();
    let repeated: Vec<u64> = seen.iter().filter(|(_, n)| **n > 1).map(|(id, _)| *id).take(10).collect();
    if !missing.is_empty() || !foreign.is_empty() || (each_once && !repeated.is_empty()) {
        bail!(
            "ids missing {missing:?}, unexpected {foreign:?}, repeated {repeated:?} (at most 10 of each; {} records, {} distinct ids)",
            ids.len(),
            seen.len()
        );
    }
    Ok(())
}
