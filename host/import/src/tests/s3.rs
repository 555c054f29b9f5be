//! Confluent's S3 sink: the connector, its `storage:` grant and the credentials in it, which
//! are only ever references.

use serde_json::json;

use super::{checked, has_note, host_problems, reason, unmapped_options};
use crate::InputFormat;

const S3_THREE_SMTS: &str = include_str!("../../tests/fixtures/s3-sink-three-smts.json");

#[test]
fn s3_sink_with_three_smts_from_rest_json() {
    let imported = checked(S3_THREE_SMTS);
    assert_eq!(imported.format, InputFormat::Json);
    let want = json!({
        "name": "orders-s3-sink",
        "topics": ["orders", "refunds"],
        "tasks": 4,
        "transforms": [
            {"plugin": "replace-field", "config": {"on": "value", "exclude": ["`customer.email`", "card_number"]}},
            {"plugin": "insert-field", "config": {"on": "value", "static_field": "source_system", "static_value": "shop-eu"}},
            {"plugin": "timestamp-router", "config": {"topic_format": "$${topic}-$${timestamp}", "timestamp_format": "yyyy-MM-dd"}}
        ],
        "sink": {"plugin": "s3-sink", "config": {
            "topics.dir": "raw",
            "flush.size": 10000,
            "rotate.interval.ms": 600000,
            "rotate.schedule.interval.ms": 3600000,
            "format.class": "json",
            "s3.compression.type": "gzip",
            "partitioner.class": "time",
            "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
            "partition.duration.ms": 3600000,
            "timestamp.extractor": "Record",
            "timezone": "UTC",
            "behavior.on.null.values": "ignore"
        }},
        "storage": {
            "bucket": "acme-data-lake",
            "region": "eu-west-1",
            "credentials": {
                "access_key_id": "${secret:orders-s3-sink-aws-access-key-id}",
                "secret_access_key": "${secret:orders-s3-sink-aws-secret-access-key}"
            },
            "part_size_mib": 25
        },
        "errors": {"tolerance": "all", "dead_letter_topic": "orders-s3-dlq", "retry_timeout_ms": 300000, "retry_max_delay_ms": 30000}
    });
    assert_eq!(imported.connector, want, "{:#}", imported.connector);
    assert_eq!(
        unmapped_options(&imported),
        [
            "locale",
            "schema.compatibility",
            "key.converter",
            "value.converter",
            "value.converter.schemas.enable",
            "errors.deadletterqueue.topic.replication.factor",
            "errors.log.include.messages"
        ]
    );
    assert_eq!(imported.connector["tasks"], 4, "tasks.max carried over to tasks");
    assert_eq!(reason(&imported, "key.converter"), "Turnpike passes bytes and reads JSON itself; no converter is needed");
    assert!(has_note(&imported, "turnpike secret put orders-s3-sink-aws-secret-access-key --value-stdin"));
    assert!(has_note(&imported, "renames the topic the sink sees"), "{:#?}", imported.notes);
    assert!(imported.yaml.starts_with("# Turnpike connector imported from a Kafka Connect REST API JSON by turnpike-import.\n"), "{}", imported.yaml);
    assert!(imported.yaml.contains("\nname: orders-s3-sink\ntopics:\n- orders\n- refunds\ntransforms:\n- plugin: replace-field\n"), "{}", imported.yaml);
    assert_eq!(host_problems(&imported.connector), Vec::<String>::new());
}

#[test]
fn config_provider_references_are_never_copied_as_text() {
    let text = "name=p\nconnector.class=io.confluent.connect.s3.S3SinkConnector\ntopics=t\ns3.bucket.name=bkt\n\
topics.dir=${vault:secret/s3:dir}\naws.access.key.id=${env:KEY_ID}\naws.secret.access.key=${vault:secret/s3:key}\n";
    let imported = checked(text);
    assert!(reason(&imported, "topics.dir").starts_with("its value is a Kafka Connect config provider reference (${vault:…})"));
    assert!(!imported.yaml.contains("secret/s3"), "{}", imported.yaml);
    assert_eq!(imported.connector["storage"]["credentials"], json!({"access_key_id": "${env:KEY_ID}", "secret_access_key": "${secret:p-aws-secret-access-key}"}));
    assert!(has_note(&imported, "Kafka Connect read it through its `vault` config provider"));
}
