//! The pure half of `connector generate sql`: which mode each table is read in and why, the
//! names of its topic and connector, which tables may be granted at all, and how tables are
//! grouped into connector documents. No I/O, so every decision is unit-tested on tables
//! written out in the tests.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

/// A column, as far as the choice of mode cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
    /// The database's own type name (`bigint`, `timestamp with time zone`), for messages.
    pub type_name: String,
    pub nullable: bool,
}

/// The kinds of value that matter here; everything else is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Integer,
    Timestamp,
    TimestampTz,
    Other,
}

/// A table as read from the database: `public.orders` (PostgreSQL) or `orders` (MySQL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
    pub primary_key: Vec<String>,
}

/// How the `sql-source` finds what is new (Kafka Connect JDBC's `mode`), best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    TimestampIncrementing,
    Incrementing,
    Timestamp,
    Bulk,
}

impl Mode {
    /// The `mode` value the plugin takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::TimestampIncrementing => "timestamp+incrementing",
            Mode::Incrementing => "incrementing",
            Mode::Timestamp => "timestamp",
            Mode::Bulk => "bulk",
        }
    }

    /// The mode in a connector name (`+` is not allowed there).
    fn slug(self) -> &'static str {
        match self {
            Mode::TimestampIncrementing => "timestamp-incrementing",
            other => other.as_str(),
        }
    }
}

/// The mode chosen for a table, the columns it reads by, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub mode: Mode,
    pub incrementing: Option<String>,
    pub timestamp: Option<String>,
    /// Why this mode first; then what it cannot see, and the columns passed over and why.
    pub reasons: Vec<String>,
}

/// What a bulk table is told: the one mode that costs a full read on every poll.
pub const BULK_WHY: &str = "no integer primary key and no update-time column: bulk re-reads the whole table every poll";

/// Names of columns that hold a row's last update time, compared without case, `_` or `-`
/// (so `updatedAt` and `UPDATED_AT` count), best first.
const UPDATE_TIME_NAMES: &[&str] = &[
    "updated_at", "updated", "modified_at", "modified", "last_modified", "last_modified_at", "last_update", "last_updated",
    "last_updated_at", "update_time", "updated_time", "updated_on", "modified_on", "modify_time", "modification_time",
    "changed_at", "changed", "changed_on", "mtime",
];

/// The mode a table is read in: `timestamp+incrementing` with a single-column integer key
/// and a NOT NULL update-time column, `incrementing` or `timestamp` with one of them, `bulk`
/// with neither.
pub fn place(table: &Table) -> Placement {
    let key = integer_key(table);
    let (time, passed_over) = update_time(table);
    let mut reasons = Vec::new();
    let (mode, incrementing, timestamp) = match (key, time) {
        (Ok(k), Some(t)) => {
            reasons.push(format!("integer primary key `{k}` and update-time column `{t}`: new and changed rows are read"));
            (Mode::TimestampIncrementing, Some(k), Some(t))
        }
        (Ok(k), None) => {
            reasons.push(format!("integer primary key `{k}`: new rows are read; with no update-time column, changes to existing rows are not seen"));
            (Mode::Incrementing, Some(k), None)
        }
        (Err(why), Some(t)) => {
            reasons.push(format!("update-time column `{t}`: new and changed rows are read"));
            reasons.push(format!("{why}, so all rows of one update time are read by one query (which the grant's max_rows must hold)"));
            (Mode::Timestamp, None, Some(t))
        }
        (Err(why), None) => {
            reasons.push(BULK_WHY.to_owned());
            reasons.push(why);
            (Mode::Bulk, None, None)
        }
    };
    reasons.extend(passed_over);
    Placement { mode, incrementing, timestamp, reasons }
}

/// The single integer primary key column, or why there is none.
fn integer_key(table: &Table) -> Result<String, String> {
    match table.primary_key.as_slice() {
        [] => Err("no primary key".to_owned()),
        [one] => match table.columns.iter().find(|c| &c.name == one) {
            Some(c) if c.kind == Kind::Integer => Ok(one.clone()),
            Some(c) => Err(format!("primary key `{one}` is {}, not an integer", c.type_name)),
            None => Err(format!("primary key `{one}` is not among the table's columns")),
        },
        many => Err(format!("composite primary key ({})", many.join(", "))),
    }
}

/// The best NOT NULL timestamp column named like an update time (time-zoned first, then by
/// name), and why each other column so named was passed over.
fn update_time(table: &Table) -> (Option<String>, Vec<String>) {
    let mut best: Option<((u8, usize), &Column)> = None;
    let mut passed_over = Vec::new();
    for column in &table.columns {
        let Some(name_rank) = update_time_rank(&column.name) else { continue };
        let kind_rank = match column.kind {
            Kind::TimestampTz => 0,
            Kind::Timestamp => 1,
            Kind::Integer | Kind::Other => {
                passed_over.push(format!("`{}` is {}, not a timestamp", column.name, column.type_name));
                continue;
            }
        };
        if column.nullable {
            passed_over.push(format!(
                "`{}` may be NULL, so it is not used: rows where it is NULL would never be read (make it NOT NULL to use it)",
                column.name
            ));
            continue;
        }
        if best.is_none_or(|(rank, _)| (kind_rank, name_rank) < rank) {
            best = Some(((kind_rank, name_rank), column));
        }
    }
    (best.map(|(_, c)| c.name.clone()), passed_over)
}

fn update_time_rank(column: &str) -> Option<usize> {
    let squash = |s: &str| s.chars().filter(|c| !matches!(c, '_' | '-')).flat_map(char::to_lowercase).collect::<String>();
    let name = squash(column);
    UPDATE_TIME_NAMES.iter().position(|n| squash(n) == name)
}

/// `s` with every character Kafka refuses in a topic name replaced by `_`.
pub fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect()
}

/// `s` as a connector name: topic characters, and no leading `.`.
pub fn connector_name(s: &str) -> String {
    let clean = sanitize(s);
    match clean.strip_prefix('.') {
        Some(rest) => format!("_{rest}"),
        None => clean,
    }
}

/// The table without its schema: what the plugin names its topic after.
pub fn short_name(table: &str) -> &str {
    table.rsplit_once('.').map_or(table, |(_, t)| t)
}

/// The topic a table's records go to: the prefix, then the table without its schema.
pub fn topic(prefix: &str, table: &str) -> String {
    sanitize(&format!("{prefix}{}", short_name(table)))
}

/// The `database:` grant every generated connector carries, but for its tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub url: String,
    pub user: String,
    /// A reference (`${env:…}`, `${file:…}`, `${secret:…}`), never a password.
    pub password: Option<String>,
    /// `disable` or `require` when given; otherwise the host's default applies.
    pub tls: Option<&'static str>,
    pub ca_file: Option<String>,
}

/// How the connectors are named and grouped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub topic_prefix: String,
    pub name_prefix: String,
    pub one_connector: bool,
    pub poll_interval_ms: Option<u64>,
    pub grant: Grant,
}

/// A table with its topic and mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    pub table: String,
    pub topic: String,
    pub placement: Placement,
}

/// One connector to generate: its tables and its document (checked by `render`).
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub name: String,
    pub mode: Mode,
    pub tables: Vec<Placed>,
    pub document: Value,
}

/// One connector per table, or with `one_connector` one per mode and column names (tables
/// read differently cannot share a plugin config). Two tables writing one topic are refused:
/// their records would be mixed.
pub fn plan(tables: &[Table], settings: &Settings) -> Result<Vec<Planned>, Vec<String>> {
    let placed: Vec<Placed> =
        tables.iter().map(|t| Placed { table: t.name.clone(), topic: topic(&settings.topic_prefix, &t.name), placement: place(t) }).collect();
    let mut by_topic: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for p in &placed {
        by_topic.entry(p.topic.as_str()).or_default().push(p.table.as_str());
    }
    let clashes: Vec<String> = by_topic
        .iter()
        .filter(|(_, tables)| tables.len() > 1)
        .map(|(topic, tables)| {
            format!(
                "tables {} would all write topic {topic:?} (a topic is named after the table without its schema, with characters Kafka refuses replaced by `_`): generate them in separate runs with --tables and different --topic-prefix and --name-prefix",
                tables.join(", ")
            )
        })
        .collect();
    if !clashes.is_empty() {
        return Err(clashes);
    }
    let groups: Vec<(String, Vec<Placed>)> = if settings.one_connector {
        let mut by_mode: BTreeMap<(Mode, Option<String>, Option<String>), Vec<Placed>> = BTreeMap::new();
        for p in placed {
            by_mode.entry((p.placement.mode, p.placement.incrementing.clone(), p.placement.timestamp.clone())).or_default().push(p);
        }
        let per_mode = |mode: Mode| by_mode.keys().filter(|(m, _, _)| *m == mode).count();
        let names: Vec<String> = by_mode
            .keys()
            .map(|(mode, inc, ts)| {
                let mut name = format!("{}{}", settings.name_prefix, mode.slug());
                if per_mode(*mode) > 1 {
                    for column in [inc, ts].into_iter().flatten() {
                        name.push('-');
                        name.push_str(column);
                    }
                }
                connector_name(&name)
            })
            .collect();
        names.into_iter().zip(by_mode.into_values()).collect()
    } else {
        placed.into_iter().map(|p| (connector_name(&format!("{}{}", settings.name_prefix, short_name(&p.table))), vec![p])).collect()
    };
    let mut seen = BTreeMap::new();
    let mut problems = Vec::new();
    for (name, tables) in &groups {
        let Some(table) = tables.first().map(|p| p.table.as_str()) else { continue };
        if let Some(first) = seen.insert(name.as_str(), table) {
            problems.push(format!("tables {first} and {table} would both make connector {name:?}: generate them in separate runs with --tables and different --name-prefix"));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(groups
        .into_iter()
        .filter_map(|(name, tables)| {
            let first = tables.first()?.placement.clone();
            let document = document(&name, &first, &tables, settings);
            Some(Planned { name, mode: first.mode, tables, document })
        })
        .collect())
}

/// A connector reading `tables` (all placed alike) with the `sql-source` plugin: the first
/// table's topic is its `output_topic`, the others its `routes`.
fn document(name: &str, placement: &Placement, tables: &[Placed], settings: &Settings) -> Value {
    let names: Vec<&str> = tables.iter().map(|p| p.table.as_str()).collect();
    let mut config = Map::new();
    config.insert("mode".into(), json!(placement.mode.as_str()));
    config.insert("table.whitelist".into(), json!(names));
    if let Some(c) = &placement.incrementing {
        config.insert("incrementing.column.name".into(), json!(c));
    }
    if let Some(c) = &placement.timestamp {
        config.insert("timestamp.column.name".into(), json!(c));
    }
    config.insert("topic.prefix".into(), json!(settings.topic_prefix));
    let mut source = Map::new();
    source.insert("plugin".into(), json!("sql-source"));
    if let Some(ms) = settings.poll_interval_ms {
        // The plugin paces its queries by it; the host waits as long after an empty poll.
        config.insert("poll.interval.ms".into(), json!(ms));
        source.insert("poll_interval_ms".into(), json!(ms));
    }
    source.insert("config".into(), Value::Object(config));
    let g = &settings.grant;
    let mut database = Map::new();
    database.insert("url".into(), json!(g.url));
    database.insert("user".into(), json!(g.user));
    for (key, value) in [("password", &g.password), ("ca_file", &g.ca_file)] {
        if let Some(v) = value {
            database.insert(key.into(), json!(v));
        }
    }
    if let Some(tls) = g.tls {
        database.insert("tls".into(), json!(tls));
    }
    database.insert("tables".into(), json!(names));
    let mut doc = Map::new();
    doc.insert("name".into(), json!(name));
    doc.insert("output_topic".into(), json!(tables.first().map(|p| p.topic.as_str())));
    let routes: Vec<&str> = tables.iter().skip(1).map(|p| p.topic.as_str()).collect();
    if !routes.is_empty() {
        doc.insert("routes".into(), json!(routes));
    }
    doc.insert("source".into(), Value::Object(source));
    doc.insert("database".into(), Value::Object(database));
    Value::Object(doc)
}

#[cfg(test)]
mod tests;
