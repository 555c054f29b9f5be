//! What a record holds (value, key, header, topic), a custom query, and the errors: which are
//! retried, which fail the connector, and what they say.

use turnpike_sdk::sql::{Dialect, SqlError, TableInfo, ValueKind};
use turnpike_sdk::testing;
use turnpike_sdk::ErrorKind;

use super::engine::{col, Engine, Table};
use super::{clock, events, field, poll, poll_error, source, stored, text};

fn orders() -> Engine {
    let columns = vec![
        col("id", ValueKind::Integer, "int8", false),
        col("total", ValueKind::Decimal, "numeric", false),
        col("note", ValueKind::Text, "text", true),
        col("placed", ValueKind::TimestampTz, "timestamptz", false),
        col("paid", ValueKind::Boolean, "bool", false),
        col("raw", ValueKind::Bytes, "bytea", true),
    ];
    let mut e = Engine::new(Dialect::PostgreSql).table("public.orders", columns, &["id"]);
    e.insert("public.orders", &[Some("1"), Some("12.50"), None, Some("2026-11-30T10:00:00.5Z"), Some("true"), Some("hi")]);
    e
}

#[test]
fn a_record_is_the_row_as_json_keyed_by_the_primary_key_on_the_prefixed_topic() {
    let _db = orders().install(10_000);
    let polled = poll(&mut source(r#"{"mode": "incrementing", "topic.prefix": "shop."}"#, None, &clock()), 100);
    let r = &polled[0].record;
    assert_eq!(r.value.as_deref().map(text).as_deref(), Some(r#"{"id":1,"total":"12.50","note":null,"placed":"2026-11-30T10:00:00.5Z","paid":true,"raw":"aGk="}"#));
    assert_eq!(r.key.as_deref().map(text).as_deref(), Some(r#"{"id":1}"#));
    assert_eq!(r.topic.as_deref(), Some("shop.orders"), "prefix + the table name without its schema");
    assert_eq!(r.headers, [("turnpike.table".to_owned(), b"public.orders".to_vec())]);
    let _db = orders().install(10_000);
    let best = poll(&mut source(r#"{"mode": "bulk", "numeric.mapping": "best_fit", "timestamp.mapping": "epoch_ms"}"#, None, &clock()), 100);
    let value = best[0].record.value.as_deref().map(text).unwrap_or_default();
    assert!(value.contains(r#""total":12.50,"#) && value.contains(r#""placed":1796032800500,"#), "{value}");
    assert_eq!(best[0].record.topic, None, "no prefix: the connector's output topic");
}

#[test]
fn a_column_added_to_the_table_shows_in_the_next_records_without_a_restart() {
    let db = orders().install(10_000);
    let clock = clock();
    let mut s = source(r#"{"mode": "incrementing"}"#, None, &clock);
    assert_eq!(poll(&mut s, 100).len(), 1);
    db.borrow_mut().add_column("public.orders", col("status", ValueKind::Text, "text", true));
    db.borrow_mut().insert("public.orders", &[Some("2"), Some("1"), None, Some("2026-11-30T11:00:00Z"), Some("false"), None, Some("new")]);
    clock.set(5_000);
    let next = poll(&mut s, 100);
    assert_eq!(field(&next, "status"), ["new"]);
}

#[test]
fn a_custom_query_is_wrapped_keyed_by_key_columns_and_positioned_apart() {
    let mut e = Engine::new(Dialect::PostgreSql);
    let info = TableInfo {
        name: "query".into(),
        columns: vec![col("order_id", ValueKind::Integer, "int8", false), col("email", ValueKind::Text, "text", true), col("updated_at", ValueKind::Timestamp, "timestamp", false)],
        primary_key: vec![],
    };
    let rows = vec![vec![Some("1".to_owned()), Some("a@example.com".to_owned()), Some("2026-11-30T10:00:00".to_owned())]];
    e.query = Some(Table { info, rows });
    let db = e.install(10_000);
    let query = "SELECT o.id AS order_id, c.email, o.updated_at FROM orders o JOIN customers c ON c.id = o.customer_id";
    let config = format!(
        r#"{{"mode": "timestamp+incrementing", "query": "{query}", "incrementing.column.name": "order_id", "timestamp.column.name": "updated_at", "key.columns": "order_id"}}"#
    );
    let polled = poll(&mut source(&config, None, &clock()), 100);
    assert_eq!(field(&polled, "email"), ["a@example.com"]);
    let r = &polled[0].record;
    assert_eq!((r.key.as_deref().map(text).as_deref(), r.topic.as_deref()), (Some(r#"{"order_id":1}"#), None));
    assert_eq!(r.headers, [("turnpike.table".to_owned(), b"query".to_vec())]);
    assert_eq!(stored(&polled).map(|p| text(&p)).as_deref(), Some(r#"{"v":1,"mode":"timestamp+incrementing","query":{"ts":"2026-11-30T10:00:00","inc":"1"}}"#));
    let statements = db.borrow().statements();
    assert_eq!(statements[0], format!("SELECT * FROM ({query}) AS turnpike_q LIMIT 0"), "the query's columns are checked first");
    assert!(statements[1].starts_with(&format!(r#"SELECT * FROM ({query}) AS turnpike_q WHERE "updated_at" < CURRENT_TIMESTAMP"#)), "{}", statements[1]);
    let missing = config.replace(r#""key.columns": "order_id""#, r#""key.columns": "id""#);
    let _db = Engine { query: db.borrow().query.clone(), ..Engine::new(Dialect::PostgreSql) }.install(10_000);
    let e = poll_error(&mut source(&missing, None, &clock()));
    assert!(e.message.contains(r#"the query has no column "id" (key.columns); its columns are order_id, email, updated_at"#), "{}", e.message);
}

#[test]
fn an_unreachable_database_is_retried_and_a_rejected_statement_fails_naming_both() {
    let db = orders().install(10_000);
    let clock = clock();
    let mut s = source(r#"{"mode": "incrementing"}"#, None, &clock);
    db.borrow_mut().fail = Some(SqlError::Unavailable("connection refused".into()));
    let e = poll_error(&mut s);
    assert_eq!(e.kind, ErrorKind::Retriable);
    assert!(e.message.contains("table public.orders") && e.message.contains("connection refused"), "{}", e.message);
    assert_eq!(field(&poll(&mut s, 100), "id"), ["1"], "the retried poll reads what the failed one would have");
    db.borrow_mut().fail = Some(SqlError::QueryFailed { code: "42501".into(), message: "permission denied for table orders".into() });
    clock.set(5_000);
    let e = poll_error(&mut s);
    assert_eq!(e.kind, ErrorKind::Fatal);
    assert!(
        e.message.starts_with("table public.orders: the database rejected the statement (42501): permission denied")
            && e.message.contains(r#"statement: SELECT * FROM "public"."orders" WHERE "id" > $1"#),
        "{}",
        e.message
    );
}

#[test]
fn tables_that_do_not_fit_the_mode_fail_at_the_first_poll_naming_table_and_column() {
    let nullable = |mut e: Engine| {
        e.tables[0].info.columns[1].nullable = true;
        e
    };
    let _db = nullable(events(Dialect::PostgreSql, &[])).install(10_000);
    let e = poll_error(&mut source(r#"{"mode": "timestamp", "timestamp.column.name": "ts"}"#, None, &clock()));
    assert_eq!(e.kind, ErrorKind::Fatal);
    assert!(e.message.contains(r#"column "ts" of table public.events may be NULL"#) && e.message.contains("validate.non.null: false"), "{}", e.message);
    let _db = nullable(events(Dialect::PostgreSql, &[])).install(10_000);
    assert!(testing::poll(&mut source(r#"{"mode": "timestamp", "timestamp.column.name": "TS", "validate.non.null": false}"#, None, &clock()), 100).is_ok(), "names match case-insensitively");

    let _db = Engine::new(Dialect::PostgreSql).table("public.logs", vec![col("line", ValueKind::Text, "text", false)], &[]).install(10_000);
    let e = poll_error(&mut source(r#"{"mode": "incrementing"}"#, None, &clock()));
    assert!(e.message.contains("table public.logs has no one-column integer primary key to use as the incrementing column: set incrementing.column.name"), "{}", e.message);
    let e = poll_error(&mut source(r#"{"mode": "bulk", "table.whitelist": ["lgos"]}"#, None, &clock()));
    assert!(e.message.contains(r#"table.whitelist: "lgos" matches no table the grant gives (public.logs)"#), "{}", e.message);
}

#[test]
fn create_reads_nothing_and_a_missing_grant_says_what_to_add() {
    testing::clear_sql();
    let mut s = source(r#"{"mode": "bulk"}"#, None, &clock());
    let e = poll_error(&mut s);
    assert_eq!(e.kind, ErrorKind::Fatal);
    assert!(e.message.contains("the connector grants no database: add `database:"), "{}", e.message);
}
