//! The tables a JDBC source reads: Kafka Connect's include and exclude lists (names or
//! regexes) as sql-source's glob lists, and the tables the `database:` grant lets it see.

use serde_json::{json, Value};

use crate::ctx::{list, Ctx};

/// What the config selects: table names or globs to include (`Some`), or every table.
pub(super) struct Selection {
    pub(super) include: Option<Vec<String>>,
}

/// `table.whitelist` / `table.include.list` (regexes) → `table.whitelist` (globs), and the
/// blacklists likewise.
pub(super) fn tables(ctx: &mut Ctx, with_query: bool, set: &mut impl FnMut(&mut Ctx, &str, Value)) -> Selection {
    let mut selection = Selection { include: None };
    for (names, regexes, to) in [("table.whitelist", "table.include.list", "table.whitelist"), ("table.blacklist", "table.exclude.list", "table.blacklist")] {
        if with_query {
            for option in [names, regexes] {
                ctx.skip(option, "not used with query (the query says what to read); Kafka Connect ignored it too");
            }
            continue;
        }
        let globs = match (ctx.value(names), ctx.value(regexes)) {
            (Some(given), other) => {
                if other.is_some() {
                    ctx.skip(regexes, format!("{names} is given too; sql-source takes one list"));
                }
                let globs: Result<Vec<String>, String> = list(&given).iter().map(|t| table_glob(&unquote(t))).collect();
                (names, globs)
            }
            (None, Some(given)) => {
                let globs: Result<Vec<String>, String> = list(&given).iter().map(|r| regex_to_glob(r).and_then(|g| table_glob(&g))).collect();
                (regexes, globs)
            }
            (None, None) => continue,
        };
        match globs {
            (option, Ok(globs)) if !globs.is_empty() => {
                if to == "table.whitelist" {
                    selection.include = Some(globs.clone());
                }
                c_set(ctx, set, option, to, json!(globs));
            }
            (option, Ok(_)) => ctx.skip(option, "names no table"),
            (option, Err(why)) => {
                ctx.skip(option, format!("{why}; write the list of tables by hand (names or globs with `*`)"));
                ctx.note(format!("{option} could not be carried over: add source.config.{to} by hand"));
            }
        }
    }
    selection
}

/// Writes `value` under sql-source's name `to` while mapping `option` (Kafka Connect's name,
/// which may differ: `table.include.list` → `table.whitelist`).
fn c_set(ctx: &mut Ctx, set: &mut impl FnMut(&mut Ctx, &str, Value), option: &str, to: &str, value: Value) {
    set(ctx, to, value);
    ctx.map(option, format!("source.config.{to}"));
}

fn unquote(name: &str) -> String {
    name.split('.').map(|part| part.trim_matches(['"', '`', '[', ']'])).collect::<Vec<_>>().join(".")
}

/// A table name or glob as the grant takes it: letters, digits, `_ $ - * ?`, at most one
/// `.` (a three-part `catalog.schema.table` keeps its last two parts).
fn table_glob(name: &str) -> Result<String, String> {
    let parts: Vec<&str> = name.split('.').collect();
    let parts = if parts.len() == 3 { &parts[1..] } else { &parts[..] };
    let ok = |c: char| c.is_alphanumeric() || matches!(c, '_' | '$' | '*' | '?' | '-');
    if parts.len() > 2 || parts.iter().any(|p| p.is_empty() || !p.chars().all(ok)) {
        return Err(format!("{name:?} is not a table name or glob Turnpike takes"));
    }
    Ok(parts.join("."))
}

/// A regex of `table.include.list` as a glob, when it is one in disguise (`orders`,
/// `public\.orders`, `customer_.*`).
fn regex_to_glob(regex: &str) -> Result<String, String> {
    let body = regex.trim().trim_start_matches('^').trim_end_matches('$');
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e) if !e.is_alphanumeric() => out.push(e),
                _ => return Err(format!("the regular expression {regex:?} has no glob equivalent")),
            },
            '.' if chars.peek() == Some(&'*') => {
                chars.next();
                out.push('*');
            }
            '.' if chars.peek() == Some(&'+') => {
                chars.next();
                out.push_str("?*");
            }
            // A lone dot is meant as the schema separator far more often than "any character".
            '.' => out.push('.'),
            c if c.is_alphanumeric() || matches!(c, '_' | '-' | '$') => out.push(c),
            _ => return Err(format!("the regular expression {regex:?} has no glob equivalent")),
        }
    }
    Ok(out)
}

/// The grant's tables: the selection's names, the schema of `schema.pattern`, the tables a
/// query names, or every table (with a note).
pub(super) fn grant_tables(ctx: &mut Ctx, selection: &Selection, query: Option<&str>) -> Vec<String> {
    if let Some(q) = query {
        let found = query_tables(q);
        ctx.skip("schema.pattern", "not used with query");
        if found.is_empty() {
            ctx.note("database.tables grants every table (`*`): the query's tables could not be found; list them instead");
            return vec!["*".into()];
        }
        ctx.note(format!("database.tables lists the tables found after FROM and JOIN in the query ({}): the host refuses a query naming any other, so check it", found.join(", ")));
        return found;
    }
    if let Some(include) = &selection.include {
        ctx.skip("schema.pattern", "the table list says which tables are read");
        return include.clone();
    }
    if let Some(schema) = ctx.value("schema.pattern") {
        let glob = schema.replace('%', "*").replace('_', "?");
        let literal_schema = schema.replace('%', "*");
        if let Ok(g) = table_glob(&format!("{literal_schema}.*")) {
            ctx.map("schema.pattern", "database.tables");
            if glob != literal_schema {
                ctx.note(format!("schema.pattern {schema:?}: `_` is taken as itself, not as LIKE's any-character"));
            }
            return vec![g];
        }
        ctx.skip("schema.pattern", "not a schema name Turnpike's grant takes");
    }
    ctx.note("database.tables grants every table (`*`), as Kafka Connect read every table it could see: list only the tables the connector should read");
    vec!["*".into()]
}

/// The identifiers after `FROM` and `JOIN` in a query (not subqueries), deduplicated.
fn query_tables(query: &str) -> Vec<String> {
    let words: Vec<&str> = query.split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == '(' || c == ')').filter(|w| !w.is_empty()).collect();
    let mut out: Vec<String> = Vec::new();
    for pair in words.windows(2) {
        if pair[0].eq_ignore_ascii_case("from") || pair[0].eq_ignore_ascii_case("join") {
            if let Ok(name) = table_glob(&unquote(pair[1])) {
                if !name.contains(['*', '?']) && !out.contains(&name) && !name.eq_ignore_ascii_case("select") {
                    out.push(name);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_list_regexes_that_are_globs() {
        assert_eq!(regex_to_glob("public\\.orders").unwrap(), "public.orders");
        assert_eq!(regex_to_glob("^customer_.*$").unwrap(), "customer_*");
        assert_eq!(regex_to_glob("shop.order_lines").unwrap(), "shop.order_lines");
        assert!(regex_to_glob("(orders|customers)").is_err());
        assert_eq!(table_glob("cat.public.orders").unwrap(), "public.orders");
        assert_eq!(unquote("\"public\".\"Orders\""), "public.Orders");
    }

    #[test]
    fn tables_a_query_reads() {
        let q = "SELECT o.id, c.email FROM shop.orders o JOIN \"customers\" c ON c.id = o.customer_id WHERE o.total > (SELECT 1 FROM dual)";
        assert_eq!(query_tables(q), ["shop.orders", "customers", "dual"]);
    }
}
