//! The retry loop every request goes through: transient failures are retried with
//! exponential backoff and jitter until the connector's retry budget is spent; anything
//! else comes back at once for the caller to turn into a [`crate::StoreError`].

use std::future::Future;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};

use crate::classify::{Class, Fault};

/// The first pause; each further one doubles, up to [`MAX_DELAY`].
const FIRST_DELAY: Duration = Duration::from_millis(100);
/// The longest pause between two attempts.
const MAX_DELAY: Duration = Duration::from_secs(5);

/// Where one request is going, for the retry log lines and the final message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    /// The S3 operation, e.g. `PutObject`.
    pub op: &'static str,
    pub bucket: &'a str,
    /// The object key (the prefix for ListMultipartUploads); `None` for HeadBucket.
    pub key: Option<&'a str>,
    /// `at <endpoint>` or `in region <region>`.
    pub place: &'a str,
}

impl Target<'_> {
    /// `PutObject of "k" in bucket "b"`, for messages.
    pub(crate) fn describe(&self) -> String {
        match self.key {
            Some(key) => format!("{} of {key:?} in bucket {:?}", self.op, self.bucket),
            None => format!("{} of bucket {:?}", self.op, self.bucket),
        }
    }
}

/// How a request ended without a result.
#[derive(Debug)]
pub(crate) enum Failure {
    /// A failure that is not retried (class other than [`Class::Retry`]).
    Final(Fault),
    /// Transient failures until the budget ran out; the text is the whole story.
    GaveUp(String),
}

/// Also retry 409 ConditionalRequestConflict (S3's advice for PutObject: the retry then
/// either writes the object or finds it, 412).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conflicts {
    Retry,
    Return,
}

/// Runs `send` until it succeeds, fails in a way retrying cannot fix, or transient failures
/// have used up `budget`. `send` builds a fresh request each time. Each retry is counted in
/// `retries` and logged.
pub(crate) async fn with_retries<T, E, F, Fut>(
    target: Target<'_>,
    budget: Duration,
    retries: &AtomicU64,
    conflicts: Conflicts,
    mut send: F,
) -> Result<T, Failure>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SdkError<E, HttpResponse>>>,
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let started = Instant::now();
    let mut attempt: u32 = 0;
    loop {
        let fault = match send().await {
            Ok(output) => return Ok(output),
            Err(err) => Fault::from_sdk(&err),
        };
        let transient = fault.class == Class::Retry || (fault.class == Class::ConditionalConflict && conflicts == Conflicts::Retry);
        if !transient {
            return Err(Failure::Final(fault));
        }
        let delay = backoff(attempt);
        let spent = started.elapsed();
        if spent + delay > budget {
            return Err(Failure::GaveUp(format!(
                "the store {} kept failing {}: {} attempts over {:.1} s, the last: {}",
                target.place,
                target.describe(),
                attempt + 1,
                spent.as_secs_f64(),
                fault.detail
            )));
        }
        retries.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(
            bucket = target.bucket,
            key = target.key.unwrap_or(""),
            operation = target.op,
            attempt = attempt + 1,
            retry_in_ms = delay.as_millis() as u64,
            error = %fault.detail,
            "object store request failed, retrying"
        );
        tokio::time::sleep(delay).await;
        attempt = attempt.saturating_add(1);
    }
}

/// The pause before retry number `attempt + 1`: half the capped exponential step, plus a
/// random part of the other half, so that many uploads failing together do not retry in
/// lockstep.
pub(crate) fn backoff(attempt: u32) -> Duration {
    let step = FIRST_DELAY.saturating_mul(1u32 << attempt.min(16)).min(MAX_DELAY);
    let half = step / 2;
    half + half.mul_f64(unit_random())
}

/// A number in [0, 1). Jitter needs no quality: a randomly keyed hasher is enough, and
/// spares a dependency.
fn unit_random() -> f64 {
    let bits = RandomState::new().hash_one(Instant::now());
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_100_ms_to_5_s_with_jitter() {
        for attempt in 0..40 {
            let step = (100u128 << attempt.min(16)).min(5_000);
            let delay = backoff(attempt).as_millis();
            assert!(delay >= step / 2 && delay <= step, "attempt {attempt}: {delay} ms outside [{}, {step}]", step / 2);
        }
        // Jitter: many pauses for the same attempt are not all equal.
        let pauses: std::collections::HashSet<Duration> = (0..32).map(|_| backoff(5)).collect();
        assert!(pauses.len() > 1);
    }
}
