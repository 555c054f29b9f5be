//! Which tables are read: the `--tables` globs, the names a grant can hold, and what the
//! URL says (its database, and whether it wrongly carries a user). Pure, like `plan`.

use super::plan::Table;

/// The database a URL names (its path), if any.
pub fn database_name(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let (_, path) = rest.split_once('/')?;
    path.split(['?', '#']).next().filter(|db| !db.is_empty())
}

/// Whether a URL carries a user or a password (`scheme://user:pw@host/…`).
pub fn has_userinfo(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?', '#']).next().is_some_and(|authority| authority.contains('@'))
}

/// Whether a connector's `database.tables` can name the table exactly, and if not, why.
/// Grants take letters, digits, `_`, `$` and `-`, with one `.` after a schema; `*` and `?`
/// are wildcards there, so a name holding them cannot be granted alone either.
pub fn grantable(table: &str) -> Result<(), String> {
    let ok = |c: char| c.is_alphanumeric() || matches!(c, '_' | '$' | '-');
    let parts: Vec<&str> = table.split('.').collect();
    if parts.len() <= 2 && parts.iter().all(|p| !p.is_empty() && p.chars().all(ok)) {
        Ok(())
    } else {
        Err("a connector's `database.tables` takes only letters, digits, `_`, `$` and `-` (and one `.` after the schema): rename the table to read it".to_owned())
    }
}

/// Whether `text` matches `glob` (`*`: any run of characters, `?`: one character), ASCII
/// case-insensitively, as the host matches a grant.
pub fn glob_match(glob: &str, text: &str) -> bool {
    let (g, t): (Vec<char>, Vec<char>) = (glob.chars().collect(), text.chars().collect());
    let (mut gi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if gi < g.len() && (g[gi] == '?' || g[gi].eq_ignore_ascii_case(&t[ti])) {
            gi += 1;
            ti += 1;
        } else if gi < g.len() && g[gi] == '*' {
            star = Some((gi, ti));
            gi += 1;
        } else if let Some((sg, st)) = star {
            // Let the last `*` take one more character and try again from there.
            gi = sg + 1;
            ti = st + 1;
            star = Some((sg, st + 1));
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|&c| c == '*')
}

/// The tables `globs` select (all when there are none), sorted by name, matched as the host
/// matches a grant: split at the first `.`, and a glob without one names a table of
/// `default_schema` (PostgreSQL's `public`, or MySQL's database), which is a name, not a
/// glob. Every glob that selects nothing is an error: a typo must not quietly drop tables.
pub fn select(tables: Vec<Table>, globs: &[String], default_schema: &str) -> Result<Vec<Table>, Vec<String>> {
    let matches = |glob: &str, table: &Table| {
        let (schema, name) = table.name.split_once('.').unwrap_or((default_schema, table.name.as_str()));
        match glob.trim().split_once('.') {
            Some((gs, gt)) => glob_match(gs, schema) && glob_match(gt, name),
            None => schema.eq_ignore_ascii_case(default_schema) && glob_match(glob.trim(), name),
        }
    };
    let unmatched: Vec<String> = globs.iter().filter(|g| !tables.iter().any(|t| matches(g.as_str(), t))).cloned().collect();
    if !unmatched.is_empty() {
        let mut names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        let shown = names.iter().take(12).copied().collect::<Vec<_>>().join(", ");
        let more = if names.len() > 12 { format!(", … ({} in all)", names.len()) } else { String::new() };
        return Err(unmatched.into_iter().map(|g| format!("--tables {g:?} matched no table (the tables seen: {shown}{more})")).collect());
    }
    let mut chosen: Vec<Table> = tables.into_iter().filter(|t| globs.is_empty() || globs.iter().any(|g| matches(g.as_str(), t))).collect();
    chosen.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(name: &str) -> Table {
        Table { name: name.into(), columns: Vec::new(), primary_key: Vec::new() }
    }

    #[test]
    fn urls_give_their_database_and_betray_a_user_in_them() {
        assert_eq!(database_name("postgresql://db:5432/shop?sslmode=x"), Some("shop"));
        assert_eq!(database_name("mysql://db/shop"), Some("shop"));
        assert_eq!(database_name("mysql://db:3306/"), None);
        assert_eq!(database_name("mysql://db:3306"), None);
        assert!(has_userinfo("postgresql://app:pw@db/shop"));
        assert!(has_userinfo("postgresql://app@db/shop"));
        assert!(!has_userinfo("postgresql://db/shop?x=a@b"));
    }

    #[test]
    fn globs_select_tables_in_the_default_schema_unless_they_name_one() {
        assert!(glob_match("customer_*", "customer_addresses"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "axxbyyc"));
        assert!(glob_match("ord?rs", "orders"));
        assert!(!glob_match("ord?rs", "ordrs"));
        assert!(!glob_match("a*b", "axxbc"));
        assert!(glob_match("Orders", "orders"), "case-insensitive, as grants are");
        let pg = || vec![table("public.orders"), table("public.customers"), table("sales.orders")];
        let names = |t: Vec<Table>| t.into_iter().map(|t| t.name).collect::<Vec<_>>();
        assert_eq!(names(select(pg(), &[], "public").unwrap()), ["public.customers", "public.orders", "sales.orders"]);
        assert_eq!(names(select(pg(), &["orders".into()], "public").unwrap()), ["public.orders"]);
        assert_eq!(names(select(pg(), &["*.orders".into()], "public").unwrap()), ["public.orders", "sales.orders"]);
        let mysql = || vec![table("orders"), table("order_lines")];
        assert_eq!(names(select(mysql(), &["order*".into()], "shop").unwrap()), ["order_lines", "orders"]);
        assert_eq!(names(select(mysql(), &["shop.orders".into()], "shop").unwrap()), ["orders"]);
        // MySQL names a table of another database `db.table`; a bare glob stays in the URL's.
        let two = || vec![table("orders"), table("audit.orders")];
        assert_eq!(names(select(two(), &["orders".into()], "shop").unwrap()), ["orders"]);
        assert_eq!(names(select(two(), &["audit.*".into(), " orders".into()], "shop").unwrap()), ["audit.orders", "orders"]);
        let err = select(pg(), &["orders".into(), "custmers".into()], "public").unwrap_err();
        assert_eq!(err.len(), 1, "{err:?}");
        assert!(err[0].starts_with("--tables \"custmers\" matched no table") && err[0].contains("public.customers"), "{}", err[0]);
    }

    #[test]
    fn only_names_a_grant_can_hold_are_grantable() {
        for good in ["public.orders", "orders", "order$lines", "ünïcode", "a-b"] {
            assert!(grantable(good).is_ok(), "{good}");
        }
        for bad in ["has space", "a.b.c", "wild*", "what?", "public.", "tab\tname"] {
            assert!(grantable(bad).is_err(), "{bad}");
        }
    }
}
