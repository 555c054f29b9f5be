//! Reading a JDBC URL (`jdbc:postgresql://…`, `jdbc:mysql://…`, `jdbc:mariadb://…`) into the
//! parts the `database:` grant takes; the URL may carry a user, a password and driver options.

/// A JDBC URL's parts.
pub(super) struct JdbcUrl {
    pub(super) scheme: &'static str,
    pub(super) authority: String,
    pub(super) database: Option<String>,
    pub(super) user: Option<String>,
    pub(super) password: Option<String>,
    pub(super) params: Vec<(String, String)>,
    pub(super) more_hosts: bool,
}

pub(super) fn parse_jdbc(url: &str) -> Result<JdbcUrl, String> {
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
}
