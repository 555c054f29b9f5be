//! Opening a sink connector's `storage` grant: resolve the credentials' references, build the
//! host's client for the bucket, prove the bucket and credentials work (so a wrong key or a
//! missing bucket fails the connector at once, in words, and nothing is committed), and abort
//! the multipart uploads an earlier run left open under the prefix (a crash mid-upload leaves
//! nothing behind).

use std::sync::Arc;
use std::time::Duration;

use turnpike_config::{resolve_str, Problem, SecretLookup, StorageAccess};
use turnpike_object_store::{Bucket, StaticCredentials, StoreConfig, StoreError};
use turnpike_runtime::{FaultClass, StorageGrant};

use crate::status::FaultInfo;

/// How long one request to the store is retried before the connector fails.
const RETRY_BUDGET: Duration = Duration::from_secs(60);

/// Why a grant could not be opened.
pub(crate) enum OpenError {
    /// References that did not resolve.
    Reference(Vec<Problem>),
    /// The store refused or could not be reached.
    Store(StoreError),
}

impl OpenError {
    /// As a connector failure.
    pub(crate) fn fault(&self, bucket: &str) -> FaultInfo {
        match self {
            OpenError::Reference(p) => FaultInfo::new(FaultClass::Config, p.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")),
            OpenError::Store(e) => FaultInfo::new(FaultClass::ObjectStore, format!("storage bucket {bucket:?}: {e}; nothing was committed")),
        }
    }

    /// As validation problems.
    pub(crate) fn problems(self, bucket: &str) -> Vec<Problem> {
        match self {
            OpenError::Reference(p) => p,
            OpenError::Store(e) => vec![Problem::new("connector.storage", format!("bucket {bucket:?}: {e}"))],
        }
    }
}

/// The static credentials of `access`, references resolved, with every secret value (for the
/// instance's scrubbing); `None` for the host's credential chain.
pub(crate) fn credentials(access: &StorageAccess, secrets: &dyn SecretLookup) -> Result<(Option<StaticCredentials>, Vec<String>), OpenError> {
    let Some(c) = &access.credentials else { return Ok((None, Vec::new())) };
    let mut values = Vec::new();
    let mut problems = Vec::new();
    let mut resolve = |text: &str, field: &str| match resolve_str(text, &format!("connector.storage.credentials.{field}"), secrets) {
        Ok(resolved) => {
            values.extend(resolved.secret_values);
            resolved.value
        }
        Err(p) => {
            problems.extend(p);
            String::new()
        }
    };
    let access_key_id = resolve(&c.access_key_id, "access_key_id");
    let secret_access_key = resolve(&c.secret_access_key, "secret_access_key");
    let session_token = c.session_token.as_deref().map(|t| resolve(t, "session_token"));
    if !problems.is_empty() {
        return Err(OpenError::Reference(problems));
    }
    // The key id is not secret, but a reference to it is scrubbed like the rest.
    Ok((Some(StaticCredentials { access_key_id, secret_access_key, session_token }), values))
}

/// The client for `access`, not yet checked.
async fn connect(access: &StorageAccess, credentials: Option<StaticCredentials>) -> Result<Bucket, OpenError> {
    let config = StoreConfig {
        bucket: access.bucket.clone(),
        region: access.region.clone(),
        endpoint: access.endpoint.clone(),
        path_style: access.path_style,
        credentials,
        retry_budget: RETRY_BUDGET,
    };
    Bucket::connect(config).await.map_err(OpenError::Store)
}

/// The grant a sink connector's instances run with: connected, checked, and cleaned of the
/// uploads an earlier run left open.
pub(crate) async fn open(access: &StorageAccess, credentials: Option<StaticCredentials>) -> Result<StorageGrant, OpenError> {
    let bucket = connect(access, credentials).await?;
    bucket.check().await.map_err(OpenError::Store)?;
    let aborted = bucket.abort_incomplete(&access.prefix).await.map_err(OpenError::Store)?;
    if aborted > 0 {
        tracing::info!(bucket = %access.bucket, prefix = %access.prefix, aborted, "aborted multipart uploads an earlier run left open");
    }
    let part = (access.part_size_mib.get() as usize) << 20;
    let budget = (access.max_buffered_mib.get() as usize) << 20;
    Ok(StorageGrant::new(Arc::new(bucket), &access.prefix, part, budget))
}

/// For `validate`: whether the bucket exists and the credentials may use it. No clean-up.
pub(crate) async fn check(access: &StorageAccess, credentials: Option<StaticCredentials>) -> Result<(), OpenError> {
    connect(access, credentials).await?.check().await.map_err(OpenError::Store)
}
