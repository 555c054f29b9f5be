//! Confluent's JDBC source (`io.confluent.connect.jdbc.JdbcSourceConnector`) as the
//! `sql-source` plugin and the connector's `database:` grant. sql-source keeps Kafka Connect's
//! option names; the connection (URL, user, password, TLS) becomes the grant, with the
//! password as a reference, never its value.
//!
//! `source` reads the mode and polling options; `tables` the table lists and the grant's
//! tables, `topics` where records go, `url` and `database` the connection.

mod database;
mod tables;
mod topics;
mod url;

use serde_json::{json, Map, Value};

use crate::ctx::{boolean, int, literal, Ctx};

pub(crate) const CLASS: &str = "io.confluent.connect.jdbc.JdbcSourceConnector";

/// The `source:` step, the `database:` grant (none when the connection cannot be carried
/// over), and where records go.
pub(crate) struct Source {
    pub(crate) step: Value,
    pub(crate) database: Option<Value>,
    pub(crate) output_topic: Option<String>,
    pub(crate) routes: Vec<String>,
}

const MODES: [&str; 4] = ["bulk", "incrementing", "timestamp", "timestamp+incrementing"];

pub(crate) fn source(ctx: &mut Ctx) -> Source {
    let mut c = Map::new();
    let mut set = |ctx: &mut Ctx, option: &str, value: Value| {
        c.insert(option.to_owned(), value);
        ctx.map(option, format!("source.config.{option}"));
    };
    let mode = ctx.value("mode").map(|m| m.to_ascii_lowercase());
    match mode.as_deref() {
        Some(m) if MODES.contains(&m) => set(ctx, "mode", json!(m)),
        Some(_) => ctx.skip("mode", format!("not one of {}", MODES.join(", "))),
        None => ctx.note("the config has no mode, which Kafka Connect and sql-source both require: add source.config.mode before applying"),
    }
    let mode = mode.filter(|m| MODES.contains(&m.as_str())).unwrap_or_default();
    let uses_inc = mode.contains("incrementing");
    let uses_ts = mode.starts_with("timestamp");
    let query = ctx.value("query");
    if let Some(q) = &query {
        set(ctx, "query", json!(literal(q)));
    }
    for (option, used) in [("incrementing.column.name", uses_inc), ("timestamp.column.name", uses_ts)] {
        let modes = if option.starts_with("inc") { "incrementing or timestamp+incrementing" } else { "timestamp or timestamp+incrementing" };
        match ctx.value(option) {
            Some(v) if used => set(ctx, option, json!(v)),
            Some(_) => ctx.skip(option, format!("only used with mode {modes}; Kafka Connect ignored it here")),
            None => {}
        }
    }
    for option in ["timestamp.delay.interval.ms", "timestamp.initial"] {
        let Some(text) = ctx.value(option) else { continue };
        match int(&text) {
            Some(n) if uses_ts && (n >= 0 || (option == "timestamp.initial" && n == -1)) => set(ctx, option, json!(n)),
            Some(_) if uses_ts => ctx.skip(option, format!("{text:?} is out of range")),
            Some(_) => ctx.skip(option, "only used with mode timestamp or timestamp+incrementing; Kafka Connect ignored it here"),
            None => ctx.skip(option, format!("{text:?} is not a whole number")),
        }
    }
    for (option, range) in [("poll.interval.ms", 0..=86_400_000), ("batch.max.rows", 1..=1_000_000), ("table.poll.interval.ms", 0..=86_400_000)] {
        let Some(text) = ctx.value(option) else { continue };
        match int(&text) {
            Some(_) if option == "table.poll.interval.ms" && query.is_some() => ctx.skip(option, "only used when reading tables, not a query; Kafka Connect ignored it here"),
            Some(n) if range.contains(&n) => set(ctx, option, json!(n)),
            _ => ctx.skip(option, format!("{text:?} is not a whole number from {} to {}", range.start(), range.end())),
        }
    }
    match ctx.value("validate.non.null").as_deref().map(boolean) {
        Some(Some(b)) => set(ctx, "validate.non.null", json!(b)),
        Some(None) => ctx.skip("validate.non.null", "not true or false"),
        None => {}
    }
    match ctx.value("numeric.mapping").map(|m| m.to_ascii_lowercase()).as_deref() {
        Some(m @ ("none" | "best_fit")) => set(ctx, "numeric.mapping", json!(m)),
        Some(_) => ctx.skip("numeric.mapping", "sql-source takes none (exact digits as text) or best_fit (exact digits as a JSON number); precision_only is not supported"),
        None => {}
    }
    if ctx.value("db.timezone").is_some_and(|z| z.eq_ignore_ascii_case("UTC")) {
        ctx.map("db.timezone", "— sql-source reads timestamps without a zone as UTC too");
    }
    // Tables: the plugin's selection, and the grant's list.
    let selection = tables::tables(ctx, query.is_some(), &mut set);
    let grant_tables = tables::grant_tables(ctx, &selection, query.as_deref());
    let (output_topic, routes) = topics::topics(ctx, &selection, query.is_some(), &mut set);
    let database = database::database(ctx, grant_tables, c.get("batch.max.rows").and_then(Value::as_i64));
    Source { step: json!({"plugin": "sql-source", "config": Value::Object(c)}), database, output_topic, routes }
}

/// Why a JDBC source option nobody else claimed is left out.
pub(crate) fn unknown(key: &str) -> String {
    let reason = match key {
        "db.timezone" => "Turnpike reads timestamps without a zone as UTC (set the columns' zone in the database, or use zoned columns)",
        "quote.sql.identifiers" => "sql-source always quotes identifiers",
        "query.retry.attempts" | "connection.attempts" | "connection.backoff.ms" => "the host reconnects to the database itself and retries a poll within the connector's errors.retry_timeout_ms",
        "timestamp.granularity" => "timestamps are ISO-8601 text with every digit the database gives (or epoch milliseconds with sql-source's timestamp.mapping)",
        "numeric.precision.mapping" => "use numeric.mapping (sql-source takes none or best_fit)",
        "catalog.pattern" | "table.types" => "the connector's database.tables grant says which tables the plugin sees",
        "dialect.name" => "the database kind follows from the URL's scheme",
        "query.suffix" | "query.masked" | "timestamp.columns.mapping" | "incrementing.column.mapping" | "transaction.isolation.mode" | "poll.linger.ms" | "max.buffer.size" => {
            "a JDBC source option sql-source does not support"
        }
        k if k.starts_with("connection.") => "a JDBC driver setting; Turnpike's database client takes only the grant's url, user, password, tls and ca_file",
        _ => "an option of Confluent's JDBC source that sql-source does not offer",
    };
    reason.to_owned()
}
