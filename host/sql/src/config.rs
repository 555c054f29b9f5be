//! What a [`crate::Database`] connects to, and the checks that need no network: the URL's
//! scheme, host and database, a password kept out of the URL, limits that cannot work.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use url::{Host, Url};

use crate::{Dialect, SqlError};

/// Whether the connection is encrypted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tls {
    /// Plain TCP, for a database on the same host or a private network.
    Disable,
    /// TLS, with the server's certificate verified against the webpki roots (Mozilla's) and
    /// the optional `ca_file`; the connection fails rather than falling back to plain TCP.
    Require,
}

/// One granted database, as the runtime resolved it from a connector's `database` grant.
#[derive(Clone)]
pub struct DatabaseConfig {
    /// `postgres://host:port/db`, `postgresql://…`, `mysql://host:port/db` or `mariadb://…`.
    /// The port defaults to 5432 / 3306. Never a password: that is `password`.
    pub url: String,
    /// The user to sign in as.
    pub user: String,
    /// Already resolved from a secret reference by the caller; never shown in `Debug`,
    /// errors or logs.
    pub password: Option<String>,
    /// The grant's table globs (`orders`, `customer_*`, `public.*`).
    pub tables: Vec<String>,
    pub tls: Tls,
    /// PEM file of extra root certificates (a private CA), trusted besides the webpki roots.
    pub ca_file: Option<PathBuf>,
    /// How long the database may run one statement before cancelling it.
    pub statement_timeout: Duration,
    /// How long connecting and signing in may take.
    pub connect_timeout: Duration,
    /// The most rows one query call returns, whatever the plugin asks for.
    pub max_rows: u32,
    /// How long one call keeps reconnecting (backoff 100 ms doubling to 2 s) before it fails
    /// as unavailable.
    pub retry_budget: Duration,
}

impl fmt::Debug for DatabaseConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseConfig")
            .field("url", &self.url)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("tables", &self.tables)
            .field("tls", &self.tls)
            .field("ca_file", &self.ca_file)
            .field("statement_timeout", &self.statement_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_rows", &self.max_rows)
            .field("retry_budget", &self.retry_budget)
            .finish()
    }
}

/// A checked [`DatabaseConfig`]: where to connect, as whom, within which limits.
pub(crate) struct Target {
    pub dialect: Dialect,
    pub host: String,
    pub port: u16,
    pub database: String,
    pub user: String,
    pub password: Option<String>,
    /// `postgresql://host:5432/db`, for messages: never a user or a password.
    pub shown: String,
    pub default_schema: String,
    pub tls: Tls,
    pub ca_file: Option<PathBuf>,
    pub statement_timeout: Duration,
    pub connect_timeout: Duration,
    pub max_rows: u32,
    pub retry_budget: Duration,
}

impl Target {
    /// `text` with the password cut out, for any message that quotes a database or a
    /// driver: they never should contain it, and this makes sure.
    pub(crate) fn scrub(&self, text: &str) -> String {
        match self.password.as_deref() {
            Some(password) if !password.is_empty() => text.replace(password, "<password>"),
            _ => text.to_owned(),
        }
    }

    /// The statement timeout in whole milliseconds, at least 1 and at most `i32::MAX` (the
    /// largest both PostgreSQL and MySQL take; 0 would mean "no timeout" to both).
    pub(crate) fn statement_timeout_ms(&self) -> u64 {
        (self.statement_timeout.as_millis().clamp(1, i32::MAX as u128)) as u64
    }
}

/// Checks `config` and resolves it into a [`Target`].
pub(crate) fn parse(config: &DatabaseConfig) -> Result<Target, SqlError> {
    let Address { dialect, scheme, host, port, database, user: url_user } = parse_url(&config.url)?;
    let user = match (config.user.trim(), url_user) {
        ("", Some(from_url)) => from_url,
        ("", None) => return Err(refused("the database user is empty: set `user` in the grant")),
        (given, Some(from_url)) if given != from_url => {
            return Err(refused(format!(
                "the database URL names user {from_url:?} but `user` says {given:?}: keep only `user`"
            )))
        }
        (given, _) => given.to_owned(),
    };
    if config.statement_timeout.is_zero() {
        return Err(refused("statement_timeout is 0, which databases read as \"no timeout\": give it a duration"));
    }
    if config.connect_timeout.is_zero() {
        return Err(refused("connect_timeout is 0: give it a duration"));
    }
    if config.max_rows == 0 {
        return Err(refused("max_rows is 0, so every query would return nothing: allow at least 1 row"));
    }
    if config.tls == Tls::Disable && config.ca_file.is_some() {
        return Err(refused("ca_file is set but tls is disable: set tls to require to use it, or drop ca_file"));
    }
    let shown_host = if host.contains(':') { format!("[{host}]") } else { host.clone() };
    let shown = format!("{scheme}://{shown_host}:{port}/{database}");
    let default_schema = match dialect {
        Dialect::Postgresql => "public".to_owned(),
        Dialect::Mysql => database.clone(),
    };
    Ok(Target {
        dialect,
        host,
        port,
        database,
        user,
        password: config.password.clone(),
        shown,
        default_schema,
        tls: config.tls,
        ca_file: config.ca_file.clone(),
        statement_timeout: config.statement_timeout,
        connect_timeout: config.connect_timeout,
        max_rows: config.max_rows,
        retry_budget: config.retry_budget,
    })
}

/// The parts of a database URL.
#[derive(Debug, PartialEq, Eq)]
struct Address {
    dialect: Dialect,
    scheme: String,
    host: String,
    port: u16,
    database: String,
    user: Option<String>,
}

fn parse_url(raw: &str) -> Result<Address, SqlError> {
    let raw = raw.trim();
    let url = Url::parse(raw).map_err(|error| {
        refused(format!(
            "database URL {:?} is not a URL ({error}): write it as postgres://host:port/database or mysql://host:port/database",
            without_credentials(raw)
        ))
    })?;
    let scheme = url.scheme().to_owned();
    let (dialect, default_port) = match scheme.as_str() {
        "postgres" | "postgresql" => (Dialect::Postgresql, 5432),
        "mysql" | "mariadb" => (Dialect::Mysql, 3306),
        other => {
            return Err(refused(format!(
                "database URL scheme {other:?} is not supported: use postgres://, postgresql://, mysql:// or mariadb://"
            )))
        }
    };
    if url.password().is_some() {
        return Err(refused(
            "the database URL contains a password: remove it from the URL and give it as `password: ${secret:…}` in the grant, so it stays out of config files and logs",
        ));
    }
    let host = match url.host() {
        Some(Host::Domain(name)) if !name.is_empty() => decode(name).map_err(|()| refused("the database URL's host is not valid percent-encoded UTF-8"))?,
        Some(Host::Ipv4(address)) => address.to_string(),
        Some(Host::Ipv6(address)) => address.to_string(),
        _ => return Err(refused(format!("the database URL names no host: write it as {scheme}://host:port/database"))),
    };
    let port = url.port().unwrap_or(default_port);
    if url.query().is_some() {
        // Not echoed: options may hold a password (`?password=…`).
        return Err(refused("the database URL has options (after `?`): give TLS as `tls` and `ca_file` in the grant, and leave the rest out of the URL"));
    }
    if url.fragment().is_some() {
        return Err(refused("the database URL has a #fragment: remove it"));
    }
    let path = url.path().strip_prefix('/').unwrap_or(url.path());
    let path = path.strip_suffix('/').unwrap_or(path);
    if path.is_empty() {
        return Err(refused(format!("the database URL names no database: write it as {scheme}://{host}:{port}/<database>")));
    }
    if path.contains('/') {
        return Err(refused(format!(
            "the database URL's path {path:?} is not one database name: write it as {scheme}://{host}:{port}/<database>"
        )));
    }
    let database = decode(path).map_err(|()| refused("the database name in the URL is not valid percent-encoded UTF-8"))?;
    let user = match url.username() {
        "" => None,
        name => Some(decode(name).map_err(|()| refused("the user in the database URL is not valid percent-encoded UTF-8"))?),
    };
    Ok(Address { dialect, scheme, host, port, database, user })
}

/// `%xx` escapes decoded; `Err` for a broken escape or bytes that are not UTF-8.
fn decode(text: &str) -> Result<String, ()> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        if byte == b'%' {
            let hex = bytes.get(index + 1..index + 3).ok_or(())?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return Err(());
            }
            let digits = std::str::from_utf8(hex).map_err(|_| ())?;
            out.push(u8::from_str_radix(digits, 16).map_err(|_| ())?);
            index += 3;
        } else {
            out.push(byte);
            index += 1;
        }
    }
    String::from_utf8(out).map_err(|_| ())
}

/// A URL for an error message, with anything before an `@` (a user, maybe a password) cut.
fn without_credentials(raw: &str) -> String {
    match (raw.find("://"), raw.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => format!("{}://…@{}", &raw[..scheme_end], &raw[at + 1..]),
        (None, Some(at)) => format!("…@{}", &raw[at + 1..]),
        _ => raw.to_owned(),
    }
}

fn refused(message: impl Into<String>) -> SqlError {
    SqlError::Refused(message.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(url: &str) -> DatabaseConfig {
        DatabaseConfig {
            url: url.to_owned(),
            user: "reader".to_owned(),
            password: Some("s3cret-pw".to_owned()),
            tables: vec!["orders".to_owned()],
            tls: Tls::Disable,
            ca_file: None,
            statement_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(5),
            max_rows: 1000,
            retry_budget: Duration::from_secs(30),
        }
    }

    fn refusal(config: &DatabaseConfig) -> String {
        match parse(config) {
            Err(SqlError::Refused(message)) => message,
            Err(other) => panic!("{}: expected Refused, got {other:?}", config.url),
            Ok(_) => panic!("{}: expected Refused, got a target", config.url),
        }
    }

    #[test]
    fn every_scheme_maps_to_its_dialect_port_and_default_schema() {
        for (url, dialect, host, port, database, schema) in [
            ("postgres://db.internal:6432/shop", Dialect::Postgresql, "db.internal", 6432, "shop", "public"),
            ("postgresql://db.internal/shop", Dialect::Postgresql, "db.internal", 5432, "shop", "public"),
            ("mysql://10.0.0.7:3307/shop", Dialect::Mysql, "10.0.0.7", 3307, "shop", "shop"),
            ("mariadb://maria/shop/", Dialect::Mysql, "maria", 3306, "shop", "shop"),
            ("postgres://[::1]:5433/my%20db", Dialect::Postgresql, "::1", 5433, "my db", "public"),
        ] {
            let target = parse(&config(url)).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(target.dialect, dialect, "{url}");
            assert_eq!(target.host, host, "{url}");
            assert_eq!(target.port, port, "{url}");
            assert_eq!(target.database, database, "{url}");
            assert_eq!(target.default_schema, schema, "{url}");
            assert_eq!(target.user, "reader");
        }
        let v6 = parse(&config("postgres://[::1]:5433/shop")).unwrap();
        assert_eq!(v6.shown, "postgres://[::1]:5433/shop");
        assert_eq!(parse(&config("mariadb://maria/shop")).unwrap().shown, "mariadb://maria:3306/shop");
    }

    #[test]
    fn refuses_urls_that_cannot_work_and_says_what_to_write() {
        for (url, says) in [
            ("postgres://db.internal:5432", "names no database"),
            ("postgres://db.internal:5432/", "names no database"),
            ("mysql://db/a/b", "not one database name"),
            ("oracle://db/shop", "not supported"),
            ("db.internal:5432/shop", "not supported"),
            ("postgres:///shop", "names no host"),
            ("not a url", "not a URL"),
            ("postgres://db/shop?sslmode=require", "`tls`"),
        ] {
            let message = refusal(&config(url));
            assert!(message.contains(says), "{url}: {message}");
        }
    }

    #[test]
    fn a_password_in_the_url_is_refused_without_echoing_it() {
        for url in ["postgres://reader:hunter22@db/shop", "mysql://reader:hunter22@db:3306/shop"] {
            let message = refusal(&config(url));
            assert!(message.contains("password: ${secret:"), "{message}");
            assert!(!message.contains("hunter22"), "{message}");
        }
        let message = refusal(&config("postgres://reader:hunter22@db:notaport/shop"));
        assert!(!message.contains("hunter22"), "{message}");
    }

    #[test]
    fn the_user_comes_from_the_grant_or_the_url_but_not_two_different_ones() {
        let mut from_url = config("postgres://owner@db/shop");
        from_url.user = String::new();
        assert_eq!(parse(&from_url).unwrap().user, "owner");
        assert!(refusal(&config("postgres://owner@db/shop")).contains("keep only `user`"));
        let mut nobody = config("postgres://db/shop");
        nobody.user = " ".to_owned();
        assert!(refusal(&nobody).contains("user is empty"));
    }

    #[test]
    fn refuses_limits_that_cannot_work() {
        let mut zero_timeout = config("postgres://db/shop");
        zero_timeout.statement_timeout = Duration::ZERO;
        assert!(refusal(&zero_timeout).contains("statement_timeout"));
        let mut zero_rows = config("postgres://db/shop");
        zero_rows.max_rows = 0;
        assert!(refusal(&zero_rows).contains("max_rows"));
        let mut stray_ca = config("postgres://db/shop");
        stray_ca.ca_file = Some(PathBuf::from("/etc/ca.pem"));
        assert!(refusal(&stray_ca).contains("tls to require"));
    }

    #[test]
    fn debug_and_scrub_never_show_the_password() {
        let config = config("postgres://db/shop");
        assert!(!format!("{config:?}").contains("s3cret-pw"));
        let target = parse(&config).unwrap();
        assert_eq!(target.scrub("bad password s3cret-pw given"), "bad password <password> given");
        assert_eq!(target.statement_timeout_ms(), 5000);
    }
}
