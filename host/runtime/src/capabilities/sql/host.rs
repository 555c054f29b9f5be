//! The `sql` imports: refuse without a grant, run the call on the host's client under what is
//! left of the call's database allowance, credit the wait to the deadline, and translate the
//! client's types into the contract's.

use std::future::Future;
use std::time::Instant;

use super::grant::SqlGrant;
use super::state::SqlState;
use crate::bindings::source::turnpike::plugin::sql::{Column, DatabaseFailure, Host, Param, RowSet, SqlError, TableColumn, TableInfo, ValueKind, SqlDialect as Dialect};

impl SqlState {
    /// Runs `call` on the granted database, bounded by the call's remaining allowance.
    async fn on_database<R, F>(&mut self, call: impl FnOnce(SqlGrant) -> F) -> Result<R, SqlError>
    where
        F: Future<Output = Result<R, turnpike_sql::SqlError>>,
    {
        let grant = self.grant.clone().ok_or(SqlError::NotGranted)?;
        let remaining = self.remaining(&grant);
        if remaining.is_zero() {
            return Err(SqlError::Unavailable(format!("this call already spent its {} s of database time; continue at the next poll", grant.per_call.as_secs())));
        }
        let started = Instant::now();
        let outcome = tokio::time::timeout(remaining, call(grant.clone())).await;
        self.credit(started);
        match outcome {
            Ok(result) => result.map_err(error),
            Err(_) => Err(SqlError::Unavailable(format!("the database did not answer within this call's {} s of database time", grant.per_call.as_secs()))),
        }
    }
}

impl Host for SqlState {
    async fn dialect(&mut self) -> Result<Dialect, SqlError> {
        let grant = self.grant.as_ref().ok_or(SqlError::NotGranted)?;
        Ok(match grant.database.dialect() {
            turnpike_sql::Dialect::Postgresql => Dialect::Postgresql,
            turnpike_sql::Dialect::Mysql => Dialect::Mysql,
        })
    }

    async fn tables(&mut self) -> Result<Vec<TableInfo>, SqlError> {
        let tables = self.on_database(|grant| async move { grant.database.tables().await }).await?;
        Ok(tables.into_iter().map(table).collect())
    }

    async fn query(&mut self, statement: String, params: Vec<Param>, max_rows: u32) -> Result<RowSet, SqlError> {
        let params: Vec<turnpike_sql::Param> = params.into_iter().map(param).collect();
        let rows = self.on_database(|grant| async move { grant.database.query(&statement, &params, max_rows).await }).await?;
        Ok(RowSet { columns: rows.columns.into_iter().map(column).collect(), data: rows.data, cells: rows.cells, row_count: rows.row_count })
    }
}

fn error(e: turnpike_sql::SqlError) -> SqlError {
    match e {
        turnpike_sql::SqlError::Refused(why) => SqlError::Refused(why),
        turnpike_sql::SqlError::QueryFailed { code, message } => SqlError::QueryFailed(DatabaseFailure { code, message }),
        turnpike_sql::SqlError::Unavailable(why) => SqlError::Unavailable(why),
    }
}

fn param(p: Param) -> turnpike_sql::Param {
    match p {
        Param::Null => turnpike_sql::Param::Null,
        Param::Boolean(b) => turnpike_sql::Param::Boolean(b),
        Param::Integer(i) => turnpike_sql::Param::Integer(i),
        Param::Float(f) => turnpike_sql::Param::Float(f),
        Param::Text(t) => turnpike_sql::Param::Text(t),
    }
}

fn kind(k: turnpike_sql::ValueKind) -> ValueKind {
    use turnpike_sql::ValueKind as K;
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

fn column(c: turnpike_sql::Column) -> Column {
    Column { name: c.name, kind: kind(c.kind), type_name: c.type_name }
}

fn table(t: turnpike_sql::TableInfo) -> TableInfo {
    let columns = t.columns.into_iter().map(|c| TableColumn { name: c.name, kind: kind(c.kind), type_name: c.type_name, nullable: c.nullable }).collect();
    TableInfo { name: t.name, columns, primary_key: t.primary_key }
}
