//! The database [`crate::sql`] calls off WebAssembly, so source logic runs in `cargo test`.
//! Not a SQL engine: a test gives the dialect, the table list and a closure that answers each
//! statement (usually by recognising the few statement shapes its plugin sends). What the
//! host itself enforces is enforced here too: no grant means [`SqlError::NotGranted`], a
//! statement that is not one query is [`SqlError::Refused`], and no result is longer than the
//! rows asked for or the grant's `max_rows`. One database per thread (each test runs on its
//! own thread).

use std::cell::RefCell;

use super::{Dialect, Param, RowSet, SqlError, TableInfo};

/// What answers a statement: `(statement, params, max_rows) -> rows`. `max_rows` is already
/// capped by [`FakeDatabase::max_rows`].
type Responder = Box<dyn FnMut(&str, &[Param], u32) -> Result<RowSet, SqlError>>;

/// The grant's default `max_rows`, as in the host.
const DEFAULT_MAX_ROWS: u32 = 10_000;

/// A database for native tests; install it with [`crate::testing::set_sql`].
///
/// ```
/// use turnpike_sdk::sql::{self, Column, Dialect, RowSet, ValueKind};
/// use turnpike_sdk::testing::{self, FakeDatabase};
///
/// testing::set_sql(FakeDatabase::new(Dialect::PostgreSql, vec![], |statement, _params, _max| {
///     assert_eq!(statement, "SELECT 1 AS one");
///     Ok(RowSet::builder([Column::new("one", ValueKind::Integer, "int4")]).row([Some("1")]).build())
/// }));
/// let rows = sql::query("SELECT 1 AS one", &[], 10).unwrap();
/// assert_eq!(rows.row(0).and_then(|r| r.text(0)), Some("1"));
/// ```
pub struct FakeDatabase {
    dialect: Dialect,
    tables: Vec<TableInfo>,
    max_rows: u32,
    /// Taken out while it runs, so a responder that calls `sql` gets an error, not a panic.
    responder: Option<Responder>,
}

impl FakeDatabase {
    /// A database speaking `dialect`, granting `tables`, answering statements with `responder`.
    pub fn new(dialect: Dialect, tables: Vec<TableInfo>, responder: impl FnMut(&str, &[Param], u32) -> Result<RowSet, SqlError> + 'static) -> Self {
        Self { dialect, tables, max_rows: DEFAULT_MAX_ROWS, responder: Some(Box::new(responder)) }
    }

    /// Sets the grant's `max_rows` (default 10,000): no result is longer, whatever the plugin
    /// asks for, and the responder is told the capped number.
    pub fn max_rows(mut self, cap: u32) -> Self {
        self.max_rows = cap;
        self
    }
}

impl std::fmt::Debug for FakeDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeDatabase").field("dialect", &self.dialect).field("tables", &self.tables.len()).field("max_rows", &self.max_rows).finish()
    }
}

thread_local! {
    static DATABASE: RefCell<Option<FakeDatabase>> = const { RefCell::new(None) };
}

pub(crate) fn set(db: Option<FakeDatabase>) {
    DATABASE.with(|d| *d.borrow_mut() = db);
}

pub(crate) fn dialect() -> Result<Dialect, SqlError> {
    DATABASE.with(|d| d.borrow().as_ref().map(|db| db.dialect).ok_or(SqlError::NotGranted))
}

pub(crate) fn tables() -> Result<Vec<TableInfo>, SqlError> {
    DATABASE.with(|d| d.borrow().as_ref().map(|db| db.tables.clone()).ok_or(SqlError::NotGranted))
}

pub(crate) fn query(statement: &str, params: &[Param], max_rows: u32) -> Result<RowSet, SqlError> {
    check(statement)?;
    let (cap, responder) = DATABASE.with(|d| match d.borrow_mut().as_mut() {
        None => Err(SqlError::NotGranted),
        Some(db) => db
            .responder
            .take()
            .map(|r| (db.max_rows, r))
            .ok_or_else(|| SqlError::Unavailable("the fake database's responder called `sql` itself".into())),
    })?;
    let mut responder = responder;
    let max = max_rows.min(cap);
    let answer = responder(statement, params, max);
    DATABASE.with(|d| {
        if let Some(db) = d.borrow_mut().as_mut() {
            // A responder that installed another database keeps that one's responder.
            if db.responder.is_none() {
                db.responder = Some(responder);
            }
        }
    });
    let mut rows = answer?;
    rows.truncate(max as usize);
    Ok(rows)
}

/// The host's first check, roughly: one statement, and a query. (A `;` inside a string
/// literal is refused here too; the host parses properly.)
fn check(statement: &str) -> Result<(), SqlError> {
    let body = statement.trim().trim_end_matches(';');
    if body.contains(';') {
        return Err(SqlError::Refused("more than one statement".into()));
    }
    let first = body.split(|c: char| c.is_whitespace() || c == '(').find(|w| !w.is_empty()).unwrap_or("");
    if !["SELECT", "WITH", "VALUES"].iter().any(|k| first.eq_ignore_ascii_case(k)) {
        return Err(SqlError::Refused(format!("not a query: starts with {first:?}; only SELECT, WITH … SELECT and VALUES are allowed")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{Column, ValueKind};

    fn numbers(n: usize) -> RowSet {
        let mut b = RowSet::builder([Column::new("n", ValueKind::Integer, "int4")]);
        for i in 0..n {
            b = b.row([Some(i.to_string())]);
        }
        b.build()
    }

    #[test]
    fn without_a_database_nothing_is_granted() {
        set(None);
        assert_eq!(dialect(), Err(SqlError::NotGranted));
        assert_eq!(query("SELECT 1", &[], 1), Err(SqlError::NotGranted));
    }

    #[test]
    fn results_are_capped_by_the_ask_and_the_grant() {
        set(Some(FakeDatabase::new(Dialect::MySql, vec![], |_, _, max| Ok(numbers(max as usize + 5))).max_rows(3)));
        assert_eq!(query("SELECT n FROM t", &[], 2).map(|r| r.len()), Ok(2));
        assert_eq!(query("SELECT n FROM t", &[], 50).map(|r| r.len()), Ok(3), "the grant caps it");
        assert_eq!(dialect(), Ok(Dialect::MySql));
    }

    #[test]
    fn statements_that_are_not_one_query_are_refused() {
        set(Some(FakeDatabase::new(Dialect::PostgreSql, vec![], |_, _, _| Ok(numbers(0)))));
        for bad in ["DELETE FROM t", "SELECT 1; DROP TABLE t", "  update t set a = 1"] {
            assert!(matches!(query(bad, &[], 1), Err(SqlError::Refused(_))), "{bad}");
        }
        assert!(query("  with x as (select 1) select * from x;", &[], 1).is_ok());
        assert!(query("(SELECT 1)", &[], 1).is_ok());
    }

    #[test]
    fn a_responder_that_calls_sql_gets_an_error() {
        set(Some(FakeDatabase::new(Dialect::PostgreSql, vec![], |_, _, _| match query("SELECT 2", &[], 1) {
            Err(SqlError::Unavailable(_)) => Ok(numbers(1)),
            other => panic!("expected the re-entry to fail, got {other:?}"),
        })));
        assert_eq!(query("SELECT 1", &[], 1).map(|r| r.len()), Ok(1));
        assert_eq!(query("SELECT 1", &[], 1).map(|r| r.len()), Ok(1), "the responder was put back");
    }
}
