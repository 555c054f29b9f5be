use super::*;

fn col(name: &str, kind: Kind, type_name: &str, nullable: bool) -> Column {
    Column { name: name.into(), kind, type_name: type_name.into(), nullable }
}

fn id() -> Column {
    col("id", Kind::Integer, "bigint", false)
}

fn updated_at() -> Column {
    col("updated_at", Kind::TimestampTz, "timestamp with time zone", false)
}

fn text(name: &str) -> Column {
    col(name, Kind::Other, "text", true)
}

fn table(name: &str, columns: Vec<Column>, key: &[&str]) -> Table {
    Table { name: name.into(), columns, primary_key: key.iter().map(|k| (*k).to_owned()).collect() }
}

fn settings(one_connector: bool) -> Settings {
    Settings {
        topic_prefix: "shop.".into(),
        name_prefix: "shop-".into(),
        one_connector,
        poll_interval_ms: None,
        grant: Grant { url: "postgresql://db.internal:5432/shop".into(), user: "app".into(), password: Some("${env:SHOP_PW}".into()), tls: None, ca_file: None },
    }
}

#[test]
fn an_integer_key_and_an_update_time_give_timestamp_and_incrementing() {
    let p = place(&table("public.orders", vec![id(), text("status"), updated_at()], &["id"]));
    assert_eq!((p.mode, p.incrementing.as_deref(), p.timestamp.as_deref()), (Mode::TimestampIncrementing, Some("id"), Some("updated_at")));
    assert_eq!(p.mode.as_str(), "timestamp+incrementing");
}

#[test]
fn an_integer_key_alone_gives_incrementing_and_says_changes_are_not_seen() {
    let p = place(&table("public.events", vec![id(), text("payload")], &["id"]));
    assert_eq!((p.mode, p.incrementing.as_deref(), p.timestamp), (Mode::Incrementing, Some("id"), None));
    assert!(p.reasons[0].contains("changes to existing rows are not seen"), "{:?}", p.reasons);
}

#[test]
fn an_update_time_alone_gives_timestamp() {
    let p = place(&table("public.prices", vec![text("sku"), updated_at()], &[]));
    assert_eq!((p.mode, p.incrementing, p.timestamp.as_deref()), (Mode::Timestamp, None, Some("updated_at")));
    assert!(p.reasons.iter().any(|r| r.starts_with("no primary key")), "{:?}", p.reasons);
}

#[test]
fn neither_gives_bulk_and_says_why_not() {
    let p = place(&table("public.audit", vec![text("line"), col("at", Kind::Timestamp, "timestamp", false)], &[]));
    assert_eq!((p.mode, p.incrementing, p.timestamp), (Mode::Bulk, None, None));
    assert_eq!(p.reasons[0], BULK_WHY);
    assert!(p.reasons[0].contains("re-reads the whole table every poll"));
    assert_eq!(p.reasons[1], "no primary key");
}

#[test]
fn a_composite_key_is_no_incrementing_key() {
    let columns = || vec![col("order_id", Kind::Integer, "integer", false), col("line", Kind::Integer, "integer", false)];
    let p = place(&table("public.order_lines", columns(), &["order_id", "line"]));
    assert_eq!(p.mode, Mode::Bulk);
    assert!(p.reasons.contains(&"composite primary key (order_id, line)".to_owned()), "{:?}", p.reasons);
    let mut with_time = columns();
    with_time.push(updated_at());
    assert_eq!(place(&table("public.order_lines", with_time, &["order_id", "line"])).mode, Mode::Timestamp);
}

#[test]
fn a_nullable_update_time_is_not_used_and_the_reason_is_given() {
    let p = place(&table("public.users", vec![id(), col("updated_at", Kind::TimestampTz, "timestamptz", true)], &["id"]));
    assert_eq!((p.mode, p.timestamp), (Mode::Incrementing, None));
    assert!(p.reasons.iter().any(|r| r.starts_with("`updated_at` may be NULL, so it is not used")), "{:?}", p.reasons);
}

#[test]
fn a_text_key_is_no_incrementing_key() {
    let p = place(&table("public.countries", vec![col("code", Kind::Other, "text", false), text("name")], &["code"]));
    assert_eq!(p.mode, Mode::Bulk);
    assert!(p.reasons.contains(&"primary key `code` is text, not an integer".to_owned()), "{:?}", p.reasons);
    let p = place(&table("public.countries", vec![col("code", Kind::Other, "text", false), updated_at()], &["code"]));
    assert_eq!((p.mode, p.timestamp.as_deref()), (Mode::Timestamp, Some("updated_at")));
}

#[test]
fn update_time_names_are_matched_loosely_and_time_zoned_columns_win() {
    for name in ["updated_at", "UpdatedAt", "LAST_MODIFIED", "modified", "changed_at", "update_time"] {
        let p = place(&table("t", vec![id(), col(name, Kind::Timestamp, "timestamp", false)], &["id"]));
        assert_eq!(p.timestamp.as_deref(), Some(name), "{name}");
    }
    let p = place(&table("t", vec![id(), col("created_at", Kind::Timestamp, "timestamp", false)], &["id"]));
    assert_eq!(p.timestamp, None, "a creation time does not see updates");
    let both = vec![id(), col("updated_at", Kind::Timestamp, "timestamp", false), col("modified_at", Kind::TimestampTz, "timestamptz", false)];
    assert_eq!(place(&table("t", both, &["id"])).timestamp.as_deref(), Some("modified_at"));
    let p = place(&table("t", vec![id(), col("updated", Kind::Other, "date", false)], &["id"]));
    assert_eq!(p.timestamp, None);
    assert!(p.reasons.contains(&"`updated` is date, not a timestamp".to_owned()), "{:?}", p.reasons);
}

#[test]
fn topic_and_connector_names_are_sanitised_into_what_kafka_and_the_host_accept() {
    assert_eq!(topic("shop.", "public.orders"), "shop.orders");
    assert_eq!(topic("shop.", "public.café$2"), "shop.caf__2");
    assert_eq!(sanitize("my db/x"), "my_db_x");
    assert_eq!(connector_name(".hidden"), "_hidden");
    assert_eq!(connector_name("shop-order lines"), "shop-order_lines");
    for raw in ["shop.ünïcode tables", "a$b", ".x", "x:y/z"] {
        let t = topic("", raw);
        assert!(turnpike_config::TopicName::parse(t.as_str()).is_ok(), "{t}");
        let n = connector_name(raw);
        assert!(turnpike_config::ConnectorName::parse(n.as_str()).is_ok(), "{n}");
    }
    assert_eq!(short_name("public.orders"), "orders");
    assert_eq!(short_name("orders"), "orders");
}

fn mixed() -> Vec<Table> {
    vec![
        table("public.orders", vec![id(), updated_at()], &["id"]),
        table("public.events", vec![id()], &["id"]),
        table("public.audit", vec![text("line")], &[]),
        table("public.invoices", vec![id(), updated_at()], &["id"]),
    ]
}

#[test]
fn one_connector_per_table_by_default() {
    let planned = plan(&mixed(), &settings(false)).unwrap();
    let names: Vec<&str> = planned.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["shop-orders", "shop-events", "shop-audit", "shop-invoices"]);
    let orders = &planned[0].document;
    assert_eq!(orders["output_topic"], "shop.orders");
    assert!(orders.get("routes").is_none());
    assert_eq!(orders["source"]["plugin"], "sql-source");
    assert_eq!(orders["source"]["config"]["mode"], "timestamp+incrementing");
    assert_eq!(orders["source"]["config"]["incrementing.column.name"], "id");
    assert_eq!(orders["source"]["config"]["timestamp.column.name"], "updated_at");
    assert_eq!(orders["source"]["config"]["topic.prefix"], "shop.");
    assert_eq!(orders["source"]["config"]["table.whitelist"], json!(["public.orders"]));
    assert_eq!(orders["database"]["tables"], json!(["public.orders"]));
    assert_eq!(orders["database"]["password"], "${env:SHOP_PW}");
    let audit = &planned[2].document["source"]["config"];
    assert_eq!((audit["mode"].as_str(), audit.get("incrementing.column.name")), (Some("bulk"), None));
}

#[test]
fn one_connector_groups_tables_by_mode_and_says_which() {
    let planned = plan(&mixed(), &settings(true)).unwrap();
    let summary: Vec<(&str, Mode, Vec<&str>)> =
        planned.iter().map(|p| (p.name.as_str(), p.mode, p.tables.iter().map(|t| t.table.as_str()).collect())).collect();
    assert_eq!(
        summary,
        [
            ("shop-timestamp-incrementing", Mode::TimestampIncrementing, vec!["public.orders", "public.invoices"]),
            ("shop-incrementing", Mode::Incrementing, vec!["public.events"]),
            ("shop-bulk", Mode::Bulk, vec!["public.audit"]),
        ]
    );
    let doc = &planned[0].document;
    assert_eq!((doc["output_topic"].as_str(), &doc["routes"]), (Some("shop.orders"), &json!(["shop.invoices"])));
    assert_eq!(doc["database"]["tables"], json!(["public.orders", "public.invoices"]));
    assert_eq!(doc["source"]["config"]["table.whitelist"], doc["database"]["tables"]);
}

#[test]
fn tables_of_one_mode_but_other_columns_get_connectors_of_their_own() {
    let tables = vec![
        table("public.orders", vec![id()], &["id"]),
        table("public.lines", vec![col("line_id", Kind::Integer, "int", false)], &["line_id"]),
        table("public.items", vec![id()], &["id"]),
    ];
    let planned = plan(&tables, &settings(true)).unwrap();
    let names: Vec<(&str, usize)> = planned.iter().map(|p| (p.name.as_str(), p.tables.len())).collect();
    assert_eq!(names, [("shop-incrementing-id", 2), ("shop-incrementing-line_id", 1)]);
}

#[test]
fn tables_that_would_share_a_topic_are_refused() {
    let tables = vec![table("public.orders", vec![id()], &["id"]), table("sales.orders", vec![id()], &["id"])];
    let err = plan(&tables, &settings(false)).unwrap_err();
    assert_eq!(err.len(), 1, "{err:?}");
    assert!(err[0].contains("public.orders, sales.orders") && err[0].contains("\"shop.orders\""), "{}", err[0]);
}

#[test]
fn a_poll_interval_is_given_to_both_the_plugin_and_the_host() {
    let mut s = settings(false);
    s.poll_interval_ms = Some(5_000);
    let planned = plan(&mixed()[..1], &s).unwrap();
    assert_eq!(planned[0].document["source"]["poll_interval_ms"], 5_000);
    assert_eq!(planned[0].document["source"]["config"]["poll.interval.ms"], 5_000);
}
