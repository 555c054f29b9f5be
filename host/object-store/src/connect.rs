//! Building the SDK client for one [`StoreConfig`]: rustls with ring (no aws-lc, so no C
//! build), the SDK's retries off (the crate retries itself, see `retry.rs`), and timeouts so
//! that a dead endpoint is an error to retry, never a hang.

use std::time::Duration;

use aws_config::BehaviorVersion;
use aws_sdk_s3::config::retry::RetryConfig;
use aws_sdk_s3::config::timeout::TimeoutConfig;
use aws_sdk_s3::config::{Credentials, Region};
use aws_smithy_http_client::tls;

use crate::{StoreConfig, StoreError};

/// Time to open a TCP (and TLS) connection before the attempt fails and is retried.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Time one attempt of one request may take, body upload included (a 25 MiB part at
/// 5 MB/s takes 5 s).
pub(crate) const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(60);
/// The region when neither the config nor the AWS default chain names one.
const FALLBACK_REGION: &str = "us-east-1";
/// Names static credentials in the SDK's own diagnostics (never their value).
const STATIC_PROVIDER: &str = "turnpike-storage-config";

/// A client for one bucket, with what error messages need to say where it points.
pub(crate) struct Connected {
    pub client: aws_sdk_s3::Client,
    /// The region requests are signed for.
    pub region: String,
    /// `at <endpoint>` or `in region <region>`, for messages.
    pub place: String,
}

/// Builds the client. No request is sent to the store; the only I/O is the AWS default chain
/// reading the environment and profile files, and, when the config names no region, asking
/// instance metadata for one (with a short timeout).
pub(crate) async fn client(config: &StoreConfig) -> Result<Connected, StoreError> {
    check(config)?;
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(tls::rustls_provider::CryptoMode::Ring))
        .build_https();
    let timeouts = TimeoutConfig::builder().connect_timeout(CONNECT_TIMEOUT).operation_attempt_timeout(ATTEMPT_TIMEOUT).build();
    // Without a region the loader asks its default chain, which uses `http` for instance
    // metadata: a region chain built here would have no HTTP client (no aws-lc default).
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .http_client(http)
        .retry_config(RetryConfig::disabled())
        .timeout_config(timeouts);
    if let Some(region) = &config.region {
        loader = loader.region(Region::new(region.clone()));
    }
    if let Some(keys) = &config.credentials {
        let credentials = Credentials::new(
            keys.access_key_id.clone(),
            keys.secret_access_key.clone(),
            keys.session_token.clone(),
            None,
            STATIC_PROVIDER,
        );
        loader = loader.credentials_provider(credentials);
    }
    if let Some(endpoint) = &config.endpoint {
        loader = loader.endpoint_url(endpoint.clone());
    }
    let shared = loader.load().await;
    let region = shared.region().cloned().unwrap_or_else(|| Region::new(FALLBACK_REGION));
    let place = match &config.endpoint {
        Some(endpoint) => format!("at {endpoint}"),
        None => format!("in region {region}"),
    };
    let s3 = aws_sdk_s3::config::Builder::from(&shared).region(region.clone()).force_path_style(config.path_style).build();
    Ok(Connected { client: aws_sdk_s3::Client::from_conf(s3), region: region.to_string(), place })
}

/// The mistakes visible without asking the store.
fn check(config: &StoreConfig) -> Result<(), StoreError> {
    if config.bucket.is_empty() || config.bucket.contains('/') {
        return Err(StoreError::Denied(format!(
            "bucket name {:?} cannot work: give the bare bucket name, without slashes (a key prefix belongs in the grant's prefix)",
            config.bucket
        )));
    }
    if let Some(endpoint) = &config.endpoint {
        let rest = endpoint.strip_prefix("https://").or_else(|| endpoint.strip_prefix("http://"));
        if rest.is_none_or(|host| host.is_empty() || host.starts_with('/')) {
            return Err(StoreError::Denied(format!(
                "endpoint {endpoint:?} is not a URL: write it as https://host[:port] (or http:// for a local test store)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(bucket: &str, endpoint: Option<&str>) -> StoreConfig {
        StoreConfig { endpoint: endpoint.map(str::to_owned), ..StoreConfig::new(bucket) }
    }

    #[test]
    fn refuses_what_cannot_work_before_any_request() {
        assert!(check(&with("logs", Some("https://minio.internal:9000"))).is_ok());
        assert!(check(&with("logs", Some("http://127.0.0.1:9000/"))).is_ok());
        assert!(check(&with("logs", None)).is_ok());
        for (bucket, endpoint, says) in [
            ("", None, "bucket name"),
            ("logs/2024", None, "without slashes"),
            ("logs", Some("minio.internal:9000"), "not a URL"),
            ("logs", Some("https://"), "not a URL"),
            ("logs", Some("ftp://host"), "not a URL"),
        ] {
            match check(&with(bucket, endpoint)) {
                Err(StoreError::Denied(m)) => assert!(m.contains(says), "{bucket:?} {endpoint:?}: {m}"),
                other => panic!("{bucket:?} {endpoint:?}: expected Denied, got {other:?}"),
            }
        }
    }
}
