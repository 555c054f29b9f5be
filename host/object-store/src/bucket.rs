//! [`Bucket`]: the requests a sink needs, each through the retry loop, each failure turned
//! into a [`StoreError`] that says what to fix.

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use bytes::Bytes;

use crate::classify::{Class, Denial, Fault};
use crate::retry::{with_retries, Conflicts, Failure, Target};
use crate::{connect, StoreConfig, StoreError, Written};

/// One bucket of an S3-compatible store. Cheap to clone (clones share the client, its
/// connection pool and the retry counter); `Send + Sync`.
#[derive(Clone)]
pub struct Bucket {
    inner: Arc<Inner>,
}

struct Inner {
    client: aws_sdk_s3::Client,
    bucket: String,
    /// The region requests are signed for.
    region: String,
    /// `at <endpoint>` or `in region <region>`.
    place: String,
    retry_budget: Duration,
    retries: AtomicU64,
}

impl fmt::Debug for Bucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bucket")
            .field("bucket", &self.inner.bucket)
            .field("place", &self.inner.place)
            .field("retries", &self.retries())
            .finish_non_exhaustive()
    }
}

impl Bucket {
    /// Builds the client: static credentials if given, else the full AWS default chain
    /// (environment, profile, web identity, ECS, instance metadata); the region if given,
    /// else the chain's, else `us-east-1`. Sends no request to the store (see
    /// [`Bucket::check`]); refuses, as [`StoreError::Denied`], a bucket name or endpoint
    /// that cannot work.
    pub async fn connect(config: StoreConfig) -> Result<Bucket, StoreError> {
        let connected = connect::client(&config).await?;
        Ok(Bucket {
            inner: Arc::new(Inner {
                client: connected.client,
                bucket: config.bucket,
                region: connected.region,
                place: connected.place,
                retry_budget: config.retry_budget,
                retries: AtomicU64::new(0),
            }),
        })
    }

    /// One HeadBucket: proves the bucket exists and the credentials may use it. For
    /// `validate` and for a connector's start.
    pub async fn check(&self) -> Result<(), StoreError> {
        let (client, bucket) = (&self.inner.client, &self.inner.bucket);
        let target = self.target("HeadBucket", None);
        self.run(target, Conflicts::Return, || client.head_bucket().bucket(bucket).send())
            .await
            .map(|_| ())
            .map_err(|failure| self.error(target, failure))
    }

    /// Writes a whole object. With `if_none_match`, an existing object at `key` is left as
    /// it is and the answer is [`Written::AlreadyExisted`].
    pub async fn put(&self, key: &str, body: Bytes, if_none_match: bool) -> Result<Written, StoreError> {
        let (client, bucket) = (&self.inner.client, &self.inner.bucket);
        let target = self.target("PutObject", Some(key));
        // A 409 ConditionalRequestConflict means a concurrent conditional write: S3's advice
        // is to send the PUT again, which then writes the object or answers 412.
        let sent = self
            .run(target, Conflicts::Retry, || {
                client
                    .put_object()
                    .bucket(bucket)
                    .key(key)
                    .body(ByteStream::from(body.clone()))
                    .set_if_none_match(if_none_match.then(|| "*".to_owned()))
                    .send()
            })
            .await;
        self.written(target, if_none_match, sent)
    }

    /// Starts a multipart upload at `key`; returns its upload id.
    pub async fn start_multipart(&self, key: &str) -> Result<String, StoreError> {
        let (client, bucket) = (&self.inner.client, &self.inner.bucket);
        let target = self.target("CreateMultipartUpload", Some(key));
        let created = self
            .run(target, Conflicts::Return, || client.create_multipart_upload().bucket(bucket).key(key).send())
            .await
            .map_err(|failure| self.error(target, failure))?;
        created.upload_id().map(str::to_owned).ok_or_else(|| self.malformed(target, "no upload id"))
    }

    /// Uploads part `part_number` (1 to 10,000) of an upload; returns the part's ETag, which
    /// [`Bucket::complete_multipart`] needs. Every part but the last must be at least 5 MiB
    /// (S3 refuses smaller ones at completion with EntityTooSmall).
    pub async fn upload_part(&self, key: &str, upload_id: &str, part_number: i32, body: Bytes) -> Result<String, StoreError> {
        let (client, bucket) = (&self.inner.client, &self.inner.bucket);
        let target = self.target("UploadPart", Some(key));
        let uploaded = self
            .run(target, Conflicts::Return, || {
                client
                    .upload_part()
                    .bucket(bucket)
                    .key(key)
                    .upload_id(upload_id)
                    .part_number(part_number)
                    .body(ByteStream::from(body.clone()))
                    .send()
            })
            .await
            .map_err(|failure| self.error(target, failure))?;
        uploaded.e_tag().map(str::to_owned).ok_or_else(|| self.malformed(target, "no ETag"))
    }

    /// Completes an upload from its parts `(part_number, e_tag)`, in ascending part order.
    /// With `if_none_match`, an existing object at `key` is left as it is and the answer is
    /// [`Written::AlreadyExisted`]; the upload, which the store keeps open then, is aborted
    /// (if that fails it is only logged: [`Bucket::abort_incomplete`] catches it later).
    pub async fn complete_multipart(&self, key: &str, upload_id: &str, parts: &[(i32, String)], if_none_match: bool) -> Result<Written, StoreError> {
        let (client, bucket) = (&self.inner.client, &self.inner.bucket);
        let target = self.target("CompleteMultipartUpload", Some(key));
        let parts = parts.iter().map(|(number, e_tag)| CompletedPart::builder().part_number(*number).e_tag(e_tag.clone()).build());
        let upload = CompletedMultipartUpload::builder().set_parts(Some(parts.collect())).build();
        // A 409 ConditionalRequestConflict here means another writer completed the same key
        // meanwhile; S3 will not complete this upload again, so it counts as already written.
        let sent = self
            .run(target, Conflicts::Return, || {
                client
                    .complete_multipart_upload()
                    .bucket(bucket)
                    .key(key)
                    .upload_id(upload_id)
                    .multipart_upload(upload.clone())
                    .set_if_none_match(if_none_match.then(|| "*".to_owned()))
                    .send()
            })
            .await;
        let written = self.written(target, if_none_match, sent)?;
        if written == Written::AlreadyExisted {
            if let Err(e) = self.abort(key, upload_id).await {
                tracing::warn!(bucket = %bucket, key, error = %e, "could not abort an upload whose object already existed");
            }
        }
        Ok(written)
    }

    /// Aborts an upload and deletes its parts. An upload that no longer exists counts as
    /// aborted.
    pub async fn abort_multipart(&self, key: &str, upload_id: &str) -> Result<(), StoreError> {
        self.abort(key, upload_id).await.map(|_| ())
    }

    /// Aborts every incomplete multipart upload under `prefix`; returns how many. Called when
    /// a connector starts, so that uploads a crash left open cost nothing.
    pub async fn abort_incomplete(&self, prefix: &str) -> Result<usize, StoreError> {
        let (client, bucket) = (&self.inner.client, &self.inner.bucket);
        let target = self.target("ListMultipartUploads", Some(prefix));
        let prefix_param = (!prefix.is_empty()).then(|| prefix.to_owned());
        let mut aborted = 0;
        let mut markers: (Option<String>, Option<String>) = (None, None);
        loop {
            let page = self
                .run(target, Conflicts::Return, || {
                    client
                        .list_multipart_uploads()
                        .bucket(bucket)
                        .set_prefix(prefix_param.clone())
                        .set_key_marker(markers.0.clone())
                        .set_upload_id_marker(markers.1.clone())
                        .send()
                })
                .await
                .map_err(|failure| self.error(target, failure))?;
            for upload in page.uploads() {
                if let (Some(key), Some(upload_id)) = (upload.key(), upload.upload_id()) {
                    if self.abort(key, upload_id).await? {
                        aborted += 1;
                    }
                }
            }
            let next = (page.next_key_marker().map(str::to_owned), page.next_upload_id_marker().map(str::to_owned));
            // Stop on the last page, and on a page whose markers do not move on.
            if page.is_truncated() != Some(true) || next.0.is_none() || next == markers {
                break;
            }
            markers = next;
        }
        if aborted > 0 {
            tracing::info!(bucket = %bucket, prefix, aborted, "aborted incomplete multipart uploads");
        }
        Ok(aborted)
    }

    /// Requests retried so far (transient failures), for the connector's status.
    pub fn retries(&self) -> u64 {
        self.inner.retries.load(Ordering::Relaxed)
    }

    /// The bucket's name.
    pub fn bucket(&self) -> &str {
        &self.inner.bucket
    }

    /// Aborts one upload: `true` if this call aborted it, `false` if it was already gone.
    async fn abort(&self, key: &str, upload_id: &str) -> Result<bool, StoreError> {
        let (client, bucket) = (&self.inner.client, &self.inner.bucket);
        let target = self.target("AbortMultipartUpload", Some(key));
        let sent = self
            .run(target, Conflicts::Return, || client.abort_multipart_upload().bucket(bucket).key(key).upload_id(upload_id).send())
            .await;
        match sent {
            Ok(_) => Ok(true),
            Err(Failure::Final(fault)) if fault.class == Class::NoSuchUpload => Ok(false),
            Err(failure) => Err(self.error(target, failure)),
        }
    }

    fn target<'a>(&'a self, op: &'static str, key: Option<&'a str>) -> Target<'a> {
        Target { op, bucket: &self.inner.bucket, key, place: &self.inner.place }
    }

    async fn run<T, E, F, Fut>(&self, target: Target<'_>, conflicts: Conflicts, send: F) -> Result<T, Failure>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, SdkError<E, HttpResponse>>>,
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        with_retries(target, self.inner.retry_budget, &self.inner.retries, conflicts, send).await
    }

    /// The answer of a write that may carry `If-None-Match: *`.
    fn written<T>(&self, target: Target<'_>, if_none_match: bool, sent: Result<T, Failure>) -> Result<Written, StoreError> {
        match sent {
            Ok(_) => Ok(Written::Created),
            Err(Failure::Final(fault)) if if_none_match && matches!(fault.class, Class::PreconditionFailed | Class::ConditionalConflict) => {
                Ok(Written::AlreadyExisted)
            }
            Err(failure) => Err(self.error(target, failure)),
        }
    }

    /// A success answer missing what it must carry.
    fn malformed(&self, target: Target<'_>, missing: &str) -> StoreError {
        StoreError::Rejected(format!("the store {} answered {} with {missing}", self.inner.place, target.describe()))
    }

    fn error(&self, target: Target<'_>, failure: Failure) -> StoreError {
        let fault = match failure {
            Failure::GaveUp(message) => return StoreError::Unavailable(message),
            Failure::Final(fault) => fault,
        };
        match fault.class {
            Class::Denied(denial) => StoreError::Denied(self.denial(denial, &fault)),
            _ => StoreError::Rejected(format!("the store {} refused {}: {}", self.inner.place, target.describe(), fault.detail)),
        }
    }

    /// What the operator has to fix. Built from the error code only: the store's own text
    /// for signature errors can quote the request.
    fn denial(&self, denial: Denial, fault: &Fault) -> String {
        let Inner { bucket, region, place, .. } = &*self.inner;
        // Without a code (HEAD answers have no body) the detail is just "HTTP <status>".
        let code = fault.code.as_deref().unwrap_or(&fault.detail);
        match denial {
            Denial::NoBucket => format!("bucket {bucket:?} does not exist {place}: create it, or correct the bucket name"),
            Denial::Credentials => format!(
                "the store {place} refused the credentials ({code}) for bucket {bucket:?}: check the access key id, secret access key and session token (or, without static keys, what the AWS default chain found)"
            ),
            Denial::AccessDenied => format!(
                "access to bucket {bucket:?} {place} was denied ({code}): the credentials need s3:ListBucket, s3:PutObject, s3:ListBucketMultipartUploads and s3:AbortMultipartUpload on it"
            ),
            Denial::WrongRegion => {
                let actual = fault.bucket_region.as_deref().map(|r| format!(", it is in {r:?}")).unwrap_or_default();
                format!("bucket {bucket:?} is not in region {region:?} ({code}{actual}): set the store's region to the bucket's region")
            }
            Denial::NoCredentials => format!(
                "no usable credentials for bucket {bucket:?}: {}; give an access key id and secret access key in the store config, or set up the AWS default chain (AWS_ACCESS_KEY_ID, a profile, web identity or an instance role)",
                fault.detail
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_can_be_shared_between_tasks() {
        fn shareable<T: Send + Sync + Clone + 'static>() {}
        shareable::<Bucket>();
    }

    async fn at_closed_port() -> Bucket {
        let config = StoreConfig {
            region: Some("eu-west-1".into()),
            endpoint: Some("http://127.0.0.1:9".into()),
            path_style: true,
            ..StoreConfig::new("logs")
        };
        Bucket::connect(config).await.expect("connect sends nothing")
    }

    fn fault(class: Class, code: Option<&str>, region: Option<&str>) -> Fault {
        Fault { class, code: code.map(str::to_owned), detail: "HTTP 403 InvalidAccessKeyId: quoted".into(), bucket_region: region.map(str::to_owned) }
    }

    #[tokio::test]
    async fn denials_name_the_bucket_and_what_to_fix() {
        let b = at_closed_port().await;
        let nobucket = b.denial(Denial::NoBucket, &fault(Class::Denied(Denial::NoBucket), Some("NotFound"), None));
        assert_eq!(nobucket, "bucket \"logs\" does not exist at http://127.0.0.1:9: create it, or correct the bucket name");
        let keys = b.denial(Denial::Credentials, &fault(Class::Denied(Denial::Credentials), Some("InvalidAccessKeyId"), None));
        assert!(keys.contains("refused the credentials (InvalidAccessKeyId)"), "{keys}");
        assert!(!keys.contains("quoted"), "the store's own text stays out: {keys}");
        let region = b.denial(Denial::WrongRegion, &fault(Class::Denied(Denial::WrongRegion), Some("PermanentRedirect"), Some("us-west-2")));
        assert!(region.contains("not in region \"eu-west-1\" (PermanentRedirect, it is in \"us-west-2\")"), "{region}");
    }

    #[tokio::test]
    async fn conditional_writes_that_found_an_object_count_as_written() {
        let b = at_closed_port().await;
        let target = b.target("PutObject", Some("k"));
        let precondition = || Err::<(), _>(Failure::Final(fault(Class::PreconditionFailed, Some("PreconditionFailed"), None)));
        assert_eq!(b.written(target, true, precondition()), Ok(Written::AlreadyExisted));
        assert!(matches!(b.written(target, false, precondition()), Err(StoreError::Rejected(_))));
        assert_eq!(b.written(target, true, Ok(())), Ok(Written::Created));
        let gave_up = b.written(target, true, Err::<(), _>(Failure::GaveUp("kept failing".into())));
        assert_eq!(gave_up, Err(StoreError::Unavailable("kept failing".into())));
    }
}
