//! The database a source connector grants its plugin (`database:`): where it is, who signs
//! in, which tables the plugin may read, and the limits every query runs under. The plugin
//! sees none of it but the table names: the host holds the connection and refuses any
//! statement that writes or names another table.

use serde::{Deserialize, Serialize};

use crate::references::is_only_references;
use crate::{Problem, Ranged};

/// `database:` as written in a connector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DatabaseAccess {
    /// `postgresql://host:port/database` or `mysql://host:port/database` (MariaDB too), with
    /// no password in it.
    pub url: String,
    /// The database user to sign in as.
    pub user: String,
    /// The user's password: a reference (`${secret:NAME}`, `${env:NAME}`, `${file:/path}`).
    /// Default: none (trust or certificate sign-in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// The tables the plugin may read: names or globs (`orders`, `customer_*`, `public.*`);
    /// a name without a schema is in PostgreSQL's `public` or the URL's MySQL database.
    pub tables: Vec<String>,
    /// `disable` or `require` (TLS with the server's certificate verified). Default: `require`,
    /// except for a database on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<DatabaseTls>,
    /// A PEM file of extra certificate authorities to trust (a private CA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
    /// How long one query may run before the database cancels it. Default 30 s.
    #[serde(default = "default_statement_timeout")]
    pub statement_timeout_ms: Ranged<100, 3_600_000>,
    /// Rows one query may return at most, whatever the plugin asks for. Default 10,000.
    #[serde(default = "default_max_rows")]
    pub max_rows: Ranged<1, 1_000_000>,
}

/// Whether the connection is encrypted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DatabaseTls {
    /// Plain TCP.
    Disable,
    /// TLS, with the server's certificate checked against the web's roots (and `ca_file`).
    Require,
}

fn default_statement_timeout() -> Ranged<100, 3_600_000> {
    Ranged::constant(30_000)
}

fn default_max_rows() -> Ranged<1, 1_000_000> {
    Ranged::constant(10_000)
}

/// The database kinds a URL may name, by scheme.
const SCHEMES: &[&str] = &["postgresql", "postgres", "mysql", "mariadb"];

impl DatabaseAccess {
    /// The TLS setting that applies: as written, else `require` unless the host is loopback.
    pub fn effective_tls(&self) -> DatabaseTls {
        self.tls.unwrap_or_else(|| if parse_url(&self.url).is_ok_and(|u| is_loopback(&u.host)) { DatabaseTls::Disable } else { DatabaseTls::Require })
    }

    /// Every problem with the grant, keyed under `key` (`connector.database`).
    pub(crate) fn problems(&self, key: &str) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut add = |field: &str, msg: String| problems.push(Problem::new(format!("{key}.{field}"), msg));
        if let Err(why) = parse_url(&self.url) {
            add("url", why);
        }
        if self.user.trim().is_empty() {
            add("user", "empty; name the database user to sign in as".into());
        }
        if let Some(p) = &self.password {
            if !is_only_references(p) {
                add("password", "write a reference, not the password: `${secret:NAME}` (stored with PUT /v1/secrets/NAME), `${env:NAME}` or `${file:/path}`".into());
            }
        }
        if self.tables.is_empty() {
            add("tables", "list the tables the plugin may read (names or globs like `orders` or `customer_*`)".into());
        }
        for (i, t) in self.tables.iter().enumerate() {
            if let Err(why) = check_table_glob(t) {
                add(&format!("tables[{i}]"), why);
            }
        }
        problems
    }
}

/// A database URL's parts that the rules look at.
struct DatabaseUrl {
    host: String,
}

fn parse_url(url: &str) -> Result<DatabaseUrl, String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err("not a URL; write `postgresql://host:5432/database` or `mysql://host:3306/database`".into());
    };
    if !SCHEMES.contains(&scheme) {
        return Err(format!("scheme {scheme:?} is not one of {}", SCHEMES.join(", ")));
    }
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        if userinfo.contains(':') {
            return Err("holds a password; remove it from the URL and write `password: ${secret:NAME}`".into());
        }
        return Err(format!("holds the user {userinfo:?}; write it as `user:` instead"));
    }
    if path.contains(['?', '#']) {
        // Not echoed: options may hold a password (`?password=…`).
        return Err("has options (after `?` or `#`); leave them out: TLS is set with `tls` and `ca_file`".into());
    }
    if path.is_empty() || path.contains('/') {
        return Err(format!("names no database; end it with `/<database name>` (`{scheme}://{authority}/shop`)"));
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map_or(v6, |(h, _)| h),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    if host.is_empty() {
        return Err(format!("names no host; write `{scheme}://host:port/database`"));
    }
    if let Some((_, port)) = authority.rsplit_once(':').filter(|_| !authority.starts_with('[') || authority.contains("]:")) {
        if port.parse::<u16>().map_or(true, |p| p == 0) {
            return Err(format!("port {port:?} is not a port number"));
        }
    }
    Ok(DatabaseUrl { host: host.to_owned() })
}

fn is_loopback(host: &str) -> bool {
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A table name or glob: letters, digits, `_`, `$`, `*`, `?`, at most one `.`.
fn check_table_glob(glob: &str) -> Result<(), String> {
    let ok = |c: char| c.is_alphanumeric() || matches!(c, '_' | '$' | '*' | '?' | '-');
    let parts: Vec<&str> = glob.split('.').collect();
    if glob.is_empty() || parts.len() > 2 || parts.iter().any(|p| p.is_empty() || !p.chars().all(ok)) {
        return Err(format!("{glob:?} is not a table name or glob: `table`, `schema.table`, with `*` and `?` as wildcards"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(yaml: &str) -> DatabaseAccess {
        serde_yaml_ng::from_str(yaml).expect("parses")
    }

    #[test]
    fn a_plain_grant_has_no_problems_and_defaults() {
        let g = grant("{url: 'postgresql://127.0.0.1:5432/shop', user: turnpike, password: '${secret:db}', tables: [orders, 'customer_*']}");
        assert!(g.problems("d").is_empty(), "{:?}", g.problems("d"));
        assert_eq!((g.statement_timeout_ms.get(), g.max_rows.get()), (30_000, 10_000));
        assert_eq!(g.effective_tls(), DatabaseTls::Disable, "loopback defaults to plain TCP");
        let remote = grant("{url: 'mysql://db.internal:3306/shop', user: u, tables: [orders]}");
        assert_eq!(remote.effective_tls(), DatabaseTls::Require, "anything else defaults to TLS");
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let g = grant("{url: 'oracle://x/y', user: '', password: hunter2, tables: ['a.b.c', '']}");
        let keys: Vec<String> = g.problems("d").into_iter().map(|p| p.key).collect();
        assert_eq!(keys, ["d.url", "d.user", "d.password", "d.tables[0]", "d.tables[1]"]);
    }

    #[test]
    fn a_password_in_the_url_is_refused_in_words() {
        let g = grant("{url: 'postgresql://app:hunter2@db:5432/shop', user: app, tables: [t]}");
        let problems = g.problems("d");
        assert_eq!(problems.len(), 1);
        assert!(problems[0].message.contains("password: ${secret:NAME}"), "{}", problems[0].message);
        assert!(!problems[0].message.contains("hunter2"));
    }

    #[test]
    fn urls_need_a_host_and_a_database() {
        for bad in ["postgresql://db:5432", "postgresql://db:5432/", "mysql://:3306/shop", "postgresql://db:99999/shop", "shop"] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        assert!(parse_url("postgresql://db:5432/shop?password=hunter2").is_err_and(|why| !why.contains("hunter2")), "options are refused, not echoed");
        for good in ["postgres://db/shop", "mariadb://[::1]:3306/shop", "postgresql://db.internal:6432/shop"] {
            assert!(parse_url(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn an_empty_table_list_grants_nothing_and_says_so() {
        let g = grant("{url: 'postgresql://db/shop', user: u, tables: []}");
        assert_eq!(g.problems("d")[0].key, "d.tables");
    }
}
