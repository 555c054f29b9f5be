//! Sorting a failed request into what to do next: retry it, tell the operator what to fix,
//! or report the refusal. The decision is a pure function of the HTTP status and the S3
//! error code ([`classify`]); [`Fault::from_sdk`] extracts those from the SDK's error.

use std::error::Error;

use aws_credential_types::provider::error::CredentialsError;
use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};

/// What to do about a failed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Transient: 5xx, throttling, timeouts, connection failures. Try again after a pause.
    Retry,
    /// Retrying will not help; the operator must change something.
    Denied(Denial),
    /// 412: a condition (`If-None-Match: *`) did not hold.
    PreconditionFailed,
    /// 409 ConditionalRequestConflict: a concurrent write to the same key with a condition.
    ConditionalConflict,
    /// The multipart upload does not exist (completed, aborted or expired).
    NoSuchUpload,
    /// Any other refusal.
    Rejected,
}

/// Which operator mistake a [`Class::Denied`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Denial {
    /// The bucket does not exist.
    NoBucket,
    /// The store does not accept the credentials (unknown key, wrong secret, expired token).
    Credentials,
    /// The credentials are valid but not allowed to use the bucket.
    AccessDenied,
    /// The bucket lives in another region than the one the client signs for.
    WrongRegion,
    /// No credentials could be found or loaded (AWS default chain).
    NoCredentials,
}

/// S3 codes that mean "slow down" or "try again" (the SDK's own lists, aws-runtime
/// `THROTTLING_ERRORS` and `TRANSIENT_ERRORS`, plus S3's server-side ones).
const RETRY_CODES: &[&str] = &[
    "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
    "TooManyRequestsException", "ProvisionedThroughputExceededException", "TransactionInProgressException",
    "RequestLimitExceeded", "BandwidthLimitExceeded", "LimitExceededException", "RequestThrottled",
    "SlowDown", "PriorRequestNotComplete", "EC2ThrottledException", "RequestTimeout",
    "RequestTimeoutException", "InternalError", "ServiceUnavailable", "OperationAborted",
];

/// The decision, from the response's HTTP status and S3 error code. The code wins where it is
/// known: S3 answers some errors with unusual statuses (an `InternalError` inside a 200 at
/// multipart completion). HEAD requests carry no body, so HeadBucket failures have only a
/// status, or the code `NotFound` the SDK derives from a 404.
pub(crate) fn classify(status: u16, code: Option<&str>) -> Class {
    match code {
        Some("NoSuchBucket" | "NotFound") => return Class::Denied(Denial::NoBucket),
        Some("InvalidAccessKeyId" | "SignatureDoesNotMatch" | "ExpiredToken" | "InvalidToken" | "TokenRefreshRequired") => {
            return Class::Denied(Denial::Credentials)
        }
        Some("AccessDenied" | "AllAccessDisabled" | "AccountProblem") => return Class::Denied(Denial::AccessDenied),
        Some("PermanentRedirect" | "AuthorizationHeaderMalformed" | "IllegalLocationConstraintException") => {
            return Class::Denied(Denial::WrongRegion)
        }
        Some("PreconditionFailed") => return Class::PreconditionFailed,
        Some("ConditionalRequestConflict") => return Class::ConditionalConflict,
        Some("NoSuchUpload") => return Class::NoSuchUpload,
        Some(code) if RETRY_CODES.contains(&code) => return Class::Retry,
        _ => {}
    }
    match status {
        429 | 500..=599 => Class::Retry,
        // S3 redirects a new bucket's requests for a while until DNS has caught up.
        307 => Class::Retry,
        301 => Class::Denied(Denial::WrongRegion),
        401 | 403 => Class::Denied(Denial::AccessDenied),
        412 => Class::PreconditionFailed,
        _ => Class::Rejected,
    }
}

/// A failed request, reduced to what the rest of the crate needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fault {
    pub class: Class,
    /// The S3 error code, or for errors without a response the kind of failure.
    pub code: Option<String>,
    /// One line for logs and messages: status, code and the store's message, or the
    /// transport error's chain. Never contains a credential.
    pub detail: String,
    /// The bucket's actual region, when the store said (`x-amz-bucket-region`).
    pub bucket_region: Option<String>,
}

impl Fault {
    /// Sorts an SDK error.
    pub(crate) fn from_sdk<E>(err: &SdkError<E, HttpResponse>) -> Fault
    where
        E: ProvideErrorMetadata + Error + Send + Sync + 'static,
    {
        let bucket_region = err.raw_response().and_then(|r| r.headers().get("x-amz-bucket-region")).map(str::to_owned);
        match err {
            SdkError::ServiceError(service) => {
                let status = service.raw().status().as_u16();
                let code = err.code();
                let mut class = classify(status, code);
                // HEAD answers carry no body, hence no code: a 400 that names the bucket's
                // region is HeadBucket signed for the wrong one.
                if class == Class::Rejected && code.is_none() && bucket_region.is_some() {
                    class = Class::Denied(Denial::WrongRegion);
                }
                let detail = match (code, err.message()) {
                    (Some(code), Some(message)) => format!("HTTP {status} {code}: {message}"),
                    (Some(code), None) => format!("HTTP {status} {code}"),
                    (None, _) => format!("HTTP {status}"),
                };
                Fault { class, code: code.map(str::to_owned), detail, bucket_region }
            }
            // A response that could not be read: usually the connection dropped mid-body.
            SdkError::ResponseError(response) => {
                let status = response.raw().status().as_u16();
                let class = if status < 300 { Class::Retry } else { classify(status, None) };
                Fault { class, code: None, detail: format!("HTTP {status}, unreadable response: {}", chain(err)), bucket_region }
            }
            SdkError::TimeoutError(_) => Fault { class: Class::Retry, code: Some("timeout".into()), detail: chain(err), bucket_region },
            SdkError::DispatchFailure(dispatch) => {
                // Credentials are resolved just before sending, so a chain that found none
                // surfaces here, as a dispatch failure wrapping the CredentialsError.
                if let Some(problem) = find::<CredentialsError>(err) {
                    let class = match problem {
                        CredentialsError::ProviderTimedOut(_) | CredentialsError::ProviderError(_) => Class::Retry,
                        _ => Class::Denied(Denial::NoCredentials),
                    };
                    return Fault { class, code: Some("credentials".into()), detail: chain(err), bucket_region };
                }
                let class = if dispatch.is_user() { Class::Rejected } else { Class::Retry };
                Fault { class, code: Some("dispatch".into()), detail: chain(err), bucket_region }
            }
            // The request could not be built: a bug or an invalid argument, not the store.
            _ => Fault { class: Class::Rejected, code: None, detail: chain(err), bucket_region },
        }
    }
}

/// The first error of type `T` in `err`'s source chain, `err` included.
fn find<'a, T: Error + 'static>(err: &'a (dyn Error + 'static)) -> Option<&'a T> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        current = e.source();
    }
    None
}

/// `err` and its sources, joined with `: ` (Display only: `Debug` of an SDK error would print
/// the raw response).
fn chain(err: &(dyn Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut current = err.source();
    while let Some(e) = current {
        out.push_str(": ");
        out.push_str(&e.to_string());
        current = e.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_s3::error::{ConnectorError, ErrorMetadata};
    use aws_sdk_s3::operation::put_object::PutObjectError;
    use aws_sdk_s3::primitives::SdkBody;

    #[test]
    fn status_and_code_decide_the_class() {
        use Class::*;
        use Denial::*;
        let cases: &[(u16, Option<&str>, Class)] = &[
            (503, Some("SlowDown"), Retry),
            (500, Some("InternalError"), Retry),
            (200, Some("InternalError"), Retry),
            (400, Some("RequestTimeout"), Retry),
            (400, Some("Throttling"), Retry),
            (502, None, Retry),
            (429, None, Retry),
            (307, None, Retry),
            (404, Some("NoSuchBucket"), Denied(NoBucket)),
            (404, Some("NotFound"), Denied(NoBucket)),
            (403, Some("InvalidAccessKeyId"), Denied(Credentials)),
            (403, Some("SignatureDoesNotMatch"), Denied(Credentials)),
            (400, Some("ExpiredToken"), Denied(Credentials)),
            (403, Some("AccessDenied"), Denied(AccessDenied)),
            (403, None, Denied(AccessDenied)),
            (301, Some("PermanentRedirect"), Denied(WrongRegion)),
            (301, None, Denied(WrongRegion)),
            (400, Some("AuthorizationHeaderMalformed"), Denied(WrongRegion)),
            (412, Some("PreconditionFailed"), PreconditionFailed),
            (412, None, PreconditionFailed),
            (409, Some("ConditionalRequestConflict"), ConditionalConflict),
            (404, Some("NoSuchUpload"), NoSuchUpload),
            (400, Some("EntityTooSmall"), Rejected),
            (400, Some("InvalidPart"), Rejected),
            (400, Some("MalformedXML"), Rejected),
            (404, None, Rejected),
        ];
        for &(status, code, want) in cases {
            assert_eq!(classify(status, code), want, "status {status}, code {code:?}");
        }
    }

    fn service(status: u16, code: &str, message: &str, region: Option<&'static str>) -> SdkError<PutObjectError, HttpResponse> {
        let mut raw = HttpResponse::new(status.try_into().expect("status"), SdkBody::empty());
        if let Some(region) = region {
            raw.headers_mut().insert("x-amz-bucket-region", region);
        }
        let err = PutObjectError::generic(ErrorMetadata::builder().code(code).message(message).build());
        SdkError::service_error(err, raw)
    }

    #[test]
    fn service_errors_carry_status_code_message_and_the_bucket_region() {
        let fault = Fault::from_sdk(&service(503, "SlowDown", "Please reduce your request rate.", None));
        assert_eq!(fault.class, Class::Retry);
        assert_eq!(fault.detail, "HTTP 503 SlowDown: Please reduce your request rate.");

        let mut head = HttpResponse::new(400u16.try_into().expect("status"), SdkBody::empty());
        head.headers_mut().insert("x-amz-bucket-region", "eu-west-1");
        let generic = PutObjectError::generic(ErrorMetadata::builder().build());
        assert_eq!(Fault::from_sdk(&SdkError::service_error(generic, head)).class, Class::Denied(Denial::WrongRegion));

        let fault = Fault::from_sdk(&service(301, "PermanentRedirect", "use the right endpoint", Some("eu-west-1")));
        assert_eq!(fault.class, Class::Denied(Denial::WrongRegion));
        assert_eq!(fault.bucket_region.as_deref(), Some("eu-west-1"));
        assert_eq!(fault.code.as_deref(), Some("PermanentRedirect"));
    }

    #[test]
    fn transport_failures_are_retried_and_missing_credentials_are_not() {
        let refused: SdkError<PutObjectError, HttpResponse> =
            SdkError::dispatch_failure(ConnectorError::io("tcp connect error: Connection refused".into()));
        let fault = Fault::from_sdk(&refused);
        assert_eq!(fault.class, Class::Retry);
        assert!(fault.detail.contains("Connection refused"), "{}", fault.detail);

        let timeout: SdkError<PutObjectError, HttpResponse> = SdkError::timeout_error("attempt timeout occurred after 60s");
        assert_eq!(Fault::from_sdk(&timeout).class, Class::Retry);

        let none: SdkError<PutObjectError, HttpResponse> =
            SdkError::dispatch_failure(ConnectorError::other(Box::new(CredentialsError::not_loaded_no_source()), None));
        assert_eq!(Fault::from_sdk(&none).class, Class::Denied(Denial::NoCredentials));

        let sts_down: SdkError<PutObjectError, HttpResponse> =
            SdkError::dispatch_failure(ConnectorError::other(Box::new(CredentialsError::provider_error("STS answered 503")), None));
        assert_eq!(Fault::from_sdk(&sts_down).class, Class::Retry);
    }
}
