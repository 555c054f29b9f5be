//! Configuration problems, in the user's words, under the key to fix, all at once.

use turnpike_sdk::testing;

use super::{clock, refused, source};
use crate::config::{Initial, Mode, NumericMapping, TableFilter, TimestampMapping};
use crate::SqlSource;

/// Key and message of the refusal of `config`.
fn problem(config: &str) -> (String, String) {
    let e = refused(config);
    (e.key.unwrap_or_default(), e.message)
}

#[test]
fn a_bad_mode_names_the_key_and_the_choices() {
    let e = refused(r#"{"mode": "scramble"}"#);
    assert_eq!(e.to_string(), r#"mode: "scramble" is not one of bulk, incrementing, timestamp, timestamp+incrementing"#);
    assert_eq!(problem("{}"), ("mode".into(), "required: one of bulk, incrementing, timestamp, timestamp+incrementing".into()));
}

#[test]
fn every_problem_is_reported_at_once() {
    let (key, message) = problem(
        r#"{"mode": "timestamp", "batch.max.rows": 0, "table.whitelist": "a", "table.blacklist": "b",
            "connection.url": "jdbc:postgresql://db/shop", "numeric.mapping": "precise", "colour": "red"}"#,
    );
    assert_eq!(key, "colour", "unknown keys first, in name order");
    for part in [
        "unknown option; the options are mode, query",
        "connection.url: the database, its user and password are the connector's `database` grant",
        "table.blacklist: give table.whitelist or table.blacklist, not both",
        "timestamp.column.name: required with mode timestamp",
        "batch.max.rows: 0 is out of range: 1 to 1000000",
        r#"numeric.mapping: "precise" is not one of none, best_fit"#,
    ] {
        assert!(message.contains(part), "{part:?} missing from {message}");
    }
}

#[test]
fn a_kafka_connect_config_is_accepted_with_numbers_and_booleans_as_text() {
    let config = r#"{
        "mode": "timestamp+incrementing", "timestamp.column.name": "updated_at, created_at",
        "incrementing.column.name": "id", "table.whitelist": "orders,customer_*",
        "poll.interval.ms": "10000", "batch.max.rows": "500", "validate.non.null": "false",
        "timestamp.delay.interval.ms": "2000", "timestamp.initial": "-1", "topic.prefix": "shop-",
        "numeric.mapping": "best_fit", "timestamp.mapping": "epoch_ms"
    }"#;
    let s: SqlSource = source(config, None, &clock());
    let c = &s.settings;
    assert_eq!(c.mode, Mode::TimestampIncrementing);
    assert_eq!(c.timestamp_columns, ["updated_at", "created_at"]);
    assert_eq!(c.incrementing_column.as_deref(), Some("id"));
    assert_eq!(c.tables, TableFilter::Include(vec!["orders".into(), "customer_*".into()]));
    assert_eq!((c.poll_interval_ms, c.batch_max_rows, c.delay_ms), (10_000, 500, 2_000));
    assert_eq!((c.validate_non_null, c.initial, c.topic_prefix.as_deref()), (false, Some(Initial::Now), Some("shop-")));
    assert_eq!((c.numeric, c.timestamps), (NumericMapping::BestFit, TimestampMapping::EpochMs));
    let defaults: SqlSource = source(r#"{"mode": "bulk", "table.blacklist": ["audit_*"]}"#, None, &clock());
    let d = &defaults.settings;
    assert_eq!((d.poll_interval_ms, d.table_poll_interval_ms, d.batch_max_rows, d.validate_non_null), (5_000, 60_000, 1_000, true));
    assert_eq!((d.numeric, d.timestamps, d.initial), (NumericMapping::None, TimestampMapping::Iso8601, None));
}

#[test]
fn options_that_need_or_exclude_others_say_so() {
    let query = r#""query": "SELECT * FROM orders""#;
    assert_eq!(problem(&format!(r#"{{"mode": "bulk", {query}, "table.whitelist": ["orders"]}}"#)).0, "table.whitelist");
    let (key, message) = problem(&format!(r#"{{"mode": "incrementing", {query}}}"#));
    assert_eq!((key.as_str(), message.as_str()), ("incrementing.column.name", "required with mode incrementing and a query (a query has no primary key to default to)"));
    assert_eq!(problem(r#"{"mode": "bulk", "key.columns": ["id"]}"#), ("key.columns".into(), "only used with query (a table's key is its primary key); remove it".into()));
    assert_eq!(problem(r#"{"mode": "bulk", "timestamp.column.name": "ts"}"#).0, "timestamp.column.name");
    assert_eq!(problem(r#"{"mode": "incrementing", "timestamp.initial": 0}"#).0, "timestamp.initial");
    assert_eq!(problem(r#"{"mode": "timestamp", "timestamp.column.name": "ts", "timestamp.initial": -5}"#).0, "timestamp.initial");
    assert_eq!(problem(r#"{"mode": "bulk", "topic.prefix": "shop orders."}"#).0, "topic.prefix");
    assert_eq!(problem(r#"{"mode": "bulk", "table.whitelist": []}"#).0, "table.whitelist");
    assert_eq!(problem(r#"{"mode": "incrementing", "incrementing.column.name": "a,b"}"#).0, "incrementing.column.name");
    assert!(problem(r#"{"mode": "bulk", "db.timezone": "Europe/Paris"}"#).1.contains("taken as UTC"));
}

#[test]
fn a_trailing_semicolon_does_not_break_the_wrapped_query() {
    let s: SqlSource = source(r#"{"mode": "bulk", "query": "SELECT * FROM orders ;\n"}"#, None, &clock());
    assert_eq!(s.settings.query.as_deref(), Some("SELECT * FROM orders"));
}

#[test]
fn a_position_of_another_mode_is_refused_at_create() {
    let stored = br#"{"v":1,"mode":"timestamp","tables":{"public.orders":{"ts":"2026-01-01T00:00:00"}}}"#;
    let e = testing::create_source::<SqlSource>(r#"{"mode": "incrementing"}"#, Some(stored)).err().expect("refused");
    assert_eq!(e.key.as_deref(), Some("mode"));
    assert!(e.message.contains("reset the connector's stored source position") && e.message.contains("set mode back to timestamp"), "{}", e.message);
    let ok = testing::create_source::<SqlSource>(r#"{"mode": "timestamp", "timestamp.column.name": "ts"}"#, Some(stored));
    assert!(ok.is_ok(), "the same mode continues");
}
