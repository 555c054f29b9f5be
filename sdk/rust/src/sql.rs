//! Read-only SQL for sources (PostgreSQL, MySQL and MariaDB).
//!
//! The host holds the connection, the credentials and TLS: a plugin queries the one database
//! its connector grants (`database:`), only the tables the grant lists, and only with single
//! read-only queries (`SELECT`, `WITH … SELECT`, `VALUES`). The host refuses anything else
//! before it reaches the database ([`SqlError::Refused`]), runs each query in a read-only
//! transaction under the grant's statement timeout, and returns at most the rows asked for —
//! or fewer, when the grant's `max_rows` is lower. A [`RowSet`] does not say whether the host
//! cut it short, so a plugin that pages must not take "fewer rows than asked" as "no more rows"
//! unless it knows the cap is higher (ask again, or probe with `LIMIT 1 OFFSET n`).
//!
//! Values come back as text in one form per [`ValueKind`] (see [`RowSet`]), and a
//! [`Param::Text`] is converted by the host into whatever the statement expects at its place,
//! so a value read from a row can be passed back exactly as it came (a timestamp with all its
//! microseconds, a decimal with all its digits).
//!
//! Off WebAssembly (in `cargo test`) every call goes to the [`crate::testing::FakeDatabase`]
//! set with [`crate::testing::set_sql`]; without one every call fails with
//! [`SqlError::NotGranted`], as on a connector without a grant.

use std::fmt;

use crate::RecordError;

// Compiled everywhere, so that `testing` reads the same on every target; only native builds
// route calls to it.
#[cfg_attr(target_arch = "wasm32", allow(dead_code, reason = "the host serves these calls"))]
pub(crate) mod fake;
mod rows;

pub use rows::{Row, RowSet, RowSetBuilder, Rows};

/// The SQL dialect of the granted database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// PostgreSQL: parameters `$1`, `$2`…; identifiers quoted with `"`.
    PostgreSql,
    /// MySQL and MariaDB: parameters `?`; identifiers quoted with a backtick.
    MySql,
}

impl Dialect {
    /// The placeholder of the `n`-th parameter (from 1): `$n` or `?`.
    pub fn placeholder(self, n: usize) -> String {
        match self {
            Dialect::PostgreSql => format!("${n}"),
            Dialect::MySql => "?".to_owned(),
        }
    }

    /// `ident` quoted as one identifier, the quote character inside it doubled, so any
    /// name (`order`, `Weird "name"`) is safe to put into a statement.
    pub fn quote(self, ident: &str) -> String {
        let q = match self {
            Dialect::PostgreSql => '"',
            Dialect::MySql => '`',
        };
        let mut out = String::with_capacity(ident.len() + 2);
        out.push(q);
        for c in ident.chars() {
            if c == q {
                out.push(q);
            }
            out.push(c);
        }
        out.push(q);
        out
    }
}

/// What a value is, whatever the database calls it ([`Column::type_name`] has that).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// `true` / `false`.
    Boolean,
    /// Whole numbers, as decimal digits.
    Integer,
    /// Floating point: the shortest text that reads back the same; `NaN`, `inf`, `-inf`.
    Float,
    /// Exact numbers (`NUMERIC`, `DECIMAL`) with their exact digits (`-12.50`).
    Decimal,
    /// Text.
    Text,
    /// Raw bytes (the only kind that is not UTF-8 text).
    Bytes,
    /// `2026-12-01`.
    Date,
    /// `13:45:00.123456`.
    Time,
    /// A date and time without a zone (`TIMESTAMP` in PostgreSQL, `DATETIME` in MySQL):
    /// `2026-12-01T13:45:00.123456`.
    Timestamp,
    /// An instant (`TIMESTAMPTZ` in PostgreSQL, `TIMESTAMP` in MySQL), in UTC:
    /// `2026-12-01T13:45:00.123456Z`.
    TimestampTz,
    /// JSON text.
    Json,
    /// A UUID, hyphenated, lower case.
    Uuid,
    /// Anything else (arrays, ranges, enums, geometry), as the database prints it.
    Other,
}

/// A result column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Its name as the result gives it.
    pub name: String,
    /// What its values are.
    pub kind: ValueKind,
    /// The database's own type name (`int8`, `numeric`, `timestamptz`, `varchar`).
    pub type_name: String,
}

impl Column {
    /// A column, for building test row sets.
    pub fn new(name: impl Into<String>, kind: ValueKind, type_name: impl Into<String>) -> Self {
        Self { name: name.into(), kind, type_name: type_name.into() }
    }
}

/// A statement parameter, bound in order to `$1`, `$2`… or `?`.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    /// SQL `NULL`.
    Null,
    /// A boolean.
    Boolean(bool),
    /// A whole number.
    Integer(i64),
    /// A floating-point number.
    Float(f64),
    /// Text, converted by the host into what the statement expects at its place (a
    /// timestamp, a decimal, an integer): pass a value read from a row back as it came.
    Text(String),
}

impl From<i64> for Param {
    fn from(v: i64) -> Self {
        Param::Integer(v)
    }
}

impl From<f64> for Param {
    fn from(v: f64) -> Self {
        Param::Float(v)
    }
}

impl From<bool> for Param {
    fn from(v: bool) -> Self {
        Param::Boolean(v)
    }
}

impl From<&str> for Param {
    fn from(v: &str) -> Self {
        Param::Text(v.to_owned())
    }
}

impl From<String> for Param {
    fn from(v: String) -> Self {
        Param::Text(v)
    }
}

impl<T: Into<Param>> From<Option<T>> for Param {
    fn from(v: Option<T>) -> Self {
        v.map_or(Param::Null, Into::into)
    }
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlError {
    /// The connector grants no database (no `database:` in its config).
    NotGranted,
    /// The host refused the statement before it reached the database: not a single query,
    /// or it names a table outside the grant. The text says which.
    Refused(String),
    /// The database rejected the statement (a syntax error, an unknown column, a timeout).
    QueryFailed {
        /// The SQLSTATE (PostgreSQL) or error number (MySQL).
        code: String,
        /// What the database said.
        message: String,
    },
    /// The database cannot be reached now; the host has already retried. Try again at the
    /// next poll.
    Unavailable(String),
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlError::NotGranted => f.write_str("the connector grants no database: add `database: {url, user, password, tables}` to the connector"),
            SqlError::Refused(why) => write!(f, "the host refused the statement: {why}"),
            SqlError::QueryFailed { code, message } => write!(f, "the database rejected the statement ({code}): {message}"),
            SqlError::Unavailable(why) => write!(f, "the database is unavailable: {why}"),
        }
    }
}

impl std::error::Error for SqlError {}

/// An unreachable database is worth retrying (the host backs off and counts the retries);
/// anything else is a bug or a configuration to fix, so it fails the connector.
impl From<SqlError> for RecordError {
    fn from(e: SqlError) -> Self {
        match e {
            SqlError::Unavailable(_) => RecordError::retriable(e.to_string()),
            SqlError::NotGranted | SqlError::Refused(_) | SqlError::QueryFailed { .. } => RecordError::fatal(e.to_string()),
        }
    }
}

/// A granted table's column, as the database describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableColumn {
    /// The column's name.
    pub name: String,
    /// What its values are.
    pub kind: ValueKind,
    /// The database's own type name.
    pub type_name: String,
    /// Whether it may hold `NULL`.
    pub nullable: bool,
}

/// A granted table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    /// The name as grants and statements spell it: `schema.table` in PostgreSQL
    /// (`public.orders`), `table` in MySQL (in the database the grant's URL names).
    pub name: String,
    /// Its columns, in order.
    pub columns: Vec<TableColumn>,
    /// The primary key's columns in key order; empty when the table has none.
    pub primary_key: Vec<String>,
}

impl TableInfo {
    /// The column named `name` (exactly), if there is one.
    pub fn column(&self, name: &str) -> Option<&TableColumn> {
        self.columns.iter().find(|c| c.name == name)
    }
}

/// The granted database's dialect.
pub fn dialect() -> Result<Dialect, SqlError> {
    imp::dialect()
}

/// The granted tables that exist, with their columns and primary keys.
pub fn tables() -> Result<Vec<TableInfo>, SqlError> {
    imp::tables()
}

/// Runs one read-only query with `params` bound in order and returns its first `max_rows`
/// rows, or fewer when the grant's `max_rows` is lower. Put a `LIMIT` in the statement too,
/// so the database does not produce rows nobody reads.
pub fn query(statement: &str, params: &[Param], max_rows: u32) -> Result<RowSet, SqlError> {
    imp::query(statement, params, max_rows)
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::{Column, Dialect, Param, RowSet, SqlError, TableColumn, TableInfo, ValueKind};
    use crate::bindings::source::turnpike::plugin::sql as host;

    fn error(e: host::SqlError) -> SqlError {
        match e {
            host::SqlError::NotGranted => SqlError::NotGranted,
            host::SqlError::Refused(why) => SqlError::Refused(why),
            host::SqlError::QueryFailed(f) => SqlError::QueryFailed { code: f.code, message: f.message },
            host::SqlError::Unavailable(why) => SqlError::Unavailable(why),
        }
    }

    fn kind(k: host::ValueKind) -> ValueKind {
        use host::ValueKind as K;
        match k {
            K::Boolean => ValueKind::Boolean,
            K::Integer => ValueKind::Integer,
            K::Float => ValueKind::Float,
            K::Decimal => ValueKind::Decimal,
            K::Text => ValueKind::Text,
            K::Bytes => ValueKind::Bytes,
            K::Date => ValueKind::Date,
            K::Time => ValueKind::Time,
            K::Timestamp => ValueKind::Timestamp,
            K::TimestampTz => ValueKind::TimestampTz,
            K::Json => ValueKind::Json,
            K::Uuid => ValueKind::Uuid,
            K::Other => ValueKind::Other,
        }
    }

    pub(super) fn dialect() -> Result<Dialect, SqlError> {
        host::dialect().map_err(error).map(|d| match d {
            host::SqlDialect::Postgresql => Dialect::PostgreSql,
            host::SqlDialect::Mysql => Dialect::MySql,
        })
    }

    pub(super) fn tables() -> Result<Vec<TableInfo>, SqlError> {
        let tables = host::tables().map_err(error)?;
        Ok(tables
            .into_iter()
            .map(|t| TableInfo {
                name: t.name,
                columns: t.columns.into_iter().map(|c| TableColumn { name: c.name, kind: kind(c.kind), type_name: c.type_name, nullable: c.nullable }).collect(),
                primary_key: t.primary_key,
            })
            .collect())
    }

    pub(super) fn query(statement: &str, params: &[Param], max_rows: u32) -> Result<RowSet, SqlError> {
        let params: Vec<host::Param> = params
            .iter()
            .map(|p| match p {
                Param::Null => host::Param::Null,
                Param::Boolean(b) => host::Param::Boolean(*b),
                Param::Integer(i) => host::Param::Integer(*i),
                Param::Float(f) => host::Param::Float(*f),
                Param::Text(t) => host::Param::Text(t.clone()),
            })
            .collect();
        let set = host::query(statement, &params, max_rows).map_err(error)?;
        let columns = set.columns.into_iter().map(|c| Column { name: c.name, kind: kind(c.kind), type_name: c.type_name }).collect();
        RowSet::from_parts(columns, set.data, set.cells, set.row_count)
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    pub(super) use super::fake::{dialect, query, tables};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_convert_from_rust_values() {
        assert_eq!(Param::from(7_i64), Param::Integer(7));
        assert_eq!(Param::from("x"), Param::Text("x".into()));
        assert_eq!(Param::from(None::<i64>), Param::Null);
        assert_eq!(Param::from(Some(true)), Param::Boolean(true));
    }

    #[test]
    fn identifiers_are_quoted_per_dialect() {
        assert_eq!(Dialect::PostgreSql.quote(r#"a"b"#), r#""a""b""#);
        assert_eq!(Dialect::MySql.quote("a`b"), "`a``b`");
        assert_eq!((Dialect::PostgreSql.placeholder(3), Dialect::MySql.placeholder(3)), ("$3".to_owned(), "?".to_owned()));
    }

    #[test]
    fn only_an_unreachable_database_is_retriable() {
        assert_eq!(RecordError::from(SqlError::Unavailable("down".into())).kind, crate::ErrorKind::Retriable);
        for e in [SqlError::NotGranted, SqlError::Refused("DELETE".into()), SqlError::QueryFailed { code: "42P01".into(), message: "no table".into() }] {
            assert_eq!(RecordError::from(e).kind, crate::ErrorKind::Fatal);
        }
    }
}
