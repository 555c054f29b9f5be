//! What a connector's status says about its grants (storage, database), never their secrets.

use serde::Serialize;

/// A source's database grant as the status shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct DatabaseStatus {
    /// Where the database is (no password: the URL never holds one).
    pub url: String,
    /// The user the host signs in as.
    pub user: String,
    /// The granted tables, as written.
    pub tables: Vec<String>,
    /// `disable` or `require`.
    pub tls: String,
    /// Times a query had to reconnect to the database, in the current run.
    pub reconnects: u64,
}

/// A sink's storage grant as the status shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct StorageStatus {
    /// The bucket.
    pub bucket: String,
    /// The key prefix every object is written under.
    pub prefix: String,
    /// The S3-compatible store's URL, when not AWS S3.
    pub endpoint: Option<String>,
    /// The region, when configured.
    pub region: Option<String>,
    /// `static` (keys given by reference) or `host chain` (the host's AWS credentials).
    pub credentials: String,
    /// Requests to the store retried after a transient error, in the current run.
    pub retries: u64,
}
