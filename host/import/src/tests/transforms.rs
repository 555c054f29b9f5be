//! The SMT chain and its predicates: every SMT of the spec, one Turnpike lacks, and
//! Confluent's Filter, whose condition joins the step's predicate only where that keeps its
//! meaning.

use serde_json::json;

use super::{checked, has_note, host_problems, reason, unmapped_options};

const DEBEZIUM_PREDICATES: &str = include_str!("../../tests/fixtures/debezium-unwrap-with-predicates.json");
const CONFLUENT_FILTER: &str = include_str!("../../tests/fixtures/confluent-filter.json");

#[test]
fn an_smt_turnpike_lacks_and_predicates_on_other_steps() {
    let imported = checked(DEBEZIUM_PREDICATES);
    let want = json!({
        "name": "customers-jdbc-sink",
        "topics": ["dbserver1.inventory.customers"],
        "transforms": [
            {"plugin": "filter", "config": {}, "predicate": {"tombstone": true}},
            {"plugin": "mask-field", "config": {"on": "value", "fields": ["ssn", "phone"], "replacement": "****"}, "predicate": {"has_header": "x-internal", "negate": true}},
            {"plugin": "regex-router", "config": {"regex": "dbserver1\\.inventory\\.(.*)", "replacement": "$1"}}
        ]
    });
    assert_eq!(imported.connector, want, "{:#}", imported.connector);
    assert_eq!(
        reason(&imported, "transforms.unwrap.type"),
        "io.debezium.transforms.ExtractNewRecordState: no Turnpike transform does this (extract-field with field `after` keeps the row after a change, without the delete handling); \
the step is left out and the chain runs without it"
    );
    assert_eq!(reason(&imported, "transforms.unwrap.drop.tombstones"), "belongs to the step `unwrap`, which is left out");
    assert!(reason(&imported, "transforms.flag.predicate").starts_with("the predicate `custom` is com.example.kafka.IsMigratedPredicate, which Turnpike has no condition for"));
    assert_eq!(reason(&imported, "predicates.custom.type"), "no step that was carried over uses the predicate `custom`");
    assert_eq!(reason(&imported, "predicates.unused.pattern"), "no step that was carried over uses the predicate `unused`");
    assert!(reason(&imported, "connector.class").starts_with("io.confluent.connect.jdbc.JdbcSinkConnector: Turnpike has no plugin converted from it"));
    assert!(reason(&imported, "connection.password").starts_with("an option of io.confluent.connect.jdbc.JdbcSinkConnector"));
    assert!(has_note(&imported, "choose the connector's source or sink plugin by hand"));
    assert!(has_note(&imported, "the step `unwrap` (io.debezium.transforms.ExtractNewRecordState) is left out"));
    let mapped: Vec<(&str, &str)> = imported.mapped.iter().map(|m| (m.option.as_str(), m.to.as_str())).collect();
    assert!(mapped.contains(&("transforms.mask.negate", "transforms[1].predicate.negate")), "{mapped:?}");
    assert!(mapped.contains(&("predicates.internal.name", "transforms[1].predicate")), "{mapped:?}");
    // Without a sink plugin the host reads it as a transform connector, which needs an output.
    assert_eq!(host_problems(&imported.connector), ["connector.output_topic"]);
}

#[test]
fn confluent_filter_conditions_become_json_path_predicates() {
    let imported = checked(CONFLUENT_FILTER);
    let transforms = json!([
        {"plugin": "filter", "config": {}, "predicate": {"json_path": "$[?(@.total > 1000)]", "negate": true}},
        {"plugin": "filter", "config": {}, "predicate": {"topic_matches": "orders", "json_path": "$[?(@.customer.test == true)]"}}
    ]);
    assert_eq!(imported.connector["transforms"], transforms, "{:#}", imported.connector);
    assert_eq!(
        imported.connector["sink"],
        json!({"plugin": "s3-sink", "config": {
            "flush.size": 500,
            "format.class": "parquet",
            "parquet.codec": "snappy",
            "partitioner.class": "field",
            "partition.field.name": ["region", "country"],
            "behavior.on.null.values": "fail"
        }})
    );
    assert_eq!(imported.connector["storage"], json!({"bucket": "acme-orders", "region": "us-west-2"}));
    assert_eq!(unmapped_options(&imported), ["value.converter", "value.converter.schema.registry.url"]);
    assert!(has_note(&imported, "Schema Registry's binary form"));
    assert!(has_note(&imported, "storage.region is us-west-2"));
    let mapped: Vec<&str> = imported.mapped.iter().map(|m| m.option.as_str()).collect();
    assert!(mapped.contains(&"transforms.onlyBig.missing.or.null.behavior"));
    assert_eq!(host_problems(&imported.connector), Vec::<String>::new());
}

#[test]
fn an_include_filter_under_a_predicate_is_left_out_not_changed() {
    let text = r#"{"name": "x", "connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": "t", "s3.bucket.name": "bkt",
        "transforms": "f", "transforms.f.type": "io.confluent.connect.transforms.Filter$Value",
        "transforms.f.filter.condition": "$.a", "transforms.f.filter.type": "include", "transforms.f.predicate": "p",
        "predicates": "p", "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey", "predicates.p.name": "h"}"#;
    let imported = checked(text);
    assert_eq!(imported.connector.get("transforms"), None);
    assert!(reason(&imported, "transforms.f.predicate").contains("cannot be joined with the step's predicate"));
    assert!(has_note(&imported, "behavior.on.null.values is written as fail"));
}

#[test]
fn every_smt_of_the_spec_converts() {
    let text = r#"{"name": "all", "topics": "in", "transforms": "c,d,e,f,fl,hf,ho,i,ih,m,r,rf,s,tc,tr,v",
        "transforms.c.type": "org.apache.kafka.connect.transforms.Cast$Key", "transforms.c.spec": "int64",
        "transforms.d.type": "org.apache.kafka.connect.transforms.DropHeaders", "transforms.d.headers": "trace-*,debug",
        "transforms.e.type": "org.apache.kafka.connect.transforms.ExtractField$Value", "transforms.e.field": "after", "transforms.e.field.syntax.version": "V2",
        "transforms.f.type": "org.apache.kafka.connect.transforms.Filter",
        "transforms.fl.type": "org.apache.kafka.connect.transforms.Flatten$Value", "transforms.fl.delimiter": "_",
        "transforms.hf.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value", "transforms.hf.fields": "id,meta.trace", "transforms.hf.headers": "id,trace", "transforms.hf.operation": "COPY",
        "transforms.ho.type": "org.apache.kafka.connect.transforms.HoistField$Key", "transforms.ho.field": "k",
        "transforms.i.type": "org.apache.kafka.connect.transforms.InsertField$Value", "transforms.i.topic.field": "_topic!", "transforms.i.offset.field": "_offset?", "transforms.i.timestamp.field": "ts",
        "transforms.ih.type": "org.apache.kafka.connect.transforms.InsertHeader", "transforms.ih.header": "origin", "transforms.ih.value.literal": "kafka-connect",
        "transforms.m.type": "org.apache.kafka.connect.transforms.MaskField$Value", "transforms.m.fields": "card",
        "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter", "transforms.r.regex": "in", "transforms.r.replacement": "out",
        "transforms.rf.type": "org.apache.kafka.connect.transforms.ReplaceField$Value", "transforms.rf.whitelist": "a,b", "transforms.rf.renames": "a:alpha",
        "transforms.s.type": "org.apache.kafka.connect.transforms.SetSchemaMetadata$Value", "transforms.s.schema.name": "com.acme.Order", "transforms.s.schema.version": "3",
        "transforms.tc.type": "org.apache.kafka.connect.transforms.TimestampConverter$Value", "transforms.tc.field": "ts", "transforms.tc.target.type": "unix", "transforms.tc.unix.precision": "seconds",
        "transforms.tr.type": "org.apache.kafka.connect.transforms.TimestampRouter", "transforms.tr.topic.format": "${topic}.copy",
        "transforms.v.type": "org.apache.kafka.connect.transforms.ValueToKey", "transforms.v.fields": "id"}"#;
    let imported = checked(text);
    let steps = json!([
        {"plugin": "cast", "config": {"on": "key", "spec": "int64"}},
        {"plugin": "drop-headers", "config": {"headers": ["trace-*", "debug"]}},
        {"plugin": "extract-field", "config": {"on": "value", "field": "after"}},
        {"plugin": "filter", "config": {}},
        {"plugin": "flatten", "config": {"on": "value", "delimiter": "_"}},
        {"plugin": "header-from", "config": {"on": "value", "fields": ["id", "`meta.trace`"], "headers": ["id", "trace"], "operation": "copy"}},
        {"plugin": "hoist-field", "config": {"on": "key", "field": "k"}},
        {"plugin": "insert-field", "config": {"on": "value", "topic_field": "_topic", "offset_field": "_offset", "timestamp_field": "ts"}},
        {"plugin": "insert-header", "config": {"header": "origin", "value": "kafka-connect"}},
        {"plugin": "mask-field", "config": {"on": "value", "fields": ["card"]}},
        {"plugin": "regex-router", "config": {"regex": "in", "replacement": "out"}},
        {"plugin": "replace-field", "config": {"on": "value", "include": ["a", "b"], "renames": {"a": "alpha"}}},
        {"plugin": "set-schema-metadata", "config": {"schema_name": "com.acme.Order", "schema_version": 3}},
        {"plugin": "timestamp-converter", "config": {"on": "value", "field": "ts", "target_type": "unix", "unix_precision": "seconds"}},
        {"plugin": "timestamp-router", "config": {"topic_format": "$${topic}.copy"}},
        {"plugin": "value-to-key", "config": {"fields": ["id"]}}
    ]);
    assert_eq!(imported.connector["transforms"], steps, "{:#}", imported.connector["transforms"]);
    assert_eq!(imported.connector["routes"], json!(["out", "in.copy"]));
    assert!(imported.unmapped.is_empty(), "{:#?}", imported.unmapped);
    assert!(has_note(&imported, "the `!` suffix says whether the field's Connect schema is optional"));
    let mapped: Vec<(&str, &str)> = imported.mapped.iter().map(|m| (m.option.as_str(), m.to.as_str())).collect();
    assert!(mapped.contains(&("transforms.rf.whitelist", "transforms[11].config.include")), "{mapped:?}");
}
