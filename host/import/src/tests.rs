//! Real-world-shaped Kafka Connect configs (`tests/fixtures/`) through the importer: the
//! connector written, every option accounted for, no credential anywhere in the output, and
//! the result read back by the host's own parser and rules (`turnpike-config`), so "what the
//! admin API accepts" is checked rather than assumed.

use serde_json::{json, Value};
use turnpike_config::{Connector, HostConfig, SandboxConfig};

use crate::{import, import_with, properties, ImportError, Imported, InputFormat, Options};

const S3_THREE_SMTS: &str = include_str!("../tests/fixtures/s3-sink-three-smts.json");
const JDBC_REGEX_ROUTER: &str = include_str!("../tests/fixtures/jdbc-source-regex-router.properties");
const DEBEZIUM_PREDICATES: &str = include_str!("../tests/fixtures/debezium-unwrap-with-predicates.json");
const CONFLUENT_FILTER: &str = include_str!("../tests/fixtures/confluent-filter.json");
const PROPERTIES_EDGES: &str = include_str!("../tests/fixtures/properties-edge-cases.properties");

/// The input's options as Kafka Connect sees them (read independently of the importer for
/// JSON; through the tested `.properties` reader otherwise).
fn input_options(text: &str) -> Vec<(String, String)> {
    let as_text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    match InputFormat::detect(text) {
        InputFormat::Json => {
            let doc: Value = serde_json::from_str(text).unwrap();
            let config = doc.get("config").unwrap_or(&doc);
            let mut out: Vec<(String, String)> = config.as_object().unwrap().iter().map(|(k, v)| (k.clone(), as_text(v))).collect();
            if let (Some(name), false) = (doc.get("name"), config.get("name").is_some()) {
                out.push(("name".into(), as_text(name)));
            }
            out
        }
        InputFormat::Properties => properties::parse(text).unwrap(),
    }
}

/// The checks every fixture passes: each option mapped or unmapped (never both, never
/// neither), no credential in any output, the YAML the same object as `connector`.
fn checked(text: &str) -> Imported {
    let imported = import(text).unwrap_or_else(|e| panic!("import failed: {e}"));
    for (key, _) in input_options(text) {
        let mapped = imported.mapped.iter().filter(|m| m.option == key).count();
        let unmapped = imported.unmapped.iter().filter(|u| u.option == key).count();
        assert_eq!(mapped + unmapped, 1, "{key}: mapped {mapped} times, unmapped {unmapped} times");
    }
    let credentials: Vec<String> =
        input_options(text).into_iter().filter(|(k, _)| k.contains("password") || k.contains("secret") || k.ends_with("access.key.id")).map(|(_, v)| v).filter(|v| !v.starts_with("${env:")).collect();
    let everything = format!("{}\n{}\n{:?}\n{:?}\n{:?}", imported.connector, imported.yaml, imported.unmapped, imported.notes, imported.mapped);
    for secret in &credentials {
        assert!(!everything.contains(secret.as_str()), "the credential {secret:?} is in the output");
    }
    let from_yaml: Value = serde_yaml_ng::from_str(&imported.yaml).expect("the YAML parses");
    assert_eq!(from_yaml, imported.connector, "the YAML is not the connector:\n{}", imported.yaml);
    // The header shows each one on one line (line breaks in a value become spaces).
    let one_line = |t: &str| t.chars().map(|c| if c.is_control() || c == '\u{2028}' || c == '\u{2029}' { ' ' } else { c }).collect::<String>();
    for u in &imported.unmapped {
        assert!(imported.yaml.contains(&format!("#   {}: {}", u.option, one_line(&u.reason))), "{} is not in the YAML header", u.option);
    }
    imported
}

/// The host's own checks of the connector, as `PUT /v1/connectors/NAME` runs them.
fn host_problems(connector: &Value) -> Vec<String> {
    let bytes = serde_json::to_vec(connector).unwrap();
    let config = HostConfig::parse_connector_json(&bytes, "imported").unwrap_or_else(|e| panic!("the host cannot parse it: {e}\n{connector:#}"));
    match Connector::validate(config, &SandboxConfig::default(), "connector") {
        Ok(_) => Vec::new(),
        Err(problems) => problems.into_iter().map(|p| p.key).collect(),
    }
}

fn unmapped_options(imported: &Imported) -> Vec<&str> {
    imported.unmapped.iter().map(|u| u.option.as_str()).collect()
}

fn reason<'a>(imported: &'a Imported, option: &str) -> &'a str {
    imported.unmapped.iter().find(|u| u.option == option).map_or_else(|| panic!("{option} is not unmapped"), |u| u.reason.as_str())
}

fn has_note(imported: &Imported, words: &str) -> bool {
    imported.notes.iter().any(|n| n.contains(words))
}

#[test]
fn s3_sink_with_three_smts_from_rest_json() {
    let imported = checked(S3_THREE_SMTS);
    assert_eq!(imported.format, InputFormat::Json);
    let want = json!({
        "name": "orders-s3-sink",
        "topics": ["orders", "refunds"],
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
            "tasks.max",
            "locale",
            "schema.compatibility",
            "key.converter",
            "value.converter",
            "value.converter.schemas.enable",
            "errors.deadletterqueue.topic.replication.factor",
            "errors.log.include.messages"
        ]
    );
    assert_eq!(reason(&imported, "tasks.max"), "Turnpike runs one pipeline per connector today; the option has no effect");
    assert_eq!(reason(&imported, "key.converter"), "Turnpike passes bytes and reads JSON itself; no converter is needed");
    assert!(has_note(&imported, "turnpike secret put orders-s3-sink-aws-secret-access-key --value-stdin"));
    assert!(has_note(&imported, "renames the topic the sink sees"), "{:#?}", imported.notes);
    assert!(imported.yaml.starts_with("# Turnpike connector imported from a Kafka Connect REST API JSON by turnpike-import.\n"), "{}", imported.yaml);
    assert!(imported.yaml.contains("\nname: orders-s3-sink\ntopics:\n- orders\n- refunds\ntransforms:\n- plugin: replace-field\n"), "{}", imported.yaml);
    assert_eq!(host_problems(&imported.connector), Vec::<String>::new());
}

#[test]
fn jdbc_source_with_regex_router_from_properties() {
    let imported = checked(JDBC_REGEX_ROUTER);
    assert_eq!(imported.format, InputFormat::Properties);
    let want = json!({
        "name": "shop-jdbc-source",
        "output_topic": "shop.orders",
        "source": {"plugin": "sql-source", "config": {
            "mode": "timestamp+incrementing",
            "incrementing.column.name": "id",
            "timestamp.column.name": "updated_at",
            "timestamp.delay.interval.ms": 5000,
            "poll.interval.ms": 10000,
            "batch.max.rows": 500,
            "validate.non.null": false,
            "numeric.mapping": "best_fit",
            "table.whitelist": ["public.orders", "public.order_lines"],
            "topic.prefix": "shop."
        }},
        "transforms": [
            {"plugin": "regex-router", "config": {"regex": "shop\\.(.*)", "replacement": "shop-cdc.$1"}},
            {"plugin": "regex-router", "config": {"regex": "shop\\.order_lines", "replacement": "shop.lines"}}
        ],
        "routes": ["shop.lines", "shop.order_lines"],
        "database": {
            "url": "postgresql://db.internal:5432/shop",
            "user": "kafka_connect",
            "password": "${secret:shop-jdbc-source-db-password}",
            "tables": ["public.orders", "public.order_lines"],
            "tls": "require"
        },
        "errors": {"tolerance": "all"}
    });
    assert_eq!(imported.connector, want, "{:#}", imported.connector);
    assert_eq!(
        unmapped_options(&imported),
        ["tasks.max", "connection.url?ApplicationName", "quote.sql.identifiers", "key.converter", "value.converter", "value.converter.schemas.enable", "errors.deadletterqueue.topic.name"]
    );
    assert!(reason(&imported, "errors.deadletterqueue.topic.name").starts_with("Kafka Connect uses a dead-letter queue for sink connectors only"));
    assert!(has_note(&imported, "step `route` (regex-router) routes records to topics made from each record"), "{:#?}", imported.notes);
    assert!(has_note(&imported, "turnpike secret put shop-jdbc-source-db-password --value-stdin"));
    assert!(!imported.yaml.contains("Sup3r-S3cret!"));
    assert_eq!(host_problems(&imported.connector), Vec::<String>::new());
}

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
        {"plugin": "header-from", "config": {"fields": ["id", "`meta.trace`"], "headers": ["id", "trace"], "operation": "copy"}},
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
fn jdbc_edges_url_credentials_queries_and_globs() {
    let text = "name=q\nconnector.class=io.confluent.connect.jdbc.JdbcSourceConnector\n\
connection.url=jdbc:mysql://app:hunter22@mysql.internal:3306/shop?useSSL=false&serverTimezone=UTC\n\
mode=incrementing\nincrementing.column.name=id\ntimestamp.column.name=updated_at\nbatch.max.rows=20000\n\
query=SELECT o.id, o.total FROM orders o JOIN customers c ON c.id = o.customer_id\ntopic.prefix=shop.orders-enriched\n";
    let imported = checked(text);
    assert!(!format!("{imported:?}").contains("hunter22"), "the URL's password leaked");
    assert_eq!(
        imported.connector["database"],
        json!({"url": "mysql://mysql.internal:3306/shop", "user": "app", "password": "${secret:q-db-password}", "tables": ["orders", "customers"], "tls": "disable", "max_rows": 20000})
    );
    assert_eq!(imported.connector["output_topic"], json!("shop.orders-enriched"));
    assert_eq!(imported.connector["source"]["config"].get("topic.prefix"), None);
    assert!(reason(&imported, "timestamp.column.name").starts_with("only used with mode timestamp"));
    assert_eq!(reason(&imported, "connection.url?serverTimezone"), "Turnpike reads timestamps without a zone as UTC");
    assert_eq!(host_problems(&imported.connector), Vec::<String>::new());

    let globs = "name=g\nconnector.class=io.confluent.connect.jdbc.JdbcSourceConnector\nconnection.url=jdbc:sqlserver://h:1433;databaseName=x\n\
connection.user=u\nconnection.password=pw-not-shown\nmode=bulk\ntable.include.list=dbo\\\\.customer_.*\ntopic.prefix=mssql.\n";
    let imported = checked(globs);
    assert_eq!(imported.connector["source"]["config"]["table.whitelist"], json!(["dbo.customer_*"]));
    assert!(reason(&imported, "connection.url").starts_with("sqlserver databases are not supported"));
    assert_eq!(imported.connector.get("database"), None);
    assert_eq!(imported.connector["output_topic"], json!("mssql"));
    assert!(has_note(&imported, "their topics (mssql.<table>) cannot be listed here"));
}

#[test]
fn a_value_cannot_break_out_of_the_header_comment() {
    let text = "{\"name\": \"x\", \"transforms\": \"a\", \"transforms.a.type\": \"com.example.Evil\\nname: injected\\u2028topics: [x]\"}";
    let imported = checked(text);
    let yaml_lines: Vec<&str> = imported.yaml.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(yaml_lines, ["name: x"], "{}", imported.yaml);
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
