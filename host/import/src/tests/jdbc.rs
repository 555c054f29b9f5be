//! Confluent's JDBC source: the `sql-source` step, where its tables' records go, and the
//! `database:` grant read from the connection URL without echoing its password.

use serde_json::json;

use super::{checked, has_note, host_problems, reason, unmapped_options};
use crate::InputFormat;

const JDBC_REGEX_ROUTER: &str = include_str!("../../tests/fixtures/jdbc-source-regex-router.properties");

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
        // The first router's destinations for the two known table topics, then the second's.
        "routes": ["shop-cdc.orders", "shop-cdc.order_lines", "shop.lines", "shop.order_lines"],
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
    assert!(has_note(&imported, "step `route` (regex-router) always routes to \"shop-cdc.orders\": it is listed in `routes`"), "{:#?}", imported.notes);
    assert!(has_note(&imported, "turnpike secret put shop-jdbc-source-db-password --value-stdin"));
    assert!(!imported.yaml.contains("Sup3r-S3cret!"));
    assert_eq!(host_problems(&imported.connector), Vec::<String>::new());
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
