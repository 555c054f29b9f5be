//! The connector's `database:` grant from the connection options (`connection.url`, `.user`,
//! `.password`): the password as a reference, never its value, and the URL's driver options
//! either carried over (TLS, CA file) or listed as not carried over.

use serde_json::{json, Map, Value};

use super::url::parse_jdbc;
use crate::ctx::{boolean, Ctx};

/// `database:` from the connection options; `None` (with notes) when it cannot be written.
pub(super) fn database(ctx: &mut Ctx, tables: Vec<String>, batch_max_rows: Option<i64>) -> Option<Value> {
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
