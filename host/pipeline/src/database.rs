//! Opening a source connector's `database` grant: resolve the password's reference, build the
//! host's client for the granted database, and prove the address, TLS and credentials work,
//! so a wrong password fails the connector at once, in words and without the password, before
//! anything is read.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use turnpike_config::{resolve_str, DatabaseAccess, DatabaseTls, Problem, SecretLookup};
use turnpike_runtime::{FaultClass, SqlGrant};
use turnpike_sql::{Database, DatabaseConfig, SqlError, Tls};

use crate::status::FaultInfo;

/// How long one call keeps reconnecting to a database that went away before the plugin is
/// told it is unavailable (the plugin then asks the host to retry the poll, with backoff).
const RETRY_BUDGET: Duration = Duration::from_secs(5);

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a grant could not be opened.
pub(crate) enum OpenError {
    /// The password's reference did not resolve.
    Reference(Vec<Problem>),
    /// The database refused or could not be reached.
    Database(SqlError),
}

impl OpenError {
    /// As a connector failure.
    pub(crate) fn fault(&self, access: &DatabaseAccess) -> FaultInfo {
        match self {
            OpenError::Reference(p) => FaultInfo::new(FaultClass::Config, p.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")),
            OpenError::Database(e) => FaultInfo::new(FaultClass::Database, format!("database {}: {e}; nothing was read", access.url)),
        }
    }

    /// As validation problems.
    pub(crate) fn problems(self, access: &DatabaseAccess) -> Vec<Problem> {
        match self {
            OpenError::Reference(p) => p,
            OpenError::Database(e) => vec![Problem::new("connector.database", format!("{}: {e}", access.url))],
        }
    }
}

/// The client for `access` with its password resolved, and the password (for the instance's
/// scrubbing); not yet connected.
pub(crate) fn client(access: &DatabaseAccess, secrets: &dyn SecretLookup) -> Result<(Database, Vec<String>), OpenError> {
    let (password, secret_values) = match &access.password {
        None => (None, Vec::new()),
        Some(reference) => {
            let resolved = resolve_str(reference, "connector.database.password", secrets).map_err(OpenError::Reference)?;
            (Some(resolved.value), resolved.secret_values)
        }
    };
    let config = DatabaseConfig {
        url: access.url.clone(),
        user: access.user.clone(),
        password,
        tables: access.tables.clone(),
        tls: match access.effective_tls() {
            DatabaseTls::Disable => Tls::Disable,
            DatabaseTls::Require => Tls::Require,
        },
        ca_file: access.ca_file.as_ref().map(PathBuf::from),
        statement_timeout: Duration::from_millis(access.statement_timeout_ms.get()),
        connect_timeout: CONNECT_TIMEOUT,
        max_rows: u32::try_from(access.max_rows.get()).unwrap_or(u32::MAX),
        retry_budget: RETRY_BUDGET,
    };
    let database = Database::new(config).map_err(OpenError::Database)?;
    Ok((database, secret_values))
}

/// The grant a source connector's instances run with: connected and checked. Each plugin
/// call may spend up to the statement timeout twice over (plus reconnecting) waiting for the
/// database, on top of its CPU deadline.
pub(crate) async fn open(access: &DatabaseAccess, database: Database) -> Result<SqlGrant, OpenError> {
    database.check().await.map_err(OpenError::Database)?;
    let per_call = Duration::from_millis(access.statement_timeout_ms.get()) * 2 + RETRY_BUDGET + CONNECT_TIMEOUT;
    Ok(SqlGrant::new(Arc::new(database), per_call))
}

/// For `validate`: whether the database answers and the credentials work. The client is
/// made first (no reference to the secrets is held across the wait).
pub(crate) fn check(access: &DatabaseAccess, secrets: &dyn SecretLookup) -> Result<impl std::future::Future<Output = Result<(), OpenError>> + Send, OpenError> {
    let (database, _) = client(access, secrets)?;
    Ok(async move { database.check().await.map_err(OpenError::Database) })
}
