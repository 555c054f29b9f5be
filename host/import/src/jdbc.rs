//! Confluent's JDBC source (`io.confluent.connect.jdbc.JdbcSourceConnector`) as the
//! `sql-source` plugin and the connector's `database:` grant. sql-source keeps Kafka Connect's
//! option names; the connection (URL, user, password, TLS) becomes the grant, with the
//! password as a reference, never its value.

use serde_json::{json, Map, Value};

use crate::ctx::{boolean, int, is_topic, list, literal, Ctx};

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
    let selection = tables(ctx, query.is_some(), &mut set);
    let grant_tables = grant_tables(ctx, &selection, query.as_deref());
    let (output_topic, routes) = topics(ctx, &selection, query.is_some(), &mut set);
    let database = database(ctx, grant_tables, c.get("batch.max.rows").and_then(Value::as_i64));
    Source { step: json!({"plugin": "sql-source", "config": Value::Object(c)}), database, output_topic, routes }
}

/// What the config selects: table names or globs to include (`Some`), or every table.
struct Selection {
    include: Option<Vec<String>>,
}

/// `table.whitelist` / `table.include.list` (regexes) → `table.whitelist` (globs), and the
/// blacklists likewise.
fn tables(ctx: &mut Ctx, with_query: bool, set: &mut impl FnMut(&mut Ctx, &str, Value)) -> Selection {
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
fn grant_tables(ctx: &mut Ctx, selection: &Selection, query: Option<&str>) -> Vec<String> {
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

/// `topic.prefix` → `output_topic` and `routes` (tables go to `<prefix><table>`; a query to
/// the prefix itself).
fn topics(ctx: &mut Ctx, selection: &Selection, with_query: bool, set: &mut impl FnMut(&mut Ctx, &str, Value)) -> (Option<String>, Vec<String>) {
    let prefix = ctx.value("topic.prefix");
    if let Some(p) = &prefix {
        if !p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) {
            ctx.skip("topic.prefix", "holds characters a topic name cannot have");
            ctx.note("set the connector's output_topic (and routes) by hand");
            return (None, Vec::new());
        }
    }
    if with_query {
        return match prefix {
            Some(topic) if is_topic(&topic) => {
                ctx.map("topic.prefix", "output_topic (with a query the prefix is the whole topic)");
                (Some(topic), Vec::new())
            }
            _ => {
                ctx.note("a query's records go to topic.prefix, which is not given: set the connector's output_topic before applying");
                (None, Vec::new())
            }
        };
    }
    let concrete: Option<Vec<String>> = selection.include.as_ref().filter(|names| names.iter().all(|n| !n.contains(['*', '?']))).cloned();
    let topic_of = |prefix: &str, table: &str| {
        let bare = table.rsplit_once('.').map_or(table, |(_, t)| t);
        let part: String = bare.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect();
        format!("{prefix}{part}")
    };
    match (prefix, concrete) {
        (Some(prefix), Some(names)) => {
            set(ctx, "topic.prefix", json!(prefix));
            let topics: Vec<String> = names.iter().map(|n| topic_of(&prefix, n)).filter(|t| is_topic(t)).fold(Vec::new(), |mut v, t| {
                if !v.contains(&t) {
                    v.push(t);
                }
                v
            });
            let mut topics = topics.into_iter();
            let output = topics.next();
            let routes: Vec<String> = topics.collect();
            if !routes.is_empty() {
                ctx.note(format!("each table goes to a topic of its own: {} is output_topic and the others are listed in routes", output.as_deref().unwrap_or_default()));
            }
            (output, routes)
        }
        (Some(prefix), None) => {
            set(ctx, "topic.prefix", json!(prefix));
            let output = prefix.trim_end_matches(['.', '_', '-']).to_owned();
            let output = if is_topic(&output) { output } else { format!("{prefix}tables") };
            ctx.note(format!(
                "the tables are chosen by pattern, so their topics ({prefix}<table>) cannot be listed here: add each to routes (or make one the output_topic, now {output:?}); \
a record for a topic not listed fails the connector"
            ));
            (Some(output), Vec::new())
        }
        (None, Some(names)) => {
            let output = names.first().map(|n| topic_of("", n));
            if names.len() > 1 {
                ctx.note("Kafka Connect wrote each table to a topic named after it; sql-source needs a non-empty topic.prefix for that, so every table now goes to output_topic: set topic.prefix, or make one connector per table");
            }
            (output.filter(|t| is_topic(t)), Vec::new())
        }
        (None, None) => {
            ctx.note("set the connector's output_topic (and topic.prefix with routes for a topic per table) before applying");
            (None, Vec::new())
        }
    }
}

/// A JDBC URL's parts.
struct JdbcUrl {
    scheme: &'static str,
    authority: String,
    database: Option<String>,
    user: Option<String>,
    password: Option<String>,
    params: Vec<(String, String)>,
    more_hosts: bool,
}

fn parse_jdbc(url: &str) -> Result<JdbcUrl, String> {
    let rest = url.strip_prefix("jdbc:").ok_or("not a JDBC URL (jdbc:…)")?;
    let (scheme, rest) = if let Some(r) = rest.strip_prefix("postgresql:") {
        ("postgresql", r)
    } else if let Some(r) = rest.strip_prefix("mysql:") {
        ("mysql", r)
    } else if let Some(r) = rest.strip_prefix("mariadb:") {
        ("mariadb", r)
    } else {
        let kind = rest.split(':').next().unwrap_or_default();
        return Err(format!("{kind} databases are not supported: sql-source reads PostgreSQL, MySQL and MariaDB"));
    };
    let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = match main.strip_prefix("//") {
        Some(r) => r.split_once('/').unwrap_or((r, "")),
        // `jdbc:postgresql:shop` is the database on this machine.
        None if scheme == "postgresql" && !main.contains(':') => ("localhost", main.trim_start_matches('/')),
        None => return Err(format!("the {scheme} URL form {:?} (load balancing, replication, …) is not supported: give one host", main.split("//").next().unwrap_or_default())),
    };
    if authority.contains("address=") || authority.contains('(') {
        return Err("the address=(…) form is not supported: give one host as host:port".into());
    }
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let (user, password) = match userinfo {
        Some(u) => match u.split_once(':') {
            Some((user, pw)) => (Some(decode(user)), Some(decode(pw))),
            None => (Some(decode(u)), None),
        },
        None => (None, None),
    };
    let first = hosts.split(',').next().unwrap_or_default();
    if first.is_empty() {
        return Err("names no host".into());
    }
    let params = query.split('&').filter(|p| !p.is_empty()).map(|p| p.split_once('=').map_or((p.to_owned(), String::new()), |(k, v)| (k.to_owned(), decode(v)))).collect();
    let database = Some(decode(path)).filter(|d| !d.is_empty());
    Ok(JdbcUrl { scheme, authority: first.to_owned(), database, user, password, params, more_hosts: hosts.contains(',') })
}

/// `%XX` escapes resolved (as JDBC drivers read URL parameters).
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() && bytes[i + 1].is_ascii_hexdigit() && bytes[i + 2].is_ascii_hexdigit() {
            let hex = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
            out.push(hex(bytes[i + 1]) * 16 + hex(bytes[i + 2]));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `database:` from the connection options; `None` (with notes) when it cannot be written.
fn database(ctx: &mut Ctx, tables: Vec<String>, batch_max_rows: Option<i64>) -> Option<Value> {
    const URL: &str = "connection.url";
    let Some(url) = ctx.value(URL) else {
        ctx.note("the config has no connection.url: add `database: {url, user, password, tables}` to the connector before applying");
        for key in ["connection.user", "connection.password"] {
            ctx.skip(key, "there is no connection.url to grant");
        }
        return None;
    };
    let parsed = match parse_jdbc(&url) {
        Ok(p) => p,
        Err(why) => {
            // The URL is not echoed: it may hold a password.
            ctx.skip(URL, why);
            for key in ["connection.user", "connection.password"] {
                ctx.skip(key, "the connection.url could not be carried over, so there is no database grant");
            }
            ctx.note("no database grant is written: add `database: {url, user, password, tables}` to the connector before applying");
            return None;
        }
    };
    let mut d = Map::new();
    let Some(db) = &parsed.database else {
        ctx.skip(URL, "names no database; Turnpike's grant needs one (`…/<database>`)");
        ctx.note("no database grant is written: add `database: {url, user, password, tables}` to the connector before applying");
        return None;
    };
    d.insert("url".into(), json!(format!("{}://{}/{}", parsed.scheme, parsed.authority, db)));
    ctx.map(URL, "database.url");
    if parsed.more_hosts {
        ctx.note(format!("connection.url lists several hosts; the grant names the first, {}: Turnpike connects to one", parsed.authority));
    }
    let mut params = parsed.params.clone();
    let mut take = |name: &str| params.iter().position(|(k, _)| k.eq_ignore_ascii_case(name)).map(|i| params.remove(i).1);
    let user = ctx.value("connection.user").or_else(|| take("user")).or(parsed.user.clone());
    let password = ctx
        .raw("connection.password")
        .filter(|p| !p.is_empty())
        .map(|p| ("connection.password", p))
        .or_else(|| take("password").map(|p| ("connection.url", p)))
        .or(parsed.password.clone().map(|p| ("connection.url", p)));
    let tls = tls(parsed.scheme, &mut take);
    let ca_file = take("sslrootcert").or_else(|| take("serverSslCert"));
    match user {
        Some(user) => {
            d.insert("user".into(), json!(user));
            ctx.map("connection.user", "database.user");
        }
        None => {
            ctx.note("the connection names no user: add `database: {url, user, password, tables}` by hand (no grant is written without a user)");
            ctx.skip("connection.password", "there is no user to sign in as, so there is no database grant");
            return None;
        }
    }
    if let Some((key, value)) = password {
        let reference = ctx.credential(key, &value, "db-password", "the database password");
        d.insert("password".into(), json!(reference));
        ctx.map("connection.password", "database.password (a reference)");
    }
    d.insert("tables".into(), json!(tables));
    match tls {
        Some(t) => {
            d.insert("tls".into(), json!(t));
        }
        None => ctx.note(
            "database.tls is left to Turnpike's default, require (TLS with the certificate checked), unless the database is on this machine; the JDBC driver only preferred TLS: set `tls: disable` if the server has none",
        ),
    }
    if let Some(ca) = ca_file {
        d.insert("ca_file".into(), json!(ca));
        ctx.note("database.ca_file is the certificate file the JDBC URL named: it must exist at that path on the Turnpike host");
    }
    if let Some(rows) = batch_max_rows.filter(|r| *r > 10_000) {
        d.insert("max_rows".into(), json!(rows));
        ctx.note(format!("database.max_rows is {rows}, batch.max.rows, so that one query may return a whole batch (the grant's default is 10000)"));
    }
    for (name, _) in params {
        let reason = match name.as_str() {
            "currentSchema" => "tables without a schema are looked up in public: name the schema in the table list (schema.table)",
            "serverTimezone" | "connectionTimeZone" => "Turnpike reads timestamps without a zone as UTC",
            _ => "a JDBC driver option Turnpike's database client does not take",
        };
        ctx.skip_part(format!("{URL}?{name}"), reason);
    }
    Some(Value::Object(d))
}

/// The grant's `tls` from the URL's driver options: `disable`, `require`, or `None` for the
/// drivers' "prefer".
fn tls(scheme: &str, take: &mut impl FnMut(&str) -> Option<String>) -> Option<&'static str> {
    let on = |v: &str| boolean(v).map(|b| if b { "require" } else { "disable" });
    let mut tls = None;
    if scheme == "postgresql" {
        if let Some(v) = take("ssl") {
            tls = on(&v);
        }
        if let Some(mode) = take("sslmode") {
            tls = match mode.to_ascii_lowercase().as_str() {
                "disable" => Some("disable"),
                "require" | "verify-ca" | "verify-full" => Some("require"),
                _ => None,
            };
        }
    } else {
        for name in ["useSSL", "useSsl", "requireSSL"] {
            if let Some(v) = take(name) {
                tls = on(&v).or(tls);
            }
        }
        if let Some(mode) = take("sslMode") {
            tls = match mode.to_ascii_uppercase().as_str() {
                "DISABLED" | "DISABLE" => Some("disable"),
                "REQUIRED" | "VERIFY_CA" | "VERIFY_IDENTITY" | "TRUST" | "VERIFY-CA" | "VERIFY-FULL" => Some("require"),
                _ => None,
            };
        }
    }
    tls
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jdbc_urls() {
        let u = parse_jdbc("jdbc:postgresql://db.internal:5432/shop?user=app&password=s%40cret&sslmode=verify-full&ApplicationName=x").unwrap();
        assert_eq!((u.scheme, u.authority.as_str(), u.database.as_deref()), ("postgresql", "db.internal:5432", Some("shop")));
        assert_eq!(u.params.iter().find(|(k, _)| k == "password").map(|(_, v)| v.as_str()), Some("s@cret"));
        let u = parse_jdbc("jdbc:postgresql:shop").unwrap();
        assert_eq!((u.authority.as_str(), u.database.as_deref()), ("localhost", Some("shop")));
        let u = parse_jdbc("jdbc:mysql://bob:pw@h1:3306,h2:3306/shop").unwrap();
        assert_eq!((u.user.as_deref(), u.password.as_deref(), u.authority.as_str(), u.more_hosts), (Some("bob"), Some("pw"), "h1:3306", true));
        assert!(parse_jdbc("jdbc:sqlserver://h;databaseName=x").err().is_some_and(|e| e.starts_with("sqlserver databases are not supported")));
        assert!(parse_jdbc("jdbc:mysql:loadbalance://h1,h2/shop").is_err());
        assert_eq!(parse_jdbc("jdbc:mariadb://[::1]:3306").unwrap().database, None);
    }

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
