//! What objects hold: JSON lines (with keys and headers), bytes, gzip, Parquet, tombstones.

use std::io::Read as _;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::{json, Value};
use turnpike_sdk::testing::{self, TestRecord};

use super::{n, record, sink, texts};

#[test]
fn json_lines_can_carry_the_key_and_headers() {
    let mut s = sink(r#"{"store.kafka.keys": true, "store.kafka.headers": "true", "flush.size": 3}"#);
    let batch = [
        record(0, 0, "{\n  \"a\": 1\n}").with_key("{\"id\":5}").with_header("h", "x"),
        record(0, 1, "2").with_key("plain"),
        record(0, 2, "[1]"),
    ];
    assert!(testing::write(&mut s, batch).unwrap().is_empty());
    let text = texts().into_values().next().unwrap_or_default();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}"))).collect();
    assert_eq!(
        lines,
        [
            json!({"value": {"a": 1}, "key": {"id": 5}, "headers": {"h": "x"}}),
            json!({"value": 2, "key": "plain", "headers": {}}),
            json!({"value": [1], "key": null, "headers": {}}),
        ]
    );
}

#[test]
fn json_values_keep_their_digits_and_non_json_is_refused() {
    let mut s = sink(r#"{"flush.size": 2}"#);
    let rejected = testing::write(&mut s, [record(0, 0, "{\"big\": 123456789012345678901234567890}"), record(0, 1, "{oops"), record(0, 2, "7")]).unwrap();
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0].0, 1);
    assert!(rejected[0].1.message.contains("not JSON"), "{}", rejected[0].1);
    assert_eq!(texts().into_values().collect::<Vec<_>>(), ["{\"big\": 123456789012345678901234567890}\n7\n"]);
}

#[test]
fn tombstones_are_skipped_or_refused() {
    let tombstone = TestRecord { value: None, offset: Some(1), topic: "test".into(), ..TestRecord::default() };
    let mut s = sink(r#"{"flush.size": 2}"#);
    assert!(testing::write(&mut s, [n(0, 0), tombstone.clone(), n(0, 2)]).unwrap().is_empty());
    assert_eq!(texts().into_values().collect::<Vec<_>>(), ["{\"n\":0}\n{\"n\":2}\n"]);

    let mut s = sink(r#"{"flush.size": 2, "behavior.on.null.values": "fail"}"#);
    let rejected = testing::write(&mut s, [n(0, 0), tombstone]).unwrap();
    assert_eq!(rejected.len(), 1);
    assert!(rejected[0].1.message.contains("tombstone"), "{}", rejected[0].1);
}

#[test]
fn bytes_are_written_as_they_are_with_a_separator() {
    let mut s = sink(r#"{"format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat", "format.bytearray.separator": "|", "flush.size": 2}"#);
    testing::write(&mut s, [record(0, 0, "a"), record(0, 1, "not json\n")]).unwrap();
    assert_eq!(texts().into_iter().collect::<Vec<_>>(), [("topics/test/partition=0/test+0+0000000000.bin".to_owned(), "a|not json\n|".to_owned())]);
}

/// Hex text that compresses badly, so the object is streamed out in several chunks.
fn noise(seed: i64) -> String {
    let mut x = seed as u64 ^ 0x9E37_79B9_7F4A_7C15;
    (0..25)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            format!("{:08x}", x >> 32)
        })
        .collect()
}

#[test]
fn gzip_objects_decompress_to_the_records() {
    let mut s = sink(r#"{"s3.compression.type": "gzip", "flush.size": 4000}"#);
    let values: Vec<String> = (0..4000).map(|i| format!("\"{}\"", noise(i))).collect();
    let records: Vec<TestRecord> = values.iter().enumerate().map(|(i, v)| record(0, i as i64, v)).collect();
    assert!(testing::write(&mut s, records).unwrap().is_empty());
    let objects = testing::stored_objects();
    let compressed = &objects["topics/test/partition=0/test+0+0000000000.json.gz"];
    assert!(compressed.len() > crate::object::CHUNK, "large enough to be handed over in pieces: {}", compressed.len());
    let mut text = String::new();
    flate2::read::GzDecoder::new(&compressed[..]).read_to_string(&mut text).unwrap();
    assert_eq!(text.lines().collect::<Vec<_>>(), values);
}

/// The rows of a Parquet object, as (column, value) pairs sorted by column.
fn rows(data: &[u8]) -> Vec<Vec<(String, Field)>> {
    let reader = SerializedFileReader::new(bytes::Bytes::from(data.to_vec())).unwrap();
    let rows = reader.get_row_iter(None).unwrap();
    rows.map(|r| {
        let mut row: Vec<(String, Field)> = r.unwrap().get_column_iter().map(|(name, field)| (name.clone(), field.clone())).collect();
        row.sort_by(|a, b| a.0.cmp(&b.0));
        row
    })
    .collect()
}

/// A row as [`rows`] gives it.
fn cols(pairs: &[(&str, Field)]) -> Vec<(String, Field)> {
    let mut row: Vec<(String, Field)> = pairs.iter().map(|(n, f)| ((*n).to_owned(), f.clone())).collect();
    row.sort_by(|a, b| a.0.cmp(&b.0));
    row
}

#[test]
fn parquet_schemas_are_inferred_from_the_first_record() {
    let mut s = sink(r#"{"format.class": "parquet", "flush.size": 3}"#);
    let batch = [
        record(0, 0, r#"{"id": 1, "name": "a", "price": 1.5, "ok": true, "tags": ["x"]}"#),
        record(0, 1, r#"{"id": "four"}"#),
        record(0, 2, r#"{"id": 2, "name": null, "price": 2, "ok": false}"#),
        record(0, 3, r#"{"id": 5, "extra": 1}"#),
        record(0, 4, r#"{"price": 3.25, "tags": {"k": 1}}"#),
    ];
    let rejected = testing::write(&mut s, batch).unwrap();
    assert_eq!(rejected.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 3]);
    assert!(rejected[0].1.message.contains("does not fit the column's type long"), "{}", rejected[0].1);
    assert!(rejected[1].1.message.contains("`extra` is not in this object's schema"), "{}", rejected[1].1);
    let objects = testing::stored_objects();
    let data = &objects["topics/test/partition=0/test+0+0000000000.snappy.parquet"];
    use Field::{Bool, Double, Long, Null, Str};
    assert_eq!(
        rows(data),
        [
            cols(&[("id", Long(1)), ("name", Str("a".into())), ("ok", Bool(true)), ("price", Double(1.5)), ("tags", Str("[\"x\"]".into()))]),
            cols(&[("id", Long(2)), ("name", Null), ("ok", Bool(false)), ("price", Double(2.0)), ("tags", Null)]),
            cols(&[("id", Null), ("name", Null), ("ok", Null), ("price", Double(3.25)), ("tags", Str("{\"k\":1}".into()))]),
        ]
    );
}

#[test]
fn parquet_takes_a_configured_schema_and_the_key_and_headers() {
    let mut s = sink(
        r#"{"format.class": "parquet", "parquet.codec": "none", "flush.size": 2, "store.kafka.keys": true, "store.kafka.headers": true,
            "parquet.schema": [{"name": "id", "type": "int"}, {"name": "score", "type": "float"}]}"#,
    );
    let batch = [
        record(0, 0, r#"{"id": 1, "score": 0.5, "ignored": "x"}"#).with_key("k1").with_header("h", "v"),
        record(0, 1, r#"{"id": 3000000000}"#),
        record(0, 2, r#"{"id": 2}"#),
    ];
    let rejected = testing::write(&mut s, batch).unwrap();
    assert_eq!(rejected.iter().map(|r| r.0).collect::<Vec<_>>(), [1], "3,000,000,000 does not fit an int");
    let objects = testing::stored_objects();
    let data = &objects["topics/test/partition=0/test+0+0000000000.parquet"];
    use Field::{Float, Int, Null, Str};
    assert_eq!(
        rows(data),
        [
            cols(&[("id", Int(1)), ("score", Float(0.5)), ("_key", Str("k1".into())), ("_headers", Str("{\"h\":\"v\"}".into()))]),
            cols(&[("id", Int(2)), ("score", Null), ("_key", Null), ("_headers", Str("{}".into()))]),
        ]
    );
}
