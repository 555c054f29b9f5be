//! Timestamp mode: rows sharing a timestamp across a batch boundary are never lost (the bug of
//! Kafka Connect's JDBC source), the database clock bounds every read, `timestamp.initial`.

use turnpike_sdk::sql::{Dialect, Param};
use turnpike_sdk::ErrorKind;

use super::engine::NOW;
use super::{clock, events, field, poll, poll_error, source, stored, text};
use crate::time;

const T1: &str = "2026-11-30T10:00:00";
const T2: &str = "2026-11-30T10:00:01.5";
const T3: &str = "2026-11-30T10:00:02";
const T4: &str = "2026-11-30T10:00:03";

const TIMESTAMP: &str = r#"{"mode": "timestamp", "timestamp.column.name": "ts", "batch.max.rows": 2}"#;

#[test]
fn rows_sharing_a_timestamp_across_a_batch_boundary_are_all_read_even_across_restarts() {
    // Batches of 2 over T1 T2 T2 T2 T3 T3 T4: a reader that ends a batch at its second row
    // and continues after its timestamp would skip two of the T2 rows.
    let _db = events(Dialect::PostgreSql, &[T1, T2, T2, T2, T3, T3, T4]).install(10_000);
    let clock = clock();
    let mut position: Option<Vec<u8>> = None;
    let mut seen = Vec::new();
    for _ in 0..6 {
        // A restart after every poll: each source starts from the position the host stored.
        let mut s = source(TIMESTAMP, position.as_deref(), &clock);
        let polled = poll(&mut s, 100);
        seen.extend(field(&polled, "id"));
        if let Some(p) = stored(&polled) {
            position = Some(p);
        }
    }
    assert_eq!(seen, ["1", "2", "3", "4", "5", "6", "7"]);
    assert_eq!(position.map(|p| text(&p)).as_deref(), Some(r#"{"v":1,"mode":"timestamp","tables":{"public.events":{"ts":"2026-11-30T10:00:03"}}}"#));
}

#[test]
fn a_batch_ends_before_the_last_timestamp_when_the_next_row_shares_it() {
    let db = events(Dialect::PostgreSql, &[T1, T2, T2, T3]).install(10_000);
    let mut s = source(TIMESTAMP, None, &clock());
    let first = poll(&mut s, 100);
    assert_eq!(field(&first, "id"), ["1"], "T2 continues past the batch: it waits for the next read");
    assert!(!db.borrow().log[0].0.contains(r#""ts" >"#), "no lower bound without a position: {:?}", db.borrow().log[0]);
    let second = poll(&mut s, 100);
    assert_eq!(field(&second, "id"), ["2", "3"]);
    let (statement, params) = db.borrow().log.last().cloned().expect("a statement");
    assert!(statement.starts_with(r#"SELECT * FROM "public"."events" WHERE "ts" > $1 AND "ts" < CURRENT_TIMESTAMP"#), "{statement}");
    assert_eq!(params[0], Param::Text(T1.into()), "the cursor goes back exactly as the database gave it");
    assert_eq!(field(&poll(&mut s, 100), "id"), ["4"]);
}

#[test]
fn rows_of_one_timestamp_are_read_at_once_and_positioned_only_at_the_last() {
    let _db = events(Dialect::PostgreSql, &[T1, T1, T1, T1, T1, T2]).install(10_000);
    let mut s = source(TIMESTAMP, None, &clock());
    // The host takes 2 records per poll; the five T1 rows come in three polls.
    let polls: Vec<_> = (0..4).map(|_| poll(&mut s, 2)).collect();
    let ids: Vec<Vec<String>> = polls.iter().map(|p| field(p, "id")).collect();
    assert_eq!(ids, [vec!["1", "2"], vec!["3", "4"], vec!["5"], vec!["6"]]);
    let positions: Vec<Vec<Option<String>>> = polls.iter().map(|p| p.iter().map(|r| r.position.as_deref().map(text)).collect()).collect();
    let at = |ts: &str| Some(format!(r#"{{"v":1,"mode":"timestamp","tables":{{"public.events":{{"ts":"{ts}"}}}}}}"#));
    assert_eq!(positions, [vec![None, None], vec![None, None], vec![at(T1)], vec![at(T2)]], "a crash inside T1 reads all of T1 again");
}

#[test]
fn more_rows_at_one_timestamp_than_one_query_returns_fail_with_the_fix() {
    let _db = events(Dialect::PostgreSql, &[T1, T1, T1, T1, T1]).install(3);
    let mut s = source(TIMESTAMP, None, &clock());
    let e = poll_error(&mut s);
    assert_eq!(e.kind, ErrorKind::Fatal);
    assert!(e.message.contains("table public.events: more than 3 rows share the timestamp") && e.message.contains("use mode timestamp+incrementing"), "{}", e.message);
}

#[test]
fn a_grant_cap_below_the_batch_never_cuts_a_timestamp() {
    // The grant returns 3 rows where 5 are asked: the third row's timestamp may continue.
    let _db = events(Dialect::PostgreSql, &[T1, T2, T2, T2, T3]).install(3);
    let config = r#"{"mode": "timestamp", "timestamp.column.name": "ts", "batch.max.rows": 4}"#;
    let mut s = source(config, None, &clock());
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.extend(field(&poll(&mut s, 100), "id"));
    }
    assert_eq!(seen, ["1", "2", "3", "4", "5"]);
}

#[test]
fn the_delay_holds_back_rows_younger_than_it_by_the_database_clock() {
    let young = time::format_ms(NOW - 2_000, turnpike_sdk::sql::ValueKind::Timestamp);
    let db = events(Dialect::PostgreSql, &[T1, &young]).install(10_000);
    let clock = clock();
    let config = r#"{"mode": "timestamp", "timestamp.column.name": "ts", "timestamp.delay.interval.ms": 5000}"#;
    let mut s = source(config, None, &clock);
    assert_eq!(field(&poll(&mut s, 100), "id"), ["1"]);
    assert!(db.borrow().log.iter().all(|(_, params)| params.contains(&Param::Integer(5000))), "the delay is a parameter");
    db.borrow_mut().now_ms += 10_000;
    clock.set(5_000);
    assert_eq!(field(&poll(&mut s, 100), "id"), ["2"]);
}

#[test]
fn timestamp_initial_starts_at_the_database_clock_or_an_epoch_time() {
    let (old, new) = (time::format_ms(NOW - 3_600_000, turnpike_sdk::sql::ValueKind::Timestamp), time::format_ms(NOW + 1_000, turnpike_sdk::sql::ValueKind::Timestamp));
    let db = events(Dialect::PostgreSql, &[&old, &new]).install(10_000);
    let clock = clock();
    let mut s = source(r#"{"mode": "timestamp", "timestamp.column.name": "ts", "timestamp.initial": -1}"#, None, &clock);
    assert!(poll(&mut s, 100).is_empty(), "the old row is before now, the new one not yet below the clock");
    let log = db.borrow().log.clone();
    assert_eq!(log[0].0, "SELECT CURRENT_TIMESTAMP AS turnpike_now");
    assert_eq!(log[1].1[0], Param::Text("2026-12-01T00:00:00.000".into()), "the clock's instant, fitted to a column without a zone");
    db.borrow_mut().now_ms += 2_000;
    clock.set(5_000);
    assert_eq!(field(&poll(&mut s, 100), "id"), ["2"]);

    let half_hour_ago = NOW - 1_800_000;
    let mut at = source(&format!(r#"{{"mode": "timestamp", "timestamp.column.name": "ts", "timestamp.initial": {half_hour_ago}}}"#), None, &clock);
    assert_eq!(field(&poll(&mut at, 100), "id"), ["2"], "only rows at or after the initial time");
}
