//! One MySQL / MariaDB session (mysql_async): connecting and signing in, the catalog, and
//! queries in read-only transactions. Errors are sorted into [`Fault`]s for the retry loop.
//!
//! # Stopping at the row limit
//! The binary protocol has no way to stop a result early: whatever is left unread is
//! drained before the connection can be used again, and mysql_async drains it on any next
//! command or when the connection is dropped. So each query first sets
//! `sql_select_limit`, which makes the server send no more rows than asked for when the
//! statement has no larger `LIMIT` of its own. If rows are still left after the limit, the
//! session is given up rather than drained under the connector's lock: dropping it drains
//! and closes the connection in the background, bounded by the server's statement timeout,
//! and the next call connects afresh.

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, DriverError, Error, OptsBuilder, Params, Row, SslOpts, Value};

use crate::config::{Target, Tls};
use crate::error::{chain, Fault};
use crate::introspect::{Catalog, CatalogColumn, CatalogKey};
use crate::mysql_values;
use crate::rows::RowSetBuilder;
use crate::{Param, RowSet, SqlError};

/// Schemas that hold the server's own tables.
const SYSTEM_SCHEMAS: &str = "'mysql', 'information_schema', 'performance_schema', 'sys'";

pub(crate) struct MySession {
    conn: Conn,
    /// False once the connection must not be used again (rows left unread, a failed
    /// rollback).
    usable: bool,
}

impl MySession {
    /// Connects, signs in and sets the session up: UTC, and the statement timeout under
    /// the name the server knows (MariaDB: `max_statement_time` in seconds, MySQL:
    /// `max_execution_time` in milliseconds).
    pub(crate) async fn open(target: &Target) -> Result<MySession, Fault> {
        let user = (!target.user.is_empty()).then(|| target.user.clone());
        let mut options = OptsBuilder::default()
            .ip_or_hostname(target.host.clone())
            .tcp_port(target.port)
            .db_name(Some(target.database.clone()))
            .user(user)
            .pass(target.password.clone())
            .prefer_socket(false);
        if target.tls == Tls::Require {
            let ssl = SslOpts::default().with_root_certs(target.ca_file.iter().map(|path| path.clone().into()).collect());
            options = options.ssl_opts(ssl);
        }
        let connect = |error: Error| classify(&error, target, true);
        let mut conn = Conn::new(options).await.map_err(connect)?;
        let version: Option<Row> = conn.query_first("SELECT VERSION()").await.map_err(connect)?;
        let mariadb = version.and_then(|row| text_of(row.as_ref(0))).is_some_and(|version| version.contains("MariaDB"));
        let timeout = if mariadb {
            format!("SESSION max_statement_time = {:.3}", target.statement_timeout_ms() as f64 / 1000.0)
        } else {
            format!("SESSION max_execution_time = {}", target.statement_timeout_ms())
        };
        // Quotes and backslashes as the guard reads them (MySQL's defaults), whatever the
        // server's sql_mode says: `"` a string, `\` an escape. (`ANSI` includes ANSI_QUOTES.)
        let sql_mode = "TRIM(BOTH ',' FROM REPLACE(REPLACE(REPLACE(REPLACE(CONCAT(',', @@SESSION.sql_mode, ','), ',ANSI_QUOTES,', ','), ',NO_BACKSLASH_ESCAPES,', ','), ',ANSI,', ','), ',,', ','))";
        conn.query_drop(format!("SET SESSION time_zone = '+00:00', {timeout}, SESSION sql_mode = {sql_mode}")).await.map_err(connect)?;
        tracing::debug!(database = %target.shown, mariadb, "mysql session ready");
        Ok(MySession { conn, usable: true })
    }

    pub(crate) fn usable(&self) -> bool {
        self.usable
    }

    pub(crate) async fn check(&mut self, target: &Target) -> Result<(), Fault> {
        self.conn.query_drop("SELECT 1").await.map_err(|error| classify(&error, target, false))
    }

    /// The columns and keys of the tables in `schemas` (lower case; `None`: every schema
    /// but the system ones).
    pub(crate) async fn catalog(&mut self, target: &Target, schemas: Option<&[String]>) -> Result<Catalog, Fault> {
        let fail = |error: Error| classify(&error, target, false);
        let (filter, values) = match schemas {
            Some([]) => return Ok(Catalog::default()),
            Some(list) => {
                let marks = vec!["?"; list.len()].join(", ");
                (format!("LOWER({{t}}.TABLE_SCHEMA) IN ({marks})"), list.iter().map(|schema| Value::Bytes(schema.as_bytes().to_vec())).collect())
            }
            None => (format!("{{t}}.TABLE_SCHEMA NOT IN ({SYSTEM_SCHEMAS})"), Vec::new()),
        };
        let columns_sql = format!(
            "SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME, c.DATA_TYPE, c.COLUMN_TYPE, c.IS_NULLABLE \
             FROM information_schema.COLUMNS c \
             JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME \
             WHERE t.TABLE_TYPE IN ('BASE TABLE', 'VIEW') AND {} \
             ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION",
            filter.replace("{t}", "c")
        );
        let keys_sql = format!(
            "SELECT k.TABLE_SCHEMA, k.TABLE_NAME, k.COLUMN_NAME \
             FROM information_schema.KEY_COLUMN_USAGE k \
             WHERE k.CONSTRAINT_NAME = 'PRIMARY' AND {} \
             ORDER BY k.TABLE_SCHEMA, k.TABLE_NAME, k.ORDINAL_POSITION",
            filter.replace("{t}", "k")
        );
        // A query's row limit must not cut the catalog short.
        self.conn.query_drop("SET SESSION sql_select_limit = DEFAULT").await.map_err(fail)?;
        let column_rows: Vec<Row> = self.conn.exec(columns_sql, positional(values.clone())).await.map_err(fail)?;
        let key_rows: Vec<Row> = self.conn.exec(keys_sql, positional(values)).await.map_err(fail)?;
        let mut catalog = Catalog::default();
        for row in &column_rows {
            let field = |index: usize| text_of(row.as_ref(index)).unwrap_or_default();
            let data_type = field(3).to_ascii_lowercase();
            let type_name = if field(4).to_ascii_lowercase().contains("unsigned") { format!("{data_type} unsigned") } else { data_type.clone() };
            catalog.columns.push(CatalogColumn {
                schema: field(0),
                table: field(1),
                column: field(2),
                type_name,
                base_type: data_type,
                nullable: field(5).eq_ignore_ascii_case("YES"),
            });
        }
        for row in &key_rows {
            let field = |index: usize| text_of(row.as_ref(index)).unwrap_or_default();
            catalog.keys.push(CatalogKey { schema: field(0), table: field(1), column: field(2) });
        }
        Ok(catalog)
    }

    /// Runs `statement` in a read-only transaction and returns its first `limit` rows.
    pub(crate) async fn query(&mut self, target: &Target, statement: &str, params: &[Param], limit: u32) -> Result<RowSet, Fault> {
        let fail = |error: Error| classify(&error, target, false);
        self.conn.query_drop(format!("SET SESSION sql_select_limit = {limit}")).await.map_err(fail)?;
        self.conn.query_drop("START TRANSACTION READ ONLY").await.map_err(fail)?;
        match self.rows(target, statement, params, limit).await {
            Ok((rows, true)) => {
                self.conn.query_drop("ROLLBACK").await.map_err(fail)?;
                Ok(rows)
            }
            Ok((rows, false)) => {
                // Rows are left unread: the server rolls back when the connection closes.
                self.usable = false;
                Ok(rows)
            }
            Err(fault) => {
                if !matches!(fault, Fault::Final(_)) {
                    self.usable = false;
                } else if let Err(error) = self.conn.query_drop("ROLLBACK").await {
                    tracing::debug!(database = %target.shown, error = %chain(&error), "rollback after a failed query failed");
                    self.usable = false;
                }
                Err(fault)
            }
        }
    }

    /// The statement's first `limit` rows, and whether its result was read to the end.
    async fn rows(&mut self, target: &Target, statement: &str, params: &[Param], limit: u32) -> Result<(RowSet, bool), Fault> {
        let fail = |error: Error| classify(&error, target, false);
        let prepared = self.conn.prep(statement).await.map_err(fail)?;
        if usize::from(prepared.num_params()) != params.len() {
            return Err(Fault::Final(SqlError::Refused(format!(
                "the statement has {} placeholder(s) (?) but {} value(s) were given: pass one value per ?",
                prepared.num_params(),
                params.len()
            ))));
        }
        let mut result = self.conn.exec_iter(prepared, positional(mysql_values::to_values(params))).await.map_err(fail)?;
        // A column the host cannot return leaves the result unread: give the session up.
        let plans = mysql_values::plan_columns(result.columns_ref()).map_err(Fault::Fatal)?;
        let mut rows = RowSetBuilder::new(plans.iter().map(|plan| plan.column.clone()).collect());
        let mut count: u32 = 0;
        while count < limit {
            let Some(row) = result.next().await.map_err(fail)? else { break };
            let mut values = row.unwrap_raw().into_iter();
            for plan in &plans {
                plan.write(values.next().flatten(), &mut rows).map_err(Fault::Fatal)?;
            }
            rows.end_row();
            count += 1;
        }
        let finished = count < limit || result.next().await.map_err(fail)?.is_none();
        if finished {
            result.drop_result().await.map_err(fail)?;
        }
        Ok((rows.finish(), finished))
    }
}

fn positional(values: Vec<Value>) -> Params {
    if values.is_empty() {
        Params::Empty
    } else {
        Params::Positional(values)
    }
}

/// A catalog field as text (information_schema sends strings, sometimes as binary).
fn text_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Bytes(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        Value::Int(number) => Some(number.to_string()),
        Value::UInt(number) => Some(number.to_string()),
        _ => None,
    }
}

/// Sorts a mysql_async error: statement errors are the plugin's to see, sign-in errors end
/// the call at once, everything else is a connection to remake. `connecting` says the
/// session was being set up, where a statement error is the operator's to fix.
fn classify(error: &Error, target: &Target, connecting: bool) -> Fault {
    let text = target.scrub(&chain(error));
    let signing_in = |why: &str| {
        Fault::Fatal(SqlError::Unavailable(format!("signing in to {} as {:?} failed: {why}", target.shown, target.user)))
    };
    match error {
        Error::Server(server) => {
            let message = target.scrub(&server.message);
            let code = server.code;
            match code {
                // Access denied (user, database, no password, auth plugin).
                1044 | 1045 | 1698 | 1251 | 1524 => signing_in(&message),
                1049 => Fault::Fatal(SqlError::Unavailable(format!(
                    "{} cannot be used: {message}: check the database name in the URL",
                    target.shown
                ))),
                // Too many connections, shutdown, network errors, killed, idle timeout.
                1040 | 1053 | 1077..=1080 | 1152 | 1153 | 1158..=1161 | 1184 | 1927 | 4031 => {
                    Fault::Connection(format!("{message} ({code})"))
                }
                _ if connecting => Fault::Fatal(SqlError::Unavailable(format!(
                    "setting up the session on {} failed: {message} ({code})",
                    target.shown
                ))),
                _ => Fault::Final(SqlError::QueryFailed { code: code.to_string(), message }),
            }
        }
        // The driver closes the connection after any of its own errors.
        Error::Driver(
            DriverError::StmtParamsMismatch { .. }
            | DriverError::StmtParamsNumberExceedsLimit { .. }
            | DriverError::MixedParams
            | DriverError::NamedParamsForPositionalQuery
            | DriverError::MissingNamedParam { .. },
        ) => Fault::Fatal(SqlError::Refused(text)),
        Error::Driver(DriverError::NoClientSslFlagFromServer) => Fault::Fatal(SqlError::Unavailable(format!(
            "{} does not offer TLS: enable TLS on the server, or set tls to disable",
            target.shown
        ))),
        Error::Driver(
            DriverError::UnknownAuthPlugin { .. }
            | DriverError::MysqlOldPasswordDisabled
            | DriverError::CleartextPluginDisabled,
        ) => signing_in(&text),
        Error::Url(_) => Fault::Fatal(SqlError::Unavailable(format!("{} cannot be used: {text}", target.shown))),
        _ if text.contains("invalid peer certificate") => Fault::Fatal(SqlError::Unavailable(format!(
            "the TLS certificate of {} is not trusted ({text}): give its CA as ca_file, or fix the server's certificate",
            target.shown
        ))),
        _ => Fault::Connection(text),
    }
}
