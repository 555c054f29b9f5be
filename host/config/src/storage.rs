//! The object storage a sink connector grants its plugin (`storage:`): one bucket, a key
//! prefix inside it, where the store is and how the host signs in. The plugin never sees any
//! of it but the prefix: the host holds the client and refuses keys outside the prefix.

use serde::{Deserialize, Serialize};

use crate::{Problem, Ranged};

/// `storage:` as written in a connector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StorageAccess {
    /// The bucket the plugin writes to.
    pub bucket: String,
    /// Every key the plugin writes starts with this (empty: the whole bucket). Ends with `/`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prefix: String,
    /// The bucket's region. Default: the AWS configuration's (`AWS_REGION`, the profile), else
    /// `us-east-1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// An S3-compatible store's URL (`http://127.0.0.1:9000`). Default: AWS S3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Address the bucket in the path (`endpoint/bucket/key`) rather than the host name; most
    /// S3-compatible stores need it. Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub path_style: bool,
    /// Keys to sign in with. Default: the AWS credential chain of the host (environment,
    /// profile, web identity, instance metadata), so no key needs to be written anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<StorageCredentials>,
    /// Size of each part of a multipart upload, in MiB. Default 8; 5 (S3's minimum) to 512.
    #[serde(default = "default_part_size")]
    pub part_size_mib: Ranged<5, 512>,
    /// Bytes the host may hold for this connector's uploads at once, in MiB; a plugin writing
    /// faster than the store takes waits. Default 64; 16 to 4,096; at least two parts.
    #[serde(default = "default_buffer")]
    pub max_buffered_mib: Ranged<16, 4096>,
}

/// Static keys. The secret ones must be references (`${secret:NAME}`, `${env:NAME}`,
/// `${file:/path}`), so that no connector file or API body ever holds them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StorageCredentials {
    /// The access key id (may be written as it is, or as a reference).
    pub access_key_id: String,
    /// The secret access key: a reference.
    pub secret_access_key: String,
    /// A session token for temporary credentials: a reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_token: Option<String>,
}

fn default_part_size() -> Ranged<5, 512> {
    Ranged::constant(8)
}

fn default_buffer() -> Ranged<16, 4096> {
    Ranged::constant(64)
}

/// S3's longest key; the prefix leaves room for the plugin's part of it.
const MAX_PREFIX_BYTES: usize = 512;

impl StorageAccess {
    /// Every problem with the grant, keyed under `key` (`connector.storage`).
    pub(crate) fn problems(&self, key: &str) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut add = |field: &str, msg: String| problems.push(Problem::new(format!("{key}.{field}"), msg));
        if let Err(why) = check_bucket(&self.bucket) {
            add("bucket", why);
        }
        if let Err(why) = check_prefix(&self.prefix) {
            add("prefix", why);
        }
        if let Some(endpoint) = &self.endpoint {
            if let Err(why) = check_endpoint(endpoint) {
                add("endpoint", why);
            } else if self.credentials.is_none() && !is_loopback(endpoint) {
                // The host's own AWS credentials sign for AWS; never for a store a connector names.
                add("credentials", format!("required with `endpoint` {endpoint:?}: the host's AWS credentials are only used for AWS S3 (or a store on this machine); give `credentials` by reference"));
            }
        }
        if let Some(region) = &self.region {
            if region.is_empty() || !region.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
                add("region", format!("{region:?} is not a region name (like `eu-west-1`)"));
            }
        }
        if self.max_buffered_mib.get() < 2 * self.part_size_mib.get() {
            add("max_buffered_mib", format!("must hold at least two parts: {} or more with part_size_mib {}", 2 * self.part_size_mib.get(), self.part_size_mib.get()));
        }
        if let Some(c) = &self.credentials {
            if c.access_key_id.is_empty() {
                add("credentials.access_key_id", "empty; give the key id, or remove `credentials` to use the host's AWS credential chain".into());
            }
            if !is_reference(&c.secret_access_key) {
                add("credentials.secret_access_key", "write a reference, not the key: `${secret:NAME}` (stored with PUT /v1/secrets/NAME), `${env:NAME}` or `${file:/path}`".into());
            }
            if c.session_token.as_deref().is_some_and(|t| !is_reference(t)) {
                add("credentials.session_token", "write a reference, not the token: `${secret:NAME}`, `${env:NAME}` or `${file:/path}`".into());
            }
        }
        problems
    }
}

/// Whether `value` is one whole secret reference.
fn is_reference(value: &str) -> bool {
    let inner = value.strip_prefix("${").and_then(|v| v.strip_suffix('}'));
    inner.is_some_and(|i| ["secret:", "env:", "file:"].iter().any(|kind| i.starts_with(kind) && i.len() > kind.len()) && !i.contains("${"))
}

/// S3's bucket naming rules (the ones that matter for addressing).
fn check_bucket(bucket: &str) -> Result<(), String> {
    let ok_chars = bucket.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-');
    let ends_ok = bucket.starts_with(|c: char| c.is_ascii_alphanumeric()) && bucket.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !(3..=63).contains(&bucket.len()) || !ok_chars || !ends_ok || bucket.contains("..") {
        return Err(format!("{bucket:?} is not a bucket name: 3 to 63 lower-case letters, digits, `.` and `-`, starting and ending with a letter or digit"));
    }
    Ok(())
}

fn check_prefix(prefix: &str) -> Result<(), String> {
    if prefix.is_empty() {
        return Ok(());
    }
    if prefix.len() > MAX_PREFIX_BYTES {
        return Err(format!("{} bytes long; at most {MAX_PREFIX_BYTES}", prefix.len()));
    }
    if prefix.starts_with('/') {
        return Err(format!("{prefix:?} starts with `/`; S3 keys do not (write {:?})", prefix.trim_start_matches('/')));
    }
    if !prefix.ends_with('/') {
        return Err(format!("{prefix:?} must end with `/` (write \"{prefix}/\"), so that it names a folder and not the start of other names"));
    }
    if prefix.chars().any(char::is_control) {
        return Err("holds a control character".into());
    }
    if let Some(bad) = prefix.trim_end_matches('/').split('/').find(|s| s.is_empty() || *s == "." || *s == "..") {
        return Err(format!("{prefix:?} has a {bad:?} segment; write plain folder names"));
    }
    Ok(())
}

/// Whether a well-formed `endpoint` names this machine.
fn is_loopback(endpoint: &str) -> bool {
    let rest = endpoint.split_once("://").map_or(endpoint, |(_, r)| r).trim_end_matches('/');
    let host = match rest.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map_or(v6, |(h, _)| h),
        None => rest.rsplit_once(':').map_or(rest, |(h, _)| h),
    };
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn check_endpoint(endpoint: &str) -> Result<(), String> {
    let rest = endpoint.strip_prefix("https://").or_else(|| endpoint.strip_prefix("http://"));
    let Some(rest) = rest else {
        return Err(format!("{endpoint:?} is not an http:// or https:// URL"));
    };
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.is_empty() || authority.contains(['/', '?', '#', '@']) || authority.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{endpoint:?}: give the scheme, host and port only (like `http://127.0.0.1:9000`), without a path, user or query"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(yaml: &str) -> StorageAccess {
        serde_yaml_ng::from_str(yaml).expect("parses")
    }

    #[test]
    fn a_plain_grant_has_no_problems_and_defaults() {
        let g = grant("{bucket: my-bucket, prefix: warehouse/orders/}");
        assert!(g.problems("s").is_empty());
        assert_eq!((g.part_size_mib.get(), g.max_buffered_mib.get()), (8, 64));
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let g = grant("{bucket: My_Bucket, prefix: a/../b, endpoint: 'ftp://x', region: 'EU', part_size_mib: 20, max_buffered_mib: 30, credentials: {access_key_id: AK, secret_access_key: plain, session_token: tok}}");
        let keys: Vec<String> = g.problems("s").into_iter().map(|p| p.key).collect();
        let want = ["bucket", "prefix", "endpoint", "region", "max_buffered_mib", "credentials.secret_access_key", "credentials.session_token"];
        assert_eq!(keys, want.map(|k| format!("s.{k}")));
    }

    #[test]
    fn the_host_chain_signs_only_for_aws_or_this_machine() {
        assert!(grant("{bucket: b-1, endpoint: 'http://127.0.0.1:9000'}").problems("s").is_empty());
        assert!(grant("{bucket: b-1, endpoint: 'http://[::1]:9000'}").problems("s").is_empty());
        let keys: Vec<String> = grant("{bucket: b-1, endpoint: 'https://minio.example.com'}").problems("s").into_iter().map(|p| p.key).collect();
        assert_eq!(keys, ["s.credentials"]);
        assert!(grant("{bucket: b-1, endpoint: 'https://minio.example.com', credentials: {access_key_id: a, secret_access_key: '${secret:k}'}}").problems("s").is_empty());
    }

    #[test]
    fn prefixes_name_folders() {
        assert!(check_prefix("a/b/").is_ok());
        for bad in ["a", "/a/", "a//b/", "./a/", "a/../"] {
            assert!(check_prefix(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn secret_keys_must_be_references() {
        for good in ["${secret:s3}", "${env:AWS_SECRET}", "${file:/run/secrets/k}"] {
            assert!(is_reference(good), "{good}");
        }
        for bad in ["abc", "${secret:}", "x${secret:a}", "${other:a}", "${secret:a}${secret:b}"] {
            assert!(!is_reference(bad), "{bad}");
        }
    }
}
