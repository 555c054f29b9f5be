//! The database client behind `turnpike:plugin/sql` (`wit/sql.wit`): one granted
//! PostgreSQL, MySQL or MariaDB database per connector, read-only queries on the granted
//! tables, values in the canonical text forms the contract defines.
//!
//! Plugins never see this crate: the runtime holds one [`Database`] per connector grant
//! (shared as `Arc<Database>` by the connector's instances) and calls it outside the
//! plugin's deadline.
//!
//! # What a query goes through
//! [`Database::query`] first checks the statement without the database (`guard`): one
//! query, every table inside the grant ([`TableGrant`]), else [`SqlError::Refused`]. It then
//! runs in a read-only transaction, under the statement timeout set on the session, and at
//! most `min(max_rows, config.max_rows)` rows come back: PostgreSQL through a portal that
//! fetches only that many, MySQL under `sql_select_limit` (see `mysql.rs`). The
//! transaction is always rolled back.
//!
//! # Connections and retries
//! One live connection per connector, made on first use and kept. A connection that fails
//! (refused, reset, timed out, closed by the server) is dropped and remade with backoff
//! (100 ms doubling to 2 s) until [`DatabaseConfig::retry_budget`] is spent; only then does
//! the call fail as [`SqlError::Unavailable`]. A refused sign-in or a missing database fails
//! at once, in words, without the password. Retries are counted ([`Database::retries`]).

mod config;
mod error;
mod grant;
mod guard;
mod introspect;
mod mysql;
mod mysql_values;
mod pg_decode;
mod pg_params;
mod postgres;
mod rows;
mod session;
mod tls;

use tokio_postgres_rustls::MakeRustlsConnect;

pub use config::{DatabaseConfig, Tls};
pub use error::SqlError;
pub use grant::TableGrant;

use session::{Connector, Op};

/// Which SQL dialect the granted database speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// PostgreSQL: parameters are `$1`, `$2`…
    Postgresql,
    /// MySQL and MariaDB: parameters are `?`.
    Mysql,
}

/// What a value is, whatever the database calls it (`type_name` has that).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Boolean,
    Integer,
    Float,
    /// Exact numbers (`NUMERIC`, `DECIMAL`): never rounded.
    Decimal,
    Text,
    Bytes,
    Date,
    Time,
    /// Date and time without a zone (`TIMESTAMP` in PostgreSQL, `DATETIME` in MySQL).
    Timestamp,
    /// An instant, given in UTC (`TIMESTAMPTZ` in PostgreSQL, `TIMESTAMP` in MySQL).
    TimestampTz,
    Json,
    Uuid,
    /// Enums, XML, BIT…, as text.
    Other,
}

/// A result column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub kind: ValueKind,
    /// The database's own type name (`int8`, `numeric`, `timestamptz`, `varchar`).
    pub type_name: String,
}

/// The length that marks SQL `NULL` in [`RowSet::cells`].
pub const NULL_CELL: u32 = u32::MAX;

/// Rows in the flat layout of wit/sql.wit row-set: two u32 per cell (offset, length),
/// NULL_CELL length for NULL, row by row and column by column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowSet {
    pub columns: Vec<Column>,
    pub data: Vec<u8>,
    pub cells: Vec<u32>,
    pub row_count: u32,
}

impl RowSet {
    /// The value at `row`, `column`; `None` for SQL `NULL` or outside the set.
    pub fn value(&self, row: usize, column: usize) -> Option<&[u8]> {
        if column >= self.columns.len() {
            return None;
        }
        let cell = row.checked_mul(self.columns.len())?.checked_add(column)?;
        let offset = *self.cells.get(cell.checked_mul(2)?)?;
        let length = *self.cells.get(cell * 2 + 1)?;
        if length == NULL_CELL {
            return None;
        }
        self.data.get(offset as usize..(offset as usize).checked_add(length as usize)?)
    }
}

/// A statement parameter, bound in order to `$1`, `$2`… or `?`.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    Null,
    Boolean(bool),
    Integer(i64),
    Float(f64),
    /// Converted by the host into what the statement expects at that place, so a value read
    /// from a [`RowSet`] can be passed back as it came.
    Text(String),
}

/// A granted table's column, as the database describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableColumn {
    pub name: String,
    pub kind: ValueKind,
    pub type_name: String,
    pub nullable: bool,
}

/// A granted table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    /// `schema.table` in PostgreSQL (`public.orders`), `table` in MySQL for the URL's
    /// database (`schema.table` for another one).
    pub name: String,
    /// In ordinal order.
    pub columns: Vec<TableColumn>,
    /// The primary key's columns in key order; empty when the table has none.
    pub primary_key: Vec<String>,
}

/// One granted database. `Send + Sync`; shared as `Arc<Database>` by a connector's
/// instances, whose calls take turns on its one connection.
pub struct Database {
    connector: Connector,
    grant: TableGrant,
    globs: Vec<String>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("url", &self.connector.target.shown).field("grant", &self.grant).finish()
    }
}

impl Database {
    /// Parses and checks the config (scheme, host, database name, limits, a readable
    /// `ca_file`); does not connect.
    pub fn new(config: DatabaseConfig) -> Result<Self, SqlError> {
        let target = config::parse(&config)?;
        let mut pg_tls = None;
        if target.tls == Tls::Require {
            // Built for MySQL too, only to check the CA file now rather than at connect.
            let client = tls::client_config(target.ca_file.as_deref())?;
            match target.dialect {
                Dialect::Postgresql => pg_tls = Some(MakeRustlsConnect::new(client)),
                Dialect::Mysql => tls::install_default_provider(),
            }
        }
        let grant = TableGrant::new(&config.tables, &target.default_schema);
        Ok(Database { connector: Connector::new(target, pg_tls), grant, globs: config.tables })
    }

    pub fn dialect(&self) -> Dialect {
        self.connector.target.dialect
    }

    /// The schema unqualified table names mean: `public` (PostgreSQL), the URL's database
    /// (MySQL).
    pub fn default_schema(&self) -> &str {
        &self.connector.target.default_schema
    }

    /// Connects (with the retries) and runs a trivial query: proves the address, the
    /// credentials and TLS now, so that a wrong password fails a connector at start.
    pub async fn check(&self) -> Result<(), SqlError> {
        self.connector.call(Op::Check).await.map(|_| ())
    }

    /// The granted tables that exist (base tables and views in the default schema, or any
    /// schema a glob names), with columns in ordinal order and primary keys in key order.
    pub async fn tables(&self) -> Result<Vec<TableInfo>, SqlError> {
        let schemas = introspect::schemas_to_read(&self.globs, self.default_schema());
        let catalog = self.connector.call(Op::Catalog(schemas.as_deref())).await?.into_catalog()?;
        Ok(introspect::assemble(catalog, self.dialect(), self.default_schema(), Some(&self.grant)))
    }

    /// Every table and view of the default schema, whatever the grant says: for the config
    /// generator an operator runs on the host.
    pub async fn all_tables(&self) -> Result<Vec<TableInfo>, SqlError> {
        let schemas = [self.default_schema().to_ascii_lowercase()];
        let catalog = self.connector.call(Op::Catalog(Some(&schemas[..]))).await?.into_catalog()?;
        Ok(introspect::assemble(catalog, self.dialect(), self.default_schema(), None))
    }

    /// Checks `statement` against the grant ([`SqlError::Refused`]), then runs it in a
    /// read-only transaction with the statement timeout and returns at most
    /// `min(max_rows, config.max_rows)` rows.
    pub async fn query(&self, statement: &str, params: &[Param], max_rows: u32) -> Result<RowSet, SqlError> {
        guard::check_statement(statement, self.dialect(), &self.grant).map_err(SqlError::Refused)?;
        let limit = max_rows.min(self.connector.target.max_rows);
        self.connector.call(Op::Query { statement, params, limit }).await?.into_rows()
    }

    /// How many times calls had to reconnect, for the connector's status.
    pub fn retries(&self) -> u64 {
        self.connector.retries()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn config(url: &str) -> DatabaseConfig {
        DatabaseConfig {
            url: url.to_owned(),
            user: "reader".to_owned(),
            password: Some("s3cret-pw-9f3k".to_owned()),
            tables: vec!["orders".to_owned()],
            tls: Tls::Disable,
            ca_file: None,
            statement_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(1),
            max_rows: 100,
            retry_budget: Duration::ZERO,
        }
    }

    #[test]
    fn a_database_is_shareable_and_knows_its_dialect_without_connecting() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Database>();
        let postgres = Database::new(config("postgresql://db.internal/shop")).unwrap();
        assert_eq!((postgres.dialect(), postgres.default_schema()), (Dialect::Postgresql, "public"));
        let maria = Database::new(config("mariadb://db.internal/shop")).unwrap();
        assert_eq!((maria.dialect(), maria.default_schema()), (Dialect::Mysql, "shop"));
        assert_eq!(maria.retries(), 0);
    }

    #[tokio::test]
    async fn an_unreachable_database_is_unavailable_after_the_budget_and_names_the_url() {
        // Port 9 on localhost (discard) is closed on test machines: connecting is refused.
        let database = Database::new(config("postgres://127.0.0.1:9/shop")).unwrap();
        match database.check().await {
            Err(SqlError::Unavailable(message)) => {
                assert!(message.starts_with("cannot reach postgres://127.0.0.1:9/shop"), "{message}");
                assert!(message.contains("retried 0 times"), "{message}");
                assert!(!message.contains("s3cret-pw-9f3k"), "{message}");
            }
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }
}
