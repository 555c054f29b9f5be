//! Configuration problems, in the user's words and under the key to fix.

use turnpike_sdk::testing;

use super::{refused, sink};
use crate::S3Sink;

/// Key and message of the refusal of `config`.
fn problem(config: &str) -> (String, String) {
    let e = refused(config);
    (e.key.unwrap_or_default(), e.message)
}

#[test]
fn a_bad_choice_names_the_key_and_the_choices() {
    let (key, message) = problem(r#"{"format.class": "xml"}"#);
    assert_eq!(key, "format.class");
    assert_eq!(message, r#""xml" is not one of json, bytes, parquet"#);
    assert!(problem(r#"{"format.class": "io.confluent.connect.s3.format.avro.AvroFormat"}"#).1.contains("Avro is not supported"));
    assert_eq!(problem(r#"{"partitioner.class": "hourly"}"#).0, "partitioner.class");
    assert_eq!(problem(r#"{"timestamp.extractor": "Kafka"}"#).0, "timestamp.extractor");
    assert_eq!(problem(r#"{"behavior.on.null.values": "write"}"#).0, "behavior.on.null.values");
    assert_eq!(problem(r#"{"s3.compression.type": "zstd"}"#).0, "s3.compression.type");
}

#[test]
fn every_problem_is_reported_at_once() {
    let (key, message) = problem(r#"{"flush.size": 0, "timezone": "Europe/Paris", "format.class": "xml"}"#);
    assert_eq!(key, "flush.size");
    assert!(message.starts_with("0 is out of range: 1 to 10000000"), "{message}");
    assert!(message.contains("timezone: \"Europe/Paris\" is not supported"), "{message}");
    assert!(message.contains("IANA"), "{message}");
    assert!(message.contains("format.class: \"xml\""), "{message}");
}

#[test]
fn a_confluent_config_is_accepted_with_numbers_as_text() {
    let config = r#"{
        "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
        "path.format": "'year'=YYYY/'month'=MM/'day'=dd", "partition.duration.ms": "86400000",
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat", "flush.size": "500",
        "rotate.interval.ms": -1, "rotate.schedule.interval.ms": "3600000", "timezone": "UTC",
        "timestamp.extractor": "Wallclock", "store.kafka.keys": "false"
    }"#;
    let s: S3Sink = testing::create_sink(config).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.settings.flush_size, 500);
    assert_eq!(s.settings.rotate_interval_ms, None);
    assert_eq!(s.settings.schedule_interval_ms, Some(3_600_000));
    let s = sink(r#"{"partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner", "partition.field.name": "a, b.c"}"#);
    assert!(matches!(&s.settings.partitioner, crate::partitioner::Partitioner::Field(f) if f.len() == 2));
}

#[test]
fn options_that_need_others_say_so() {
    assert_eq!(problem(r#"{"partitioner.class": "time", "partition.duration.ms": 3600000}"#).0, "path.format");
    assert_eq!(problem(r#"{"partitioner.class": "time", "path.format": "YYYY"}"#).0, "partition.duration.ms");
    assert_eq!(problem(r#"{"partitioner.class": "field"}"#).0, "partition.field.name");
    assert_eq!(problem(r#"{"timestamp.extractor": "RecordField"}"#).0, "timestamp.field");
    let (key, message) = problem(r#"{"path.format": "YYYY"}"#);
    assert_eq!((key.as_str(), message.as_str()), ("path.format", "only used with partitioner.class time; remove it"));
    assert_eq!(problem(r#"{"format.class": "parquet", "s3.compression.type": "gzip"}"#).0, "s3.compression.type");
    assert_eq!(problem(r#"{"format.class": "bytes", "store.kafka.keys": true}"#).0, "store.kafka.keys");
    assert_eq!(problem(r#"{"parquet.codec": "snappy"}"#).0, "parquet.codec");
}

#[test]
fn values_are_checked() {
    assert_eq!(problem(r#"{"flush.size": "many"}"#), ("flush.size".into(), "\"many\" is not a whole number".into()));
    assert_eq!(problem(r#"{"rotate.interval.ms": 0}"#).0, "rotate.interval.ms");
    assert_eq!(problem(r#"{"topics.dir": "a//b"}"#).0, "topics.dir");
    assert_eq!(problem(r#"{"topics.dir": 5}"#).0, "topics.dir");
    assert_eq!(problem(r#"{"partitioner.class": "time", "path.format": "YYYY//MM", "partition.duration.ms": 1}"#).0, "path.format");
    assert!(problem(r#"{"partitioner.class": "time", "path.format": "YYYY/EEE", "partition.duration.ms": 1}"#).1.contains("`EEE` is not supported"));
    assert_eq!(problem(r#"{"format.class": "parquet", "parquet.schema": [{"name": "a", "type": "decimal"}]}"#).0, "parquet.schema[0].type");
    assert_eq!(problem(r#"{"format.class": "parquet", "parquet.schema": [{"name": "a", "type": "int"}, {"name": "a", "type": "long"}]}"#).0, "parquet.schema[1].name");
    assert_eq!(problem(r#"{"format.class": "parquet", "store.kafka.keys": true, "parquet.schema": [{"name": "_key", "type": "string"}]}"#).0, "parquet.schema");
    assert_eq!(problem(r#"{"partitioner.class": "field", "partition.field.name": ["a", "b..c"]}"#).0, "partition.field.name");
}

#[test]
fn confluent_connection_options_point_to_the_storage_grant() {
    let (key, message) = problem(r#"{"s3.bucket.name": "my-bucket"}"#);
    assert_eq!(key, "s3.bucket.name");
    assert!(message.contains("`storage` grant"), "{message}");
    assert!(problem(r#"{"tasks.max": 4}"#).1.contains("Kafka Connect setting"));
    let (key, message) = problem(r#"{"flush.sise": 4}"#);
    assert_eq!(key, "flush.sise");
    assert!(message.starts_with("unknown option; the options are topics.dir, flush.size"), "{message}");
}
