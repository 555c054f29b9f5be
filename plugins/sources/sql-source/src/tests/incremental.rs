//! Incrementing, timestamp+incrementing and bulk: what each reads, when it waits, how a
//! restart resumes, and a grant cap that must not end a read early.

use turnpike_sdk::sql::{Dialect, Param, ValueKind};

use super::engine::{col, Engine};
use super::{clock, events, field, poll, source, stored, text};

fn keyed(dialect: Dialect, name: &str, ids: &[&str]) -> Engine {
    let mut e = Engine::new(dialect).table(name, vec![col("id", ValueKind::Integer, "int8", false), col("v", ValueKind::Text, "text", true)], &["id"]);
    for id in ids {
        e.insert(name, &[Some(id), Some("x")]);
    }
    e
}

#[test]
fn incrementing_reads_new_rows_after_the_interval_and_resumes_after_a_restart() {
    let db = keyed(Dialect::PostgreSql, "public.orders", &["1", "2", "3"]).install(10_000);
    let clock = clock();
    let mut s = source(r#"{"mode": "incrementing"}"#, None, &clock);
    let first = poll(&mut s, 100);
    assert_eq!(field(&first, "id"), ["1", "2", "3"]);
    assert_eq!(db.borrow().statements()[0], r#"SELECT * FROM "public"."orders" WHERE "id" IS NOT NULL ORDER BY "id" LIMIT 100"#, "the primary key is the default column");
    db.borrow_mut().insert("public.orders", &[Some("4"), None]);
    let sent = db.borrow().log.len();
    assert!(poll(&mut s, 100).is_empty(), "caught up: not queried again before poll.interval.ms");
    assert_eq!(db.borrow().log.len(), sent);
    clock.set(5_000);
    let next = poll(&mut s, 100);
    assert_eq!(field(&next, "id"), ["4"]);
    let (statement, params) = db.borrow().log[sent].clone();
    assert_eq!((statement.as_str(), params), (r#"SELECT * FROM "public"."orders" WHERE "id" > $1 ORDER BY "id" LIMIT 100"#, vec![Param::Text("3".into())]));
    let position = stored(&next).expect("a position");
    assert_eq!(text(&position), r#"{"v":1,"mode":"incrementing","tables":{"public.orders":{"inc":"4"}}}"#);
    let mut resumed = source(r#"{"mode": "incrementing"}"#, Some(&position), &clock);
    assert!(poll(&mut resumed, 100).is_empty(), "a restart does not read again what Kafka has");
}

#[test]
fn timestamp_incrementing_resumes_inside_a_timestamp_without_loss_or_repeat() {
    let t = "2026-11-30T10:00:00.123456";
    let _db = events(Dialect::PostgreSql, &[t, t, t, "2026-11-30T10:00:01"]).install(10_000);
    let config = r#"{"mode": "timestamp+incrementing", "timestamp.column.name": "ts", "batch.max.rows": 2}"#;
    let clock = clock();
    let mut s = source(config, None, &clock);
    let first = poll(&mut s, 100);
    assert_eq!(field(&first, "id"), ["1", "2"]);
    let position = stored(&first).expect("a position");
    assert_eq!(text(&position), format!(r#"{{"v":1,"mode":"timestamp+incrementing","tables":{{"public.events":{{"ts":"{t}","inc":"2"}}}}}}"#));
    let mut resumed = source(config, Some(&position), &clock);
    let rest: Vec<String> = (0..3).flat_map(|_| field(&poll(&mut resumed, 100), "id")).collect();
    assert_eq!(rest, ["3", "4"]);
}

#[test]
fn every_record_carries_every_tables_cursor() {
    let mut e = keyed(Dialect::PostgreSql, "public.a", &["1", "2"]);
    e.tables.extend(keyed(Dialect::PostgreSql, "public.b", &["7"]).tables);
    let db = e.install(10_000);
    let clock = clock();
    let mut s = source(r#"{"mode": "incrementing"}"#, None, &clock);
    assert_eq!(field(&poll(&mut s, 100), "id"), ["1", "2"], "one table per poll");
    let b = poll(&mut s, 100);
    assert_eq!(field(&b, "id"), ["7"]);
    assert_eq!(b[0].record.headers, [("turnpike.table".to_owned(), b"public.b".to_vec())]);
    let position = stored(&b).expect("a position");
    assert_eq!(text(&position), r#"{"v":1,"mode":"incrementing","tables":{"public.a":{"inc":"2"},"public.b":{"inc":"7"}}}"#);
    let mut resumed = source(r#"{"mode": "incrementing"}"#, Some(&position), &clock);
    let sent = db.borrow().log.len();
    assert!(poll(&mut resumed, 100).is_empty());
    let params: Vec<Vec<Param>> = db.borrow().log[sent..].iter().map(|(_, p)| p.clone()).collect();
    assert_eq!(params, [vec![Param::Text("2".into())], vec![Param::Text("7".into())]], "both tables continue after their cursor");
}

#[test]
fn bulk_reads_the_table_in_pages_waits_then_starts_over() {
    let db = keyed(Dialect::PostgreSql, "public.items", &["1", "2", "3", "4", "5"]).install(10_000);
    let clock = clock();
    let config = r#"{"mode": "bulk", "batch.max.rows": 2, "poll.interval.ms": 1000}"#;
    let mut s = source(config, None, &clock);
    let pages: Vec<Vec<String>> = (0..4).map(|_| field(&poll(&mut s, 100), "id")).collect();
    assert_eq!(pages, [vec!["1", "2"], vec!["3", "4"], vec!["5"], vec![]]);
    let statements = db.borrow().statements();
    assert_eq!(statements[0], r#"SELECT * FROM "public"."items" ORDER BY "id" LIMIT 2"#);
    assert_eq!(statements[1], r#"SELECT * FROM "public"."items" WHERE "id" > $1 ORDER BY "id" LIMIT 2"#);
    assert_eq!(statements.len(), 3, "a short page after full ones ends the pass without a probe; then it waits");
    clock.set(1_000);
    assert_eq!(field(&poll(&mut s, 100), "id"), ["1", "2"], "the next pass starts from the first row");
}

#[test]
fn bulk_positions_resume_the_pass_and_forget_it_when_done() {
    let _db = keyed(Dialect::PostgreSql, "public.items", &["1", "2", "3"]).install(10_000);
    let clock = clock();
    let config = r#"{"mode": "bulk", "batch.max.rows": 2}"#;
    let first = poll(&mut source(config, None, &clock), 100);
    let position = stored(&first).expect("a position");
    assert_eq!(text(&position), r#"{"v":1,"mode":"bulk","tables":{"public.items":{"after":"2"}}}"#);
    let rest = poll(&mut source(config, Some(&position), &clock), 100);
    assert_eq!(field(&rest, "id"), ["3"]);
    assert_eq!(stored(&rest).map(|p| text(&p)).as_deref(), Some(r#"{"v":1,"mode":"bulk","tables":{}}"#));
}

#[test]
fn bulk_without_a_one_column_key_pages_by_offset() {
    let mut e = Engine::new(Dialect::MySql).table("logs", vec![col("line", ValueKind::Text, "varchar", false)], &[]);
    for line in ["a", "b", "c"] {
        e.insert("logs", &[Some(line)]);
    }
    let db = e.install(10_000);
    let clock = clock();
    let config = r#"{"mode": "bulk", "batch.max.rows": 2}"#;
    let first = poll(&mut source(config, None, &clock), 100);
    assert_eq!(field(&first, "line"), ["a", "b"]);
    assert!(first.iter().all(|p| p.record.key.is_none()), "no key without a primary key");
    let position = stored(&first).expect("a position");
    assert_eq!(text(&position), r#"{"v":1,"mode":"bulk","tables":{"logs":{"offset":2}}}"#);
    let rest = poll(&mut source(config, Some(&position), &clock), 100);
    assert_eq!(field(&rest, "line"), ["c"]);
    assert!(db.borrow().statements().contains(&"SELECT * FROM `logs` LIMIT 2 OFFSET 2".to_owned()));
}

#[test]
fn a_grant_cap_below_the_page_size_does_not_end_the_pass_early() {
    // The grant returns 2 rows where 3 are asked: "fewer than asked" must not mean "done".
    let _db = keyed(Dialect::PostgreSql, "public.items", &["1", "2", "3", "4", "5"]).install(2);
    let clock = clock();
    let mut s = source(r#"{"mode": "bulk", "batch.max.rows": 3}"#, None, &clock);
    let pass: Vec<String> = (0..3).flat_map(|_| field(&poll(&mut s, 100), "id")).collect();
    assert_eq!(pass, ["1", "2", "3", "4", "5"]);
    assert!(poll(&mut s, 100).is_empty(), "then the pass is over");
}

#[test]
fn mysql_statements_use_backticks_and_question_marks() {
    let db = keyed(Dialect::MySql, "orders", &["1"]).install(10_000);
    let mut s = source(r#"{"mode": "incrementing", "table.whitelist": "orders"}"#, None, &clock());
    assert_eq!(field(&poll(&mut s, 100), "id"), ["1"]);
    let statements = db.borrow().statements();
    assert_eq!(statements[0], "SELECT * FROM `orders` WHERE `id` IS NOT NULL ORDER BY `id` LIMIT 100");
    assert_eq!(statements[1], "SELECT 1 FROM `orders` WHERE `id` > ? LIMIT 1", "a short first result is checked once");
}
