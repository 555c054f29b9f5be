//! What a [`crate::Bucket`] connects to. Plain data: the runtime fills it from a connector's
//! `storage` grant and the operator's store settings.

use std::fmt;
use std::time::Duration;

/// How long one request is retried before it fails as unavailable, unless configured.
pub const DEFAULT_RETRY_BUDGET: Duration = Duration::from_secs(60);

/// One bucket on S3 or an S3-compatible store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    /// The bucket's name.
    pub bucket: String,
    /// The bucket's region; `None` asks the AWS default chain (`AWS_REGION`, profile, instance
    /// metadata), and falls back to `us-east-1`.
    pub region: Option<String>,
    /// An S3-compatible endpoint (`https://minio.internal:9000`); `None` means AWS S3 (or
    /// `AWS_ENDPOINT_URL` if set).
    pub endpoint: Option<String>,
    /// Path-style addressing (`endpoint/bucket/key`) instead of virtual-hosted
    /// (`bucket.endpoint/key`); most S3-compatible stores need it.
    pub path_style: bool,
    /// Static keys; `None` uses the AWS default credentials chain (environment, profile,
    /// web identity, ECS, instance metadata).
    pub credentials: Option<StaticCredentials>,
    /// Total time spent retrying one request before it fails as unavailable. Default 60 s
    /// ([`DEFAULT_RETRY_BUDGET`]).
    pub retry_budget: Duration,
}

impl StoreConfig {
    /// A bucket on AWS S3 with the default chains and the default retry budget.
    pub fn new(bucket: impl Into<String>) -> Self {
        StoreConfig {
            bucket: bucket.into(),
            region: None,
            endpoint: None,
            path_style: false,
            credentials: None,
            retry_budget: DEFAULT_RETRY_BUDGET,
        }
    }
}

/// An access key pair, optionally with a session token. `Debug` shows only the key id.
#[derive(Clone, PartialEq, Eq)]
pub struct StaticCredentials {
    /// The access key id (not a secret: it appears in request signatures).
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: String,
    /// A session token, for temporary credentials.
    pub session_token: Option<String>,
}

impl fmt::Debug for StaticCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field("session_token", &self.session_token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_secret_or_the_session_token() {
        let mut config = StoreConfig::new("b");
        config.credentials = Some(StaticCredentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI-secret".into(),
            session_token: Some("FwoGZXIvYXdzE-token".into()),
        });
        let shown = format!("{config:?}");
        assert!(shown.contains("AKIDEXAMPLE"), "{shown}");
        assert!(!shown.contains("wJalrXUtnFEMI-secret"), "{shown}");
        assert!(!shown.contains("FwoGZXIvYXdzE-token"), "{shown}");
        assert_eq!(config.retry_budget, Duration::from_secs(60));
    }
}
