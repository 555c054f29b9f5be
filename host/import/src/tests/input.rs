//! How a config is read (REST JSON bodies, `.properties`, and what is wrong with either) and
//! what every connector shares whatever its class: its name, the error policy, and a YAML
//! header no value can break out of.

use serde_json::json;

use super::{checked, has_note, host_problems, reason, unmapped_options};
use crate::{import, import_with, ImportError, InputFormat, Options};

const PROPERTIES_EDGES: &str = include_str!("../../tests/fixtures/properties-edge-cases.properties");

#[test]
fn unreadable_input_says_what_to_fix() {
    let err = import("{\"name\": \"x\", \"config\": {\"connector.class\": }}").unwrap_err();
    assert!(matches!(err, ImportError::Json { line: 1, .. }), "{err:?}");
    assert!(err.to_string().starts_with("the text starts with `{` but is not valid JSON: "), "{err}");
    assert_eq!(import("[1, 2]").unwrap_err(), import("   [1]").unwrap_err(), "a list is read as .properties, and has no connector.class");
    assert_eq!(import_with("[1]", &Options { format: Some(InputFormat::Json), ..Options::default() }).unwrap_err(), ImportError::NotAnObject { what: "the JSON", found: "an array" });
    assert_eq!(import("{\"name\": \"x\", \"config\": \"nope\"}").unwrap_err(), ImportError::NotAnObject { what: "`config`", found: "a string" });
    assert_eq!(import("{\"connector.class\": {\"a\": 1}}").unwrap_err(), ImportError::NestedValue { key: "connector.class".into() });
    assert_eq!(import("# only a comment\n").unwrap_err(), ImportError::Empty);
    assert_eq!(import("name=x\ntopics=a\n").unwrap_err(), ImportError::NothingToImport);
    assert_eq!(
        ImportError::NothingToImport.to_string(),
        "the config has neither `connector.class` nor `transforms`, so there is nothing to import: give a Kafka Connect connector config (the JSON of POST /connectors, or a .properties file)"
    );
    assert_eq!(import("connector.class=io.confluent.connect.s3.S3SinkConnector\n").unwrap_err(), ImportError::NoName);
}

#[test]
fn a_put_body_without_a_name_takes_one_from_the_options() {
    let text = r#"{"connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": "t", "s3.bucket.name": "bkt", "flush.size": 5}"#;
    let options = Options { name: Some("lake".into()), origin: Some("lake.json".into()), ..Options::default() };
    let imported = import_with(text, &options).unwrap();
    assert_eq!(imported.connector["name"], json!("lake"));
    assert_eq!(imported.connector["sink"]["config"]["flush.size"], json!(5), "a JSON number is read as Kafka Connect reads its text");
    assert!(imported.yaml.starts_with("# Turnpike connector imported from a Kafka Connect REST API JSON (lake.json) by turnpike-import.\n"));
}

#[test]
fn a_get_answer_and_a_transforms_only_config() {
    let text = r#"{"name": "chain", "type": "sink", "tasks": [{"connector": "chain", "task": 0}], "config": {
        "name": "chain", "topics": "in", "transforms": "h", "consumer.override.auto.offset.reset": "latest",
        "transforms.h.type": "org.apache.kafka.connect.transforms.HoistField$Value", "transforms.h.field": "payload"}}"#;
    let imported = checked(text);
    assert_eq!(imported.connector, json!({"name": "chain", "topics": ["in"], "transforms": [{"plugin": "hoist-field", "config": {"on": "value", "field": "payload"}}], "start_from": "latest"}));
    assert!(has_note(&imported, "`tasks` in the JSON is Kafka Connect's status"));
    assert!(has_note(&imported, "set output_topic before applying"));
    assert_eq!(host_problems(&imported.connector), ["connector.output_topic"]);
}

#[test]
fn properties_edge_cases() {
    let imported = checked(PROPERTIES_EDGES);
    let want = json!({
        "name": "edge-case-connector",
        "topics": ["a", "b", "c"],
        "transforms": [{"plugin": "cast", "config": {"on": "value", "spec": {"amount": "float64", "qty": "int32"}}}],
        "sink": {"plugin": "s3-sink", "config": {"topics.dir": "exports/v2", "flush.size": 200, "behavior.on.null.values": "fail"}},
        "storage": {
            "bucket": "edge-bucket",
            "region": "us-west-2",
            "endpoint": "http://127.0.0.1:9000",
            "path_style": true,
            "credentials": {"access_key_id": "${env:MINIO_KEY}", "secret_access_key": "${secret:edge-case-connector-aws-secret-access-key}"}
        }
    });
    assert_eq!(imported.connector, want, "{:#}", imported.connector);
    assert_eq!(unmapped_options(&imported), ["timezone", "format.bytearray.separator", "transforms.cast.replace.null.with.default", "trailing"]);
    assert!(has_note(&imported, "the name \"edge case connector\" became \"edge-case-connector\""));
    assert!(has_note(&imported, "`flush.size` is given more than once; the last value is used"));
    assert!(has_note(&imported, "Kafka Connect read it through its `file` config provider"), "{:#?}", imported.notes);
    assert!(has_note(&imported, "environment variable MINIO_KEY"));
    assert!(!imported.yaml.contains("/etc/kafka/minio.properties"));
    assert_eq!(host_problems(&imported.connector), Vec::<String>::new());
}

#[test]
fn errors_policy_edges() {
    let text = "name=e\ntopics=in\ntransforms=f\ntransforms.f.type=org.apache.kafka.connect.transforms.Filter\n\
errors.tolerance=none\nerrors.deadletterqueue.topic.name=dlq\nerrors.retry.timeout=-1\nerrors.retry.delay.max.ms=7200000\nerrors.log.enable=false\nerrors.log.include.messages=false\n";
    let imported = checked(text);
    assert_eq!(imported.connector["errors"], json!({"retry_timeout_ms": 86_400_000, "retry_max_delay_ms": 3_600_000}));
    assert!(reason(&imported, "errors.deadletterqueue.topic.name").contains("only with `errors.tolerance: all`"));
    assert!(reason(&imported, "errors.log.enable").contains("cannot be turned off"));
    assert!(has_note(&imported, "retry forever"));
}

#[test]
fn a_value_cannot_break_out_of_the_header_comment() {
    let text = "{\"name\": \"x\", \"transforms\": \"a\", \"transforms.a.type\": \"com.example.Evil\\nname: injected\\u2028topics: [x]\"}";
    let imported = checked(text);
    let yaml_lines: Vec<&str> = imported.yaml.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(yaml_lines, ["name: x"], "{}", imported.yaml);
}
