//! The S3 client behind `turnpike:plugin/object-store`: one [`Bucket`], the handful of
//! requests a sink needs (whole-object puts, multipart uploads, conditional writes, clean-up
//! of abandoned uploads), and errors sorted by what the operator can do about them.
//!
//! Plugins never see this crate: the runtime holds a `Bucket` per connector grant, checks
//! keys against the granted prefix, and calls it outside the plugin's deadline.
//!
//! # Retries
//! The SDK's own retries are off. Each request is retried here, with exponential backoff and
//! jitter (100 ms doubling to 5 s), until [`StoreConfig::retry_budget`] has passed; only
//! then does it fail as [`StoreError::Unavailable`]. Errors that retrying cannot fix (refused
//! credentials, a missing bucket, a wrong region, any other 4xx) fail at once. Every retry is
//! counted ([`Bucket::retries`]) and logged at `warn`.
//!
//! # Credentials
//! Static keys from the connector config, or else the full AWS default chain (environment,
//! profile files, web identity, ECS, instance metadata). Neither ever appears in an error or
//! a log line: messages name the error code the store answered, never the keys.

mod bucket;
mod classify;
mod config;
mod connect;
mod retry;

pub use bucket::Bucket;
pub use config::{StaticCredentials, StoreConfig, DEFAULT_RETRY_BUDGET};

/// What a conditional write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The object was written.
    Created,
    /// `if_none_match` was set and an object already existed at the key (the store answered
    /// 412 PreconditionFailed, or 409 ConditionalRequestConflict at multipart completion):
    /// it was left as it was. With deterministic keys this means "already done".
    AlreadyExisted,
}

/// Why a request to the store failed. Messages are written for the operator, say what to
/// fix where that is known, and never contain a credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// Credentials refused, access denied, no such bucket, wrong region, or a store config
    /// that cannot work: retrying will not help. The message says which and what to fix.
    #[error("{0}")]
    Denied(String),
    /// The store kept failing (5xx, throttling, timeouts, connection refused) until the retry
    /// budget ran out. The message carries the last error.
    #[error("{0}")]
    Unavailable(String),
    /// Any other refusal (4xx), e.g. EntityTooSmall: the request itself was wrong.
    #[error("{0}")]
    Rejected(String),
}
