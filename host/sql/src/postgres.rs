//! One PostgreSQL session (tokio-postgres): connecting and signing in, the catalog, and
//! queries in read-only transactions through a portal, so the server sends no more rows
//! than asked for. Errors are sorted into [`Fault`]s for the retry loop.

use std::future::Future;

use tokio_postgres::config::SslMode;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, NoTls};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::config::Target;
use crate::error::{chain, Fault};
use crate::introspect::{Catalog, CatalogColumn, CatalogKey};
use crate::pg_decode::{self, Raw};
use crate::pg_params;
use crate::rows::RowSetBuilder;
use crate::{Param, RowSet, SqlError};

/// Shown to the server in `pg_stat_activity`.
const APPLICATION_NAME: &str = "turnpike";

/// Columns of tables and views, with the type under a domain for the kind.
const COLUMNS_SQL: &str = "\
SELECT c.table_schema::text, c.table_name::text, c.column_name::text,
       coalesce(c.domain_name, c.udt_name)::text, c.udt_name::text, (c.is_nullable = 'YES')
FROM information_schema.columns c
JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
WHERE t.table_type IN ('BASE TABLE', 'VIEW')
  AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
  AND ($1::text[] IS NULL OR lower(c.table_schema::text) = ANY($1::text[]))
ORDER BY c.table_schema, c.table_name, c.ordinal_position";

/// Primary-key columns in key order. `information_schema.table_constraints` only lists
/// tables the user has more than SELECT on, so a read-only user would see no keys there:
/// `key_column_usage` needs only SELECT, and `pg_constraint` tells which key is primary.
const KEYS_SQL: &str = "\
SELECT k.table_schema::text, k.table_name::text, k.column_name::text
FROM information_schema.key_column_usage k
JOIN pg_catalog.pg_namespace n ON n.nspname = k.constraint_schema
JOIN pg_catalog.pg_constraint p ON p.connamespace = n.oid AND p.conname = k.constraint_name AND p.contype = 'p'
JOIN pg_catalog.pg_class r ON r.oid = p.conrelid AND r.relname = k.table_name
WHERE k.table_schema NOT IN ('pg_catalog', 'information_schema')
  AND ($1::text[] IS NULL OR lower(k.table_schema::text) = ANY($1::text[]))
ORDER BY k.table_schema, k.table_name, k.ordinal_position";

pub(crate) struct PgSession {
    client: Client,
}

impl PgSession {
    /// Connects, signs in and sets the session up: UTC, read-only by default (the catalog
    /// queries run outside the per-query transaction), the statement timeout.
    pub(crate) async fn open(target: &Target, tls: Option<&MakeRustlsConnect>) -> Result<PgSession, Fault> {
        let mut config = tokio_postgres::Config::new();
        config
            .host(target.host.as_str())
            .port(target.port)
            .dbname(target.database.as_str())
            .user(target.user.as_str())
            .application_name(APPLICATION_NAME)
            .connect_timeout(target.connect_timeout);
        if let Some(password) = &target.password {
            config.password(password.as_bytes());
        }
        let client = match tls {
            None => {
                config.ssl_mode(SslMode::Disable);
                let (client, connection) = config.connect(NoTls).await.map_err(|error| classify(&error, target))?;
                drive(connection, target.shown.clone());
                client
            }
            Some(tls) => {
                config.ssl_mode(SslMode::Require);
                let (client, connection) = config.connect(tls.clone()).await.map_err(|error| classify(&error, target))?;
                drive(connection, target.shown.clone());
                client
            }
        };
        let setup = format!(
            // The guard reads unqualified names as `public.…` and strings in standard form:
            // the session must agree with it, whatever the role or database defaults say.
            "SET TIME ZONE 'UTC'; SET default_transaction_read_only = on; SET statement_timeout = '{}ms'; \
             SET search_path = public; SET standard_conforming_strings = on",
            target.statement_timeout_ms()
        );
        client.batch_execute(&setup).await.map_err(|error| classify(&error, target))?;
        Ok(PgSession { client })
    }

    pub(crate) fn usable(&self) -> bool {
        !self.client.is_closed()
    }

    pub(crate) async fn check(&mut self, target: &Target) -> Result<(), Fault> {
        self.client.batch_execute("SELECT 1").await.map_err(|error| classify(&error, target))
    }

    /// The columns and keys of the tables in `schemas` (lower case; `None`: every schema
    /// but the system ones).
    pub(crate) async fn catalog(&mut self, target: &Target, schemas: Option<&[String]>) -> Result<Catalog, Fault> {
        let schemas: Option<Vec<String>> = schemas.map(<[String]>::to_vec);
        let fail = |error: tokio_postgres::Error| classify(&error, target);
        let column_rows = self.client.query(COLUMNS_SQL, &[&schemas]).await.map_err(fail)?;
        let key_rows = self.client.query(KEYS_SQL, &[&schemas]).await.map_err(fail)?;
        let mut catalog = Catalog::default();
        for row in &column_rows {
            catalog.columns.push(CatalogColumn {
                schema: row.try_get(0usize).map_err(fail)?,
                table: row.try_get(1usize).map_err(fail)?,
                column: row.try_get(2usize).map_err(fail)?,
                type_name: row.try_get(3usize).map_err(fail)?,
                base_type: row.try_get(4usize).map_err(fail)?,
                nullable: row.try_get(5usize).map_err(fail)?,
            });
        }
        for row in &key_rows {
            catalog.keys.push(CatalogKey {
                schema: row.try_get(0usize).map_err(fail)?,
                table: row.try_get(1usize).map_err(fail)?,
                column: row.try_get(2usize).map_err(fail)?,
            });
        }
        Ok(catalog)
    }

    /// Runs `statement` in a read-only transaction and returns its first `limit` rows. The
    /// transaction is always rolled back (on an error, by dropping it).
    pub(crate) async fn query(&mut self, target: &Target, statement: &str, params: &[Param], limit: u32) -> Result<RowSet, Fault> {
        let fail = |error: tokio_postgres::Error| classify(&error, target);
        let transaction = self.client.build_transaction().read_only(true).start().await.map_err(fail)?;
        let prepared = transaction.prepare(statement).await.map_err(fail)?;
        let plans = pg_decode::plan_columns(prepared.columns()).map_err(Fault::Final)?;
        let values = pg_params::convert_all(prepared.params(), params).map_err(Fault::Final)?;
        let mut rows = RowSetBuilder::new(plans.iter().map(|plan| plan.column.clone()).collect());
        // A portal asked for 0 rows would return them all: with no rows wanted, only the
        // columns are needed, and the prepared statement has them.
        if limit > 0 {
            let bound: Vec<&(dyn ToSql + Sync)> = values.iter().map(|value| value as &(dyn ToSql + Sync)).collect();
            let portal = transaction.bind(&prepared, &bound).await.map_err(fail)?;
            let fetched = transaction.query_portal(&portal, i32::try_from(limit).unwrap_or(i32::MAX)).await.map_err(fail)?;
            for row in &fetched {
                for (index, plan) in plans.iter().enumerate() {
                    match row.try_get::<usize, Raw<'_>>(index).map_err(fail)? {
                        Raw(None) => rows.push_null(),
                        Raw(Some(raw)) => plan.write(raw, &mut rows).map_err(Fault::Final)?,
                    }
                }
                rows.end_row();
            }
        }
        transaction.rollback().await.map_err(fail)?;
        Ok(rows.finish())
    }
}

/// Runs the connection's I/O until the client is dropped or the connection fails; the
/// client then reports itself closed and the session is replaced.
fn drive<C>(connection: C, shown: String)
where
    C: Future<Output = Result<(), tokio_postgres::Error>> + Send + 'static,
{
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!(database = %shown, error = %chain(&error), "postgresql connection ended");
        }
    });
}

/// Sorts a tokio-postgres error: statement errors are the plugin's to see, sign-in errors
/// end the call at once, everything else is a connection to remake.
pub(crate) fn classify(error: &tokio_postgres::Error, target: &Target) -> Fault {
    if let Some(db) = error.as_db_error() {
        let code = db.code().code();
        let mut message = db.message().to_owned();
        if let Some(detail) = db.detail() {
            message = format!("{message}: {detail}");
        }
        if let Some(hint) = db.hint() {
            message = format!("{message} (hint: {hint})");
        }
        let message = target.scrub(&message);
        return match code {
            "28P01" | "28000" => Fault::Fatal(SqlError::Unavailable(format!(
                "signing in to {} as {:?} failed: {message}",
                target.shown, target.user
            ))),
            "3D000" => Fault::Fatal(SqlError::Unavailable(format!(
                "{} cannot be used: {message}: check the database name in the URL",
                target.shown
            ))),
            // Too many connections, shutting down, starting up, a connection exception.
            "53300" | "57P01" | "57P02" | "57P03" => Fault::Connection(format!("{message} ({code})")),
            _ if code.starts_with("08") => Fault::Connection(format!("{message} ({code})")),
            _ => Fault::Final(SqlError::QueryFailed { code: code.to_owned(), message }),
        };
    }
    let text = target.scrub(&chain(error));
    if text.starts_with("error serializing parameter")
        || text.starts_with("error deserializing column")
        || text.starts_with("invalid column")
        || text.contains("parameters but got")
    {
        Fault::Final(SqlError::Refused(text))
    } else if text.starts_with("authentication error") || text.starts_with("invalid configuration") {
        Fault::Fatal(SqlError::Unavailable(format!("signing in to {} as {:?} failed: {text}", target.shown, target.user)))
    } else if text.contains("server does not support TLS") {
        Fault::Fatal(SqlError::Unavailable(format!(
            "{} does not offer TLS: enable TLS on the server, or set tls to disable",
            target.shown
        )))
    } else if text.contains("invalid peer certificate") {
        Fault::Fatal(SqlError::Unavailable(format!(
            "the TLS certificate of {} is not trusted ({text}): give its CA as ca_file, or fix the server's certificate",
            target.shown
        )))
    } else {
        Fault::Connection(text)
    }
}
