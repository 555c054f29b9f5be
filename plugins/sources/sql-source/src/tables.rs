//! What is read and how: the granted tables filtered by `table.whitelist` / `table.blacklist`,
//! each checked against the mode — its incrementing and timestamp columns exist, have a
//! fitting kind and (with `validate.non.null`) cannot be NULL — or the custom query, checked
//! against the columns it returns. Runs at the first poll and every `table.poll.interval.ms`.

use turnpike_sdk::sql::{Column, Dialect, TableColumn, TableInfo, ValueKind};

use crate::config::{Mode, Settings, TableFilter};
use crate::position::QUERY;
use crate::query::{from_query, quote_table, Shape};

/// How one table (or the query) is read.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The name in positions and in the `turnpike.table` header: the table as the grant
    /// spells it (`public.orders`), or `query`.
    pub name: String,
    /// `table public.orders` or `the query`, for messages.
    pub label: String,
    /// `None`: the connector's output topic.
    pub topic: Option<String>,
    /// The incrementing column, as the table spells it (incrementing modes).
    pub inc: Option<String>,
    /// The timestamp columns, as the table spells them (timestamp modes).
    pub ts: Vec<String>,
    /// The first timestamp column's kind: `timestamp.initial` and the database clock are
    /// written in it.
    pub ts_kind: ValueKind,
    /// The record key's columns; none: no key.
    pub key: Vec<String>,
    /// Bulk: pages go by the one-column key (else by offset).
    pub keyset: bool,
    pub shape: Shape,
}

/// A column as a plan needs it, from a table or a result.
struct Col<'a> {
    name: &'a str,
    kind: ValueKind,
    type_name: &'a str,
    nullable: bool,
}

impl<'a> From<&'a TableColumn> for Col<'a> {
    fn from(c: &'a TableColumn) -> Self {
        Col { name: &c.name, kind: c.kind, type_name: &c.type_name, nullable: c.nullable }
    }
}

impl<'a> From<&'a Column> for Col<'a> {
    fn from(c: &'a Column) -> Self {
        // A result does not say whether a column may be NULL.
        Col { name: &c.name, kind: c.kind, type_name: &c.type_name, nullable: false }
    }
}

/// `*` matches any run of characters, `?` one.
pub(crate) fn glob_matches(glob: &str, name: &str) -> bool {
    let (g, n): (Vec<char>, Vec<char>) = (glob.chars().collect(), name.chars().collect());
    let (mut gi, mut ni, mut star, mut from) = (0, 0, None, 0);
    while ni < n.len() {
        match g.get(gi) {
            Some('*') => {
                star = Some(gi);
                from = ni;
                gi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                gi += 1;
                ni += 1;
            }
            _ => match star {
                Some(s) => {
                    gi = s + 1;
                    from += 1;
                    ni = from;
                }
                None => return false,
            },
        }
    }
    g[gi..].iter().all(|&c| c == '*')
}

/// The table name without its schema.
fn bare(name: &str) -> &str {
    name.rsplit_once('.').map_or(name, |(_, t)| t)
}

fn selected(filter: &TableFilter, name: &str) -> bool {
    let hit = |globs: &[String]| globs.iter().any(|g| glob_matches(g, name) || glob_matches(g, bare(name)));
    match filter {
        TableFilter::All => true,
        TableFilter::Include(globs) => hit(globs),
        TableFilter::Exclude(globs) => !hit(globs),
    }
}

/// A table name as part of a topic name: characters Kafka does not allow become `_`.
fn topic_part(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect()
}

/// The plans of the granted tables the settings select. `first`: the first listing, where a
/// whitelisted name that matches nothing (a typo) and an empty selection are errors.
pub(crate) fn table_plans(settings: &Settings, dialect: Dialect, tables: &[TableInfo], first: bool) -> Result<Vec<Plan>, String> {
    let granted: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    if first {
        if let TableFilter::Include(globs) = &settings.tables {
            for g in globs.iter().filter(|g| !g.contains(['*', '?'])) {
                if !granted.iter().any(|n| glob_matches(g, n) || glob_matches(g, bare(n))) {
                    return Err(format!("table.whitelist: {g:?} matches no table the grant gives ({})", list(&granted)));
                }
            }
        }
    }
    let chosen: Vec<&TableInfo> = tables.iter().filter(|t| selected(&settings.tables, &t.name)).collect();
    if first && chosen.is_empty() {
        if granted.is_empty() {
            return Err("the database grant gives no table that exists: check the connector's database.tables".into());
        }
        return Err(format!("no table to read: the grant gives {}, and table.whitelist / table.blacklist leave none", list(&granted)));
    }
    let mut problems = Vec::new();
    let mut plans = Vec::new();
    for t in chosen {
        match table_plan(settings, dialect, t) {
            Ok(plan) => plans.push(plan),
            Err(why) => problems.push(why),
        }
    }
    if problems.is_empty() {
        Ok(plans)
    } else {
        Err(problems.join("; "))
    }
}

fn table_plan(settings: &Settings, dialect: Dialect, t: &TableInfo) -> Result<Plan, String> {
    let what = format!("table {}", t.name);
    let cols: Vec<Col<'_>> = t.columns.iter().map(Col::from).collect();
    let mut problems = Vec::new();
    let inc = match (settings.mode.uses_incrementing(), &settings.incrementing_column) {
        (false, _) => None,
        (true, Some(name)) => incrementing(settings, &what, &cols, name).map_err(|e| problems.push(e)).ok(),
        (true, None) => match t.primary_key.as_slice() {
            [pk] if cols.iter().any(|c| c.name == pk && c.kind == ValueKind::Integer) => incrementing(settings, &what, &cols, pk).map_err(|e| problems.push(e)).ok(),
            _ => {
                problems.push(format!("{what} has no one-column integer primary key to use as the incrementing column: set incrementing.column.name"));
                None
            }
        },
    };
    let (ts, ts_kind) = timestamps(settings, &what, &cols).unwrap_or_else(|e| {
        problems.push(e);
        (Vec::new(), ValueKind::Timestamp)
    });
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let keyset = t.primary_key.len() == 1;
    let shape_inc = match settings.mode {
        Mode::Bulk if keyset => t.primary_key.first().map(String::as_str),
        _ => inc.as_deref(),
    };
    let shape = Shape::new(dialect, settings.mode, quote_table(dialect, &t.name), &ts, shape_inc, &t.primary_key, settings.delay_ms);
    let topic = settings.topic_prefix.as_ref().map(|p| format!("{p}{}", topic_part(bare(&t.name))));
    Ok(Plan { name: t.name.clone(), label: what, topic, inc, ts, ts_kind, key: t.primary_key.clone(), keyset, shape })
}

/// The plan of the custom query, from the columns it returns.
pub(crate) fn query_plan(settings: &Settings, dialect: Dialect, query: &str, columns: &[Column]) -> Result<Plan, String> {
    let what = "the query".to_owned();
    let cols: Vec<Col<'_>> = columns.iter().map(Col::from).collect();
    let mut problems = Vec::new();
    let inc = match (settings.mode.uses_incrementing(), &settings.incrementing_column) {
        (true, Some(name)) => incrementing(settings, &what, &cols, name).map_err(|e| problems.push(e)).ok(),
        _ => None,
    };
    let (ts, ts_kind) = timestamps(settings, &what, &cols).unwrap_or_else(|e| {
        problems.push(e);
        (Vec::new(), ValueKind::Timestamp)
    });
    let mut key = Vec::new();
    for name in &settings.key_columns {
        match resolve(&cols, name) {
            Some(c) => key.push(c.name.to_owned()),
            None => problems.push(format!("the query has no column {name:?} (key.columns); its columns are {}", names(&cols))),
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let shape = Shape::new(dialect, settings.mode, from_query(query), &ts, inc.as_deref(), &key, settings.delay_ms);
    Ok(Plan { name: QUERY.to_owned(), label: what, topic: settings.topic_prefix.clone(), inc, ts, ts_kind, key, keyset: false, shape })
}

/// The column named `name`: exactly, else the only one equal ignoring ASCII case (an
/// unquoted name in PostgreSQL is lower case).
fn resolve<'c, 'a>(cols: &'c [Col<'a>], name: &str) -> Option<&'c Col<'a>> {
    cols.iter().find(|c| c.name == name).or_else(|| {
        let mut alike = cols.iter().filter(|c| c.name.eq_ignore_ascii_case(name));
        match (alike.next(), alike.next()) {
            (Some(c), None) => Some(c),
            _ => None,
        }
    })
}

fn incrementing(settings: &Settings, what: &str, cols: &[Col<'_>], name: &str) -> Result<String, String> {
    let c = resolve(cols, name).ok_or_else(|| format!("{what} has no column {name:?} (incrementing.column.name); its columns are {}", names(cols)))?;
    if !matches!(c.kind, ValueKind::Integer | ValueKind::Decimal) {
        return Err(format!("column {:?} of {what} is {}, not an integer; the incrementing column must be a strictly increasing number", c.name, c.type_name));
    }
    if settings.validate_non_null && c.nullable {
        return Err(format!("column {:?} of {what} may be NULL, and rows with NULL there are never read: make it NOT NULL, or set validate.non.null: false", c.name));
    }
    Ok(c.name.to_owned())
}

fn timestamps(settings: &Settings, what: &str, cols: &[Col<'_>]) -> Result<(Vec<String>, ValueKind), String> {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for name in &settings.timestamp_columns {
        match resolve(cols, name) {
            None => problems.push(format!("{what} has no column {name:?} (timestamp.column.name); its columns are {}", names(cols))),
            Some(c) if !matches!(c.kind, ValueKind::Timestamp | ValueKind::TimestampTz | ValueKind::Date) => {
                problems.push(format!("column {:?} of {what} is {}; timestamp.column.name needs date or timestamp columns", c.name, c.type_name));
            }
            Some(c) => found.push(c),
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    if settings.validate_non_null && !found.is_empty() && found.iter().all(|c| c.nullable) {
        let which = match found.as_slice() {
            [one] => format!("column {:?} of {what} may be NULL", one.name),
            many => format!("every column of COALESCE({}) in {what} may be NULL", many.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")),
        };
        return Err(format!("{which}, and rows with no timestamp are never read: make one NOT NULL, or set validate.non.null: false"));
    }
    let kind = found.first().map_or(ValueKind::Timestamp, |c| c.kind);
    Ok((found.iter().map(|c| c.name.to_owned()).collect(), kind))
}

fn names(cols: &[Col<'_>]) -> String {
    cols.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        return "none".into();
    }
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_matches("customer_*", "customer_eu"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("public.*", "public.orders"));
        assert!(glob_matches("o?ders", "orders"));
        assert!(glob_matches("*_a*b", "x_aab_b"));
        assert!(!glob_matches("customer_*", "customers"));
        assert!(!glob_matches("orders", "orders_old"));
        assert!(selected(&TableFilter::Include(vec!["orders".into()]), "public.orders"), "the bare name counts");
        assert!(!selected(&TableFilter::Exclude(vec!["public.orders".into()]), "public.orders"));
        assert_eq!(topic_part("order$lines"), "order_lines");
    }
}
